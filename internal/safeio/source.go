package safeio

import (
	"errors"
	"io"
	"os"
	"strconv"
)

// OpenSource opens path for reading as the source of a copy (redact,
// recover --output): never through a symlink in its last element, and only
// a regular file, so a copy "safe to share" never holds what a link
// points at or a device's bytes. It returns the size Stat sees once open,
// the bound the copy reads to (see FixedReaderAt).
func OpenSource(path string) (*os.File, int64, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// ShrankError says a file ended before the size it had when it was opened:
// it was truncated while it was read. For a copy that is I/O trouble, not
// a short file: what was read is not the file.
type ShrankError struct {
	Path string
	Size int64 // when opened
	At   int64 // where a read found the end
}

func (e *ShrankError) Error() string {
	return e.Path + ": the file shrank while it was read (" + strconv.FormatInt(e.Size, 10) +
		" bytes when opened, it ended at byte " + strconv.FormatInt(e.At, 10) + ")"
}

// Unwrap makes a ShrankError an io.ErrUnexpectedEOF.
func (e *ShrankError) Unwrap() error { return io.ErrUnexpectedEOF }

// FixedReaderAt reads a file whose size was fixed when it was opened: a
// read that ends before that size returns a *ShrankError instead of
// io.EOF, so a reader that takes a short read for the end of the data (a
// format.Scanner's tail) sees trouble instead. Err reports the first one.
type FixedReaderAt struct {
	r    io.ReaderAt
	path string
	size int64
	err  error
}

// NewFixedReaderAt reads r, of size bytes, named path in errors.
func NewFixedReaderAt(r io.ReaderAt, path string, size int64) *FixedReaderAt {
	return &FixedReaderAt{r: r, path: path, size: size}
}

// ReadAt reads r; a read short of min(off+len(b), size) is a *ShrankError.
func (f *FixedReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.r.ReadAt(b, off)
	want := int64(len(b))
	if off >= f.size {
		want = 0
	} else if off+want > f.size {
		want = f.size - off
	}
	if int64(n) < want && (err == nil || errors.Is(err, io.EOF)) {
		err = &ShrankError{Path: f.path, Size: f.size, At: off + int64(n)}
	}
	if f.err == nil && err != nil && !errors.Is(err, io.EOF) {
		f.err = err
	}
	return n, err
}

// Err is the first error a read returned (a *ShrankError or the file's
// own), io.EOF aside.
func (f *FixedReaderAt) Err() error { return f.err }

// StillWhole returns a *ShrankError if the open file f is now shorter than
// size: checked after a copy, whose last read may have ended just before
// the cut.
func StillWhole(f *os.File, path string, size int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < size {
		return &ShrankError{Path: path, Size: size, At: st.Size()}
	}
	return nil
}

// CopySource copies the n bytes of the source file path from pos (n < 0:
// from pos to its size when opened) to w, opened as OpenSource opens it. A
// file that ends first is a *ShrankError, never a shorter copy.
func CopySource(w io.Writer, path string, pos, n int64) error {
	f, size, err := OpenSource(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if n < 0 {
		n = max(size-pos, 0)
	}
	got, err := io.Copy(w, io.NewSectionReader(f, pos, n))
	if err != nil {
		return err
	}
	if got < n {
		return &ShrankError{Path: path, Size: size, At: pos + got}
	}
	return nil
}
