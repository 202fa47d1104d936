package partition

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// leftovers lists the files in dir a write left behind: klog's temporary
// files.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	des, _ := os.ReadDir(dir)
	var out []string
	for _, de := range des {
		if strings.Contains(de.Name(), ".klog-") {
			out = append(out, de.Name())
		}
	}
	return out
}

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
		{"a user's FILE.tmp is kept", "0\n1\n3 9\n", WriteOptions{}, func(t *testing.T) {
			os.WriteFile(path+".tmp", []byte("mine"), 0o644)
			t.Cleanup(func() {
				if b, err := os.ReadFile(path + ".tmp"); string(b) != "mine" {
					t.Errorf("FILE.tmp is %q, %v; the writer must leave it alone", b, err)
				}
				os.Remove(path + ".tmp")
			})
		}},
		{"a symlink at FILE.tmp is kept", "0\n1\n4 9\n", WriteOptions{}, func(t *testing.T) {
			victim := filepath.Join(dir, "victim")
			os.WriteFile(victim, []byte("keep"), 0o644)
			if err := os.Symlink(victim, path+".tmp"); err != nil {
				t.Skip("no symlinks here")
			}
			t.Cleanup(func() {
				if b, _ := os.ReadFile(victim); string(b) != "keep" {
					t.Errorf("the symlink's target was written: %q", b)
				}
				if st, err := os.Lstat(path + ".tmp"); err != nil || st.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the symlink at FILE.tmp was removed: %v", err)
				}
				os.Remove(path + ".tmp")
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
			if l := leftovers(t, dir); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
	// A directory that does not exist: an error, nothing written.
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), []byte("x"), WriteOptions{}); err == nil {
		t.Errorf("write into a missing directory succeeded")
	}
}

// TestWriteFileAtomicRefusesNonRegular: a target that exists and is not a
// regular file (a FIFO, a character device, a directory, a symlink) is
// refused before anything is written, and stays what it was. Before, the
// temporary file was renamed over it: --state /dev/full replaced the
// machine's /dev/full with a regular file.
func TestWriteFileAtomicRefusesNonRegular(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
		mode fs.FileMode // the type bits it must still have
	}{
		{"fifo", func(p string) error { return unix.Mkfifo(p, 0o644) }, fs.ModeNamedPipe},
		{"char device", func(p string) error {
			// /dev/null's numbers, made in a temporary directory (root only).
			return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		}, fs.ModeDevice | fs.ModeCharDevice},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, fs.ModeDir},
		{"symlink", func(p string) error {
			target := p + "-target"
			if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
				return err
			}
			return os.Symlink(target, p)
		}, fs.ModeSymlink},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "klog_verify.prom")
			if err := c.make(path); err != nil {
				if errors.Is(err, fs.ErrPermission) {
					t.Skipf("cannot make a %s here: %v", c.name, err)
				}
				t.Fatal(err)
			}
			err := WriteAtomic(path, WriteOptions{}, func(w io.Writer) error { _, err := w.Write([]byte("x 1\n")); return err })
			if err == nil {
				t.Fatalf("WriteAtomic over a %s succeeded", c.name)
			}
			st, lerr := os.Lstat(path)
			if lerr != nil || st.Mode().Type() != c.mode {
				t.Fatalf("the %s was replaced: %v %v", c.name, st.Mode(), lerr)
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
		})
	}
}
