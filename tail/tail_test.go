package tail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// waitTimeout bounds every wait for an event; events normally arrive in
// well under a millisecond.
const waitTimeout = 10 * time.Second

// recorder collects the events of one Run, with the time each arrived.
type recorder struct {
	mu     sync.Mutex
	evs    []Event
	at     []time.Time
	notify chan struct{}
	done   chan struct{}
}

// startTail runs Run in the background until the test ends, and checks
// that it stops cleanly (nil error, events channel closed).
func startTail(t testing.TB, paths []string, opts Options) *recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan Event, 64)
	r := &recorder{notify: make(chan struct{}, 1), done: make(chan struct{})}
	runErr := make(chan error, 1)
	go func() { runErr <- Run(ctx, paths, opts, ch) }()
	go func() {
		for ev := range ch {
			now := time.Now()
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			r.at = append(r.at, now)
			r.mu.Unlock()
			select {
			case r.notify <- struct{}{}:
			default:
			}
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-runErr:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("Run did not return after cancel")
		}
		<-r.done
	})
	return r
}

// events returns the events so far. The recorder only appends, so the
// returned prefix never changes and needs no copy.
func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.evs[:len(r.evs):len(r.evs)]
}

// wait returns the events once cond holds for them, failing the test after
// waitTimeout.
func (r *recorder) wait(t testing.TB, what string, cond func([]Event) bool) []Event {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		evs := r.events()
		if cond(evs) {
			return evs
		}
		select {
		case <-r.notify:
		case <-r.done:
			if evs := r.events(); cond(evs) {
				return evs
			}
			t.Fatalf("Run ended before %s:\n%s", what, describe(r.events()))
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; events:\n%s", what, describe(r.events()))
		}
	}
}

// waitFor waits for the first event after index from that matches, and
// returns it with its index.
func (r *recorder) waitFor(t testing.TB, from int, what string, match func(Event) bool) (Event, int) {
	t.Helper()
	var ev Event
	idx := -1
	r.wait(t, what, func(evs []Event) bool {
		for i := from; i < len(evs); i++ {
			if match(evs[i]) {
				ev, idx = evs[i], i
				return true
			}
		}
		return false
	})
	return ev, idx
}

