package verify

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/benchref"
	"github.com/klog-dev/klog/internal/klogtest"
)

var (
	benchMu   sync.Mutex
	benchDir  string
	benchSegs []string
)

// benchSegments returns n segments (default 4) of 64 MiB (KLOG_BIG=1:
// 1 GiB), generated once per process, as many as asked for so far.
func benchSegments(b *testing.B, n ...int) []string {
	want := 4
	if len(n) > 0 {
		want = n[0]
	}
	benchMu.Lock()
	defer benchMu.Unlock()
	size := int64(64 << 20)
	if os.Getenv("KLOG_BIG") != "" {
		size = 1 << 30
	}
	if benchDir == "" {
		dir, err := os.MkdirTemp("", "klog-verify-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = filepath.Join(dir, "bench-0")
		os.MkdirAll(benchDir, 0o755)
	}
	for i := int64(len(benchSegs)); i < int64(want); i++ {
		benchSegs = append(benchSegs, klogtest.WriteSegment(b, benchDir, i*100_000_000, size))
	}
	return benchSegs[:want]
}

func fileSize(b *testing.B, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// BenchmarkCRC32C is the baseline: read the segment in 1 MiB chunks and
// compute a plain CRC-32C over all of it.
func BenchmarkCRC32C(b *testing.B) {
	p := benchSegments(b)[0]
	b.SetBytes(fileSize(b, p))
	b.ReportAllocs()
	buf := make([]byte, 1<<20)
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		var crc uint32
		for pos := int64(0); ; {
			n, err := f.ReadAt(buf, pos)
			crc = format.UpdateC(crc, buf[:n])
			pos += int64(n)
			if err != nil {
				break
			}
		}
		f.Close()
		_ = crc
	}
}

// crcFile is the baseline program of issue 16: read the file through one
// reused 1 MiB buffer and CRC-32C every byte.
func crcFile(b *testing.B, p string, buf []byte) uint32 {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var crc uint32
	for {
		n, err := f.Read(buf)
		crc = format.UpdateC(crc, buf[:n])
		if err != nil {
			break
		}
	}
	return crc
}

// BenchmarkVerifySingleThread compares, in one run, klog verify --jobs 1
// of one uncompressed segment (default options: every CRC, every record
// decoded, page-cache care on) with the baseline program above: the
// figure of issue 16 is the ratio of their MB/s (target >= 0.8).
// KLOG_BIG=1 uses 1 GiB segments.
func BenchmarkVerifySingleThread(b *testing.B) {
	p := benchSegments(b, 1)[0]
	size := fileSize(b, p)
	b.Run("impl=baseline-crc32c", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		buf := make([]byte, 1<<20)
		for b.Loop() {
			crcFile(b, p, buf)
		}
	})
	b.Run("impl=verify,jobs=1", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			rep, err := collect(context.Background(), []string{p}, Options{Jobs: 1})
			if err != nil || rep.Findings() != 0 {
				b.Fatal(err, rep.Findings())
			}
		}
	})
}

// BenchmarkVerifyVsBaseline alternates the two programs of
// BenchmarkVerifySingleThread, one of each per iteration, and reports the
// median over iterations of verify's speed over the baseline's
// ("x-baseline"): on a shared machine, load that drifts between two
// sequential sub-benchmarks would otherwise decide the ratio. It also
// reports the median of the baseline's CPU time (the process's, user and
// system) over verify's ("cpu-x-baseline"): on a machine with more
// runnable threads than cores, the wall times include the time each was
// not running at all, which the CPU times do not.
func BenchmarkVerifyVsBaseline(b *testing.B) {
	p := benchSegments(b, 1)[0]
	b.SetBytes(2 * fileSize(b, p))
	buf := make([]byte, 1<<20)
	var ratios, cpu []float64
	for b.Loop() {
		c0, t0 := cpuTime(), time.Now()
		crcFile(b, p, buf)
		c1, t1 := cpuTime(), time.Now()
		rep, err := collect(context.Background(), []string{p}, Options{Jobs: 1})
		c2, t2 := cpuTime(), time.Now()
		if err != nil || rep.Findings() != 0 {
			b.Fatal(err, rep.Findings())
		}
		ratios = append(ratios, float64(t1.Sub(t0))/float64(t2.Sub(t1)))
		cpu = append(cpu, float64(c1-c0)/float64(c2-c1))
	}
	sort.Float64s(ratios)
	sort.Float64s(cpu)
	b.ReportMetric(ratios[len(ratios)/2], "x-baseline")
	b.ReportMetric(cpu[len(cpu)/2], "cpu-x-baseline")
}

