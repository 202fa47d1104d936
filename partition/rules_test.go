package partition_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// The rules Kafka 4.3.1 was observed to follow (spec §5.5), each on a
// partition built here. The oracle comparison is lookup_test.go.

const base = int64(1_700_000_000_000)

// buildTwoSegments writes offsets 0-3 (timestamps base+0..30, step 10) in
// segment 0 and offsets 4-7 (base+40..70) in segment 4.
func buildTwoSegments(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{SegmentBytes: 300, Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		rec := []format.Record{{Value: []byte("value"), Timestamp: base + int64(i)*10}}
		if _, err := a.Append(&produce.Batch{Records: rec}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t *testing.T, dir string, mode partition.IndexMode) *partition.Log {
	t.Helper()
	l, err := partition.OpenLog(dir, partition.LogOptions{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func ask(t *testing.T, l *partition.Log, target int64) partition.TimestampAndOffset {
	t.Helper()
	r, err := l.FetchOffsetByTimestamp(target)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func chtime(t *testing.T, path string, ms int64) {
	t.Helper()
	at := time.UnixMilli(ms)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestSegmentChosenByModTime: a segment whose time index has no entry is
// aged by its .log's modification time. Older than T, it is passed over even
// though it holds a record at T; newer, it is searched.
func TestSegmentChosenByModTime(t *testing.T) {
	t.Parallel()
	dir := buildTwoSegments(t)
	seg0 := filepath.Join(dir, partition.FileName(0, partition.LogSuffix))
	if err := os.Truncate(filepath.Join(dir, partition.FileName(0, partition.TimeIndexSuffix)), 0); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		mtime     int64
		target    int64
		offset    int64
		ts        int64
		byModTime bool
	}{
		{"mtime below T: segment 0 skipped", base + 15, base + 20, 4, base + 40, false},
		{"mtime at T: segment 0 searched", base + 20, base + 20, 2, base + 20, true},
		{"mtime far ahead", base + 1e9, base + 5, 1, base + 10, true},
		{"mtime ahead of every record: segment 0 answers nothing", base + 1e9, base + 35, -1, -1, true},
	}
	for _, c := range cases {
		chtime(t, seg0, c.mtime)
		l := open(t, dir, partition.IndexesAsFound)
		r := ask(t, l, c.target)
		if r.Offset != c.offset || r.Timestamp != c.ts || r.ByModTime != c.byModTime || r.Found != (c.offset >= 0) {
			t.Errorf("%s: got %+v, want offset %d ts %d byModTime %v", c.name, r, c.offset, c.ts, c.byModTime)
		}
		// Rebuilt indexes know segment 0's largest timestamp: no mtime.
		rb := ask(t, open(t, dir, partition.IndexesRebuilt), c.target)
		if rb.ByModTime || (c.target <= base+30 && (!rb.Found || rb.Segment != 0)) {
			t.Errorf("%s: rebuilt indexes answered %+v", c.name, rb)
		}
	}
}

// TestMaxTimestampNeverUsesModTime: with every time index empty (as in v0
// logs, or after a crash), MAX_TIMESTAMP finds nothing whatever the
// modification times, while timestamp queries still use them.
func TestMaxTimestampNeverUsesModTime(t *testing.T) {
	t.Parallel()
	dir := buildTwoSegments(t)
	for _, off := range []int64{0, 4} {
		if err := os.Truncate(filepath.Join(dir, partition.FileName(off, partition.TimeIndexSuffix)), 0); err != nil {
			t.Fatal(err)
		}
		chtime(t, filepath.Join(dir, partition.FileName(off, partition.LogSuffix)), base+1e9)
	}
	l := open(t, dir, partition.IndexesAsFound)
	if r := ask(t, l, partition.MaxTimestamp); r.Found {
		t.Errorf("MAX_TIMESTAMP with empty time indexes: %+v, want none", r)
	}
	if r := ask(t, l, base+25); !r.Found || r.Offset != 3 || !r.ByModTime {
		t.Errorf("T=base+25: %+v, want offset 3 chosen by modification time", r)
	}
	if r := ask(t, open(t, dir, partition.IndexesRebuilt), partition.MaxTimestamp); !r.Found || r.Offset != 7 || r.Timestamp != base+70 {
		t.Errorf("MAX_TIMESTAMP after rebuilding: %+v, want offset 7", r)
	}
}

// TestMarkersCountAsRecords: a COMMIT marker's timestamp answers a query,
// and MAX_TIMESTAMP returns a marker's offset.
func TestMarkersCountAsRecords(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "t-0")
	now := base + 1000 // the marker's timestamp
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, Now: func() time.Time { return time.UnixMilli(now) }})
	if err != nil {
		t.Fatal(err)
	}
	recs := []format.Record{{Value: []byte("a"), Timestamp: base}, {Value: []byte("b"), Timestamp: base + 10}}
	if _, err := a.Append(&produce.Batch{Records: recs, Producer: &produce.Producer{ID: 9}, Transactional: true}); err != nil {
		t.Fatal(err)
	}
	m, err := a.EndTxn(9, 0, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []partition.IndexMode{partition.IndexesAsFound, partition.IndexesRebuilt} {
		l := open(t, dir, mode)
		if r := ask(t, l, base+500); !r.Found || r.Offset != m.BaseOffset || r.Timestamp != now {
			t.Errorf("%v: T between the data and the marker: %+v, want the marker at offset %d", mode, r, m.BaseOffset)
		}
		if r := ask(t, l, partition.MaxTimestamp); !r.Found || r.Offset != m.BaseOffset || r.Timestamp != now || r.LeaderEpoch != 0 {
			t.Errorf("%v: MAX_TIMESTAMP %+v, want the marker at offset %d, epoch 0", mode, r, m.BaseOffset)
		}
	}
}

// TestOnlyTheFirstSegmentReachingTIsSearched: a time index that claims a
// larger timestamp than its records hold sends the search to that segment
// alone; the next segment's matching record is not looked at.
func TestOnlyTheFirstSegmentReachingTIsSearched(t *testing.T) {
	t.Parallel()
	dir := buildTwoSegments(t)
	// Segment 0's close entry (base+30, offset 3) becomes (base+45, 3).
	path := filepath.Join(dir, partition.FileName(0, partition.TimeIndexSuffix))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(data) - format.TimeIndexEntrySize
	x := format.TimeIndex{Data: data}
	if e := x.Entry(x.Entries() - 1); e.Timestamp != base+30 || e.Offset != 3 {
		t.Fatalf("segment 0's last time index entry %+v, want the close entry (base+30, 3)", e)
	}
	v := uint64(base + 45)
	for i := range 8 {
		data[n+i] = byte(v >> (56 - 8*i))
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := ask(t, open(t, dir, partition.IndexesAsFound), base+40); r.Found || r.Segment != 0 {
		t.Errorf("T=base+40: %+v, want none from segment 0 (offset 4 is in segment 4, never searched)", r)
	}
	if r := ask(t, open(t, dir, partition.IndexesRebuilt), base+40); !r.Found || r.Offset != 4 {
		t.Errorf("rebuilt: %+v, want offset 4", r)
	}
}

// TestListOffsetsBound: LATEST is the bound itself; an answer at or past it
// is none; EARLIEST is not bounded.
func TestListOffsetsBound(t *testing.T) {
	t.Parallel()
	l := open(t, buildTwoSegments(t), partition.IndexesAsFound)
	cases := []struct {
		target, bound, offset int64
		found                 bool
	}{
		{partition.LatestTimestamp, 5, 5, true},
		{partition.EarliestTimestamp, 0, 0, true},
		{base + 40, 5, 4, true},
		{base + 40, 4, -1, false},
		{partition.MaxTimestamp, 8, 7, true},
		{partition.MaxTimestamp, 7, -1, false},
		{base + 71, 8, -1, false},
	}
	for _, c := range cases {
		r, err := l.ListOffsets(c.target, c.bound)
		if err != nil {
			t.Fatal(err)
		}
		if r.Found != c.found || r.Offset != c.offset || (!r.Found && (r.Timestamp != -1 || r.LeaderEpoch != partition.NoEpoch)) {
			t.Errorf("target %d bound %d: %+v, want offset %d", c.target, c.bound, r, c.offset)
		}
	}
}
