package klogtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CopyPartition copies a fixture partition's Kafka files to dst (made if
// need be): not the oracle outputs beside them (.txt, .json), nor
// directories, nor files whose names start with one of skip (a segment
// left out makes a replica that is behind).
func CopyPartition(t testing.TB, src, dst string, skip ...string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
next:
	for _, de := range des {
		n := de.Name()
		if de.IsDir() || strings.HasSuffix(n, ".txt") || strings.HasSuffix(n, ".json") {
			continue
		}
		for _, s := range skip {
			if strings.HasPrefix(n, s) {
				continue next
			}
		}
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// CopyLogDir copies a fixture broker log dir to dst: its files (the
// checkpoints) and each partition directory, with CopyPartition.
func CopyLogDir(t testing.TB, src, dst string) {
	t.Helper()
	CopyPartition(t, src, dst)
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() {
			CopyPartition(t, filepath.Join(src, de.Name()), filepath.Join(dst, de.Name()))
		}
	}
}
