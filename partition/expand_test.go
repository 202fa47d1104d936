package partition

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestExpand(t *testing.T) {
	root := t.TempDir()
	mk := func(p string, files ...string) string {
		d := filepath.Join(root, p)
		os.MkdirAll(d, 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(d, f), nil, 0o644)
		}
		return d
	}
	logDir := mk("data")
	a1 := mk("data/a-1", "00000000000000000000.log")
	a10 := mk("data/a-10", "00000000000000000000.log")
	a2 := mk("data/a-2", "00000000000000000000.log")
	b0 := mk("data/b-0", "00000000000000000000.index")
	seg := filepath.Join(a1, "00000000000000000000.log")
	args, err := Expand([]string{seg, a2, logDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 3 || args[0].Kind != ArgFile || args[1].Kind != ArgPartition || args[2].Kind != ArgLogDir {
		t.Fatalf("kinds: %+v", args)
	}
	dirs, err := PartitionDirs([]string{a2, logDir})
	if want := []string{a2, a1, a2, a10, b0}; err != nil || !slices.Equal(dirs, want) {
		t.Errorf("PartitionDirs = %v, %v; want %v", dirs, err, want)
	}
	if _, err := PartitionDirs([]string{seg}); err == nil {
		t.Errorf("a file is not a directory")
	}
	if _, err := Expand([]string{filepath.Join(root, "missing")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
