package produce_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// oldMtime is far below every record timestamp: a segment aged by its
// file's modification time looks older than its records.
const oldMtime = 1577836800000 // 2020-01-01

func setAllMtimes(t *testing.T, dir string, ms int64) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		at := time.UnixMilli(ms)
		if err := os.Chtimes(filepath.Join(dir, de.Name()), at, at); err != nil {
			t.Fatal(err)
		}
	}
}

func openLookup(t *testing.T, dir string, mode partition.IndexMode) *partition.Log {
	t.Helper()
	l, err := partition.OpenLog(dir, partition.LogOptions{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// lookupTargets are EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL and
// every record timestamp of the directory, one below and one above, plus
// 0 and a timestamp past everything.
func lookupTargets(t *testing.T, dir string) []int64 {
	t.Helper()
	out := []int64{-2, -1, -3, -4, 0, 1 << 50}
	var rr format.RecordReader
	var rec format.Record
	for _, s := range segmentFiles(t, dir) {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < len(data); {
			b, err := format.ParseBatch(data[p:], int64(p))
			if err != nil {
				t.Fatal(err)
			}
			if err := rr.Reset(b); err != nil {
				t.Fatal(err)
			}
			for rr.Next(&rec) == nil { // control records too: they answer queries
				out = append(out, rec.Timestamp-1, rec.Timestamp, rec.Timestamp+1)
			}
			p += int(b.Size())
		}
	}
	return out
}

// sameLookups reports the targets on which two opens of a directory answer
// differently.
func sameLookups(t *testing.T, a, b *partition.Log, targets []int64) []string {
	t.Helper()
	var diffs []string
	if a.LogEndOffset() != b.LogEndOffset() || a.LogStartOffset() != b.LogStartOffset() {
		diffs = append(diffs, "log start/end offsets")
	}
	ae, be := a.LeaderEpochs(), b.LeaderEpochs()
	if len(ae) != len(be) {
		diffs = append(diffs, "leader epochs")
	} else {
		for i := range ae {
			if ae[i] != be[i] {
				diffs = append(diffs, "leader epochs")
				break
			}
		}
	}
	for _, target := range targets {
		x, err := a.FetchOffsetByTimestamp(target)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.FetchOffsetByTimestamp(target)
		if err != nil {
			t.Fatal(err)
		}
		if x.Found != y.Found || x.Offset != y.Offset || x.Timestamp != y.Timestamp || x.LeaderEpoch != y.LeaderEpoch {
			diffs = append(diffs, "target "+itoa(target)+": as found "+answer(x)+", rebuilt "+answer(y))
		}
	}
	return diffs
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func answer(r partition.TimestampAndOffset) string {
	if !r.Found {
		return "none"
	}
	return "offset " + itoa(r.Offset) + " ts " + itoa(r.Timestamp) + " epoch " + itoa(int64(r.LeaderEpoch))
}

// fortyRecords appends 40 single-record batches whose timestamps are not in
// offset order (every fourth is late), so the largest is not the last.
func fortyRecords(t *testing.T, a *produce.Appender) {
	t.Helper()
	for i := range 40 {
		ts := int64(1_700_000_000_000 + i*10)
		if i%4 == 3 {
			ts -= 25 // a late record
		}
		rec := []format.Record{{Key: []byte("k"), Value: []byte("value-" + itoa(int64(i))), Timestamp: ts}}
		if _, err := a.Append(&produce.Batch{Records: rec}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCleanCloseMatchesRecovery opens klog-produced partitions the way a
// broker starts after a clean shutdown (indexes as found, segments aged by
// their time index) and the way it starts after a crash (indexes rebuilt
// from the log, epochs from the batches), and requires the same answer to
// every ListOffsets question. A control shows the test can fail: without
// the close entry (as klog left the active segment before), they differ.
func TestCleanCloseMatchesRecovery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		opts  produce.Options
		write func(t *testing.T, dir string, opts produce.Options)
		// control: dropping the active segment's last time index entry
		// must change these answers.
		control bool
	}{
		{"forty records in segments", produce.Options{SegmentBytes: 1200}, func(t *testing.T, dir string, opts produce.Options) {
			a := open(t, dir, opts)
			fortyRecords(t, a)
			closeA(t, a)
		}, true},
		{"dense indexes", produce.Options{SegmentBytes: 1600, IndexIntervalBytes: 150}, func(t *testing.T, dir string, opts produce.Options) {
			a := open(t, dir, opts)
			fortyRecords(t, a)
			closeA(t, a)
		}, true},
		{"two sessions", produce.Options{SegmentBytes: 1500, IndexIntervalBytes: 200}, func(t *testing.T, dir string, opts produce.Options) {
			a := open(t, dir, opts)
			if _, err := a.Append(&produce.Batch{Records: values("first", 5)}); err != nil {
				t.Fatal(err)
			}
			closeA(t, a)
			a = open(t, dir, opts)
			fortyRecords(t, a)
			closeA(t, a)
		}, false},
		{"transactions and leader epochs", produce.Options{SegmentBytes: 400, PartitionLeaderEpoch: 3}, func(t *testing.T, dir string, opts produce.Options) {
			now := int64(1_700_000_100_000)
			opts.Now = func() time.Time { now += 7; return time.UnixMilli(now) }
			a := open(t, dir, opts)
			idem(t, a, 11, 0, 3, true)
			if _, err := a.EndTxn(11, 0, true, 1); err != nil {
				t.Fatal(err)
			}
			if err := a.SetLeaderEpoch(5); err != nil {
				t.Fatal(err)
			}
			idem(t, a, 12, 0, 2, true)
			if _, err := a.Append(&produce.Batch{Records: values("lat", 3), TimestampType: format.LogAppendTime}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.EndTxn(12, 0, false, 1); err != nil {
				t.Fatal(err)
			}
			if err := a.SetLeaderEpoch(6); err != nil {
				t.Fatal(err)
			}
			// The COMMIT marker is the last and newest record.
			idem(t, a, 13, 0, 2, true)
			if _, err := a.EndTxn(13, 0, true, 1); err != nil {
				t.Fatal(err)
			}
			closeA(t, a)
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			c.write(t, dir, c.opts)
			setAllMtimes(t, dir, oldMtime)
			targets := lookupTargets(t, dir)
			found, rebuilt := openLookup(t, dir, partition.IndexesAsFound), openLookup(t, dir, partition.IndexesRebuilt)
			if n := len(found.Segments()); n < 2 {
				t.Fatalf("%d segments: the case does not roll", n)
			}
			if d := sameLookups(t, found, rebuilt, targets); len(d) > 0 {
				t.Errorf("a clean open and a recovering open differ: %v", d)
			}
			if len(found.LeaderEpochs()) == 0 {
				t.Errorf("no leader-epoch-checkpoint entries")
			}
			if !c.control {
				return
			}
			// Control: the active segment as a crashed writer leaves it.
			segs := found.Segments()
			last := segs[len(segs)-1]
			st, err := os.Stat(last.TimeIndex)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(last.TimeIndex, st.Size()-format.TimeIndexEntrySize); err != nil {
				t.Fatal(err)
			}
			setAllMtimes(t, dir, oldMtime)
			d := sameLookups(t, openLookup(t, dir, partition.IndexesAsFound), rebuilt, targets)
			if len(d) == 0 {
				t.Errorf("control: without the close entry the answers still agree; the comparison cannot fail")
			}
			t.Logf("control: %d differences, first %v", len(d), d[:min(2, len(d))])
		})
	}
}

// TestCleanCloseFiles checks the files a close leaves: the max timestamp
// entry, a producer snapshot at the log end offset, and the
// leader-epoch-checkpoint with the epoch written in the batches.
func TestCleanCloseFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{PartitionLeaderEpoch: 7})
	for _, ts := range []int64{1_700_000_000_500, 1_700_000_000_100} {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("v"), Timestamp: ts}}}); err != nil {
			t.Fatal(err)
		}
	}
	closeA(t, a)
	tidx, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex"))
	if err != nil {
		t.Fatal(err)
	}
	x := format.TimeIndex{Data: tidx}
	if x.Entries() != 1 || x.Entry(0) != (format.TimeEntry{Timestamp: 1_700_000_000_500, Offset: 0}) {
		t.Errorf(".timeindex %x: want the one entry (1700000000500, offset 0)", tidx)
	}
	snap, err := os.ReadFile(filepath.Join(dir, "00000000000000000002.snapshot"))
	if err != nil {
		t.Fatalf("no producer snapshot at the log end offset: %v", err)
	}
	if _, err := format.ParseProducerSnapshot(snap); err != nil {
		t.Error(err)
	}
	checkEpochFile(t, dir, "0\n1\n7 0\n")
	batches, _ := readKlog(t, dir)
	for _, b := range batches {
		if b.PartitionLeaderEpoch != 7 {
			t.Errorf("batch %d has leader epoch %d, want 7", b.BaseOffset, b.PartitionLeaderEpoch)
		}
	}
	// A second close with nothing appended writes nothing new.
	a = open(t, dir, produce.Options{PartitionLeaderEpoch: 7})
	closeA(t, a)
	if x, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex")); len(x) != 12 {
		t.Errorf(".timeindex grew to %d bytes on an empty session", len(x))
	}
	// A new leader epoch starts at the log end offset; truncation drops
	// the entries above the cut.
	a = open(t, dir, produce.Options{PartitionLeaderEpoch: 7})
	if err := a.SetLeaderEpoch(9); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(&produce.Batch{Records: values("x", 2)}); err != nil {
		t.Fatal(err)
	}
	checkEpochFile(t, dir, "0\n2\n7 0\n9 2\n")
	if _, err := a.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	checkEpochFile(t, dir, "0\n1\n7 0\n")
	closeA(t, a)
}

