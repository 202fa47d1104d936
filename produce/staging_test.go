package produce

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
)

// feedInput is n lines of about 200 bytes.
func feedInput(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%07d-%s\n", i, strings.Repeat("v", 190))
	}
	return b.String()
}

// TestFeedAcksWhatIsWritten: when Run reports a batch, the batch is in the
// log and so are the index entries of it and of every batch before it (an
// acknowledged batch survives a kill of the process); and the batches are
// written together, not one system call each: far fewer writes than
// batches.
func TestFeedAcksWhatIsWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := Open(dir, Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	type ack struct {
		r                  Result
		logSize, indexSize int64
	}
	var acks []ack
	flushes := 0
	size := func(suffix string) int64 {
		st, err := os.Stat(filepath.Join(dir, "00000000000000000000"+suffix))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	feed := &Feed{MaxRecords: 500, MaxBytes: 16384, Flushed: func() { flushes++ }}
	err = feed.Run(context.Background(), a, strings.NewReader(feedInput(20000)), func(r Result) {
		acks = append(acks, ack{r, size(".log"), size(".index")})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.index"))
	if err != nil {
		t.Fatal(err)
	}
	if len(acks) < 100 || len(index) < 100*format.OffsetIndexEntrySize {
		t.Fatalf("%d batches, %d index bytes: the input should make more", len(acks), len(index))
	}
	for _, k := range acks {
		if end := k.r.Position + k.r.Size; k.logSize < end {
			t.Fatalf("batch at offset %d reported with the log at %d bytes, before its end %d", k.r.BaseOffset, k.logSize, end)
		}
		// Every entry of the final index for offsets up to this batch
		// was written when it was reported.
		need := int64(0)
		for e := index; len(e) >= format.OffsetIndexEntrySize; e = e[format.OffsetIndexEntrySize:] {
			if int64(binary.BigEndian.Uint32(e)) > k.r.LastOffset {
				break
			}
			need += format.OffsetIndexEntrySize
		}
		if k.indexSize < need {
			t.Fatalf("batch at offset %d reported with %d index bytes, %d needed for it", k.r.BaseOffset, k.indexSize, need)
		}
	}
	if max := len(acks) / 20; flushes > max || flushes == 0 {
		t.Errorf("%d writes for %d batches, want at most %d (about 1 MiB a write)", flushes, len(acks), max)
	}
	if recs := readBack(t, dir); len(recs) != 20000 {
		t.Errorf("%d records in the log, want 20000", len(recs))
	}
}

// TestFeedFlushesBeforeWaiting: a batch is written and reported before
// Run waits for more input, not held until a MiB is staged: each full
// batch's response arrives while the writer still holds the pipe open.
func TestFeedFlushesBeforeWaiting(t *testing.T) {
	a, err := Open(filepath.Join(t.TempDir(), "t-0"), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	pr, pw := io.Pipe()
	got := make(chan Result, 10)
	done := make(chan error, 1)
	feed := &Feed{MaxRecords: 3}
	go func() { done <- feed.Run(context.Background(), a, pr, func(r Result) { got <- r }) }()
	for i := range 4 {
		if _, err := io.WriteString(pw, "a\nb\nc\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-got:
			if r.BaseOffset != int64(3*i) {
				t.Fatalf("batch %d at offset %d", i, r.BaseOffset)
			}
		case <-time.After(time.Minute):
			t.Fatalf("batch %d not reported while the input waits", i)
		}
	}
	// A batch not full is not held back either: the input waits after
	// two lines of a three-record batch (a console producer's linger).
	if _, err := io.WriteString(pw, "d\ne\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.BaseOffset != 12 || r.LastOffset != 13 {
			t.Fatalf("the partial batch is %d-%d, want 12-13", r.BaseOffset, r.LastOffset)
		}
	case <-time.After(time.Minute):
		t.Fatal("a batch not full was held back while the input waits")
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestFeedWriteFailureKeepsNothing: when the staged batches cannot all be
// written (the index refuses), none of them is reported or kept: the log
// is cut back to where it was, and the next run appends at the old end.
func TestFeedWriteFailureKeepsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := Open(dir, Options{Sync: SyncNever, IndexIntervalBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	feed := &Feed{MaxRecords: 10}
	if err := feed.Run(context.Background(), a, strings.NewReader(feedInput(25)), nil); err != nil {
		t.Fatal(err)
	}
	leo, size := a.LogEndOffset(), a.seg.size
	good := a.seg.index
	ro, err := os.Open(good.Name())
	if err != nil {
		t.Fatal(err)
	}
	a.seg.index = ro
	reported := 0
	err = feed.Run(context.Background(), a, strings.NewReader(feedInput(200)), func(Result) { reported++ })
	if err == nil || reported != 0 {
		t.Fatalf("run with a failing index write: err %v, %d batches reported", err, reported)
	}
	st, err := os.Stat(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != size || a.LogEndOffset() != leo || a.seg.size != size {
		t.Errorf("after the failed run: log %d bytes, LEO %d (state %d); want %d bytes, LEO %d", st.Size(), a.LogEndOffset(), a.seg.size, size, leo)
	}
	ro.Close()
	a.seg.index = good
	var first int64 = -1
	if err := feed.Run(context.Background(), a, strings.NewReader(feedInput(5)), func(r Result) {
		if first < 0 {
			first = r.BaseOffset
		}
	}); err != nil {
		t.Fatal(err)
	}
	if first != leo {
		t.Errorf("the next run starts at offset %d, want %d", first, leo)
	}
	a.Close()
	if recs := readBack(t, dir); len(recs) != 30 || !bytes.HasPrefix(recs[25].Value, []byte("0000000-")) {
		t.Errorf("%d records, want the 25 before and the 5 after", len(recs))
	}
}

// TestFeedRollsWhileStaging: batches staged across a segment roll land in
// their segments with contiguous offsets, and each reported result names
// the segment and position its batch is at.
func TestFeedRollsWhileStaging(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := Open(dir, Options{Sync: SyncNever, SegmentBytes: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var res []Result
	feed := &Feed{MaxRecords: 50}
	if err := feed.Run(context.Background(), a, strings.NewReader(feedInput(3000)), func(r Result) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	segs := map[string]bool{}
	next := int64(0)
	for _, r := range res {
		if r.BaseOffset != next {
			t.Fatalf("batch at %d, want %d", r.BaseOffset, next)
		}
		next = r.LastOffset + 1
		segs[r.Segment] = true
		f, err := os.Open(r.Segment)
		if err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, r.Size)
		_, err = f.ReadAt(raw, r.Position)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, err := format.ParseBatch(raw, r.Position)
		if err != nil || b.BaseOffset != r.BaseOffset || b.CheckCRC() != nil {
			t.Fatalf("%s at %d: %v, base %d, want a valid batch at %d", r.Segment, r.Position, err, b.BaseOffset, r.BaseOffset)
		}
	}
	if len(segs) < 5 {
		t.Errorf("%d segments, want the input to roll several", len(segs))
	}
	if next != 3000 {
		t.Errorf("%d records reported, want 3000", next)
	}
}

// TestFeedAllocatesNothingPerLine: a Run's allocations do not grow with
// its lines (the lines are copied into one buffer per batch, the batches
// encoded into the staging buffer).
func TestFeedAllocatesNothingPerLine(t *testing.T) {
	a, err := Open(filepath.Join(t.TempDir(), "t-0"), Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	feed := &Feed{MaxRecords: 500, MaxBytes: 16384}
	small, large := feedInput(2000), feedInput(20000)
	run := func(in string) float64 {
		return testing.AllocsPerRun(2, func() {
			if err := feed.Run(context.Background(), a, strings.NewReader(in), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	run(large) // grow the buffers
	s, l := run(small), run(large)
	if l-s > 18000/50 {
		t.Errorf("%.0f allocations for 2,000 lines, %.0f for 20,000: more than one per 50 lines", s, l)
	}
}
