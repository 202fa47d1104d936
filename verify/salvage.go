package verify

import (
	"encoding/binary"
	"io"
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

// Salvage reads every batch of a segment that can still be trusted: whole
// batches are read in order; at an invalid one it scans forward byte by byte
// for the next position where a batch with a plausible header (a size that
// fits, magic 0..2) and a valid CRC starts, and goes on from there. fn gets
// every record of every valid batch; the skipped ranges are returned. Memory
// stays bounded by one window and one batch.
func Salvage(path string, maxBatchBytes int, fn func(b *format.Batch, r *format.Record) error) ([]Skipped, error) {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if maxBatchBytes <= 0 {
		maxBatchBytes = format.DefaultMaxBatchBytes
	}
	var skipped []Skipped
	var rr format.RecordReader
	var rec format.Record
	buf := make([]byte, 0, 64<<10)
	win := make([]byte, 1<<20+format.HeaderSizeUpToMagic)
	pos := int64(0)
	badFrom := int64(-1)
	for pos < size {
		b, ok := tryBatch(f, size, pos, maxBatchBytes, &buf)
		if ok && recordsOK(b, &rr, &rec) {
			if badFrom >= 0 {
				skipped = append(skipped, Skipped{Path: path, From: badFrom, To: pos})
				badFrom = -1
			}
			if err := rr.Reset(b); err == nil {
				for rr.Next(&rec) == nil {
					if err := fn(b, &rec); err != nil {
						return skipped, err
					}
				}
			}
			pos += b.Size()
			continue
		}
		if badFrom < 0 {
			badFrom = pos
		}
		pos = nextCandidate(f, size, pos+1, win)
	}
	if badFrom >= 0 {
		skipped = append(skipped, Skipped{Path: path, From: badFrom, To: size})
	}
	return skipped, nil
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
	n := int64(int32(binary.BigEndian.Uint32(hdr[8:])))
	magic := int8(hdr[16])
	if n < format.RecordOverheadV0 || pos+format.LogOverhead+n > size || format.LogOverhead+n > int64(max) || magic < 0 || magic > format.MagicV2 {
		return nil, false
	}
	total := int(format.LogOverhead + n)
	if cap(*buf) < total {
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
// entry (magic byte 0..2 at +16, a size field that fits), reading in
// windows.
func nextCandidate(f *os.File, size, pos int64, buf []byte) int64 {
	for pos < size {
		n, _ := f.ReadAt(buf, pos)
		if n < format.HeaderSizeUpToMagic {
			return size
		}
		for i := 0; i+format.HeaderSizeUpToMagic <= n; i++ {
			m := buf[i+16]
			sz := int64(int32(binary.BigEndian.Uint32(buf[i+8:])))
			if m <= 2 && sz >= format.RecordOverheadV0 && pos+int64(i)+format.LogOverhead+sz <= size {
				return pos + int64(i)
			}
		}
		pos += int64(n - format.HeaderSizeUpToMagic + 1)
	}
	return size
}