func checkEpochFile(t *testing.T, dir, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, partition.LeaderEpochCheckpoint))
	if err != nil || string(got) != want {
		t.Errorf("leader-epoch-checkpoint %q (%v), want %q", got, err, want)
	}
}

// TestEpochsRebuiltWithoutCheckpoint: a partition whose checkpoint is gone
// gets one rebuilt from the batches' epochs when a writer opens it, as a
// recovering broker would assign them.
func TestEpochsRebuiltWithoutCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{PartitionLeaderEpoch: 2})
	idem(t, a, 1, 0, 3, false)
	if err := a.SetLeaderEpoch(4); err != nil {
		t.Fatal(err)
	}
	idem(t, a, 1, 0, 2, false)
	closeA(t, a)
	if err := os.Remove(filepath.Join(dir, partition.LeaderEpochCheckpoint)); err != nil {
		t.Fatal(err)
	}
	a = open(t, dir, produce.Options{PartitionLeaderEpoch: 4})
	closeA(t, a)
	checkEpochFile(t, dir, "0\n2\n2 0\n4 3\n")
}

// TestCloseKafkaUnclosedSegment: a writer that opens and closes the
// segment a crashed broker left (preallocated, zero-filled index tails, no
// close entry) leaves it as a clean shutdown does: indexes trimmed to their
// entries, the max timestamp entry appended, epochs and a producer snapshot
// written. Kafka 4.3.1 opened that fixture cleanly answers MAX_TIMESTAMP with
// nothing and after recovery with offset 8 (its kafka-listoffsets.json);
// after klog's close both opens answer offset 8.
func TestCloseKafkaUnclosedSegment(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "v2-active-segment-unclosed")
	setAllMtimes(t, dir, oldMtime)
	if r, _ := openLookup(t, dir, partition.IndexesAsFound).FetchOffsetByTimestamp(partition.MaxTimestamp); r.Found {
		t.Fatalf("before: MAX_TIMESTAMP as found %+v, Kafka found nothing", r)
	}
	a := open(t, dir, produce.Options{})
	closeA(t, a)
	idx, err := os.ReadFile(filepath.Join(dir, partition.FileName(0, partition.IndexSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	tidx, err := os.ReadFile(filepath.Join(dir, partition.FileName(0, partition.TimeIndexSuffix)))
	if err != nil {
		t.Fatal(err)
	}
	x, tx := format.OffsetIndex{Data: idx}, format.TimeIndex{Data: tidx}
	if len(idx) == 0 || len(idx) >= 4096 || x.Used() != x.Entries() || len(idx)%format.OffsetIndexEntrySize != 0 {
		t.Errorf(".index is %d bytes, %d entries used of %d: want the zero tail trimmed", len(idx), x.Used(), x.Entries())
	}
	if len(tidx) >= 4092 || tx.Used() != tx.Entries() || tx.LastEntry() != (format.TimeEntry{Timestamp: 1700000000004, Offset: 9}) {
		t.Errorf(".timeindex is %d bytes, last entry %+v: want the zero tail trimmed and the close entry (1700000000004, 9)", len(tidx), tx.LastEntry())
	}
	setAllMtimes(t, dir, oldMtime)
	found, rebuilt := openLookup(t, dir, partition.IndexesAsFound), openLookup(t, dir, partition.IndexesRebuilt)
	if d := sameLookups(t, found, rebuilt, lookupTargets(t, dir)); len(d) > 0 {
		t.Errorf("after close, a clean open and a recovering open differ: %v", d)
	}
	if r, _ := found.FetchOffsetByTimestamp(partition.MaxTimestamp); !r.Found || r.Offset != 8 || r.Timestamp != 1700000000004 {
		t.Errorf("after close: MAX_TIMESTAMP %+v, want offset 8 at 1700000000004 (Kafka's answer after recovery)", r)
	}
	if _, err := os.Stat(filepath.Join(dir, partition.FileName(10, partition.SnapshotSuffix))); err != nil {
		t.Errorf("no producer snapshot at the log end offset 10: %v", err)
	}
}

// TestBadEpochCheckpointRefused: a leader-epoch-checkpoint that does not
// parse stops the appender before it writes anything, as it stops a broker's
// load.
func TestBadEpochCheckpointRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	if _, err := a.Append(&produce.Batch{Records: values("x", 2)}); err != nil {
		t.Fatal(err)
	}
	closeA(t, a)
	path := filepath.Join(dir, partition.LeaderEpochCheckpoint)
	if err := os.WriteFile(path, []byte("0\n2\n0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex"))
	_, err := produce.Open(dir, produce.Options{})
	var le *partition.LookupError
	if !errors.As(err, &le) || le.Path != path || !strings.Contains(err.Error(), "Expected [2] entries") {
		t.Fatalf("open: %v, want a partition.LookupError naming %s", err, path)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex"))
	if string(before) != string(after) {
		t.Errorf("the refused open changed the time index")
	}
	if _, err := partition.OpenLog(dir, partition.LogOptions{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("lookup open: %v, want an error naming %s", err, path)
	}
}