// BenchmarkVerifyPageCache is the cost of page-cache care on a segment that
// is fully cached (the residency check: one cachestat call) against
// --keep-cache, one job.
func BenchmarkVerifyPageCache(b *testing.B) {
	p := benchSegments(b, 1)[0]
	for _, keep := range []bool{true, false} {
		b.Run("keep-cache="+strconv.FormatBool(keep), func(b *testing.B) {
			b.SetBytes(fileSize(b, p))
			for b.Loop() {
				rep, err := collect(context.Background(), []string{p}, Options{Jobs: 1, KeepCache: keep})
				if err != nil || rep.Findings() != 0 {
					b.Fatal(err, rep.Findings())
				}
			}
		})
	}
}

// BenchmarkVerifyLog verifies one segment, every CRC and every record, as
// klog verify does by default (jobs = CPUs), and with one job.
func BenchmarkVerifyLog(b *testing.B) {
	p := benchSegments(b)[0]
	for _, jobs := range []int{0, 1} {
		b.Run("jobs="+strconv.Itoa(jobs), func(b *testing.B) {
			b.SetBytes(fileSize(b, p))
			b.ReportAllocs()
			for b.Loop() {
				rep, err := collect(context.Background(), []string{p}, Options{Jobs: jobs})
				if err != nil || rep.Findings() != 0 {
					b.Fatal(err, rep.Findings())
				}
			}
		})
	}
}

// BenchmarkVerifyDir verifies the 4 segments with 1 and 2 jobs.
func BenchmarkVerifyDir(b *testing.B) {
	segs := benchSegments(b)
	var total int64
	for _, s := range segs {
		total += fileSize(b, s)
	}
	for _, jobs := range []int{1, 2} {
		b.Run("jobs="+strconv.Itoa(jobs), func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			for b.Loop() {
				rep, err := collect(context.Background(), segs, Options{Jobs: jobs})
				if err != nil || rep.Findings() != 0 {
					b.Fatal(err, rep.Findings())
				}
			}
		})
	}
}

