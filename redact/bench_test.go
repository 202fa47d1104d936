package redact

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/produce"
)

// benchBytes is the size of the generated partition: 32 MiB by default,
// KLOG_BENCH_BYTES to measure the 1 GiB:
//
//	KLOG_BENCH_BYTES=1073741824 go test -run='^$' -bench=RedactVsProduce -benchtime=3x ./redact/
func benchBytes() int64 {
	if v, err := strconv.ParseInt(os.Getenv("KLOG_BENCH_BYTES"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 32 << 20
}

// benchBatch fills recs with batch i's records: 16 records, a key, a
// 1 KiB value of random letters (lz4 saves little on it, as on real
// payloads that are already dense) and one header.
func benchBatch(recs []format.Record, i int) {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	for j := range recs {
		v := recs[j].Value[:1024]
		for k := 0; k < len(v); k += 8 {
			x := rng.Uint64()
			for m := 0; m < 8; m++ {
				v[k+m] = byte('a' + (x>>(m*8))%26)
			}
		}
		recs[j].Key = append(recs[j].Key[:0], "key-"...)
		recs[j].Key = strconv.AppendInt(recs[j].Key, int64(i*16+j), 10)
		recs[j].Headers[0].Value = strconv.AppendInt(recs[j].Headers[0].Value[:0], int64(i), 10)
		recs[j].Timestamp = 1700000000000 + int64(i)
	}
}

func benchRecords() []format.Record {
	recs := make([]format.Record, 16)
	for j := range recs {
		recs[j] = format.Record{Value: make([]byte, 1024), Headers: []format.Header{{Key: []byte("trace-id")}}}
	}
	return recs
}

// produceBytes appends batches to a new partition at dir until it holds
// size bytes, and returns the bytes written.
func produceBytes(tb testing.TB, dir string, size int64, codec format.Compression) int64 {
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, SegmentBytes: 256 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	recs := benchRecords()
	var n int64
	for i := 0; n < size; i++ {
		benchBatch(recs, i)
		r, err := a.Append(&produce.Batch{Records: recs, Compression: codec})
		if err != nil {
			tb.Fatal(err)
		}
		n += r.Size
	}
	if err := a.Close(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkRedactVsProduce: klog redact of a partition against klog
// produce writing the same bytes (the baseline, same run); both report the
// source's bytes per operation. The issue asks redact >= 0.3x produce.
func BenchmarkRedactVsProduce(b *testing.B) {
	for _, codec := range []format.Compression{format.CompressionNone, format.CompressionLZ4} {
		b.Run("codec="+codec.String(), func(b *testing.B) {
			root := b.TempDir()
			src := filepath.Join(root, "src", "t-0")
			size := produceBytes(b, src, benchBytes(), codec)
			n := 0
			b.Run("op=produce", func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					n++
					dir := filepath.Join(root, "p"+strconv.Itoa(n), "t-0")
					produceBytes(b, dir, size, codec)
					b.StopTimer()
					os.RemoveAll(filepath.Dir(dir))
					b.StartTimer()
				}
			})
			b.Run("op=redact", func(b *testing.B) {
				b.SetBytes(size)
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					n++
					dir := filepath.Join(root, "r"+strconv.Itoa(n), "t-0")
					peak = max(peak, klogtest.PeakHeap(func() {
						if _, err := Partition(src, dir, Options{Mode: Hash, HashKey: []byte("k")}); err != nil {
							b.Fatal(err)
						}
					}))
					b.StopTimer()
					os.RemoveAll(filepath.Dir(dir))
					b.StartTimer()
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		})
	}
}

// TestRedactMemoryFlat: redacting a partition four times larger does not
// need more heap (one batch at a time).
func TestRedactMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MiB")
	}
	root := t.TempDir()
	var peaks []uint64
	for i, size := range []int64{8 << 20, 32 << 20} {
		src := filepath.Join(root, "src"+strconv.Itoa(i), "t-0")
		produceBytes(t, src, size, format.CompressionLZ4)
		runtime.GC()
		peaks = append(peaks, klogtest.PeakHeap(func() {
			if _, err := Partition(src, filepath.Join(root, "out"+strconv.Itoa(i)), Options{Mode: Hash}); err != nil {
				t.Fatal(err)
			}
		}))
	}
	t.Logf("peak heap: 8 MiB source %d KiB, 32 MiB source %d KiB", peaks[0]>>10, peaks[1]>>10)
	if peaks[1] > peaks[0]+8<<20 {
		t.Errorf("peak heap grew from %d to %d bytes with the source size", peaks[0], peaks[1])
	}
}