func describe(evs []Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "  %s %s leo=%d hw=%d seg=%s", ev.Type, filepath.Base(ev.Dir), ev.LogEndOffset, ev.HighWatermark, ev.Segment)
		if ev.BatchInfo != nil {
			fmt.Fprintf(&b, " batch=%d..%d@%d", ev.BatchInfo.BaseOffset, ev.BatchInfo.LastOffset, ev.BatchInfo.Position)
		}
		if ev.Change != nil {
			fmt.Fprintf(&b, " change=%d->%d", ev.Change.From, ev.Change.To)
		}
		if ev.Problem != nil {
			fmt.Fprintf(&b, " problem=%q", ev.Problem.Message)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func ofType(evs []Event, typ Type) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func isType(typ Type) func(Event) bool { return func(ev Event) bool { return ev.Type == typ } }

func batchEnding(last int64) func(Event) bool {
	return func(ev Event) bool { return ev.Type == TypeBatch && ev.Batch.LastOffset() == last }
}

func openAppender(t testing.TB, dir string, opts produce.Options) *produce.Appender {
	t.Helper()
	a, err := produce.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// appendN appends n batches of 1..3 records each and returns the results.
func appendN(t testing.TB, a *produce.Appender, n int) []produce.Result {
	t.Helper()
	var res []produce.Result
	for i := range n {
		r, err := a.Append(newBatch(i%3+1, i))
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return res
}

func newBatch(records, seed int) *produce.Batch {
	b := &produce.Batch{}
	for j := range records {
		b.Records = append(b.Records, format.Record{Key: []byte(fmt.Sprintf("k%d", seed)), Value: []byte(fmt.Sprintf("value %d.%d", seed, j))})
	}
	return b
}

// writeHW rewrites dir's replication-offset-checkpoint as a broker does:
// a temporary file renamed over it.
func writeHW(t testing.TB, dir string, entries ...format.OffsetEntry) {
	t.Helper()
	tmp := filepath.Join(dir, partition.ReplicationCheckpoint+".tmp")
	if err := os.WriteFile(tmp, format.AppendOffsetCheckpoint(nil, entries), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, partition.ReplicationCheckpoint)); err != nil {
		t.Fatal(err)
	}
}

// checkBatches asserts that the batch events are exactly the appends, once
// each and in order, with the right segment, position and bytes.
func checkBatches(t *testing.T, dir string, evs []Event, want []produce.Result) {
	t.Helper()
	got := ofType(evs, TypeBatch)
	if len(got) != len(want) {
		t.Fatalf("%d batch events, want %d:\n%s", len(got), len(want), describe(evs))
	}
	for i, ev := range got {
		w := want[i]
		b := ev.Batch
		if b.BaseOffset != w.BaseOffset || b.LastOffset() != w.LastOffset || b.Pos != w.Position ||
			ev.Segment != filepath.Base(w.Segment) || ev.LogEndOffset != w.LastOffset+1 {
			t.Fatalf("batch event %d: offsets %d..%d at %s:%d leo %d, want %d..%d at %s:%d",
				i, b.BaseOffset, b.LastOffset(), ev.Segment, b.Pos, ev.LogEndOffset, w.BaseOffset, w.LastOffset, filepath.Base(w.Segment), w.Position)
		}
		if !b.Valid() || ev.BatchInfo == nil || !ev.BatchInfo.IsValid || ev.BatchInfo.Position != w.Position {
			t.Fatalf("batch event %d: invalid or inconsistent batch info %+v", i, ev.BatchInfo)
		}
		data, err := os.ReadFile(filepath.Join(dir, ev.Segment))
		if err != nil {
			t.Fatal(err)
		}
		if string(data[w.Position:w.Position+w.Size]) != string(b.Raw) {
			t.Fatalf("batch event %d: bytes differ from the file", i)
		}
	}
	// Clones alias nothing: every event still holds its own bytes.
	for i := 1; i < len(got); i++ {
		if &got[i].Batch.Raw[0] == &got[i-1].Batch.Raw[0] {
			t.Fatalf("batch events %d and %d share a buffer", i-1, i)
		}
	}
}

// checkLEOChain asserts that log end offset events chain (each from the
// previous to), end at want, and only ever land on a batch boundary.
func checkLEOChain(t *testing.T, evs []Event, start, want int64) {
	t.Helper()
	bounds := map[int64]bool{start: true}
	for _, ev := range ofType(evs, TypeBatch) {
		bounds[ev.Batch.NextOffset()] = true
	}
	leo := start
	for _, ev := range ofType(evs, TypeLogEndOffset) {
		if ev.Change.From != leo || ev.Change.To != ev.LogEndOffset || !bounds[ev.Change.To] {
			t.Fatalf("log end offset event %d -> %d (leo %d) after %d:\n%s", ev.Change.From, ev.Change.To, ev.LogEndOffset, leo, describe(evs))
		}
		leo = ev.Change.To
	}
	if leo != want {
		t.Fatalf("log end offset events end at %d, want %d", leo, want)
	}
}

// TestBatchesOnceInOrder: a tail started at the end reports nothing that was
// there, then every batch another goroutine appends exactly once, in
// order, and log end offset events that match the appends.
func TestBatchesOnceInOrder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{})
	before := appendN(t, a, 5)
	r := startTail(t, []string{dir}, Options{})
	st, _ := r.waitFor(t, 0, "state", isType(TypeState))
	if st.LogEndOffset != a.LogEndOffset() || st.Topic != "orders" || st.Partition != 0 || st.HighWatermark != -1 || st.Segments != 1 {
		t.Fatalf("state %+v, want leo %d", st, a.LogEndOffset())
	}
	start := a.LogEndOffset()
	results := make(chan []produce.Result, 1)
	go func() {
		var res []produce.Result
		for i := range 300 {
			r, err := a.Append(newBatch(i%4+1, i))
			if err != nil {
				t.Error(err)
				break
			}
			res = append(res, r)
		}
		results <- res
	}()
	res := <-results
	last := res[len(res)-1].LastOffset
	evs := r.wait(t, "the last log end offset", func(evs []Event) bool {
		for _, ev := range evs {
			if ev.Type == TypeLogEndOffset && ev.LogEndOffset == last+1 {
				return true
			}
		}
		return false
	})
	checkBatches(t, dir, evs, res)
	checkLEOChain(t, evs, start, last+1)
	for _, ev := range ofType(evs, TypeBatch) {
		if ev.Batch.BaseOffset < before[len(before)-1].LastOffset+1 {
			t.Fatalf("a batch from before the start was reported: %d", ev.Batch.BaseOffset)
		}
	}
	for _, ev := range evs {
		if ev.Time.Location() != time.UTC || ev.Time.IsZero() {
			t.Fatalf("event time %v is not UTC", ev.Time)
		}
	}
}

