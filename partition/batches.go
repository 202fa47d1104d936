package partition

import (
	"errors"
	"io"
	"io/fs"

	"github.com/klog-dev/klog/format"
)

// BatchReader reads the whole batches of a Log's segment from a byte
// position to where the Log holds the segment's whole batches: klog tail's
// reading of what was appended since it last looked. It reads the file
// through the Log (LogOptions.Open) and holds no lock of the Log while it
// reads, so the Log's Follower and writer go on meanwhile. A BatchReader
// reuses one scanner: it is not safe for concurrent use.
type BatchReader struct {
	sc *format.Scanner
}

// NewBatchReader returns a reader whose batches are capped at maxBatchBytes
// (format.ScanOptions; 0: the default).
func NewBatchReader(maxBatchBytes int) *BatchReader {
	return &BatchReader{sc: format.NewScanner(nil, 0, format.ScanOptions{MaxBatchBytes: maxBatchBytes})}
}

// SegmentRead is where a Read stopped and what follows.
type SegmentRead struct {
	// Pos is where the next read starts: after the last whole batch read.
	Pos int64
	// Tail describes the bytes after the segment's whole batches once the
	// read reached them (Kind TailNone when there are none): a batch still
	// being written (TailPartial, TailShort), zeros where the next write
	// goes (TailZeros), or an entry the format rejects (TailCorrupt, with
	// Err).
	Tail format.Tail
	// Err is the *format.PosError of the entry that stops the reading at
	// Tail.Pos, for a TailCorrupt tail.
	Err error
	// Gone says the segment's file is no longer there.
	Gone bool
}

// Read calls fn with each whole batch of seg (a segment of l's View) from
// byte position pos up to seg.End(), in order; the batch is valid until fn
// returns (Clone keeps it). An entry whose header the format rejects but
// whose length is intact is passed as (nil, its *format.PosError) and the
// read goes on past it, as Kafka's iteration resynchronises on the length.
// The bytes between seg.End() and seg.Size are described in the result's
// Tail. An error from fn ends the read and is returned.
func (r *BatchReader) Read(l *Log, seg LogSegment, pos int64, fn func(b *format.Batch, rejected error) error) (SegmentRead, error) {
	out := SegmentRead{Pos: pos, Tail: format.Tail{Kind: format.TailNone, Pos: pos, Offset: -1}}
	end, size := seg.End(), seg.Size
	if pos >= size {
		return out, nil
	}
	f, err := l.opts.Open(seg.Log)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			out.Gone = true
			return out, nil
		}
		return out, err
	}
	defer f.Close()
	sc := r.sc
	sc.Reset(f, size)
	sc.SetPos(pos)
	for out.Pos < end {
		b, err := sc.Next()
		if err == nil {
			out.Pos = sc.Pos()
			if err := fn(b, nil); err != nil {
				return out, err
			}
			continue
		}
		if ferr := r.stop(&out, err); ferr != nil || sc.Done() {
			return out, ferr
		}
		out.Pos = sc.Pos()
		if err := fn(nil, err); err != nil {
			return out, err
		}
	}
	if out.Pos >= size {
		out.Tail.Pos = out.Pos
		return out, nil
	}
	// At the end of the whole batches the Log holds: what follows them.
	out.Tail.Pos = out.Pos
	_, err = sc.Next()
	switch {
	case err == nil:
		// A batch the Log has not read yet (it is being brought up to
		// date): the next Read takes it.
	case sc.Done():
		return out, r.stop(&out, err)
	default:
		// A rejected header with an intact length: the Log's batches end
		// before it, as its log end offset does.
		out.Err = err
		var pe *format.PosError
		errors.As(err, &pe)
		out.Tail = format.Tail{Kind: format.TailCorrupt, Pos: out.Pos, Bytes: size - out.Pos, Offset: pe.Offset}
	}
	return out, nil
}

// stop records the end of a scan in out: its tail, and the error when it
// is a rejected entry. A read error that is not about the data is
// returned.
func (r *BatchReader) stop(out *SegmentRead, err error) error {
	if err == io.EOF {
		out.Tail = r.sc.Tail()
		return nil
	}
	var pe *format.PosError
	if !errors.As(err, &pe) {
		return err
	}
	if r.sc.Done() {
		out.Tail, out.Err = r.sc.Tail(), err
	}
	return nil
}
