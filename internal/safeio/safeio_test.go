package safeio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	if data, err := ReadFile(p, 5); err != nil || string(data) != "12345" {
		t.Errorf("ReadFile at the limit: %q, %v", data, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(p, 4); !errors.As(err, &tl) || tl.Size != 5 {
		t.Errorf("ReadFile over the limit: %v, want a TooLargeError", err)
	}
	sparse := filepath.Join(dir, "sparse")
	f, _ := os.Create(sparse)
	f.Truncate(2 << 30)
	f.Close()
	if _, err := ReadFile(sparse, MaxCheckpointBytes); !errors.As(err, &tl) {
		t.Errorf("2 GiB sparse file: %v, want a TooLargeError", err)
	}
}

func TestOpenFileRefusesSymlinksAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if _, err := OpenFile(link, os.O_RDWR|os.O_TRUNC, 0o644); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("OpenFile through a symlink: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Errorf("the target changed: %q", data)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(fifo, os.O_RDWR, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenFile of a FIFO: %v, want ErrNotRegular", err)
	}
	if _, err := OpenFile(dir, os.O_RDONLY, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenFile of a directory: %v, want ErrNotRegular", err)
	}
	f, err := OpenFile(filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(filepath.Join(dir, "new")); st.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", st.Mode().Perm())
	}
}

// TestSymlinkedSourceMessage: a symlink a writer would only read (a source
// recover --output or redact copies) is refused as a source, not as a
// place written through.
func TestSymlinkedSourceMessage(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	for what, err := range map[string]error{"CheckSource": CheckSource(link), "OpenFile O_RDONLY": func() error {
		_, err := OpenFile(link, os.O_RDONLY, 0)
		return err
	}()} {
		if err == nil || !strings.Contains(err.Error(), "never what a symlink points at") || strings.Contains(err.Error(), "write") {
			t.Errorf("%s of a symlink: %v", what, err)
		}
	}
	if err := CheckSource(target); err != nil {
		t.Errorf("CheckSource of a regular file: %v", err)
	}
	if err := CheckSource(dir); !strings.Contains(fmt.Sprint(err), "not a regular file") {
		t.Errorf("CheckSource of a directory: %v", err)
	}
}

func TestOutputPerm(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "src")
	os.WriteFile(p, nil, 0o640)
	os.Chmod(p, 0o640)
	if got := OutputPerm(p); got != 0o640 {
		t.Errorf("OutputPerm = %v, want 0640", got)
	}
	if got := OutputPerm(filepath.Join(dir, "none")); got != 0o600 {
		t.Errorf("OutputPerm of a missing source = %v, want 0600", got)
	}
}

func TestMapSparse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "idx")
	f, _ := os.Create(p)
	f.Truncate(2 << 30)
	f.Close()
	data, unmap, err := Map(p)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if len(data) != 2<<30 || data[0] != 0 || data[len(data)-1] != 0 {
		t.Errorf("mapped %d bytes", len(data))
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if data, unmap, err := Map(empty); err != nil || data != nil {
		t.Errorf("Map of an empty file: %d bytes, %v", len(data), err)
	} else {
		unmap()
	}
}

func TestOpenSized(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("12345"), 0o644)
	f, size, err := OpenSized(p)
	if err != nil || size != 5 {
		t.Fatalf("OpenSized: %d, %v", size, err)
	}
	f.Close()
	if f, size, err := OpenSized(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) || f != nil || size != 0 {
		t.Fatalf("OpenSized of a missing file: %v, %d, %v", f, size, err)
	}
}

// TestProgressReaderAt: reads are told in steps of at least ProgressStep,
// Flush tells the pending rest, Done also the bytes never read.
func TestProgressReaderAt(t *testing.T) {
	data := strings.NewReader(strings.Repeat("x", 3*ProgressStep))
	var told []int64
	p := NewProgressReaderAt(data, func(n int64) { told = append(told, n) })
	buf := make([]byte, ProgressStep/2+1)
	for _, off := range []int64{0, ProgressStep / 2, ProgressStep} {
		if _, err := p.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
	}
	if len(told) != 1 || told[0] != ProgressStep+2 {
		t.Fatalf("after two reads: told %v, want [%d]", told, ProgressStep+2)
	}
	p.Flush()
	p.Flush()
	if len(told) != 2 || told[1] != ProgressStep/2+1 {
		t.Fatalf("after Flush: told %v", told)
	}
	p.Done(3 * ProgressStep)
	var sum int64
	for _, n := range told {
		sum += n
	}
	if sum != 3*ProgressStep || len(told) != 3 {
		t.Fatalf("after Done: told %v (sum %d), want the file's size", told, sum)
	}
}

func TestCheckOutside(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "logs", "t-0")
	os.MkdirAll(in, 0o755)
	os.Symlink(in, filepath.Join(root, "alias"))
	for _, c := range []struct {
		out    string
		inside bool
	}{
		{in, true},
		{filepath.Join(in, "copy"), true},
		{filepath.Join(in, "a", "b"), true},
		{filepath.Join(root, "alias", "copy"), true}, // through a link
		{filepath.Join(root, "logs", "t-0-copy"), false},
		{filepath.Join(root, "logs"), false},
		{filepath.Join(root, "..t-0"), false},
	} {
		err := CheckOutside(c.out, in)
		if got := errors.Is(err, ErrOutputInsideInput); got != c.inside {
			t.Errorf("CheckOutside(%s) = %v, want inside %v", c.out, err, c.inside)
		}
	}
}
