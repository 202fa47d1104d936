package fetch

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
)

var (
	benchOnce sync.Once
	benchDir  string
)

// benchPartition writes a 256 MiB partition (one segment, 1 KiB records, 16
// per batch) once per test binary run.
func benchPartition(b *testing.B) string {
	benchOnce.Do(func() {
		root, err := os.MkdirTemp("", "klog-fetch-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = filepath.Join(root, "bench-0")
		os.MkdirAll(benchDir, 0o755)
		f, err := os.Create(filepath.Join(benchDir, "00000000000000000000.log"))
		if err != nil {
			b.Fatal(err)
		}
		var c format.Compressor
		recs := make([]format.Record, 16)
		val := make([]byte, 1024)
		var buf []byte
		off := int64(0)
		for w := int64(0); w < 256<<20; {
			for i := range recs {
				recs[i] = format.Record{Offset: off + int64(i), Timestamp: 1700000000000, Key: []byte("key"), Value: val}
			}
			h := &format.Batch{Magic: 2, BaseOffset: off, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
			format.PrepareBatch(h, recs)
			buf, _ = c.AppendBatch(buf[:0], h, recs)
			f.Write(buf)
			w += int64(len(buf))
			off += 16
		}
		f.Close()
	})
	return benchDir
}

func segSize(b *testing.B, dir string) int64 {
	st, err := os.Stat(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// BenchmarkScan is the baseline: the core issue's batch scan with CRC
// check over the partition's segment.
func BenchmarkScan(b *testing.B) {
	dir := benchPartition(b)
	size := segSize(b, dir)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		f, _ := os.Open(filepath.Join(dir, "00000000000000000000.log"))
		sc := format.NewScanner(f, size, format.ScanOptions{})
		for {
			bt, err := sc.Next()
			if err != nil {
				break
			}
			if !bt.Valid() {
				b.Fatal("invalid")
			}
		}
		f.Close()
	}
}

// BenchmarkConsumerDrain drains the partition with a Consumer (default
// fetch sizes): every fetch, CRC check and record delivered. The consumer
// is opened once, as a broker holds its log state in memory, and rewound
// for each pass.
func BenchmarkConsumerDrain(b *testing.B) {
	dir := benchPartition(b)
	b.SetBytes(segSize(b, dir))
	b.ReportAllocs()
	c, err := NewConsumer(dir, ConsumerConfig{MaxBytes: DefaultMaxBytes, PartitionMaxBytes: DefaultPartitionMaxBytes})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c.SetPosition(0)
		n := 0
		for _, err := range c.Records(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n == 0 || c.Lag() != 0 {
			b.Fatalf("drained %d records, lag %d", n, c.Lag())
		}
	}
}

// BenchmarkConsumerDrainVsScan alternates the two benchmarks above, one
// of each per iteration (the order swapped every other one), and reports
// the median over iterations of the drain's speed over the scan's
// ("x-scan"): load that drifts between two sequential benchmarks would
// otherwise decide the ratio. The drain delivers every record; the scan
// only checks every batch's CRC.
func BenchmarkConsumerDrainVsScan(b *testing.B) {
	dir := benchPartition(b)
	size := segSize(b, dir)
	b.SetBytes(2 * size)
	c, err := NewConsumer(dir, ConsumerConfig{MaxBytes: DefaultMaxBytes, PartitionMaxBytes: DefaultPartitionMaxBytes})
	if err != nil {
		b.Fatal(err)
	}
	scan := func() {
		f, err := os.Open(filepath.Join(dir, "00000000000000000000.log"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		sc := format.NewScanner(f, size, format.ScanOptions{})
		for {
			bt, err := sc.Next()
			if err != nil {
				break
			}
			if !bt.Valid() {
				b.Fatal("invalid")
			}
		}
	}
	drain := func() {
		c.SetPosition(0)
		n := 0
		for _, err := range c.Records(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n == 0 || c.Lag() != 0 {
			b.Fatalf("drained %d records, lag %d", n, c.Lag())
		}
	}
	timed := func(f func()) time.Duration {
		t := time.Now()
		f()
		return time.Since(t)
	}
	var ratios []float64
	i := 0
	for b.Loop() {
		var ts, td time.Duration
		if i%2 == 0 {
			ts, td = timed(scan), timed(drain)
		} else {
			td, ts = timed(drain), timed(scan)
		}
		i++
		ratios = append(ratios, ts.Seconds()/td.Seconds())
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-scan")
}
