package klogtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

// WriteSegment writes a segment of uncompressed v2 batches of 1 KiB
// records (16 per batch) of about size bytes, named for base offset base,
// into dir, and returns its path.
func WriteSegment(tb testing.TB, dir string, base int64, size int64) string {
	tb.Helper()
	p := filepath.Join(dir, SegmentName(base)+".log")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var c format.Compressor
	recs := make([]format.Record, 16)
	val := make([]byte, 1024)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	var buf []byte
	off := base
	for written := int64(0); written < size; {
		for i := range recs {
			recs[i] = format.Record{Offset: off + int64(i), Timestamp: 1700000000000 + off, Key: []byte("key"), Value: val}
		}
		h := &format.Batch{Magic: 2, BaseOffset: off, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		format.PrepareBatch(h, recs)
		buf, err = c.AppendBatch(buf[:0], h, recs)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := f.Write(buf); err != nil {
			tb.Fatal(err)
		}
		written += int64(len(buf))
		off += int64(len(recs))
	}
	return p
}

// SegmentName is a segment file's stem: the base offset as 20 digits.
func SegmentName(base int64) string {
	s := []byte("00000000000000000000")
	for i := len(s) - 1; base > 0 && i >= 0; i-- {
		s[i] = byte('0' + base%10)
		base /= 10
	}
	return string(s)
}

// BatchBounds returns the [start, end) byte range of every batch the
// scanner reads from a segment's bytes; it fails the test when there is
// none.
func BatchBounds(tb testing.TB, data []byte) [][2]int64 {
	tb.Helper()
	sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
	var out [][2]int64
	for {
		b, err := sc.Next()
		if err != nil {
			break
		}
		out = append(out, [2]int64{b.Pos, b.Pos + b.Size()})
	}
	if len(out) == 0 {
		tb.Fatal("no batches")
	}
	return out
}