// TestFromBeginning replays the batches that are there before the state.
func TestFromBeginning(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-3")
	a := openAppender(t, dir, produce.Options{SegmentBytes: 400})
	res := appendN(t, a, 12)
	r := startTail(t, []string{dir}, Options{FromBeginning: true})
	evs := r.wait(t, "state", func(evs []Event) bool { return len(ofType(evs, TypeState)) == 1 })
	checkBatches(t, dir, evs, res)
	if n := len(ofType(evs, TypeRoll)) + len(ofType(evs, TypeLogEndOffset)); n != 0 {
		t.Fatalf("a replay reports no rolls or log end offset changes, got %d:\n%s", n, describe(evs))
	}
	if st := evs[len(evs)-1]; st.Type != TypeState || st.LogEndOffset != a.LogEndOffset() || st.Segments < 3 {
		t.Fatalf("the state comes last with leo %d and every segment: %+v", a.LogEndOffset(), st)
	}
}

// TestHighWatermark: a checkpoint rewritten by rename gives an HW event,
// and the gap follows the log end offset.
func TestHighWatermark(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-0")
	a := openAppender(t, dir, produce.Options{})
	appendN(t, a, 4) // offsets 0..7
	writeHW(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 0, Offset: 3}, format.OffsetEntry{Topic: "other", Partition: 0, Offset: 9})
	r := startTail(t, []string{logDir}, Options{})
	st, _ := r.waitFor(t, 0, "state", isType(TypeState))
	if st.HighWatermark != 3 || st.Gap != st.LogEndOffset-3 {
		t.Fatalf("state hw %d gap %d leo %d", st.HighWatermark, st.Gap, st.LogEndOffset)
	}
	res := appendN(t, a, 1)
	leo := res[0].LastOffset + 1
	ev, i := r.waitFor(t, 0, "log end offset", isType(TypeLogEndOffset))
	if ev.LogEndOffset != leo || ev.Gap != leo-3 {
		t.Fatalf("leo event %+v, want leo %d gap %d", ev, leo, leo-3)
	}
	writeHW(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 0, Offset: leo - 1}, format.OffsetEntry{Topic: "other", Partition: 0, Offset: 9})
	ev, i = r.waitFor(t, i+1, "high watermark", isType(TypeHighWatermark))
	if ev.Change.From != 3 || ev.Change.To != leo-1 || ev.HighWatermark != leo-1 || ev.Gap != 1 {
		t.Fatalf("hw event %+v change %+v", ev, ev.Change)
	}
	// The entry disappears: the high watermark is unknown again.
	writeHW(t, logDir, format.OffsetEntry{Topic: "other", Partition: 0, Offset: 10})
	ev, _ = r.waitFor(t, i+1, "high watermark gone", isType(TypeHighWatermark))
	if ev.Change.From != leo-1 || ev.Change.To != -1 || ev.Gap != 0 {
		t.Fatalf("hw event %+v change %+v", ev, ev.Change)
	}
	if n := len(ofType(r.events(), TypeHighWatermark)); n != 2 {
		t.Fatalf("%d high watermark events, want 2 (an unchanged entry is not reported)", n)
	}
}

