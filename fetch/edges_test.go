package fetch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
)

// TestByteLimitBoundaries: every boundary of the two limits, 0 included,
// as a broker answers them (KIP-74: the first batch whole even when the
// limit is 0; without it, nothing).
func TestByteLimitBoundaries(t *testing.T) {
	t.Parallel()
	dir, rs := build(t, []int{10, 10, 10}, 100, produce.Options{})
	l := open(t, dir)
	s0, s1 := rs[0].Size, rs[1].Size
	cases := []struct {
		name        string
		max, part   int32
		noMinOne    bool
		want        int64
		truncated   bool
		wantTrBytes int64
	}{
		{"max bytes 0: the first batch whole", 0, 1 << 20, false, s0, false, 0},
		{"partition max bytes 0: the first batch whole", 1 << 20, 0, false, s0, false, 0},
		{"both 0: the first batch whole", 0, 0, false, s0, false, 0},
		{"max bytes 0 without KIP-74: nothing", 0, 1 << 20, true, 0, false, 0},
		{"limit 1 without KIP-74: one byte", 1, 1 << 20, true, 1, true, s0},
		{"limit one byte short of the first batch: the first batch", int32(s0 - 1), 1 << 20, false, s0, false, 0},
		{"limit exactly the first batch", int32(s0), 1 << 20, false, s0, false, 0},
		// Fewer than 12 bytes of the second batch: its size is unknown.
		{"limit one byte past the first batch: cut inside the second", int32(s0 + 1), 1 << 20, false, s0 + 1, true, -1},
		{"limit 12 bytes past the first batch: the second's size is known", int32(s0 + 12), 1 << 20, false, s0 + 12, true, s1},
		{"the smaller of the two limits wins", 1 << 20, int32(s0 + s1), false, s0 + s1, false, 0},
	}
	for _, c := range cases {
		f, err := Read(l, Request{FetchOffset: 0, MaxBytes: c.max, PartitionMaxBytes: c.part, NoMinOneMessage: c.noMinOne}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if int64(len(f.Frame)) != c.want || f.Truncated != c.truncated || (c.truncated && f.TruncatedRecordBytes != c.wantTrBytes) {
			t.Errorf("%s: %d bytes, truncated %v (%d); want %d, %v (%d)", c.name, len(f.Frame), f.Truncated, f.TruncatedRecordBytes, c.want, c.truncated, c.wantTrBytes)
		}
	}
}

// TestZeroValues: the zero values are what a request on the wire with
// zeros means, not a trap: Request{} reads the first batch whole (a limit of
// 0 bytes, KIP-74) up to the log's high watermark, and ConsumerConfig{}
// starts at the log start and reads every record, a batch a poll.
func TestZeroValues(t *testing.T) {
	t.Parallel()
	dir, rs := build(t, []int{10, 10}, 100, produce.Options{})
	l := open(t, dir)
	f, err := Read(l, Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(f.Frame)) != rs[0].Size || f.HighWatermark != 20 {
		t.Errorf("Request{}: %d bytes, high watermark %d; want the first batch (%d), 20", len(f.Frame), f.HighWatermark, rs[0].Size)
	}
	c, err := NewConsumer(dir, ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []int64
	for r, err := range c.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Offset)
	}
	if len(got) != 20 || got[0] != 0 || got[19] != 19 {
		t.Errorf("ConsumerConfig{}: offsets %v; want 0..19", got)
	}
}

func firstOffset(recs []Record) int64 {
	if len(recs) == 0 {
		return -1
	}
	return recs[0].Offset
}

