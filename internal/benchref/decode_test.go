package benchref_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/benchref"
)

// TestDecodeAndCRC: the reference reads every batch of a log, large and
// small, zstd and uncompressed, decodes the zstd ones whole, and fails on
// a CRC mismatch.
func TestDecodeAndCRC(t *testing.T) {
	var c format.Compressor
	var log []byte
	want := int64(0)
	for i := range 60 {
		codec := format.CompressionZstd
		if i%3 == 0 {
			codec = format.CompressionNone
		}
		n := 1 + i%7
		if i == 30 {
			n = 3000 // a batch larger than the reference's 1 MiB buffer
		}
		recs := make([]format.Record, n)
		for j := range recs {
			recs[j] = format.Record{Offset: int64(j), Value: []byte(strings.Repeat("value ", 60))}
		}
		h := &format.Batch{BaseOffset: int64(i * 10000), Attributes: int16(codec)}
		format.PrepareBatch(h, recs)
		before := len(log)
		var err error
		if log, err = c.AppendBatch(log, h, recs); err != nil {
			t.Fatal(err)
		}
		if codec == format.CompressionZstd {
			var d format.Decompressor
			out, err := d.Decompress(codec, format.MagicV2, log[before+format.BatchHeaderSize:], nil)
			if err != nil {
				t.Fatal(err)
			}
			want += int64(len(out))
		}
	}
	batches, decoded, err := benchref.DecodeAndCRC(bytes.NewReader(log))
	if err != nil || batches != 60 || decoded != want {
		t.Fatalf("%d batches, %d bytes decoded, %v; want 60, %d", batches, decoded, err, want)
	}
	log[len(log)/2] ^= 1
	if _, _, err := benchref.DecodeAndCRC(bytes.NewReader(log)); err == nil {
		t.Error("a flipped byte went unnoticed")
	}
}
