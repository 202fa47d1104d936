package produce_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
)

// Both benchmarks write the same bytes per iteration: one uncompressed
// batch of 16 records with 1 KiB values. Compare them in one run:
//
//	go test -run='^$' -bench=. -benchtime=2s ./produce/
//
// BenchmarkAppend encodes each batch, writes it at the log end and keeps
// the indexes; BenchmarkBufferedWrite is the floor, the pre-encoded batch
// copied into a file through a bufio.Writer. To bound the disk used, both
// start a new file every benchResetBytes, outside the timer.
const (
	benchRecords    = 16
	benchValueBytes = 1024
	benchResetBytes = 32 << 20
)

func benchBatch() []format.Record {
	recs := make([]format.Record, benchRecords)
	for i := range recs {
		v := make([]byte, benchValueBytes)
		for j := range v {
			v[j] = byte(i*31 + j)
		}
		recs[i] = format.Record{Key: []byte("key-0000"), Value: v, Timestamp: 1_700_000_000_000 + int64(i)}
	}
	return recs
}

func BenchmarkAppend(b *testing.B) {
	recs := benchBatch()
	root := b.TempDir()
	n := 0
	openNew := func() *produce.Appender {
		n++
		a, err := produce.Open(filepath.Join(root, "t-"+strconv.Itoa(n)), produce.Options{Sync: produce.SyncNever})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	a := openNew()
	batch := &produce.Batch{Records: recs}
	res, err := a.Append(batch)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(res.Size)
	b.ReportAllocs()
	written := int64(0)
	for b.Loop() {
		r, err := a.Append(batch)
		if err != nil {
			b.Fatal(err)
		}
		if written += r.Size; written >= benchResetBytes {
			b.StopTimer()
			dir := a.Dir()
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
			os.RemoveAll(dir)
			a, written = openNew(), 0
			if _, err := a.Append(batch); err != nil { // grow its buffers
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	a.Close()
}

func BenchmarkBufferedWrite(b *testing.B) {
	recs := benchBatch()
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	h := &format.Batch{Magic: format.MagicV2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "00000000000000000000.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	written := int64(0)
	for b.Loop() {
		if _, err := w.Write(raw); err != nil {
			b.Fatal(err)
		}
		if written += int64(len(raw)); written >= benchResetBytes {
			b.StopTimer()
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := f.Truncate(0); err != nil {
				b.Fatal(err)
			}
			if _, err := f.Seek(0, 0); err != nil {
				b.Fatal(err)
			}
			written = 0
			b.StartTimer()
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
