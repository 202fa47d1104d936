package format_test

// Throughput benchmarks for the read path, over a generated 64 MiB segment
// of uncompressed v2 batches (about 16 KiB each, 1 KiB values). The
// requirement they check: BenchmarkScan/crc=true, which verifies every
// batch's CRC, runs at no less than 0.8x the MB/s of BenchmarkCRC32C (a bare
// CRC-32C over the same 64 MiB) measured in the same run, with 0 allocs/op
// (the B/op left is the scanner's first buffer, amortised). Run e.g.
//
//	go test -run='^$' -bench='CRC32C|Scan|Records' -count=5 ./format/

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/klog-dev/klog/format"
)

const (
	benchSegmentBytes = 64 << 20 // the generated segment
	benchBatchBytes   = 16 << 10 // about this much per batch
	benchValueBytes   = 1 << 10  // one record's value
)

// benchText returns n deterministic, compressible printable bytes: words of
// a small vocabulary, as log lines and JSON payloads tend to be.
func benchText(rng *rand.Rand, n int) []byte {
	words := [...]string{"kafka", "record", "batch", "offset", "partition", "leader", "epoch",
		"producer", "sequence", "timestamp", "value", "key", "header", "segment", "index", "commit"}
	b := make([]byte, 0, n+16)
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
		if rng.IntN(8) == 0 {
			b = fmt.Appendf(b, "%d ", rng.Uint32())
		}
	}
	return b[:n]
}

