package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGoReleaserConfig: every file the release archives and packages ship
// (man pages, completions, docs) exists, and `goreleaser check` accepts the
// configuration when goreleaser is installed (it is not in CI: building it
// takes longer than the whole CI run).
func TestGoReleaserConfig(t *testing.T) {
	const cfg = "../../.goreleaser.yaml"
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var globs []string
	inFiles := false
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "files:"):
			inFiles = true
			continue
		case strings.HasPrefix(trimmed, "- src:"):
			globs = append(globs, strings.TrimSpace(strings.TrimPrefix(trimmed, "- src:")))
		case inFiles && strings.HasPrefix(trimmed, "- "):
			globs = append(globs, strings.TrimPrefix(trimmed, "- "))
		default:
			inFiles = false
		}
	}
	if len(globs) < 5 {
		t.Fatalf("found only %d shipped file patterns in %s: %q", len(globs), cfg, globs)
	}
	for _, g := range globs {
		m, err := filepath.Glob(filepath.Join("../..", g))
		if err != nil || len(m) == 0 {
			t.Errorf("%s ships %q, which matches no file", cfg, g)
		}
	}
	for _, want := range []string{"docs/man/*.1", "docs/completion/klog.bash", "docs/completion/_klog", "docs/completion/klog.fish"} {
		if !slices.Contains(globs, want) {
			t.Errorf("%s does not ship %s", cfg, want)
		}
	}
	for _, re := range []string{`(?m)^\s+- linux$`, `(?m)^\s+- darwin$`, `(?m)^\s+- amd64$`, `(?m)^\s+- arm64$`, `(?m)^\s+- deb$`, `(?m)^\s+- rpm$`} {
		if !regexp.MustCompile(re).Match(data) {
			t.Errorf("%s lacks %s", cfg, re)
		}
	}
	bin, err := exec.LookPath("goreleaser")
	if err != nil {
		t.Log("goreleaser is not installed: `goreleaser check` not run")
		return
	}
	cmd := exec.Command(bin, "check", "--config", ".goreleaser.yaml")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("goreleaser check: %v\n%s", err, out)
	}
}
