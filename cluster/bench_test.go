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

// writeCommits writes a __consumer_offsets partition of n commits spread
// over groups groups and parts partitions of topic, 500 records a batch,
// in segments of segBytes.
func writeCommits(tb testing.TB, dir string, n, groups, parts int, topic, groupPrefix string, segBytes int) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	var (
		c        format.Compressor
		buf      []byte
		base     int64
		segStart int64
		recs     = make([]format.Record, 0, 500)
		keys     = make([][]byte, 500)
		vals     = make([][]byte, 500)
	)
	flush := func(final bool) {
		if len(buf) > 0 && (final || len(buf) >= segBytes) {
			if err := os.WriteFile(filepath.Join(dir, partition.FileName(segStart, ".log")), buf, 0o644); err != nil {
				tb.Fatal(err)
			}
			buf, segStart = buf[:0], base
		}
	}
	for i := 0; i < n; {
		recs = recs[:0]
		for j := 0; j < 500 && i < n; j, i = j+1, i+1 {
			g, p := i%groups, (i/groups)%parts
			keys[j], vals[j] = appendCommit(keys[j], vals[j], groupPrefix+strconv.Itoa(g), topic, int32(p), int64(i/(groups*parts)))
			recs = append(recs, format.Record{Offset: base + int64(j), Timestamp: 1e12, Key: keys[j], Value: vals[j]})
		}
		h := format.Batch{BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		format.PrepareBatch(&h, recs)
		var err error
		if buf, err = c.AppendBatch(buf, &h, recs); err != nil {
			tb.Fatal(err)
		}
		base += int64(len(recs))
		flush(false)
	}
	flush(true)
}

// TestGroupsMemoryInProcess: replaying commits holds one entry per group
// and partition, not per record: the live heap after a replay of many
// commits stays near what their distinct keys need. (The process figure,
// 10 million commits under 256 MiB RSS, is TestGroupsRSS in cmd/klog.)
func TestGroupsMemoryInProcess(t *testing.T) {
	t.Parallel()
	n := 200_000
	if os.Getenv("KLOG_BIG") != "" {
		n = 10_000_000
	}
	ld := t.TempDir()
	writeCommits(t, filepath.Join(ld, OffsetsTopic+"-0"), n, 100, 20, "orders", "group-", 64<<20)
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
	// 2,000 offsets of about 200 bytes each: far below 16 MiB, whatever n.
	if ms.HeapAlloc > 16<<20 {
		t.Errorf("live heap %d MiB after %d commits", ms.HeapAlloc>>20, n)
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
		// topics (2p, 2p+1): 10 groups x 200 partitions x 20 commits.
		for half := 0; half < 2; half++ {
			sub := filepath.Join(t.TempDir(), "x")
			writeCommits(t, sub, 10*100*20, 10, 100, fmt.Sprintf("topic%02d", (2*p+half)%100), fmt.Sprintf("g%d-", p), 1<<30)
			data, err := os.ReadFile(filepath.Join(sub, partition.FileName(0, ".log")))
			if err != nil {
				t.Fatal(err)
			}
			// Both halves in one segment: re-base the second.
			pd := filepath.Join(dir, fmt.Sprintf("%s-%d", OffsetsTopic, p))
			os.MkdirAll(pd, 0o755)
			if half == 0 {
				os.WriteFile(filepath.Join(pd, partition.FileName(0, ".log")), data, 0o644)
			} else {
				os.WriteFile(filepath.Join(pd, partition.FileName(20000, ".log")), rebase(t, data, 20000), 0o644)
			}
		}
	}
}

// rebase moves every batch of a segment up by delta offsets (the base
// offset field; the CRC does not cover it).
func rebase(t *testing.T, data []byte, delta int64) []byte {
	for p := 0; p+12 <= len(data); {
		base := int64(binary.BigEndian.Uint64(data[p:]))
		binary.BigEndian.PutUint64(data[p:], uint64(base+delta))
		p += 12 + int(binary.BigEndian.Uint32(data[p+8:]))
	}
	return data
}

// TestGroupsRSS: klog groups summarises a __consumer_offsets partition of
// a million commits (ten million with KLOG_BIG=1) in under 256 MiB of
// resident memory, the promise of every reading command. It builds the
// CLI and reads the child's peak RSS.
func TestGroupsRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds klog")
	}
	n := 1_000_000
	if os.Getenv("KLOG_BIG") != "" {
		n = 10_000_000
	}
	ld := t.TempDir()
	writeCommits(t, filepath.Join(ld, OffsetsTopic+"-0"), n, 1000, 100, "orders", "group-", 256<<20)
	bin := filepath.Join(t.TempDir(), "klog")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/klog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
