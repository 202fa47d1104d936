package dump

import "io"

// ProgressReaderAt reports the bytes read through it to onBytes, in steps
// of at least progressStep so that a bar is not updated per batch. Done
// reports the rest of the file. dump and inspect read through it.
type ProgressReaderAt struct {
	r       io.ReaderAt
	onBytes func(n int64)
	pending int64
	told    int64
}

const progressStep = 1 << 20

func (p *ProgressReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.r.ReadAt(b, off)
	p.pending += int64(n)
	if p.pending >= progressStep {
		p.flush()
	}
	return n, err
}

func (p *ProgressReaderAt) flush() {
	if p.pending > 0 {
		p.told += p.pending
		p.onBytes(p.pending)
		p.pending = 0
	}
}

// NewProgressReaderAt reads r, telling onBytes.
func NewProgressReaderAt(r io.ReaderAt, onBytes func(n int64)) *ProgressReaderAt {
	return &ProgressReaderAt{r: r, onBytes: onBytes}
}

// Done reports the rest of a file of size bytes: what was read and not yet
// told, and what the reader did not need to read.
func (p *ProgressReaderAt) Done(size int64) {
	p.flush()
	if rest := size - p.told; rest > 0 {
		p.onBytes(rest)
	}
}
