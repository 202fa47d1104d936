// Package safeio holds the small file-system rules every klog command shares
// at its edges: reading a file whose size an attacker controls without
// sizing an allocation by it, opening a file for reading together with the
// size its readers are bounded by, opening files for writing without
// following symlinks or touching non-regular files, the broker's log
// directory lock, and the progress-counting reader of the progress bars.
package safeio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Limits for files klog reads whole. Real files stay far below them: text
// checkpoints hold one line per partition, partition.metadata two lines, and
// a producer snapshot about 40 bytes per producer id.
const (
	MaxCheckpointBytes = 16 << 20
	MaxSnapshotBytes   = 64 << 20
)

// TooLargeError is returned by ReadFile for a file over its limit.
type TooLargeError struct {
	Path  string
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return e.Path + ": " + strconv.FormatInt(e.Size, 10) + " bytes, over the " + strconv.FormatInt(e.Limit, 10) + "-byte limit for this kind of file"
}

// ErrNotRegular is returned for a path that is not a regular file where one
// is required (a symlink opened for writing, a FIFO, a device, a directory).
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads a whole file of at most limit bytes. A larger file is a
// *TooLargeError; the file is read through a limited reader, so a file
// growing while it is read cannot make the result exceed the limit either.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	}
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// OpenFile opens path for writing the way every klog writer must: it never
// follows a symlink in the last element (O_NOFOLLOW) and refuses anything
// but a regular file, so a writer cannot be redirected out of its
// directory or into a device. New files get perm.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := openNoFollow(path, flag, perm)
	if err != nil {
		if isLoop(err) {
			msg := "is a symlink; klog does not write through symlinks"
			if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
				msg = errSymlinkSource
			}
			return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New(msg)}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckRegular reports an error unless path is a regular file, checked
// without following a symlink (Lstat).
func CheckRegular(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		what := "not a regular file"
		if st.Mode()&fs.ModeSymlink != 0 {
			what = "is a symlink; klog does not write through symlinks"
		}
		return &fs.PathError{Op: "open", Path: path, Err: errors.New(what)}
	}
	return nil
}

// errSymlinkSource says why a writer refuses a source that is a symlink:
// it reads the link, it would write nothing through it.
const errSymlinkSource = "is a symlink; klog copies a partition's own files, never what a symlink points at"

// CheckSource is CheckRegular for a file a writer copies (recover
// --output, redact): a symlink is refused with a message that says the
// link is not copied, as nothing is written through it.
func CheckSource(path string) error {
	st, err := os.Lstat(path)
	if err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "open", Path: path, Err: errors.New(errSymlinkSource)}
	}
	return CheckRegular(path)
}

// CheckReplaceable reports an error unless path is missing or a regular
// file, checked without following a symlink: the rule for a file klog
// replaces whole (partition.WriteFileAtomic renames a new file over it), so
// that a character device, a FIFO, a directory or a symlink given as
// --state or --prometheus is refused, never replaced.
func CheckReplaceable(path string) error {
	err := CheckRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// OutputPerm is the mode for a file klog writes as a copy of src: src's
// permission bits, or 0600 when src cannot be read.
func OutputPerm(src string) fs.FileMode {
	st, err := os.Stat(src)
	if err != nil {
		return 0o600
	}
	return st.Mode().Perm()
}

// SpoolStdin copies r (os.Stdin when nil) to a temporary file, so that a
// segment read from a pipe can be read at positions with memory bounded
// whatever its size. check, when not nil, is first given the stream's first
// head bytes (fewer when the stream is shorter, none when it is empty):
// its error ends the read there, before anything is spooled, and is
// returned as is. The read stops when ctx ends, also while it waits for
// input on a pipe or terminal that stays open (Interruptible), and returns
// context.Cause(ctx). cleanup removes the file.
func SpoolStdin(ctx context.Context, r io.Reader, head int, check func(head []byte) error) (path string, cleanup func(), err error) {
	if r == nil {
		r = os.Stdin
	}
	r, release := Interruptible(ctx, r)
	defer release()
	h := make([]byte, head)
	n, err := io.ReadFull(r, h)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", nil, err
	}
	h = h[:n]
	if check != nil {
		if err := check(h); err != nil {
			return "", nil, err
		}
	}
	f, err := os.CreateTemp("", "klog-stdin-*.log")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.Remove(f.Name()) }
	_, err = f.Write(h)
	if err == nil && n == head {
		_, err = io.Copy(f, r)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return f.Name(), cleanup, nil
}

// Interruptible returns a reader over r whose Read returns
// context.Cause(ctx) once ctx ends. A *os.File that can block forever (a
// pipe whose writer stays open, a terminal) is waited on together with a
// pipe that ctx's end closes, so a signal stops a read at once instead of
// after the writer's next byte (Unix; elsewhere the read is checked
// between reads only). The reader has a Ready() bool method saying whether
// a Read would return at once (a regular file's always does). release frees the wait: call it when done
// reading.
func Interruptible(ctx context.Context, r io.Reader) (_ io.Reader, release func()) {
	if f, ok := r.(*os.File); ok {
		if cr, release, ok := waitable(ctx, f); ok {
			return cr, release
		}
	}
	return &ctxReader{ctx: ctx, r: r, ready: NeverWaits(r)}, func() {}
}

// ctxReader checks ctx before each Read of r.
type ctxReader struct {
	ctx   context.Context
	r     io.Reader
	ready bool // r never waits for a writer
}

// Ready says a Read returns without waiting for a writer: r is a regular
// file or a buffer.
func (c *ctxReader) Ready() bool { return c.ready }

// NeverWaits says reading r never waits for a writer: a regular file, a
// bytes or strings reader.
func NeverWaits(r io.Reader) bool {
	switch r := r.(type) {
	case *os.File:
		st, err := r.Stat()
		return err == nil && st.Mode().IsRegular()
	case *bytes.Reader, *strings.Reader:
		return true
	}
	return false
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// ErrOutputInsideInput is CheckOutside's error.
var ErrOutputInsideInput = errors.New("is inside the directory it is made from: a writer never adds to what it reads (choose a path outside it)")

// CheckOutside refuses an output path that is, or is under, the input
// directory (recover --output and redact of a partition into a directory
// of that partition would add to the broker's files). Both are resolved
// through symbolic links as far as they exist, so a link does not hide
// the nesting.
func CheckOutside(out, in string) error {
	o, i := resolve(out), resolve(in)
	rel, err := filepath.Rel(i, o)
	if err != nil {
		return nil // different volumes
	}
	if rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
		return &fs.PathError{Op: "write", Path: out, Err: ErrOutputInsideInput}
	}
	return nil
}

// resolve is p absolute with the symbolic links of its longest existing
// prefix resolved.
func resolve(p string) string {
	p, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
