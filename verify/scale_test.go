package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// genFleet writes a log dir of parts partitions (topic "fleet") with segs
// small segments each, as a broker leaves them: per segment a .log of one
// batch of two records, its .index and .timeindex (one entry each), and per
// partition a leader-epoch-checkpoint and partition.metadata. It returns
// the dir, the number of files and their bytes.
func genFleet(tb testing.TB, root string, parts, segs int) (dir string, files int, bytes int64) {
	tb.Helper()
	dir = filepath.Join(root, "kafka-logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		err error
	)
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c format.Compressor
			recs := make([]format.Record, 2)
			var buf []byte
			for p := range next {
				pd := filepath.Join(dir, "fleet-"+strconv.Itoa(p))
				nf, nb, e := genPartition(&c, recs, &buf, pd, segs)
				mu.Lock()
				files, bytes = files+nf, bytes+nb
				if e != nil && err == nil {
					err = e
				}
				mu.Unlock()
			}
		}()
	}
	for p := range parts {
		next <- p
	}
	close(next)
	wg.Wait()
	if err != nil {
		tb.Fatal(err)
	}
	return dir, files, bytes
}

func genPartition(c *format.Compressor, recs []format.Record, buf *[]byte, pd string, segs int) (int, int64, error) {
	if err := os.Mkdir(pd, 0o755); err != nil {
		return 0, 0, err
	}
	files, bytes := 0, int64(0)
	write := func(name string, data []byte) error {
		files++
		bytes += int64(len(data))
		return os.WriteFile(filepath.Join(pd, name), data, 0o644)
	}
	ts := int64(1700000000000)
	for s := range segs {
		base := int64(s) * 2
		for i := range recs {
			recs[i] = format.Record{Offset: base + int64(i), Timestamp: ts + base + int64(i), Key: []byte("k"), Value: []byte("a small value")}
		}
		h := &format.Batch{Magic: 2, BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		format.PrepareBatch(h, recs)
		var err error
		if *buf, err = c.AppendBatch((*buf)[:0], h, recs); err != nil {
			return 0, 0, err
		}
		var idx [format.OffsetIndexEntrySize]byte
		binary.BigEndian.PutUint32(idx[:], 1)
		var tidx [format.TimeIndexEntrySize]byte
		binary.BigEndian.PutUint64(tidx[:], uint64(ts+base+1))
		binary.BigEndian.PutUint32(tidx[8:], 1)
		for _, f := range []struct {
			suffix string
			data   []byte
		}{{partition.LogSuffix, *buf}, {partition.IndexSuffix, idx[:]}, {partition.TimeIndexSuffix, tidx[:]}} {
			if err := write(partition.FileName(base, f.suffix), f.data); err != nil {
				return 0, 0, err
			}
		}
	}
	if err := write(partition.LeaderEpochCheckpoint, []byte("0\n1\n0 0\n")); err != nil {
		return 0, 0, err
	}
	if err := write(partition.PartitionMetadata, []byte("version: 0\ntopic_id: cNyBtTqDQ0ahQZ3b6RZdaA\n")); err != nil {
		return 0, 0, err
	}
	return files, bytes, nil
}

// peakHeap samples the live heap while fn runs and returns the peak.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak
}

