package fetch

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
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
// otherwise decide the ratio; and the median of the scan's CPU time over
// the drain's ("cpu-x-scan"). The drain delivers every record; the scan
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
	type took struct{ wall, cpu time.Duration }
	timed := func(f func()) took {
		t, c := time.Now(), cpuTime()
		f()
		return took{time.Since(t), cpuTime() - c}
	}
	var ratios, cpu []float64
	i := 0
	for b.Loop() {
		var ts, td took
		if i%2 == 0 {
			ts, td = timed(scan), timed(drain)
		} else {
			td, ts = timed(drain), timed(scan)
		}
		i++
		ratios = append(ratios, ts.wall.Seconds()/td.wall.Seconds())
		cpu = append(cpu, ts.cpu.Seconds()/td.cpu.Seconds())
	}
	sort.Float64s(ratios)
	sort.Float64s(cpu)
	b.ReportMetric(ratios[len(ratios)/2], "x-scan")
	b.ReportMetric(cpu[len(cpu)/2], "cpu-x-scan")
}

// cpuTime is the process's user and system time so far: on a machine with
// more runnable threads than cores, wall times include the time a program
// was not running at all, which its CPU time does not ("cpu-x-scan").
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