// BenchmarkVerifyDefaultJobsVsOne alternates verify of one segment with
// the default jobs (one a CPU: a prefetcher reads ahead) and with --jobs 1,
// and reports the median over iterations of the default's speed over
// --jobs 1's ("x-jobs1") and of its CPU time over --jobs 1's
// ("cpu-of-jobs1"): the default must not be the slower one.
func BenchmarkVerifyDefaultJobsVsOne(b *testing.B) {
	p := benchSegments(b, 1)[0]
	b.SetBytes(2 * fileSize(b, p))
	var speed, cpu []float64
	run := func(jobs int) (time.Duration, time.Duration) {
		c0, t0 := cpuTime(), time.Now()
		rep, err := collect(context.Background(), []string{p}, Options{Jobs: jobs})
		if err != nil || rep.Findings() != 0 {
			b.Fatal(err, rep.Findings())
		}
		return time.Since(t0), cpuTime() - c0
	}
	i := 0
	for b.Loop() {
		var w0, c0, w1, c1 time.Duration
		if i%2 == 0 {
			w1, c1 = run(1)
			w0, c0 = run(0)
		} else {
			w0, c0 = run(0)
			w1, c1 = run(1)
		}
		i++
		speed, cpu = append(speed, float64(w1)/float64(w0)), append(cpu, float64(c0)/float64(c1))
	}
	sort.Float64s(speed)
	sort.Float64s(cpu)
	b.ReportMetric(speed[len(speed)/2], "x-jobs1")
	b.ReportMetric(cpu[len(cpu)/2], "cpu-of-jobs1")
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// zstdSegment writes a segment of about size bytes of zstd batches, 16
// records of 1 KiB of text-like values each (compressing about 3:1), once
// per process per size.
func zstdSegment(b *testing.B, size int64) string {
	benchMu.Lock()
	defer benchMu.Unlock()
	if p := zstdSegs[size]; p != "" {
		return p
	}
	dir, err := os.MkdirTemp("", "klog-verify-zstd")
	if err != nil {
		b.Fatal(err)
	}
	dir = filepath.Join(dir, "zstd-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "00000000000000000000.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("order payment user id amount currency status shipped pending EUR USD true false null created updated region")
	var c format.Compressor
	recs := make([]format.Record, 16)
	vals := make([][]byte, len(recs))
	var raw []byte
	written, offset := int64(0), int64(0)
	for written < size {
		for i := range recs {
			v := vals[i][:0]
			for len(v) < 1024 {
				v = append(v, words[rng.IntN(len(words))]...)
				v = append(v, ':')
				v = strconv.AppendUint(v, rng.Uint64N(1_000_000), 10)
				v = append(v, ' ')
			}
			vals[i] = v[:1024]
			recs[i] = format.Record{Offset: offset + int64(i), Timestamp: 1_700_000_000_000, Value: vals[i]}
		}
		h := &format.Batch{BaseOffset: offset, Attributes: int16(format.CompressionZstd)}
		format.PrepareBatch(h, recs)
		if raw, err = c.AppendBatch(raw[:0], h, recs); err != nil {
			b.Fatal(err)
		}
		w.Write(raw)
		written += int64(len(raw))
		offset += int64(len(recs))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if zstdSegs == nil {
		zstdSegs = map[int64]string{}
	}
	zstdSegs[size] = p
	return p
}

var zstdSegs map[int64]string

// BenchmarkVerifyZstdVsDecodeCRC alternates klog verify --jobs 1 of a
// segment of zstd batches (64 MiB, KLOG_BIG=1: 1 GiB) with a program that
// reads it through a reused 1 MiB buffer, checks every batch's CRC-32C and
// decompresses every batch whole into a reused buffer
// (benchref.DecodeAndCRC), and with the CRC read program of
// BenchmarkVerifyVsBaseline; it reports the medians over iterations of
// verify's speed over each ("x-decode-crc", "x-crc").
func BenchmarkVerifyZstdVsDecodeCRC(b *testing.B) {
	size := int64(64 << 20)
	if os.Getenv("KLOG_BIG") != "" {
		size = 1 << 30
	}
	p := zstdSegment(b, size)
	b.SetBytes(3 * fileSize(b, p))
	buf := make([]byte, 1<<20)
	var vsDecode, vsCRC []float64
	for b.Loop() {
		t0 := time.Now()
		crcFile(b, p, buf)
		t1 := time.Now()
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := benchref.DecodeAndCRC(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
		t2 := time.Now()
		rep, err := collect(context.Background(), []string{p}, Options{Jobs: 1})
		t3 := time.Now()
		if err != nil || rep.Findings() != 0 {
			b.Fatal(err, rep.Findings())
		}
		v := t3.Sub(t2).Seconds()
		vsCRC, vsDecode = append(vsCRC, t1.Sub(t0).Seconds()/v), append(vsDecode, t2.Sub(t1).Seconds()/v)
	}
	sort.Float64s(vsCRC)
	sort.Float64s(vsDecode)
	b.ReportMetric(vsDecode[len(vsDecode)/2], "x-decode-crc")
	b.ReportMetric(vsCRC[len(vsCRC)/2], "x-crc")
}
