package verify

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the benchmark segments (hundreds of MiB) after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(filepath.Dir(benchDir))
	}
	os.Exit(code)
}
