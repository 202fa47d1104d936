package format

import (
	"io"
	"iter"
)

// The iterators below are the one way to walk batches and records for code
// that is not a hot loop; Scanner.Next and RecordReader.Next stay for loops
// that count nanoseconds. An iterator yields (value, nil) per item and at
// most one (nil, err) at the end; it stops early when the loop breaks.

// All yields the scanner's batches until the end of the valid data. A
// rejected entry header or a read error is yielded once, as the last pair;
// Tail then describes what follows. Each *Batch is valid until the next
// step, as with Next.
func (s *Scanner) All() iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		for {
			b, err := s.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

// Records yields the records of b, decoding into one reused Record (valid
// until the next step). A decoding error is yielded once, as the last pair.
func (rr *RecordReader) Records(b *Batch) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		if err := rr.Reset(b); err != nil {
			yield(nil, err)
			return
		}
		var rec Record
		for {
			err := rr.Next(&rec)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&rec, nil) {
				return
			}
		}
	}
}

// FrameBatches yields the whole entries at the start of frame, in order:
// the walk over a fetch response's records, which may end inside a batch
// (the incomplete end is not an error; the broker cut it at max bytes).
// Each batch's Pos is base plus its position in frame, and its Raw aliases
// frame. An entry ParseBatch rejects is yielded as an error, last. CRCs are
// not checked: Batch.Valid says.
func FrameBatches(frame []byte, base int64) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		for p := 0; ; {
			n := EntrySize(frame[p:])
			if n == 0 {
				return
			}
			b, err := ParseBatch(frame[p:p+n], base+int64(p))
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(b, nil) {
				return
			}
			p += n
		}
	}
}
