package dump

import (
	"errors"
	"io"
	"strconv"

	"github.com/klog-dev/klog/internal/safeio"
)

// File is a file read through Options.Open: random access and its size.
type File interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// maxOpenedIndex bounds an index read whole through Options.Open (the
// file system's are mapped instead): Kafka's offset index is at most
// segment.index.bytes, 10 MiB by default.
const maxOpenedIndex = 256 << 20

// opened opens p through Options.Open.
func (d *dumper) opened(p string) (File, error) {
	f, err := d.opts.Open(p)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readOpened reads p whole through Options.Open, at most limit bytes.
func (d *dumper) readOpened(p string, limit int64) ([]byte, error) {
	f, err := d.opened(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size() > limit {
		return nil, &safeio.TooLargeError{Path: p, Size: f.Size(), Limit: limit}
	}
	b := make([]byte, f.Size())
	n, err := f.ReadAt(b, 0)
	if n == len(b) {
		return b, nil
	}
	if err == nil || err == io.EOF {
		err = errors.New("ends at byte " + strconv.Itoa(n) + ", before its size " + strconv.FormatInt(f.Size(), 10))
	}
	return nil, err
}

// mapOrRead is safeio.Map of path, or for Options.Open, p read whole.
func (d *dumper) mapOrRead(p, path string) ([]byte, func(), error) {
	if d.opts.Open == nil {
		return safeio.Map(path)
	}
	b, err := d.readOpened(p, maxOpenedIndex)
	return b, func() {}, err
}
