package cluster

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// Generators of big inputs for the memory and speed figures (README,
// Performance): a __consumer_offsets partition of many commits, and a log
// dir of many partitions with groups committing to all of them.

// appendCommit appends an OffsetCommitKey (type 1) and an
// OffsetCommitValue v3, encoded by hand here so that generating ten
// million records takes seconds (internaltopic's tests check that this
// layout is what the decoders read).
func appendCommit(key, val []byte, group, topic string, part int32, offset int64) ([]byte, []byte) {
	key = binary.BigEndian.AppendUint16(key[:0], 1)
	key = binary.BigEndian.AppendUint16(key, uint16(len(group)))
	key = append(key, group...)
	key = binary.BigEndian.AppendUint16(key, uint16(len(topic)))
	key = append(key, topic...)
	key = binary.BigEndian.AppendUint32(key, uint32(part))
	val = binary.BigEndian.AppendUint16(val[:0], 3)
	val = binary.BigEndian.AppendUint64(val, uint64(offset))
	val = binary.BigEndian.AppendUint32(val, 0)    // leader epoch
	val = binary.BigEndian.AppendUint16(val, 0)    // metadata ""
	val = binary.BigEndian.AppendUint64(val, 1e12) // commit timestamp
	return key, val
}

// writeCommits appends to a __consumer_offsets partition (creating it)
// n commits spread over groups groups and parts partitions of topic, 500
// records a batch, through klog's appender (produce.Appender, the writer
// of the partition model: indexes, segments rolled at segBytes).
func writeCommits(tb testing.TB, dir string, n, groups, parts int, topic, groupPrefix string, segBytes int) {
	tb.Helper()
	a, err := produce.Open(dir, produce.Options{SegmentBytes: int64(segBytes)})
	if err != nil {
		tb.Fatal(err)
	}
	var (
		recs = make([]format.Record, 0, 500)
		keys = make([][]byte, 500)
		vals = make([][]byte, 500)
	)
	for i := 0; i < n; {
		recs = recs[:0]
		for j := 0; j < 500 && i < n; j, i = j+1, i+1 {
			g, p := i%groups, (i/groups)%parts
			keys[j], vals[j] = appendCommit(keys[j], vals[j], groupPrefix+strconv.Itoa(g), topic, int32(p), int64(i/(groups*parts)))
			recs = append(recs, format.Record{Timestamp: 1e12, Key: keys[j], Value: vals[j]})
		}
		if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		tb.Fatal(err)
	}
}

// liveHeapAfterGroups replays n commits (100 groups x 20 partitions) and
// returns the live heap while the report is held.
func liveHeapAfterGroups(t *testing.T, n int) uint64 {
	ld := t.TempDir()
	writeCommits(t, filepath.Join(ld, OffsetsTopic+"-0"), n, 100, 20, "orders", "group-", 8<<20)
	rep := groupsOf(t, GroupsOptions{NoLag: true}, ld)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if len(rep.Groups) != 100 || len(rep.Groups[0].Offsets) != 20 || rep.ProblemCount != 0 {
		t.Fatalf("%d groups, %d offsets, problems %v", len(rep.Groups), len(rep.Groups[0].Offsets), rep.Problems)
	}
	if want := int64(n/2000 - 1); rep.Groups[0].Offsets[0].Offset != want {
		t.Errorf("last commit %d, want %d", rep.Groups[0].Offsets[0].Offset, want)
	}
	runtime.KeepAlive(rep)
	return ms.HeapAlloc
}

// TestGroupsMemoryFlat: replaying commits holds one entry per group and
// partition, not per record: eight times the commits of the same 2,000
// keys leave the live heap where it was (within 2 MiB), and far below
// 16 MiB. The process figure (10 million commits under 256 MiB of RSS)
// is TestGroupsRSS's.
func TestGroupsMemoryFlat(t *testing.T) {
	small := liveHeapAfterGroups(t, 50_000)
	big := liveHeapAfterGroups(t, 400_000)
	t.Logf("live heap: %d KiB after 50,000 commits, %d KiB after 400,000", small>>10, big>>10)
	if big > small+2<<20 || big > 16<<20 {
		t.Errorf("live heap grew from %d KiB to %d KiB with 8x the commits", small>>10, big>>10)
	}
}

// TestGenerateBenchLogDir writes, when KLOG_BENCH_LOGDIR names a
// directory, the log dir of README's klog groups vs klog segments figure:
// 100 topics of 100 partitions (10,000), each partition 20 batches of 10
// records of 100 bytes, and __consumer_offsets-0..49 where 500 groups
// commit to every partition of 2 topics (200 partitions each), 20
// commits per partition: 2 million commits.
func TestGenerateBenchLogDir(t *testing.T) {
	dir := os.Getenv("KLOG_BENCH_LOGDIR")
	if dir == "" {
		t.Skip("KLOG_BENCH_LOGDIR not set")
	}
	generateBenchLogDir(t, dir)
}

