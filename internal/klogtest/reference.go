package klogtest

import (
	"os"
	"path/filepath"
)

// ReferenceFixtures is where the shared fixtures' real broker data lies
// on this machine (KLOG_REFERENCE_FIXTURES overrides it). It may not be
// copied into the repository, so tests read it in place and skip what is
// not there.
func ReferenceFixtures() string {
	if d := os.Getenv("KLOG_REFERENCE_FIXTURES"); d != "" {
		return d
	}
	return "/work/shared/fixtures/reference-only"
}

// ReferencePartitions are the reference partition directories named
// name (a glob: "__consumer_offsets-*"), at any depth up to three.
func ReferencePartitions(name string) []string {
	var out []string
	for _, pat := range []string{name, filepath.Join("*", name), filepath.Join("*", "*", name), filepath.Join("*", "*", "*", name)} {
		ds, _ := filepath.Glob(filepath.Join(ReferenceFixtures(), "*", pat))
		out = append(out, ds...)
	}
	return out
}
