package partition

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LeaderEpochCheckpoint)
	for _, c := range []struct {
		name string
		data string
		opts WriteOptions
		prep func(t *testing.T)
	}{
		{"new", "0\n1\n0 0\n", WriteOptions{}, nil},
		{"replace", "0\n2\n0 0\n1 5\n", WriteOptions{}, nil},
		{"no sync", "0\n0\n", WriteOptions{NoSync: true}, nil},
		{"stale tmp from a crash", "0\n1\n3 9\n", WriteOptions{}, func(t *testing.T) {
			os.WriteFile(path+".tmp", []byte("half"), 0o644)
		}},
		{"symlink planted at tmp", "0\n1\n4 9\n", WriteOptions{}, func(t *testing.T) {
			victim := filepath.Join(dir, "victim")
			os.WriteFile(victim, []byte("keep"), 0o644)
			if err := os.Symlink(victim, path+".tmp"); err != nil {
				t.Skip("no symlinks here")
			}
			t.Cleanup(func() {
				if b, _ := os.ReadFile(victim); string(b) != "keep" {
					t.Errorf("the symlink's target was written: %q", b)
				}
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.prep != nil {
				c.prep(t)
			}
			if err := WriteFileAtomic(path, []byte(c.data), c.opts); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != c.data {
				t.Fatalf("read %q, %v; want %q", b, err, c.data)
			}
			if _, err := os.Lstat(path + ".tmp"); err == nil {
				t.Errorf("the .tmp file is left")
			}
		})
	}
	// A directory that does not exist: an error, nothing written.
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), []byte("x"), WriteOptions{}); err == nil {
		t.Errorf("write into a missing directory succeeded")
	}
}