func generateBenchLogDir(t testing.TB, dir string) {
	var c format.Compressor
	value := make([]byte, 100)
	for tpc := 0; tpc < 100; tpc++ {
		for p := 0; p < 100; p++ {
			pd := filepath.Join(dir, fmt.Sprintf("topic%02d-%d", tpc, p))
			if err := os.MkdirAll(pd, 0o755); err != nil {
				t.Fatal(err)
			}
			var buf []byte
			for b := 0; b < 20; b++ {
				recs := make([]format.Record, 10)
				for i := range recs {
					recs[i] = format.Record{Offset: int64(b*10 + i), Timestamp: 1e12, Value: value}
				}
				h := format.Batch{BaseOffset: int64(b * 10), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
				format.PrepareBatch(&h, recs)
				var err error
				if buf, err = c.AppendBatch(buf, &h, recs); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(pd, partition.FileName(0, ".log")), buf, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p := 0; p < 50; p++ {
		// 10 groups per __consumer_offsets partition, each committing to
		// topics (2p, 2p+1): 10 groups x 200 partitions x 20 commits,
		// appended to one partition.
		pd := filepath.Join(dir, fmt.Sprintf("%s-%d", OffsetsTopic, p))
		for half := 0; half < 2; half++ {
			writeCommits(t, pd, 10*100*20, 10, 100, fmt.Sprintf("topic%02d", (2*p+half)%100), fmt.Sprintf("g%d-", p), 1<<30)
		}
	}
}

// buildKlog builds the CLI into a temporary directory.
func buildKlog(tb testing.TB) string {
	bin := filepath.Join(tb.TempDir(), "klog")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/klog").CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkGroupsVsSegments10k: klog groups over a log dir of 10,000
// partitions and 2 million commits (TestGenerateBenchLogDir's, in
// KLOG_BENCH_LOGDIR when set and already written, else generated in a
// temporary directory: 377 MB) against klog segments over the same log
// dir, the two alternating in every iteration. It reports each one's wall
// time and groups/segments, the ratio README's figure gives (at most 2).
func BenchmarkGroupsVsSegments10k(b *testing.B) {
	dir := os.Getenv("KLOG_BENCH_LOGDIR")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "logdir")
	}
	if _, err := os.Stat(filepath.Join(dir, OffsetsTopic+"-49")); err != nil {
		generateBenchLogDir(b, dir)
	}
	bin := buildKlog(b)
	run := func(args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(bin, args...)
		if err := cmd.Run(); err != nil {
			if _, ok := err.(*exec.ExitError); !ok || cmd.ProcessState.ExitCode() > 1 {
				b.Fatalf("klog %v: %v", args, err)
			}
		}
		return time.Since(start)
	}
	b.ResetTimer()
	var groups, segments time.Duration
	for i := 0; i < b.N; i++ {
		segments += run("segments", dir)
		groups += run("groups", dir)
	}
	b.ReportMetric(groups.Seconds()/float64(b.N), "groups-s/op")
	b.ReportMetric(segments.Seconds()/float64(b.N), "segments-s/op")
	b.ReportMetric(groups.Seconds()/segments.Seconds(), "groups/segments")
}

// TestGroupsRSS: klog groups summarises a __consumer_offsets partition of
// a million commits (ten million under CI=true or with KLOG_BIG=1: 700 MB
// written to a temporary directory) in under 256 MiB of resident memory,
// the promise of every reading command. It builds the CLI and reads the
// child's peak RSS.
func TestGroupsRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds klog")
	}
	n := 1_000_000
	if os.Getenv("KLOG_BIG") != "" || os.Getenv("CI") == "true" {
		n = 10_000_000
	}
	ld := t.TempDir()
	writeCommits(t, filepath.Join(ld, OffsetsTopic+"-0"), n, 1000, 100, "orders", "group-", 256<<20)
	bin := buildKlog(t)
	// Through a helper process: Linux counts the RSS a process had before
	// exec in its child's peak, and this test's is large.
	rssFile := filepath.Join(t.TempDir(), "rss")
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^$", bin, "groups", "--no-lag", "--list", ld)
	cmd.Env = append(os.Environ(), "KLOG_RSS_HELPER="+rssFile)
	out, err := cmd.Output()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("klog groups: %v\n%s", err, out)
	}
	data, err := os.ReadFile(rssFile)
	if err != nil {
		t.Fatal(err)
	}
	rss, _ := strconv.ParseInt(string(data), 10, 64)
	t.Logf("%d commits (%d groups x 100 partitions): %d MiB peak RSS, %v", n, 1000, rss>>20, took)
	if rss > 256<<20 {
		t.Errorf("peak RSS %d MiB over 256 MiB", rss>>20)
	}
	if lines := bytes.Count(out, []byte("\n")); lines != 1001 {
		t.Errorf("%d lines of --list, want a header and 1000 groups", lines)
	}
}

// TestMain runs the test binary as an RSS-measuring helper when
// KLOG_RSS_HELPER names a file: it runs the command after the flags and
// writes the command's peak RSS in bytes there.
func TestMain(m *testing.M) {
	if out := os.Getenv("KLOG_RSS_HELPER"); out != "" {
		args := os.Args[1:]
		for len(args) > 0 && len(args[0]) > 0 && args[0][0] == '-' {
			args = args[1:]
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			os.Exit(99)
		}
		var rss int64
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss * 1024 // kilobytes on Linux
		}
		os.WriteFile(out, []byte(strconv.FormatInt(rss, 10)), 0o644)
		os.Exit(cmd.ProcessState.ExitCode())
	}
	os.Exit(m.Run())
}
