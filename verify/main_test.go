package verify

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the benchmark segments (hundreds of MiB) after the run,
// the zstd ones too.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(filepath.Dir(benchDir))
	}
	for _, p := range zstdSegs {
		os.RemoveAll(filepath.Dir(filepath.Dir(p)))
	}
	os.Exit(code)
}