// TestRoll: with a tiny segment.bytes every roll is reported, before the
// batches of the new segment, and no batch is lost or repeated across it.
func TestRoll(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{SegmentBytes: 300})
	r := startTail(t, []string{dir}, Options{})
	r.waitFor(t, 0, "state", isType(TypeState))
	done := make(chan []produce.Result, 1)
	go func() {
		var res []produce.Result
		for i := range 40 {
			r, err := a.Append(newBatch(i%3+1, i))
			if err != nil {
				t.Error(err)
				break
			}
			res = append(res, r)
		}
		done <- res
	}()
	res := <-done
	evs := r.wait(t, "the last batch", func(evs []Event) bool {
		return slices.ContainsFunc(evs, batchEnding(res[len(res)-1].LastOffset))
	})
	checkBatches(t, dir, evs, res)
	var segs []string
	for _, x := range res {
		if s := filepath.Base(x.Segment); len(segs) == 0 || segs[len(segs)-1] != s {
			segs = append(segs, s)
		}
	}
	var rolled []string
	seg := "00000000000000000000.log"
	for _, ev := range evs {
		switch ev.Type {
		case TypeRoll:
			rolled = append(rolled, ev.Segment)
			seg = ev.Segment
			if off, _, _ := partition.ParseFileName(ev.Segment); off != ev.LogEndOffset {
				t.Fatalf("roll to %s at log end offset %d", ev.Segment, ev.LogEndOffset)
			}
		case TypeBatch:
			if ev.Segment != seg {
				t.Fatalf("batch in %s reported before the roll to it (current %s)", ev.Segment, seg)
			}
		}
	}
	if len(segs) < 5 || !slices.Equal(rolled, segs[1:]) {
		t.Fatalf("rolls %v, want %v", rolled, segs[1:])
	}
}

// TestSegmentDeleted: retention's rename to .deleted and a plain removal
// are each reported, and the log start offset moves.
func TestSegmentDeleted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{SegmentBytes: 300})
	res := appendN(t, a, 20)
	segs := segmentsOf(t, dir)
	if len(segs) < 4 {
		t.Fatalf("want 4+ segments, have %v", segs)
	}
	r := startTail(t, []string{dir}, Options{})
	r.waitFor(t, 0, "state", isType(TypeState))
	first := filepath.Join(dir, segs[0])
	if err := os.Rename(first, first+".deleted"); err != nil {
		t.Fatal(err)
	}
	ev, i := r.waitFor(t, 0, "the rename", isType(TypeSegmentDeleted))
	if ev.Segment != segs[0] || ev.RenamedTo != segs[0]+".deleted" || ev.LogStartOffset != baseOf(segs[1]) || ev.Segments != len(segs)-1 {
		t.Fatalf("deleted event %+v", ev)
	}
	if err := os.Remove(filepath.Join(dir, segs[1])); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(t, i+1, "the removal", isType(TypeSegmentDeleted))
	if ev.Segment != segs[1] || ev.RenamedTo != "" || ev.LogStartOffset != baseOf(segs[2]) {
		t.Fatalf("deleted event %+v", ev)
	}
	// The log end did not move.
	if ev.LogEndOffset != res[len(res)-1].LastOffset+1 || len(ofType(r.events(), TypeTruncated)) != 0 {
		t.Fatalf("deletion at the head changed the end: %s", describe(r.events()))
	}
}

// TestTruncation: a segment cut back to a batch boundary is reported with
// the old and new log end offset; the batches written after are reported.
// Whole segments removed from the end are a truncation too.
func TestTruncation(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{SegmentBytes: 600})
	res := appendN(t, a, 20)
	a.Close()
	segs := segmentsOf(t, dir)
	if len(segs) < 3 {
		t.Fatalf("want 3+ segments, have %v", segs)
	}
	r := startTail(t, []string{dir}, Options{})
	st, _ := r.waitFor(t, 0, "state", isType(TypeState))
	leo := st.LogEndOffset

	// Cut the active segment at its second batch.
	active := filepath.Join(dir, segs[len(segs)-1])
	var inActive []produce.Result
	for _, x := range res {
		if x.Segment == active {
			inActive = append(inActive, x)
		}
	}
	if len(inActive) < 3 {
		t.Fatalf("want 3+ batches in the active segment, have %d", len(inActive))
	}
	cut := inActive[1]
	size := fileSize(t, active)
	if err := os.Truncate(active, cut.Position); err != nil {
		t.Fatal(err)
	}
	ev, i := r.waitFor(t, 0, "truncation", isType(TypeTruncated))
	if ev.Segment != segs[len(segs)-1] || ev.Truncation.PrevSizeBytes != size || ev.Truncation.SizeBytes != cut.Position ||
		ev.Change.From != leo || ev.Change.To != cut.BaseOffset || ev.LogEndOffset != cut.BaseOffset {
		t.Fatalf("truncated event %+v %+v %+v", ev, ev.Truncation, ev.Change)
	}
	lev, _ := r.waitFor(t, i+1, "log end offset after truncation", isType(TypeLogEndOffset))
	if lev.Change.From != leo || lev.Change.To != cut.BaseOffset {
		t.Fatalf("log end offset event %+v", lev.Change)
	}

	// Appends continue from the truncated end and are reported.
	a2 := openAppender(t, dir, produce.Options{SegmentBytes: 1 << 20})
	if a2.LogEndOffset() != cut.BaseOffset {
		t.Fatalf("appender leo %d, want %d", a2.LogEndOffset(), cut.BaseOffset)
	}
	more := appendN(t, a2, 2)
	_, j := r.waitFor(t, i+1, "batch after truncation", batchEnding(more[1].LastOffset))
	if got := ofType(r.events()[i+1:j+1], TypeBatch); len(got) != 2 || got[0].Batch.BaseOffset != cut.BaseOffset {
		t.Fatalf("batches after truncation: %s", describe(got))
	}
	a2.Close()

	// Remove the active segment: the log ends where the previous one ends.
	if err := os.Remove(active); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(t, j+1, "segment removed at the end", isType(TypeTruncated))
	if ev.Segment != segs[len(segs)-1] || ev.Change.To != baseOf(segs[len(segs)-1]) || ev.Segments != len(segs)-1 {
		t.Fatalf("truncated event %+v %+v", ev, ev.Change)
	}
	if d := ofType(r.events(), TypeSegmentDeleted); len(d) != 1 || d[0].Segment != segs[len(segs)-1] {
		t.Fatalf("deleted events: %s", describe(d))
	}
}

