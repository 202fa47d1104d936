package hostile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/hostile from the generator")

// TestStoredCorpus: testdata/hostile holds the dense hostile segments as the
// generator writes them (the sparse multi-GiB files, symlinks and
// unreadable directories are only made at test time). -update rewrites it.
func TestStoredCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "hostile")
	for name, data := range Dense() {
		p := filepath.Join(dir, name+".log")
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		stored, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (regenerate with go test ./internal/hostile -update)", err)
		}
		if !bytes.Equal(stored, data) {
			t.Errorf("%s differs from the generator's output (regenerate with -update)", p)
		}
	}
}
