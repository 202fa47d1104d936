package produce_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/benchref"
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

// BenchmarkFeedVsKmsg is klog produce's work on console lines against
// what a user writes with franz-go's kmsg for the same batches
// (benchref.KmsgProduce, checked to write klog's batches) and against cat
// copying the input (128 KiB reads and writes), each iteration the three
// in turn over the same input file (KLOG_PRODUCE_BENCH_MB of 200-byte
// lines, default 64) into fresh files. klog's run is a Feed with klog
// produce's default batches (500 records, 16384 bytes) and --fsync never,
// as the others do not sync, keeping its indexes; the ratios (speed of
// klog over the reference, medians of the iterations) are reported:
//
//	go test -run='^$' -bench=FeedVsKmsg -benchtime=5x ./produce/
func BenchmarkFeedVsKmsg(b *testing.B) {
	mb := 64
	if s := os.Getenv("KLOG_PRODUCE_BENCH_MB"); s != "" {
		var err error
		if mb, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	root := b.TempDir()
	input := filepath.Join(root, "lines")
	size := writeLines(b, input, int64(mb)<<20)
	// run times f as wall and CPU time (the process's, all threads: the
	// programs run one at a time).
	run := func(name string, f func(in *os.File, dir string) error) (wall, cpu time.Duration) {
		in, err := os.Open(input)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		dir := filepath.Join(root, name)
		c0, start := cpuTime(), time.Now()
		if err := f(in, dir); err != nil {
			b.Fatal(err)
		}
		wall, cpu = time.Since(start), cpuTime()-c0
		os.RemoveAll(dir)
		return wall, cpu
	}
	klog := func(in *os.File, dir string) error {
		a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
		if err != nil {
			return err
		}
		feed := &produce.Feed{MaxRecords: 500, MaxBytes: 16384}
		if err := feed.Run(context.Background(), a, in, nil); err != nil {
			a.Close()
			return err
		}
		return a.Close()
	}
	toFile := func(f func(in *os.File, out *os.File) error) func(in *os.File, dir string) error {
		return func(in *os.File, dir string) error {
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			out, err := os.Create(filepath.Join(dir, "out"))
			if err != nil {
				return err
			}
			if err := f(in, out); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
	}
	kmsg := toFile(func(in, out *os.File) error { return benchref.KmsgProduce(in, out, 500, 16384) })
	cat := toFile(func(in, out *os.File) error {
		buf := make([]byte, 128<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if _, werr := out.Write(buf[:n]); werr != nil {
					return werr
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	var vsKmsg, vsCat, cpuKmsg, cpuCat, klogMBs, kmsgMBs, catMBs []float64
	i := 0
	for b.Loop() {
		var tk, tm, tc, ck, cm, cc time.Duration
		if i%2 == 0 {
			tk, ck = run("klog", klog)
			tm, cm = run("kmsg", kmsg)
			tc, cc = run("cat", cat)
		} else {
			tc, cc = run("cat", cat)
			tm, cm = run("kmsg", kmsg)
			tk, ck = run("klog", klog)
		}
		i++
		vsKmsg, vsCat = append(vsKmsg, tm.Seconds()/tk.Seconds()), append(vsCat, tc.Seconds()/tk.Seconds())
		cpuKmsg, cpuCat = append(cpuKmsg, cm.Seconds()/ck.Seconds()), append(cpuCat, cc.Seconds()/ck.Seconds())
		mbs := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
		klogMBs, kmsgMBs, catMBs = append(klogMBs, mbs(tk)), append(kmsgMBs, mbs(tm)), append(catMBs, mbs(tc))
	}
	// x-: speed of klog over the reference's, by wall time; cpu-x-: by
	// CPU time (steadier on a shared machine).
	b.ReportMetric(median(vsKmsg), "x-kmsg")
	b.ReportMetric(median(vsCat), "x-cat")
	b.ReportMetric(median(cpuKmsg), "cpu-x-kmsg")
	b.ReportMetric(median(cpuCat), "cpu-x-cat")
	b.ReportMetric(median(klogMBs), "klog-MB/s")
	b.ReportMetric(median(kmsgMBs), "kmsg-MB/s")
	b.ReportMetric(median(catMBs), "cat-MB/s")
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeLines writes about size bytes of 200-byte lines (199 bytes and a
// newline) and returns the size written.
func writeLines(b *testing.B, path string, size int64) int64 {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := make([]byte, 200)
	var n int64
	for i := 0; n < size; i++ {
		s := strconv.AppendInt(line[:0], int64(i), 10)
		for j := len(s); j < 199; j++ {
			s = append(s, 'a'+byte((i+j)%26))
		}
		s = append(s, '\n')
		w.Write(s)
		n += int64(len(s))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
