package partition_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// The model of a partition: one Log opened once and kept current.

// TestMain lets a test run this binary as another process that appends to
// a partition (KLOG_TEST_APPEND=dir:n appends n one-record batches and
// exits), so that a Log sees a real other writer.
func TestMain(m *testing.M) {
	if spec := os.Getenv("KLOG_TEST_APPEND"); spec != "" {
		os.Exit(appendMain(spec))
	}
	os.Exit(m.Run())
}

func appendMain(spec string) int {
	i := len(spec) - 1
	for i >= 0 && spec[i] != ':' {
		i--
	}
	n, err := strconv.Atoi(spec[i+1:])
	if i <= 0 || err != nil {
		return 2
	}
	a, err := produce.Open(spec[:i], produce.Options{Sync: produce.SyncNever})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	for j := range n {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("from another process " + strconv.Itoa(j))}}}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 1
		}
	}
	if err := a.Close(); err != nil {
		return 1
	}
	return 0
}

// appendFromAnotherProcess runs this test binary to append n batches to dir.
func appendFromAnotherProcess(t *testing.T, dir string, n int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KLOG_TEST_APPEND="+dir+":"+strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("appending process: %v\n%s", err, out)
	}
}

func newPartition(t *testing.T, dir string, n int) {
	t.Helper()
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, SegmentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("v" + strconv.Itoa(i)), Timestamp: base + int64(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, w *partition.Waiter, what string) {
	t.Helper()
	select {
	case <-w.C():
	case <-time.After(20 * time.Second):
		t.Fatalf("no wake-up: %s", what)
	}
}

// TestModelFollowsAnotherProcess: a Log opened once sees the appends of
// another process through a Follower: its log end offset moves and the
// waiters armed before the append wake, without the directory being opened
// again.
func TestModelFollowsAnotherProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	newPartition(t, dir, 3)
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.LogEndOffset(); got != 3 {
		t.Fatalf("log end offset %d, want 3", got)
	}
	f, err := partition.NewFollower()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Add(l); err != nil {
		t.Fatal(err)
	}
	w := partition.NewWaiter()
	defer w.Stop()
	w.Add(l)
	appendFromAnotherProcess(t, dir, 2)
	for l.LogEndOffset() != 5 {
		waitFor(t, w, "after another process appended")
	}
	o, err := l.Offsets()
	if err != nil {
		t.Fatal(err)
	}
	// No replication-offset-checkpoint: the high watermark follows the
	// log end.
	if o != (partition.Offsets{LogStartOffset: 0, LogEndOffset: 5, HighWatermark: 5, LastStableOffset: 5}) {
		t.Errorf("offsets %+v", o)
	}
	// The high watermark checkpoint the log dir gains is read too.
	if err := partition.UpdateCheckpointOffsets(filepath.Dir(dir), partition.ReplicationCheckpoint,
		[]format.OffsetEntry{{Topic: "orders", Partition: 0, Offset: 4}}, partition.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for l.HighWatermark() != 4 {
		waitFor(t, w, "after the checkpoint was rewritten")
	}
	// A lookup of a record the other process wrote, through the same Log.
	r, err := l.FetchOffsetByTimestamp(partition.LatestTimestamp)
	if err != nil || r.Offset != 5 {
		t.Errorf("LATEST: %+v %v", r, err)
	}
	select {
	case err := <-f.Errors():
		t.Errorf("follower: %v", err)
	default:
	}
}

// TestWaitersOfOnePartition: an append wakes the waiters of its partition
// and no others, whether the writer is in this process or the Follower sees
// it.
func TestWaitersOfOnePartition(t *testing.T) {
	t.Parallel()
	const n = 1000
	logDir := t.TempDir()
	logs := make([]*partition.Log, n)
	waiters := make([]*partition.Waiter, n)
	for i := range logs {
		dir := filepath.Join(logDir, "t-"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, partition.FileName(0, partition.LogSuffix)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := partition.OpenLog(dir, partition.LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
		waiters[i] = partition.NewWaiter()
		waiters[i].Add(l)
	}
	// A second waiter on partition 7 (two parked fetches of it), and one
	// waiting on 7 and 8 (a fetch of two partitions).
	also7, both := partition.NewWaiter(), partition.NewWaiter()
	also7.Add(logs[7])
	both.Add(logs[7])
	both.Add(logs[8])
	woken := func() []int {
		var out []int
		for i, w := range waiters {
			select {
			case <-w.C():
				out = append(out, i)
			default:
			}
		}
		return out
	}
	// The writer in this process.
	a, err := produce.Open(logs[7].Dir(), produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// That Appender has its own Log; this one is told by a Follower.
	f, err := partition.NewFollower()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, i := range []int{6, 7, 8} {
		if err := f.Add(logs[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Add read partition 7 again: it moved, its waiters woke.
	if got := woken(); len(got) != 1 || got[0] != 7 {
		t.Errorf("woken %v, want [7]", got)
	}
	waitFor(t, also7, "second waiter of 7")
	waitFor(t, both, "waiter of 7 and 8")
	if logs[7].LogEndOffset() != res.LastOffset+1 {
		t.Errorf("log end %d, want %d", logs[7].LogEndOffset(), res.LastOffset+1)
	}
	appendFromAnotherProcess(t, logs[8].Dir(), 1)
	waitFor(t, both, "waiter of 7 and 8, after 8 moved")
	waitFor(t, waiters[8], "waiter of 8")
	if got := woken(); len(got) != 0 {
		t.Errorf("woken %v after partition 8 moved, want none but 8's", got)
	}
	select {
	case <-also7.C():
		t.Errorf("a waiter of 7 woke when 8 moved")
	default:
	}
	for _, w := range waiters {
		w.Stop()
	}
}

// TestModelChanges: retention at the head, a roll, a truncation and a
// replaced segment, each seen by Refresh on the same Log.
func TestModelChanges(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, SegmentBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	app := func(n int) {
		for range n {
			if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("value")}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	app(12)
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	if len(segs) < 3 || l.LogEndOffset() != 12 {
		t.Fatalf("%d segments, log end %d", len(segs), l.LogEndOffset())
	}
	// Appends and a roll.
	app(12)
	if err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := len(l.Segments()); l.LogEndOffset() != 24 || got <= len(segs) {
		t.Errorf("after appends and rolls: log end %d, %d segments (was %d)", l.LogEndOffset(), got, len(segs))
	}
	// Retention deletes the first segment.
	for _, f := range []string{segs[0].Log, segs[0].Index, segs[0].TimeIndex} {
		os.Remove(f)
	}
	if err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := l.LogStartOffset(); got != segs[1].BaseOffset {
		t.Errorf("log start %d after retention, want %d", got, segs[1].BaseOffset)
	}
	// log-start-offset-checkpoint above the first segment (DeleteRecords).
	ls := segs[1].BaseOffset + 1
	if err := partition.UpdateCheckpointOffsets(filepath.Dir(dir), partition.LogStartCheckpoint,
		[]format.OffsetEntry{{Topic: "t", Partition: 0, Offset: ls}}, partition.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	l.Refresh()
	if got := l.LogStartOffset(); got != ls {
		t.Errorf("log start %d with the checkpoint, want %d", got, ls)
	}
	if r, _ := l.FetchOffsetByTimestamp(partition.EarliestTimestamp); r.Offset != ls {
		t.Errorf("EARLIEST %d, want the checkpoint's %d", r.Offset, ls)
	}
	// A truncation: the writer cuts back to offset 20.
	if _, err := a.TruncateTo(20); err != nil {
		t.Fatal(err)
	}
	if err := l.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := l.LogEndOffset(); got != 20 {
		t.Errorf("log end %d after truncation, want 20", got)
	}
	a.Close()
	// The directory removed: the error comes back, the Log stays usable
	// for what it knew.
	os.RemoveAll(dir)
	if err := l.Refresh(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refresh of a removed directory: %v", err)
	}
}

// TestConcurrentModel: readers, a writer's Log and a Follower at once (run
// with -race).
func TestConcurrentModel(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t-0")
	newPartition(t, dir, 10)
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := partition.NewFollower()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Add(l); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := partition.NewWaiter()
			defer w.Stop()
			w.Add(l)
			for {
				select {
				case <-stop:
					return
				default:
				}
				o, err := l.Offsets()
				if err != nil {
					t.Error(err)
					return
				}
				if o.LogEndOffset < 10 || o.HighWatermark > o.LogEndOffset {
					t.Errorf("offsets %+v", o)
					return
				}
				if _, err := l.ReadStart(0, o.HighWatermark); err != nil {
					t.Error(err)
					return
				}
				if _, err := l.FetchOffsetByTimestamp(base + 5); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, SegmentBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("w" + strconv.Itoa(i))}}}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	w := partition.NewWaiter()
	defer w.Stop()
	w.Add(l)
	for l.LogEndOffset() != 210 {
		waitFor(t, w, "the last append")
	}
	close(stop)
	wg.Wait()
}

// TestProducerState: the model's producer state keeps each producer's last
// five batches (ProducerStateEntry), answers a retry of one of them as a
// duplicate, and applies ProducerAppendInfo's epoch and sequence checks;
// after a snapshot it holds the snapshot's last batch and those after it.
func TestProducerState(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("p" + strconv.Itoa(i))}}, Producer: &produce.Producer{ID: 9}}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close() // a snapshot at offset 6: producer 9's last batch
	a, err = produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("q" + strconv.Itoa(i))}}, Producer: &produce.Producer{ID: 9}}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok, err := l.Producer(9)
	if err != nil || !ok {
		t.Fatalf("producer 9: %v %v", ok, err)
	}
	// The snapshot at 6 holds sequence 5 (offset 5); the log after it
	// sequences 6 and 7 (the snapshot written at 8 is not read: the log
	// end is 8, and it is the latest, so it is the one used).
	if n := len(p.Batches); n < 1 || p.Batches[n-1].LastSeq != 7 || p.Batches[n-1].LastOffset != 7 {
		t.Fatalf("batches %+v", p.Batches)
	}
	// Read from the log alone (no snapshot), the cache holds five.
	matches, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	for _, m := range matches {
		os.Remove(m)
	}
	l, err = partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ = l.Producer(9); len(p.Batches) != partition.MaxProducerBatches || p.Batches[0].LastSeq != 3 {
		t.Fatalf("from the log: %+v", p.Batches)
	}
	batch := func(epoch int16, seq int32, records int32) *format.Batch {
		return &format.Batch{Magic: format.MagicV2, ProducerID: 9, ProducerEpoch: epoch, BaseSequence: seq, LastOffsetDelta: records - 1}
	}
	for _, c := range []struct {
		name string
		b    *format.Batch
		dup  int64 // the duplicate's first offset, -1 none
		err  error
	}{
		{"retry of the last batch", batch(0, 7, 1), 7, nil},
		{"retry of the fifth last", batch(0, 3, 1), 3, nil},
		{"retry of the sixth last: no longer known", batch(0, 2, 1), -1, partition.ErrOutOfOrderSequence},
		{"next sequence", batch(0, 8, 3), -1, nil},
		{"a gap", batch(0, 9, 1), -1, partition.ErrOutOfOrderSequence},
		{"an older epoch", batch(-1, 8, 1), -1, partition.ErrInvalidProducerEpoch},
		{"a new epoch from 0", batch(1, 0, 1), -1, nil},
		{"a new epoch not from 0", batch(1, 4, 1), -1, partition.ErrOutOfOrderSequence},
		{"a producer the log does not know, anywhere", &format.Batch{Magic: format.MagicV2, ProducerID: 77, BaseSequence: 40}, -1, nil},
		{"no producer", &format.Batch{Magic: format.MagicV2, ProducerID: -1, BaseSequence: -1}, -1, nil},
	} {
		dup, err := l.CheckProducerBatch(c.b)
		if !errors.Is(err, c.err) || (err == nil && c.err != nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
		switch {
		case c.dup < 0 && dup != nil:
			t.Errorf("%s: duplicate %+v, want none", c.name, *dup)
		case c.dup >= 0 && (dup == nil || dup.FirstOffset != c.dup):
			t.Errorf("%s: duplicate %+v, want first offset %d", c.name, dup, c.dup)
		}
	}
}
