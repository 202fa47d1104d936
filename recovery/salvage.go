package recovery

import (
	"io"
	"iter"
	"os"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// Skipped is a byte range of a segment that salvage could not read.
type Skipped struct {
	Path string `json:"path"`
	From int64  `json:"from"`
	To   int64  `json:"to"` // exclusive
}

// Salvaged is one step of Salvage: a record of a valid batch (Batch and
// Record set, valid until the next step), or a range of bytes skipped
// (Skipped set).
type Salvaged struct {
	Batch   *format.Batch
	Record  *format.Record
	Skipped *Skipped
}

// Salvage yields every record of a segment that can still be trusted, and
// the byte ranges it skips, in file order: whole batches are read in order;
// at an invalid one it scans forward byte by byte for the next position
// where a batch with a plausible header (a size that fits, magic 0..2) and
// a valid CRC starts, and goes on from there. A batch counts only when all
// its records decode. An I/O error is yielded once, last. Memory stays
// bounded by one window and one batch (maxBatchBytes, 0 for
// format.DefaultMaxBatchBytes).
func Salvage(path string, maxBatchBytes int) iter.Seq2[Salvaged, error] {
	return func(yield func(Salvaged, error) bool) {
		f, size, err := safeio.OpenSized(path)
		if err != nil {
			yield(Salvaged{}, err)
			return
		}
		defer f.Close()
		if maxBatchBytes <= 0 {
			maxBatchBytes = format.DefaultMaxBatchBytes
		}
		var rr format.RecordReader
		var rec format.Record
		buf := make([]byte, 0, 64<<10)
		win := make([]byte, 1<<20+format.HeaderSizeUpToMagic)
		skip := func(from, to int64) bool {
			return yield(Salvaged{Skipped: &Skipped{Path: path, From: from, To: to}}, nil)
		}
		badFrom := int64(-1)
		for pos := int64(0); pos < size; {
			b, ok := tryBatch(f, size, pos, maxBatchBytes, &buf)
			if !ok || !recordsOK(b, &rr, &rec) {
				if badFrom < 0 {
					badFrom = pos
				}
				pos = nextCandidate(f, size, pos+1, win)
				continue
			}
			if badFrom >= 0 && !skip(badFrom, pos) {
				return
			}
			badFrom = -1
			for r, err := range rr.Records(b) {
				if err != nil {
					break // recordsOK decoded them all once
				}
				if !yield(Salvaged{Batch: b, Record: r}, nil) {
					return
				}
			}
			pos += b.Size()
		}
		if badFrom >= 0 {
			skip(badFrom, size)
		}
	}
}

func recordsOK(b *format.Batch, rr *format.RecordReader, r *format.Record) bool {
	if rr.Reset(b) != nil {
		return false
	}
	for {
		err := rr.Next(r)
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// plausible reports whether an entry header (its first HeaderSizeUpToMagic
// bytes) at pos could start a batch of a file of size bytes: a size field
// of at least the smallest entry that fits the file, and magic 0..2.
func plausible(h []byte, pos, size int64) (int64, bool) {
	_, n, magic := format.EntryFraming(h)
	total := format.LogOverhead + int64(n)
	return total, n >= format.RecordOverheadV0 && pos+total <= size && magic >= 0 && magic <= format.MagicV2
}

// tryBatch reads the entry at pos if its header is plausible and its CRC
// valid.
func tryBatch(f *os.File, size, pos int64, max int, buf *[]byte) (*format.Batch, bool) {
	var hdr [format.HeaderSizeUpToMagic]byte
	if size-pos < int64(len(hdr)) {
		return nil, false
	}
	if _, err := f.ReadAt(hdr[:], pos); err != nil {
		return nil, false
	}
	total, ok := plausible(hdr[:], pos, size)
	if !ok || total > int64(max) {
		return nil, false
	}
	if cap(*buf) < int(total) {
		*buf = make([]byte, total)
	}
	data := (*buf)[:total]
	if _, err := f.ReadAt(data, pos); err != nil {
		return nil, false
	}
	b, err := format.ParseBatch(data, pos)
	if err != nil || !b.Valid() {
		return nil, false
	}
	return b, true
}

// nextCandidate finds the next position from pos whose bytes could start an
// entry (plausible), reading in windows.
func nextCandidate(f *os.File, size, pos int64, buf []byte) int64 {
	for pos < size {
		n, _ := f.ReadAt(buf, pos)
		if n < format.HeaderSizeUpToMagic {
			return size
		}
		for i := 0; i+format.HeaderSizeUpToMagic <= n; i++ {
			if _, ok := plausible(buf[i:], pos+int64(i), size); ok {
				return pos + int64(i)
			}
		}
		pos += int64(n - format.HeaderSizeUpToMagic + 1)
	}
	return size
}