// benchBatches encodes v2 batches of 1 KiB-value records with codec until
// the batches, uncompressed, add up to at least size bytes. It returns the
// segment, the number of records and that uncompressed size. The output
// depends only on the arguments.
func benchBatches(codec format.Compression, size int) (seg []byte, records, logical int) {
	rng := rand.New(rand.NewPCG(1, uint64(codec)))
	var c format.Compressor
	perBatch := benchBatchBytes / (benchValueBytes + 16)
	recs := make([]format.Record, perBatch)
	seg = make([]byte, 0, size+benchBatchBytes)
	var plain []byte
	offset := int64(0)
	ts := int64(1_700_000_000_000)
	for logical < size {
		h := format.Batch{BaseOffset: offset, PartitionLeaderEpoch: 3, Magic: format.MagicV2,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		for i := range recs {
			recs[i] = format.Record{Offset: offset + int64(i), Timestamp: ts + int64(i),
				Key: fmt.Appendf(nil, "key-%08d", offset+int64(i)), Value: benchText(rng, benchValueBytes)}
		}
		format.PrepareBatch(&h, recs)
		var err error
		if plain, err = c.AppendBatch(plain[:0], &h, recs); err != nil {
			panic(err) // the encoders fail only on impossible sizes
		}
		logical += len(plain)
		h.Attributes = int16(codec)
		if seg, err = c.AppendBatch(seg, &h, recs); err != nil {
			panic(err)
		}
		offset += int64(len(recs))
		ts += int64(len(recs))
		records += len(recs)
	}
	return seg, records, logical
}

// benchSegment is the uncompressed 64 MiB segment, built once per process.
var benchSegment = sync.OnceValues(func() ([]byte, int) {
	seg, records, _ := benchBatches(format.CompressionNone, benchSegmentBytes)
	return seg, records
})

func BenchmarkCRC32C(b *testing.B) {
	seg, _ := benchSegment()
	b.Run(fmt.Sprintf("size=%dMiB", len(seg)>>20), func(b *testing.B) {
		b.SetBytes(int64(len(seg)))
		b.ReportAllocs()
		var sum uint32
		for b.Loop() {
			sum += format.ChecksumC(seg)
		}
		_ = sum
	})
}

// BenchmarkScan reads the segment with a Scanner over a bytes.Reader, which
// copies each batch into the scanner's buffer as a file read would, with
// and without checking every batch's CRC.
func BenchmarkScan(b *testing.B) {
	seg, _ := benchSegment()
	for _, crc := range []bool{true, false} {
		b.Run(fmt.Sprintf("crc=%v", crc), func(b *testing.B) {
			var br bytes.Reader
			sc := format.NewScanner(&br, int64(len(seg)), format.ScanOptions{})
			b.SetBytes(int64(len(seg)))
			b.ReportAllocs()
			batches := 0
			for b.Loop() {
				br.Reset(seg)
				sc.Reset(&br, int64(len(seg)))
				batches = 0
				for {
					bt, err := sc.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if crc && !bt.Valid() {
						b.Fatalf("batch at %d: bad crc", bt.Pos)
					}
					batches++
				}
			}
			b.ReportMetric(float64(batches), "batches/op")
		})
	}
}

func BenchmarkRecords(b *testing.B) {
	seg, nrec := benchSegment()
	var br bytes.Reader
	sc := format.NewScanner(&br, int64(len(seg)), format.ScanOptions{})
	var rr format.RecordReader
	var rec format.Record
	b.SetBytes(int64(len(seg)))
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(seg)
		sc.Reset(&br, int64(len(seg)))
		n := 0
		for {
			bt, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := rr.Reset(bt); err != nil {
				b.Fatal(err)
			}
			for {
				if err := rr.Next(&rec); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
		if n != nrec {
			b.Fatalf("read %d records, want %d", n, nrec)
		}
	}
}

// BenchmarkCleanRecords compares format.CleanRecords with decoding every
// record with a RecordReader, the slow path it spares a checker (verify),
// over the segment's first 16 batches (256 KiB, parsed once: in the CPU's
// cache, as a batch is when a checker walks it right after its CRC pass).
func BenchmarkCleanRecords(b *testing.B) {
	seg, _, _ := benchBatches(format.CompressionNone, 256<<10)
	var bs []*format.Batch
	size, nrec := 0, 0
	for p := 0; len(bs) < 16; {
		bt, err := format.ParseBatch(seg[p:], int64(p))
		if err != nil {
			b.Fatal(err)
		}
		bs = append(bs, bt)
		p += int(bt.Size())
		size, nrec = p, nrec+int(bt.RecordCount)
	}
	b.Run("impl=clean", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, bt := range bs {
				if !format.CleanRecords(bt) {
					b.Fatalf("batch at %d not clean", bt.Pos)
				}
				n += int(bt.RecordCount)
			}
			if n != nrec {
				b.Fatalf("%d records, want %d", n, nrec)
			}
		}
	})
	b.Run("impl=record-reader", func(b *testing.B) {
		var rr format.RecordReader
		var rec format.Record
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, bt := range bs {
				if err := rr.Reset(bt); err != nil {
					b.Fatal(err)
				}
				for {
					if err := rr.Next(&rec); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			if n != nrec {
				b.Fatalf("%d records, want %d", n, nrec)
			}
		}
	})
}

// BenchmarkParseBatch decodes whole batches of each codec: ParseBatch, the
// CRC check, decompression and every record. Throughput is in uncompressed
// batch bytes, so codecs compare by the data they deliver; "ratio" is the
// compression ratio. ParseBatch returns a new *Batch, one allocation per
// batch; the Scanner path has none.
func BenchmarkParseBatch(b *testing.B) {
	const logical = 4 << 20
	for c := format.CompressionNone; c <= format.CompressionZstd; c++ {
		b.Run("codec="+c.String(), func(b *testing.B) {
			seg, nrec, plain := benchBatches(c, logical)
			var raws [][]byte
			for p := 0; p < len(seg); {
				bt, err := format.ParseBatch(seg[p:], int64(p))
				if err != nil {
					b.Fatal(err)
				}
				raws = append(raws, bt.Raw)
				p += int(bt.Size())
			}
			var rr format.RecordReader
			var rec format.Record
			b.SetBytes(int64(plain))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, raw := range raws {
					bt, err := format.ParseBatch(raw, 0)
					if err != nil {
						b.Fatal(err)
					}
					if !bt.Valid() {
						b.Fatal("bad crc")
					}
					if err := rr.Reset(bt); err != nil {
						b.Fatal(err)
					}
					for {
						if err := rr.Next(&rec); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
						n++
					}
				}
				if n != nrec {
					b.Fatalf("read %d records, want %d", n, nrec)
				}
			}
			b.ReportMetric(float64(plain)/float64(len(seg)), "ratio")
		})
	}
}
