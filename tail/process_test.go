package tail

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// helperEnv makes the test binary the appending process of
// TestAnotherProcessAppends: KLOG_TAIL_APPEND=<dir>,<batches>.
const helperEnv = "KLOG_TAIL_APPEND"

func TestMain(m *testing.M) {
	if v := os.Getenv(helperEnv); v != "" {
		if err := appendAsHelper(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// appendAsHelper appends batches to a partition directory with package
// produce, then checkpoints the high watermark at the log end offset as a
// broker does (a temporary file renamed over the checkpoint).
func appendAsHelper(arg string) error {
	dir, n, ok := cutLast(arg)
	if !ok {
		return fmt.Errorf("%s=%q: want <dir>,<batches>", helperEnv, arg)
	}
	a, err := produce.Open(dir, produce.Options{SegmentBytes: 2048})
	if err != nil {
		return err
	}
	for i := range n {
		if _, err := a.Append(newBatch(i%3+1, i)); err != nil {
			a.Close()
			return err
		}
	}
	leo := a.LogEndOffset()
	if err := a.Close(); err != nil {
		return err
	}
	topic, p, _ := partition.ParseDirName(filepath.Base(dir))
	data := format.AppendOffsetCheckpoint(nil, []format.OffsetEntry{{Topic: topic, Partition: p, Offset: leo}})
	return partition.WriteFileAtomic(filepath.Join(filepath.Dir(dir), partition.ReplicationCheckpoint), data, partition.WriteOptions{})
}

func cutLast(s string) (string, int, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ',' {
			n, err := strconv.Atoi(s[i+1:])
			return s[:i], n, err == nil && n > 0
		}
	}
	return "", 0, false
}

// TestAnotherProcessAppends: another process appends to a tailed
// partition (rolling segments) and checkpoints its high watermark; the
// tail's model, opened once, follows it: every batch is reported once and
// in order, the log end offset and high watermark events reach the other
// process's values, and the partition's Log is never opened again.
// Not parallel: testHookOpenLog is the package's.
func TestAnotherProcessAppends(t *testing.T) {
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-2")
	a := openAppender(t, dir, produce.Options{})
	appendN(t, a, 3)
	a.Close()

	var opens atomic.Int32
	testHookOpenLog = func(d string) {
		if d == dir {
			opens.Add(1)
		}
	}
	t.Cleanup(func() { testHookOpenLog = nil })
	r := startTail(t, []string{logDir}, Options{})
	st, _ := r.waitFor(t, 0, "state", isType(TypeState))
	if st.HighWatermark != -1 {
		t.Fatalf("state hw %d, want -1 (no checkpoint yet)", st.HighWatermark)
	}

	const batches = 60
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir+","+strconv.Itoa(batches))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("appending process: %v\n%s", err, out)
	}
	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Segments) < 3 {
		t.Fatalf("the other process left %d segments, want rolls", len(d.Segments))
	}
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()

	ev, _ := r.waitFor(t, 0, "the high watermark at the other process's end", func(ev Event) bool {
		return ev.Type == TypeHighWatermark && ev.HighWatermark == leo
	})
	if ev.Change.From != -1 || ev.LogEndOffset != leo || ev.Gap != 0 {
		t.Fatalf("hw event %+v change %+v, want -1 -> %d at leo %d", ev, ev.Change, leo, leo)
	}
	evs := r.events()
	checkLEOChain(t, evs, st.LogEndOffset, leo)
	var next int64 = st.LogEndOffset
	for _, b := range ofType(evs, TypeBatch) {
		if b.Batch.BaseOffset != next {
			t.Fatalf("batch at %d, want %d:\n%s", b.Batch.BaseOffset, next, describe(evs))
		}
		next = b.Batch.NextOffset()
	}
	if n := len(ofType(evs, TypeBatch)); n != batches || next != leo {
		t.Fatalf("%d batch events ending at %d, want %d ending at %d", n, next, batches, leo)
	}
	if len(ofType(evs, TypeRoll)) == 0 {
		t.Fatalf("no roll reported:\n%s", describe(evs))
	}
	if n := opens.Load(); n != 1 {
		t.Fatalf("the partition's model was opened %d times, want once", n)
	}
}
