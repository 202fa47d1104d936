package recovery

import (
	"context"
	"io"
	"os"

	"github.com/klog-dev/klog/internal/safeio"
)

// segFile is what the planner reads a .log through: the file, or the file
// behind a furthestReader.
type segFile interface {
	io.ReaderAt
	io.Closer
}

// progressStep is the least a furthestReader reports at once.
const progressStep = safeio.ProgressStep

// furthestReader tells onBytes how far into its file reads have reached.
// Unlike safeio.ProgressReaderAt it counts positions, not bytes: the
// planner reads some ranges twice.
type furthestReader struct {
	*os.File
	onBytes  func(n int64) // or nil
	ctx      context.Context
	furthest int64 // furthest byte read
	told     int64
}

func (r *furthestReader) ReadAt(b []byte, off int64) (int, error) {
	if r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return 0, err
		}
	}
	n, err := r.File.ReadAt(b, off)
	if r.onBytes == nil {
		return n, err
	}
	if end := off + int64(n); end > r.furthest {
		r.furthest = end
		if r.furthest-r.told >= progressStep {
			r.onBytes(r.furthest - r.told)
			r.told = r.furthest
		}
	}
	return n, err
}

// rest tells onBytes the part of a file of size bytes not yet told, read
// or not (the segments after a truncation are never read).
func (r *furthestReader) rest(size int64) {
	if size > r.told {
		r.onBytes(size - r.told)
		r.told = size
	}
}