// TestStartAtEndOfBigSegment: a tail started at the end of a segment over
// 1 MiB finds its end from the last offset index entry, and still finds it
// when the index points into the middle of a batch or is missing.
func TestStartAtEndOfBigSegment(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"index", "index-points-mid-batch", "no-index"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "orders-0")
			a := openAppender(t, dir, produce.Options{IndexIntervalBytes: 64 << 10})
			value := make([]byte, 8<<10)
			var last produce.Result
			for range 160 {
				r, err := a.Append(&produce.Batch{Records: []format.Record{{Value: value}, {Value: value}}})
				if err != nil {
					t.Fatal(err)
				}
				last = r
			}
			a.Close()
			idx := filepath.Join(dir, partition.FileName(0, partition.IndexSuffix))
			if last.Position < 1<<20 || fileSize(t, idx) < 16 {
				t.Fatalf("segment of %d bytes, index of %d: too small for the index path", last.Position, fileSize(t, idx))
			}
			// The model finds the end from the index's last entry, which
			// must point past the start for the index path to be taken.
			data, err := os.ReadFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			x := format.OffsetIndex{BaseOffset: 0, Data: data}
			if n := x.Used(); n == 0 || x.Entry(n-1).Pos <= 0 || x.Entry(n-1).Offset <= 0 {
				t.Fatalf("offset index of %d used entries has no last entry past the start", n)
			}
			switch name {
			case "index-points-mid-batch":
				data, _ := os.ReadFile(idx)
				n := len(data) / 8 * 8
				data[n-1]++ // the last entry's position, one byte off
				os.WriteFile(idx, data, 0o644)
			case "no-index":
				os.Remove(idx)
			}
			r := startTail(t, []string{dir}, Options{})
			st, _ := r.waitFor(t, 0, "state", isType(TypeState))
			if st.LogEndOffset != last.LastOffset+1 {
				t.Fatalf("state leo %d, want %d", st.LogEndOffset, last.LastOffset+1)
			}
			b := openAppender(t, dir, produce.Options{})
			res := appendN(t, b, 1)
			ev, _ := r.waitFor(t, 0, "the batch", isType(TypeBatch))
			if ev.Batch.BaseOffset != res[0].BaseOffset || ev.Batch.Pos != res[0].Position {
				t.Fatalf("batch %+v, want %+v", ev.BatchInfo, res[0])
			}
		})
	}
}

