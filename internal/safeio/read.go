package safeio

import (
	"io"
	"os"
)

// OpenSized opens path for reading (os.Open) and returns its size as Stat
// sees it once open: the bound every reader hands a format.Scanner or an
// index reader, so that a file growing meanwhile is read only as far as it
// was. The errors are os.Open's and Stat's, unwrapped; on an error nothing
// is left open.
func OpenSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
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

// ProgressStep is the least number of bytes a progress reader reports at
// once, so that a bar is not redrawn (nor a shared counter touched) per
// batch.
const ProgressStep = 1 << 20

// ProgressReaderAt reports the bytes read through it to onBytes, in steps
// of at least ProgressStep. Flush reports what is pending; Done also what
// was never read. dump, inspect and verify read through it for their
// progress bars. It is not safe for concurrent use.
type ProgressReaderAt struct {
	r       io.ReaderAt
	onBytes func(n int64)
	pending int64
	told    int64
}

// NewProgressReaderAt reads r, telling onBytes.
func NewProgressReaderAt(r io.ReaderAt, onBytes func(n int64)) *ProgressReaderAt {
	return &ProgressReaderAt{r: r, onBytes: onBytes}
}

// ReadAt reads r, counting the bytes it returns.
func (p *ProgressReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.r.ReadAt(b, off)
	p.pending += int64(n)
	if p.pending >= ProgressStep {
		p.Flush()
	}
	return n, err
}

// Flush reports the bytes read and not yet told.
func (p *ProgressReaderAt) Flush() {
	if p.pending > 0 {
		p.told += p.pending
		p.onBytes(p.pending)
		p.pending = 0
	}
}

// Done reports the rest of a file of size bytes: what was read and not yet
// told, and what the reader did not need to read.
func (p *ProgressReaderAt) Done(size int64) {
	p.Flush()
	if rest := size - p.told; rest > 0 {
		p.onBytes(rest)
	}
}
