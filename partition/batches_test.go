package partition_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// TestTrackingWaiter: one waiter on several Logs says which of them
// changed, and forgets a Log removed from it.
func TestTrackingWaiter(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	var logs []*partition.Log
	for _, name := range []string{"a-0", "a-1", "a-2"} {
		dir := filepath.Join(logDir, name)
		newPartition(t, dir, 1)
		l, err := partition.OpenLog(dir, partition.LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	f, err := partition.NewFollower()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := partition.NewTrackingWaiter()
	defer w.Stop()
	for _, l := range logs {
		if err := f.Add(l); err != nil {
			t.Fatal(err)
		}
		w.Add(l)
	}
	appendFromAnotherProcess(t, logs[1].Dir(), 2)
	var got []*partition.Log
	for logs[1].LogEndOffset() != 3 || len(got) == 0 {
		waitFor(t, w, "after a-1 moved")
		got = w.Woken(got)
	}
	if slices.ContainsFunc(got, func(l *partition.Log) bool { return l != logs[1] }) {
		t.Errorf("woken %d logs, want a-1's alone", len(got))
	}
	if more := w.Woken(nil); len(more) != 0 {
		t.Errorf("Woken again: %d logs, want none", len(more))
	}
	if plain := partition.NewWaiter(); plain.Woken(nil) != nil {
		t.Errorf("a NewWaiter tracks nothing")
	}
	// Removed: a-2's changes no longer reach w.
	w.Remove(logs[2])
	appendFromAnotherProcess(t, logs[2].Dir(), 1)
	appendFromAnotherProcess(t, logs[0].Dir(), 1)
	for logs[0].LogEndOffset() != 2 {
		waitFor(t, w, "after a-0 moved")
	}
	if logs[2].LogEndOffset() != 2 {
		t.Fatalf("a-2 log end %d, want 2", logs[2].LogEndOffset())
	}
	if got := w.Woken(nil); slices.Contains(got, logs[2]) || !slices.Contains(got, logs[0]) {
		t.Errorf("woken after a-2 was removed: %d logs, want a-0's", len(got))
	}
}

// TestBatchReader: the whole batches of a segment from a position, then
// what follows them: nothing, a batch still being written, an entry the
// format rejects.
func TestBatchReader(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		junk     []byte
		kind     format.TailKind
		rejected bool
	}{
		{"clean end", nil, format.TailNone, false},
		{"short entry header", []byte{0, 0, 0, 0, 0, 0, 0, 3}, format.TailShort, false},
		{"partial batch", append([]byte{0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 1, 0}, make([]byte, 40)...), format.TailPartial, false},
		{"impossible size", []byte("\x00\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff junk after the log"), format.TailCorrupt, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "r-0")
			a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
			if err != nil {
				t.Fatal(err)
			}
			var res []produce.Result
			for i := range 3 {
				r, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte{byte(i)}}}})
				if err != nil {
					t.Fatal(err)
				}
				res = append(res, r)
			}
			a.Close()
			if c.junk != nil {
				f, err := os.OpenFile(res[0].Segment, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(c.junk)
				f.Close()
			}
			l, err := partition.OpenLog(dir, partition.LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			v, err := l.View()
			if err != nil {
				t.Fatal(err)
			}
			end := res[2].Position + res[2].Size
			seg := v.Segments[0]
			if v.LogEndOffset != 3 || seg.End() != end || seg.Size != end+int64(len(c.junk)) || v.CheckpointHighWatermark != -1 {
				t.Fatalf("view: leo %d end %d size %d hw %d", v.LogEndOffset, seg.End(), seg.Size, v.CheckpointHighWatermark)
			}
			r := partition.NewBatchReader(0)
			var got []int64
			out, err := r.Read(l, seg, res[1].Position, func(b *format.Batch, rejected error) error {
				if rejected != nil {
					t.Errorf("rejected %v", rejected)
					return nil
				}
				got = append(got, b.BaseOffset)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []int64{1, 2}) || out.Pos != end || out.Gone {
				t.Fatalf("read batches %v to %d (gone %v), want [1 2] to %d", got, out.Pos, out.Gone, end)
			}
			if out.Tail.Kind != c.kind || out.Tail.Pos != end || (out.Err != nil) != c.rejected {
				t.Fatalf("tail %+v err %v, want kind %v at %d", out.Tail, out.Err, c.kind, end)
			}
			if c.rejected && out.Tail.Offset != 3 {
				t.Errorf("corrupt entry's offset %d, want 3", out.Tail.Offset)
			}
			os.Remove(res[0].Segment)
			if out, err := r.Read(l, seg, 0, func(*format.Batch, error) error { return nil }); err != nil || !out.Gone {
				t.Errorf("removed segment: %+v %v, want gone", out, err)
			}
		})
	}
}