// TestScaleSmall runs the fleet-scale scenario small enough for every go
// test: 100 partitions of 5 segments, a full run and an incremental one.
// BenchmarkVerifyScale runs it at 10,000 partitions (README).
func TestScaleSmall(t *testing.T) {
	t.Parallel()
	dir, files, size := genFleet(t, t.TempDir(), 100, 5)
	st := NewState()
	rep := mustRun(t, []string{dir}, Options{Jobs: 2, State: st})
	if len(rep.Files) != files || rep.Findings() != 0 || rep.IOErrors() != 0 {
		t.Fatalf("%d files verified of %d, %d findings, %d I/O errors", len(rep.Files), files, rep.Findings(), rep.IOErrors())
	}
	if rep.BytesRead < size {
		t.Errorf("read %d bytes of %d", rep.BytesRead, size)
	}
	var prom bytes.Buffer
	if err := writeMetrics(&prom, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d bytes: full run %v, metrics %d bytes", files, size, rep.Duration, prom.Len())
	again := mustRun(t, []string{dir}, Options{Jobs: 2, State: st})
	// Only the leader-epoch-checkpoints (8 bytes each) are read again, to
	// check them against the log end.
	t.Logf("incremental run %v, %d bytes read", again.Duration, again.BytesRead)
	if again.BytesRead != 100*8 || again.Findings() != 0 {
		t.Errorf("incremental run over an unchanged fleet read %d bytes, %d findings", again.BytesRead, again.Findings())
	}
}

// BenchmarkVerifyScale verifies a log dir of 10 small segments per
// partition at 1,000 and 10,000 partitions (100,000 segments, 320,000
// files) as the CLI does (RunEach, metrics added up, reports dropped after
// each piece, under the CLI's soft memory limit): time per file should stay
// flat (linear in files), and the peak heap under 128 MiB. run=incremental is a --state run over the
// unchanged dir. Generation (minutes on a busy machine) is not timed.
func BenchmarkVerifyScale(b *testing.B) {
	// The soft memory limit the CLI sets.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit))
	for _, parts := range []int{1000, 10000} {
		b.Run("partitions="+strconv.Itoa(parts), func(b *testing.B) {
			dir, files, size := genFleet(b, b.TempDir(), parts, 10)
			debug.FreeOSMemory()
			for _, mode := range []string{"full", "incremental"} {
				b.Run("run="+mode, func(b *testing.B) {
					var st *State
					if mode == "incremental" {
						st = NewState()
						runEach(b, dir, st)
						runtime.GC()
					}
					b.SetBytes(size)
					var peak uint64
					var read int64
					for b.Loop() {
						peak = max(peak, peakHeap(func() {
							total, n := runEach(b, dir, st)
							if total.Findings() != 0 || n != files {
								b.Fatal(total.Findings(), n, files)
							}
							read = total.BytesRead
						}))
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(files), "ns/file")
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
					b.ReportMetric(float64(read), "bytes-read")
				})
			}
		})
	}
}

// runEach is the CLI's run: Files, the state recorded and the metrics
// added up file by file, reports dropped; it returns the totals and the
// files seen.
func runEach(tb testing.TB, dir string, st *State) (*runReport, int) {
	total := &runReport{Start: time.Now()}
	m := NewMetrics(total.Start)
	n := 0
	var findings []FileReport
	for f, err := range Files(context.Background(), []string{dir}, Options{State: st}) {
		if err != nil {
			tb.Fatal(err)
		}
		n++
		m.Add(f)
		total.BytesRead += f.BytesRead
		if f.Findings() > 0 {
			findings = append(findings, *f)
		}
	}
	total.Files = findings
	total.Duration = time.Since(total.Start)
	if err := m.write(io.Discard, total.Duration); err != nil {
		tb.Fatal(err)
	}
	return total, n
}

// TestGenerateFleet writes, when KLOG_FLEET_DIR names a directory, the log
// dir of the README's log dir figures under it (DIR/kafka-logs):
// KLOG_FLEET_PARTITIONS partitions (default 10,000) of 12 one-batch
// segments, each with its .index and .timeindex, and the two checkpoints a
// partition: 38 files a partition. The figures time `klog verify
// DIR/kafka-logs` against the binary of d05b0c6 and count its system calls.
func TestGenerateFleet(t *testing.T) {
	root := os.Getenv("KLOG_FLEET_DIR")
	if root == "" {
		t.Skip("KLOG_FLEET_DIR not set")
	}
	parts := 10000
	if s := os.Getenv("KLOG_FLEET_PARTITIONS"); s != "" {
		var err error
		if parts, err = strconv.Atoi(s); err != nil || parts <= 0 {
			t.Fatalf("KLOG_FLEET_PARTITIONS %q: not a positive number", s)
		}
	}
	dir, files, size := genFleet(t, root, parts, 12)
	t.Logf("%s: %d partitions, %d files, %d bytes", dir, parts, files, size)
}