// TestResetAfterRetention: a committed offset that retention deleted is
// reset as auto.offset.reset says; an explicit start offset overrides the
// commit.
func TestResetAfterRetention(t *testing.T) {
	t.Parallel()
	// Two segments: 0-9 and 10-19; then the first is deleted (retention).
	dir, _ := build(t, []int{10, 10}, 100, produce.Options{SegmentBytes: 1})
	offsets := memOffsets{}
	if err := offsets.CommitOffset("g", "orders", 0, 3); err != nil {
		t.Fatal(err)
	}
	for _, suf := range []string{".log", ".index", ".timeindex"} {
		os.Remove(filepath.Join(dir, "00000000000000000000"+suf))
	}
	for _, c := range []struct {
		reset OffsetReset
		first int64 // -1: an error
	}{
		{ResetEarliest, 10},
		{ResetLatest, -1},
		{ResetNone, -1},
	} {
		cons, err := NewConsumer(dir, ConsumerConfig{Group: "g", Offsets: offsets, Reset: c.reset})
		if err != nil {
			t.Fatal(err)
		}
		recs, _, err := cons.Poll(context.Background())
		switch c.reset {
		case ResetEarliest:
			if err != nil || firstOffset(recs) != 10 {
				t.Errorf("earliest: first %d, err %v; want 10", firstOffset(recs), err)
			}
		case ResetLatest:
			if err != nil || len(recs) != 0 || cons.Position() != 20 {
				t.Errorf("latest: %d records, position %d, err %v; want none, at 20", len(recs), cons.Position(), err)
			}
		case ResetNone:
			if !errors.Is(err, ErrOffsetOutOfRange) {
				t.Errorf("none: err %v, want OFFSET_OUT_OF_RANGE", err)
			}
		}
		cons.Close()
	}
	// --offset overrides the commit.
	cons, err := NewConsumer(dir, ConsumerConfig{Group: "g", Offsets: offsets, StartOffset: ptr(15)})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if recs, _, err := cons.Poll(context.Background()); err != nil || firstOffset(recs) != 15 || cons.Position() != 20 {
		// The fetch returns the batch holding 15 from its start; the
		// consumer drops the records before its position.
		t.Errorf("start offset 15: first %d, position %d, err %v", firstOffset(recs), cons.Position(), err)
	}
	// No commit and ResetNone: NoOffsetForPartition.
	if _, err := NewConsumer(dir, ConsumerConfig{Group: "other", Offsets: offsets, Reset: ResetNone}); !errors.Is(err, ErrNoOffset) {
		t.Errorf("no commit, reset none: %v, want ErrNoOffset", err)
	}
}

// memOffsets is an OffsetStore in memory (package offsetstore's is tested
// there and through klog fetch --group).
type memOffsets map[string]int64

func (m memOffsets) CommittedOffset(group, topic string, part int32) (int64, bool, error) {
	o, ok := m[group+"/"+topic+"/"+strconv.Itoa(int(part))]
	return o, ok, nil
}

func (m memOffsets) CommitOffset(group, topic string, part int32, offset int64) error {
	m[group+"/"+topic+"/"+strconv.Itoa(int(part))] = offset
	return nil
}