// TestPartialBatch: a batch written in two halves with os.File is reported
// once, when complete, after a partial event; for a cut inside the 17-byte
// entry header, inside the batch header and inside the records.
func TestPartialBatch(t *testing.T) {
	t.Parallel()
	raw := encodeBatch(t, 0, 5)
	for _, cut := range []int{7, 30, len(raw) - 1} {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "orders-0")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, partition.FileName(0, partition.LogSuffix))
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r := startTail(t, []string{dir}, Options{})
			r.waitFor(t, 0, "state", isType(TypeState))
			if _, err := f.Write(raw[:cut]); err != nil {
				t.Fatal(err)
			}
			p, i := r.waitFor(t, 0, "partial", isType(TypePartial))
			want := int64(len(raw))
			if cut <= format.HeaderSizeUpToMagic {
				want = 0
			}
			if p.Partial.Position != 0 || p.Partial.HaveBytes != int64(cut) || p.Partial.WantBytes != want || p.LogEndOffset != 0 {
				t.Fatalf("partial %+v leo %d", p.Partial, p.LogEndOffset)
			}
			if b := ofType(r.events(), TypeBatch); len(b) != 0 {
				t.Fatalf("a batch was reported before it was complete: %s", describe(b))
			}
			if _, err := f.Write(raw[cut:]); err != nil {
				t.Fatal(err)
			}
			ev, _ := r.waitFor(t, i+1, "the batch", isType(TypeBatch))
			if ev.Batch.BaseOffset != 0 || ev.Batch.LastOffset() != 4 || !ev.Batch.Valid() || string(ev.Batch.Raw) != string(raw) {
				t.Fatalf("batch %+v", ev.BatchInfo)
			}
			// A second batch, whole, marks the end: the first was reported once.
			second := encodeBatch(t, 5, 1)
			if _, err := f.Write(second); err != nil {
				t.Fatal(err)
			}
			evs := r.wait(t, "the second batch", func(evs []Event) bool { return slices.ContainsFunc(evs, batchEnding(5)) })
			if b := ofType(evs, TypeBatch); len(b) != 2 || len(ofType(evs, TypePartial)) != 1 {
				t.Fatalf("want 1 partial and 2 batches:\n%s", describe(evs))
			}
		})
	}
}

// encodeBatch encodes a v2 batch of n records at base offset base.
func encodeBatch(t testing.TB, base int64, n int) []byte {
	t.Helper()
	h := &format.Batch{Magic: format.MagicV2, BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Offset: base + int64(i), Timestamp: 1700000000000 + int64(i), Value: []byte(fmt.Sprintf("v%d", i))}
	}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestCorruptTail: an impossible entry header is reported once, and the
