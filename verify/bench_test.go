package verify

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
)

// genSegment writes a segment of uncompressed v2 batches of 1 KiB records
// (16 per batch) of about size bytes into dir/name.
func genSegment(tb testing.TB, dir string, base int64, size int64) string {
	tb.Helper()
	p := filepath.Join(dir, strconvPad(base)+".log")
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

func strconvPad(v int64) string {
	s := strconv.FormatInt(v, 10)
	for len(s) < 20 {
		s = "0" + s
	}
	return s
}

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
		benchSegs = append(benchSegs, genSegment(b, benchDir, i*100_000_000, size))
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
			rep, err := Run(context.Background(), []string{p}, Options{Jobs: 1})
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
// sequential sub-benchmarks would otherwise decide the ratio.
func BenchmarkVerifyVsBaseline(b *testing.B) {
	p := benchSegments(b, 1)[0]
	b.SetBytes(2 * fileSize(b, p))
	buf := make([]byte, 1<<20)
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		crcFile(b, p, buf)
		t1 := time.Now()
		rep, err := Run(context.Background(), []string{p}, Options{Jobs: 1})
		t2 := time.Now()
		if err != nil || rep.Findings() != 0 {
			b.Fatal(err, rep.Findings())
		}
		ratios = append(ratios, float64(t1.Sub(t0))/float64(t2.Sub(t1)))
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-baseline")
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
				rep, err := Run(context.Background(), []string{p}, Options{Jobs: 1, KeepCache: keep})
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
				rep, err := Run(context.Background(), []string{p}, Options{Jobs: jobs})
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
				rep, err := Run(context.Background(), segs, Options{Jobs: jobs})
				if err != nil || rep.Findings() != 0 {
					b.Fatal(err, rep.Findings())
				}
			}
		})
	}
}

// BenchmarkPlanRecovery measures the recovery plan over a 64 MiB
// partition (framing, streaming CRC-32C, index rebuild), against verify
// of the same partition in the same run as the baseline.
func BenchmarkPlanRecovery(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "topic-0")
	os.Mkdir(dir, 0o755)
	p := genSegment(b, dir, 0, 64<<20)
	os.WriteFile(filepath.Join(dir, strconvPad(0)+".index"), nil, 0o644)
	st, _ := os.Stat(p)
	b.Run("recover", func(b *testing.B) {
		b.SetBytes(st.Size())
		for i := 0; i < b.N; i++ {
			plan, err := PlanRecovery(dir, RecoverOptions{})
			if err != nil || plan.Changes() {
				b.Fatal(err, plan.Changes())
			}
		}
	})
	// With the progress hook klog recover uses on a terminal: the cost of
	// counting, against "recover" in the same run.
	b.Run("recover-progress", func(b *testing.B) {
		b.SetBytes(st.Size())
		var told int64
		for i := 0; i < b.N; i++ {
			plan, err := PlanRecovery(dir, RecoverOptions{OnBytes: func(n int64) { told += n }})
			if err != nil || plan.Changes() {
				b.Fatal(err, plan.Changes())
			}
		}
		if told != int64(b.N)*st.Size() {
			b.Fatalf("told %d bytes, want %d", told, int64(b.N)*st.Size())
		}
	})
	b.Run("verify-baseline", func(b *testing.B) {
		b.SetBytes(st.Size())
		for i := 0; i < b.N; i++ {
			if _, err := Run(context.Background(), []string{p}, Options{Jobs: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzPlanRecovery feeds arbitrary segment bytes to the plan: it never
// fails on them, and whatever it changes verify reports.
func FuzzPlanRecovery(f *testing.F) {
	for _, name := range []string{"v2-none", "v2-gzip", "v2-transactions", "v1-gzip", "v0-none", "v2-baseoffset-sparseindex"} {
		des, _ := os.ReadDir(segments(f, "kafka-written", name))
		for _, de := range des {
			if filepath.Ext(de.Name()) == ".log" {
				data, err := os.ReadFile(segments(f, "kafka-written", name, de.Name()))
				if err == nil {
					f.Add(data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "topic-0")
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, strconvPad(0)+".log"), data, 0o644)
		os.WriteFile(filepath.Join(dir, strconvPad(0)+".index"), nil, 0o644)
		plan, err := PlanRecovery(dir, RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !plan.Changes() {
			return
		}
		rep, err := Run(context.Background(), []string{dir}, Options{Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Findings() == 0 {
			t.Errorf("plan %s %q, verify finds nothing", plan.Segments[0].Action, plan.KafkaError)
		}
	})
}