// TestConsumerStaleModel: below the high watermark its model knows, a
// consumer fetches without refreshing the model (one refresh a fetch was 7%
// of a drain), and still sees every change to the partition: appends made
// while it reads (a drain goes on to the new end), segments retention
// deleted (the position is reset), a log truncated and written again with
// other batches (the bytes the old model points at do not decode: read
// again, no error).
func TestConsumerStaleModel(t *testing.T) {
	t.Parallel()
	batches := []int{10, 10, 10, 10, 10, 10}
	appendTo := func(t *testing.T, dir string, n, vsize int) {
		t.Helper()
		a, err := produce.Open(dir, produce.Options{Now: fixedNow, Sync: produce.SyncNever})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		for range n {
			recs := make([]format.Record, 10)
			for j := range recs {
				recs[j].Value = bytes.Repeat([]byte{'z'}, vsize)
			}
			if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name   string
		segs   int64 // produce.Options.SegmentBytes
		change func(t *testing.T, dir string)
		// want is the offsets read after the change, in order; vsize the
		// value size of each of those records.
		want  []int64
		vsize int
		// poll reads with Poll (which resets an out-of-range position),
		// not Records (which yields the error).
		poll bool
	}{
		{name: "unchanged", change: func(*testing.T, string) {}, want: span(10, 60), vsize: 100},
		{name: "appended while reading", change: func(t *testing.T, dir string) { appendTo(t, dir, 2, 100) }, want: span(10, 80), vsize: 100},
		{name: "segments deleted by retention", segs: 1, change: func(t *testing.T, dir string) {
			for _, base := range []string{"00000000000000000000", "00000000000000000010", "00000000000000000020", "00000000000000000030"} {
				for _, suf := range []string{".log", ".index", ".timeindex"} {
					os.Remove(filepath.Join(dir, base+suf))
				}
			}
		}, want: span(40, 60), vsize: 100, poll: true},
		{name: "truncated and written again", change: func(t *testing.T, dir string) {
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				os.Remove(filepath.Join(dir, e.Name()))
			}
			appendTo(t, dir, 5, 37) // offsets 0..49 in batches of other sizes
		}, want: span(10, 50), vsize: 37},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := build(t, batches, 100, produce.Options{SegmentBytes: tc.segs})
			// One batch a fetch.
			c, err := NewConsumer(dir, ConsumerConfig{MaxBytes: 1, PartitionMaxBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			recs, _, err := c.Poll(context.Background())
			if err != nil || len(recs) != 10 || c.Position() != 10 {
				t.Fatalf("first poll: %d records, position %d, %v", len(recs), c.Position(), err)
			}
			tc.change(t, dir)
			before := c.refreshes
			var got []int64
			take := func(r Record) {
				if len(r.Value) != tc.vsize {
					t.Fatalf("offset %d: a %d-byte value, want %d", r.Offset, len(r.Value), tc.vsize)
				}
				got = append(got, r.Offset)
			}
			for tc.poll {
				recs, f, err := c.Poll(context.Background())
				if err != nil {
					t.Fatalf("after %d records: %v", len(got), err)
				}
				for _, r := range recs {
					take(r)
				}
				tc.poll = len(f.Frame) > 0
			}
			for r, err := range c.Records(context.Background()) {
				if err != nil {
					t.Fatalf("after %d records: %v", len(got), err)
				}
				take(r)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("read %v, want %v", got, tc.want)
			}
			if tc.name == "unchanged" {
				// Five fetches below the high watermark, one at it.
				if n := c.refreshes - before; n > 1 {
					t.Errorf("%d refreshes for a drain of an unchanged partition, want at most 1", n)
				}
			}
		})
	}
}

// span is the offsets [from, to).
func span(from, to int64) []int64 {
	var s []int64
	for o := from; o < to; o++ {
		s = append(s, o)
	}
	return s
}

// TestConsumerKeepsSegmentOpen: the fetches of one segment read one open
// file, the next segment's fetch opens that one instead, and Close closes
// it (the stale-model cases above check that a segment removed or written
// again under the same name is opened again).
func TestConsumerKeepsSegmentOpen(t *testing.T) {
	t.Parallel()
	// One segment of three batches, one batch a fetch.
	dir, _ := build(t, []int{10, 10, 10}, 100, produce.Options{})
	c, err := NewConsumer(dir, ConsumerConfig{MaxBytes: 1, PartitionMaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	for range 3 {
		if recs, _, err := c.Poll(context.Background()); err != nil || len(recs) != 10 {
			t.Fatalf("poll: %d records, %v", len(recs), err)
		}
		files = append(files, c.seg.f)
	}
	if files[0] == nil || files[1] != files[0] || files[2] != files[0] {
		t.Fatalf("files of three fetches of one segment: %p %p %p, want one open file", files[0], files[1], files[2])
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.seg.f != nil {
		t.Fatal("Close left the segment file open")
	}
	if _, err := files[0].Stat(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the segment file after Close: %v, want closed", err)
	}

	// Segments of one batch each: each fetch moves to the next file.
	dir, _ = build(t, []int{10, 10}, 100, produce.Options{SegmentBytes: 1})
	c, err = NewConsumer(dir, ConsumerConfig{MaxBytes: 1, PartitionMaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var paths []string
	for range 2 {
		if recs, _, err := c.Poll(context.Background()); err != nil || len(recs) != 10 {
			t.Fatalf("poll: %d records, %v", len(recs), err)
		}
		paths = append(paths, filepath.Base(c.seg.f.Name()))
	}
	if want := []string{"00000000000000000000.log", "00000000000000000010.log"}; !slices.Equal(paths, want) {
		t.Fatalf("files read: %v, want %v", paths, want)
	}
}