// tail keeps running.
func TestCorruptTail(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{})
	res := appendN(t, a, 2)
	a.Close()
	r := startTail(t, []string{dir}, Options{})
	r.waitFor(t, 0, "state", isType(TypeState))
	f, err := os.OpenFile(filepath.Join(dir, filepath.Base(res[0].Segment)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte("\x00\x00\x00\x00\x00\x00\x00\x09\xff\xff\xff\xff garbage after the log")
	if _, err := f.Write(junk); err != nil {
		t.Fatal(err)
	}
	ev, i := r.waitFor(t, 0, "corrupt", isType(TypeCorrupt))
	if ev.Problem.Position != res[1].Position+res[1].Size || ev.Problem.Offset != 9 {
		t.Fatalf("problem %+v", ev.Problem)
	}
	if _, err := f.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	// Still watching: a rewritten checkpoint is seen after the write.
	writeHW(t, filepath.Dir(dir), format.OffsetEntry{Topic: "orders", Partition: 0, Offset: 1})
	r.waitFor(t, i+1, "high watermark", isType(TypeHighWatermark))
	if n := len(ofType(r.events(), TypeCorrupt)); n != 1 {
		t.Fatalf("the corrupt header was reported %d times", n)
	}
}

// TestPartitionsAppearAndDisappear: in a tailed log dir, a new partition is
// reported with its batches; one renamed to -delete and one removed are
// reported gone.
func TestPartitionsAppearAndDisappear(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	old := filepath.Join(logDir, "orders-0")
	a := openAppender(t, old, produce.Options{})
	appendN(t, a, 1)
	a.Close()
	if err := os.Mkdir(filepath.Join(logDir, "not-a-partition"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := startTail(t, []string{logDir}, Options{})
	r.waitFor(t, 0, "state", isType(TypeState))

	dir := filepath.Join(logDir, "orders-1")
	b := openAppender(t, dir, produce.Options{})
	res := appendN(t, b, 3)
	b.Close()
	added, _ := r.waitFor(t, 0, "partition added", isType(TypePartitionAdded))
	if added.Dir != dir || added.Topic != "orders" || added.Partition != 1 {
		t.Fatalf("added %+v", added)
	}
	evs := r.wait(t, "its batches", func(evs []Event) bool { return slices.ContainsFunc(evs, batchEnding(res[2].LastOffset)) })
	var mine []Event
	for _, ev := range evs {
		if ev.Dir == dir {
			mine = append(mine, ev)
		}
	}
	checkBatches(t, dir, mine, res)

	gone := filepath.Join(logDir, "orders-1.4f2a9c-delete")
	if err := os.Rename(dir, gone); err != nil {
		t.Fatal(err)
	}
	ev, i := r.waitFor(t, 0, "renamed partition gone", isType(TypePartitionRemoved))
	if ev.Dir != dir || ev.LogEndOffset != res[2].LastOffset+1 {
		t.Fatalf("removed %+v", ev)
	}
	if err := os.RemoveAll(old); err != nil {
		t.Fatal(err)
	}
	ev, _ = r.waitFor(t, i+1, "removed partition gone", isType(TypePartitionRemoved))
	if ev.Dir != old {
		t.Fatalf("removed %+v", ev)
	}
	for _, ev := range r.events() {
		if strings.Contains(ev.Dir, "-delete") || strings.Contains(ev.Dir, "not-a-partition") {
			t.Fatalf("event for a directory that is not a live partition: %+v", ev)
		}
	}
}

// TestPartitionDirComesBack: a partition directory named as PATH that is
// removed and created again is tailed again.
func TestPartitionDirComesBack(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{})
	appendN(t, a, 1)
	a.Close()
	r := startTail(t, []string{dir}, Options{})
	r.waitFor(t, 0, "state", isType(TypeState))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	_, i := r.waitFor(t, 0, "removed", isType(TypePartitionRemoved))
	b := openAppender(t, dir, produce.Options{})
	res := appendN(t, b, 2)
	r.waitFor(t, i+1, "added", isType(TypePartitionAdded))
	r.waitFor(t, i+1, "its batches", batchEnding(res[1].LastOffset))
}

// TestStopsOnCancel: Run returns nil and closes the channel on cancel, even
// while nobody reads its events.
func TestStopsOnCancel(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{})
	appendN(t, a, 3)
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan Event) // never read before the cancel
	done := make(chan error, 1)
	go func() { done <- Run(ctx, []string{dir}, Options{FromBeginning: true}, ch) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after cancel")
	}
	if _, ok := <-ch; ok {
		t.Fatal("events not closed")
	}
}

func TestBadPaths(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "x.log")
	os.WriteFile(file, nil, 0o644)
	for _, p := range []string{filepath.Join(t.TempDir(), "missing"), file} {
		ch := make(chan Event, 1)
		err := Run(context.Background(), []string{p}, Options{}, ch)
		var pe *os.PathError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a *os.PathError", p, err)
		}
		if _, ok := <-ch; ok {
			t.Errorf("%s: events not closed", p)
		}
	}
	if err := Run(context.Background(), nil, Options{}, make(chan Event)); err == nil {
		t.Error("no paths: want an error")
	}
}

// TestLatency measures the time from the end of an append to its batch
// event, one append at a time: the median must be under 20 ms. (It can be
// negative: Append writes the index entries after the batch, and the event
// may arrive before Append returns. The time from the start of the append
// is reported too, as an upper bound.)
func TestLatency(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	a := openAppender(t, dir, produce.Options{})
	r := startTail(t, []string{dir}, Options{})
	r.waitFor(t, 0, "state", isType(TypeState))
	const n = 200
	fromEnd := make([]time.Duration, 0, n)
	fromStart := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		res, err := a.Append(newBatch(1, i))
		end := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		_, idx := r.waitFor(t, 0, "the batch", batchEnding(res.LastOffset))
		r.mu.Lock()
		at := r.at[idx]
		r.mu.Unlock()
		fromEnd = append(fromEnd, at.Sub(end))
		fromStart = append(fromStart, at.Sub(start))
	}
	slices.Sort(fromEnd)
	slices.Sort(fromStart)
	med := fromEnd[n/2]
	t.Logf("append end -> batch event over %d appends: median %v, p90 %v, p99 %v, max %v", n, med, fromEnd[n*9/10], fromEnd[n*99/100], fromEnd[n-1])
	t.Logf("append start -> batch event: median %v, p90 %v, p99 %v, max %v", fromStart[n/2], fromStart[n*9/10], fromStart[n*99/100], fromStart[n-1])
	if med >= 20*time.Millisecond {
		t.Fatalf("median latency %v, want < 20ms", med)
	}
}

