package fetch

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the benchmark partition (256 MiB, made once a run by
// benchPartition) after the run: every benchmark run left one behind.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(filepath.Dir(benchDir))
	}
	os.Exit(code)
}