// BenchmarkAppendToEvent reports the append-to-event round trip: ns/op is
// one append and the wait for its batch event; end-median-µs is from the
// end of the append to the event (may be negative, see TestLatency), and
// start-median-µs from its start.
func BenchmarkAppendToEvent(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "orders-0")
	a := openAppender(b, dir, produce.Options{SegmentBytes: 64 << 20})
	r := startTail(b, []string{dir}, Options{})
	r.waitFor(b, 0, "state", isType(TypeState))
	var fromEnd, fromStart []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		res, err := a.Append(newBatch(1, i))
		end := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		_, idx := r.waitFor(b, len(fromEnd), "the batch", batchEnding(res.LastOffset))
		r.mu.Lock()
		at := r.at[idx]
		r.mu.Unlock()
		fromEnd = append(fromEnd, at.Sub(end))
		fromStart = append(fromStart, at.Sub(start))
		i++
	}
	slices.Sort(fromEnd)
	slices.Sort(fromStart)
	b.ReportMetric(float64(fromEnd[len(fromEnd)/2].Nanoseconds())/1e3, "end-median-µs")
	b.ReportMetric(float64(fromStart[len(fromStart)/2].Nanoseconds())/1e3, "start-median-µs")
}

// TestIdleCPU tails an idle log dir of 1,000 partitions (empty segments)
// and measures the process's CPU time over 3 s without events: under 1% of
// one core.
func TestIdleCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("3 s of idleness; skipped with -short")
	}
	const parts, idle = 1000, 3 * time.Second
	logDir := t.TempDir()
	for i := range parts {
		d := filepath.Join(logDir, fmt.Sprintf("idle-%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, partition.FileName(0, partition.LogSuffix)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	r := startTail(t, []string{logDir}, Options{})
	r.wait(t, "1,000 states", func(evs []Event) bool { return len(evs) >= parts })
	setup := time.Since(start)
	runtime.GC()
	n := len(r.events())
	cpu0, wall0 := cpuTime(t), time.Now()
	deadline := time.After(idle)
	for waiting := true; waiting; {
		select {
		case <-r.notify: // maybe a stale wake-up; new events fail below
		case <-deadline:
			waiting = false
		}
		if evs := r.events(); len(evs) > n {
			t.Fatalf("unexpected event while idle: %s", describe(evs[n:]))
		}
	}
	cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
	pct := 100 * cpu.Seconds() / wall.Seconds()
	t.Logf("%d partitions (%d inotify watches, max_user_watches %d): started in %v; idle %v used %v CPU = %.3f%% of one core",
		parts, parts+1, maxUserWatches(), setup.Round(time.Millisecond), wall.Round(time.Millisecond), cpu, pct)
	if pct >= 1 {
		t.Fatalf("idle CPU %.3f%%, want < 1%%", pct)
	}
}

// cpuTime is the user + system time the process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func segmentsOf(t *testing.T, dir string) []string {
	t.Helper()
	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range d.Segments {
		if s.Log != "" {
			names = append(names, filepath.Base(s.Log))
		}
	}
	return names
}

func baseOf(name string) int64 {
	off, _, _ := partition.ParseFileName(name)
	return off
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// maxUserWatches reads fs.inotify.max_user_watches, or -1.
func maxUserWatches() int {
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return -1
	}
	return n
}

// TestNotALogDir (issue 24 item 10): a directory holding no partition that
// is not a broker's log dir is an error, not a silent wait; a directory
// named like a partition holding no Kafka file (/etc/dbus-1) is not one.
func TestNotALogDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dbus-1", "system.d"), 0o755)
	os.WriteFile(filepath.Join(root, "dbus-1", "README"), []byte("x"), 0o644)
	ch := make(chan Event, 8)
	err := Run(context.Background(), []string{root}, Options{}, ch)
	if !errors.Is(err, errNotLogDir) {
		t.Fatalf("Run on a directory of no partitions: %v, want errNotLogDir", err)
	}
	if len(ch) != 0 {
		t.Errorf("%d events, want none (dbus-1 is not a partition)", len(ch))
	}
}
