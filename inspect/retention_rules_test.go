package inspect

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// seg describes a hand-built segment: one batch of n records whose
// largest timestamp is ts; index says whether a .timeindex holding ts as
// its last entry is written (else the age falls back to the file's mtime).
type seg struct {
	n     int
	ts    int64
	index bool
}

// buildPartition writes segments back to back into dir/<topic>-0 and
// returns the partition directory and each segment's size.
func buildPartition(t *testing.T, segs []seg, mtime int64) (string, []int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "topic-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var comp format.Compressor
	var sizes []int64
	off := int64(0)
	for _, s := range segs {
		recs := make([]format.Record, s.n)
		for i := range recs {
			recs[i] = format.Record{Offset: off + int64(i), Timestamp: s.ts - int64(s.n-1-i), Value: []byte("value")}
		}
		h := &format.Batch{BaseOffset: off, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		format.PrepareBatch(h, recs)
		data, err := comp.AppendBatch(nil, h, recs)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, partition.FileName(off, partition.LogSuffix))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, int64(len(data)))
		if s.index {
			var e [12]byte
			binary.BigEndian.PutUint64(e[:], uint64(s.ts))
			binary.BigEndian.PutUint32(e[8:], uint32(s.n-1))
			if err := os.WriteFile(filepath.Join(dir, partition.FileName(off, partition.TimeIndexSuffix)), e[:], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		touch(t, p, mtime)
		off += int64(s.n)
	}
	return dir, sizes
}

func touch(t *testing.T, p string, ms int64) {
	t.Helper()
	mt := timeMs(ms)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}

func deleted(rep *RetentionReport) (out []int64) {
	for _, s := range rep.Segments {
		if s.Deletable {
			out = append(out, s.BaseOffset)
		}
	}
	return out
}

const day = int64(86400000)

func TestRetentionRules(t *testing.T) {
	now := int64(1800000000000)
	old := now - 30*day
	future := now + 10*day
	cases := []struct {
		name     string
		segs     []seg
		cfg      func(*RetentionConfig)
		opts     func(*RetentionOptions)
		deleted  []int64
		newStart int64
		reasons  []string
		heldBy   []string
		future   []int64
	}{
		{
			name:    "time: old closed segments go, the active one stays while the last is young",
			segs:    []seg{{3, old, true}, {3, old + day, true}, {3, now - 1000, true}},
			cfg:     func(c *RetentionConfig) { c.RetentionMs = 7 * day },
			deleted: []int64{0, 3}, newStart: 6, reasons: []string{"retention.ms", "retention.ms"},
			heldBy: []string{"", "", "not-expired"},
		},
		{
			name:    "KAFKA-20609: a future timestamp blocks its segment and every later one",
			segs:    []seg{{3, old, true}, {3, future, true}, {3, old, true}, {3, old, true}},
			cfg:     func(c *RetentionConfig) { c.RetentionMs = 7 * day },
			deleted: []int64{0}, newStart: 3, reasons: []string{"retention.ms"},
			heldBy: []string{"", "future-timestamp", "future-timestamp", "future-timestamp"}, future: []int64{3},
		},
		{
			name:    "size retention ignores future timestamps",
			segs:    []seg{{3, future, true}, {3, future, true}, {3, now, true}},
			cfg:     func(c *RetentionConfig) { c.RetentionMs = -1; c.RetentionBytes = 1 },
			deleted: []int64{0, 3}, newStart: 6, reasons: []string{"retention.bytes", "retention.bytes"},
		},
		{
			name:    "everything expired: the active segment goes too (the broker rolls first)",
			segs:    []seg{{3, old, true}, {3, old, true}},
			cfg:     func(c *RetentionConfig) { c.RetentionMs = day },
			deleted: []int64{0, 3}, newStart: 6, reasons: []string{"retention.ms", "retention.ms"},
		},
		{
			name:    "the high watermark holds back the segment it falls in",
			segs:    []seg{{3, old, true}, {3, old, true}, {3, old, true}},
			cfg:     func(c *RetentionConfig) { c.RetentionMs = day },
			opts:    func(o *RetentionOptions) { o.HighWatermark = 5 },
			deleted: []int64{0}, newStart: 3, reasons: []string{"retention.ms"},
			heldBy: []string{"", "high-watermark", "high-watermark"},
		},
		{
			name:    "log start offset pass, even for a compacted topic",
			segs:    []seg{{3, now, true}, {3, now, true}, {3, now, true}},
			cfg:     func(c *RetentionConfig) { c.CleanupPolicy = "compact" },
			opts:    func(o *RetentionOptions) { o.LogStartOffset = 7 },
			deleted: []int64{0, 3}, newStart: 7, reasons: []string{"log-start-offset", "log-start-offset"},
			heldBy: []string{"", "", "policy"},
		},
		{
			name:    "compacted topic: no time or size retention",
			segs:    []seg{{3, old, true}, {3, old, true}},
			cfg:     func(c *RetentionConfig) { c.CleanupPolicy = "compact"; c.RetentionMs = 1; c.RetentionBytes = 0 },
			deleted: nil, newStart: 0, heldBy: []string{"policy", "policy"},
		},
		{
			name:    "no time index entry: the .log modification time",
			segs:    []seg{{3, now, false}, {3, now, false}},
			cfg:     func(c *RetentionConfig) { c.RetentionMs = 7 * day },
			deleted: []int64{0, 3}, newStart: 6, reasons: []string{"retention.ms", "retention.ms"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := buildPartition(t, tc.segs, old)
			cfg := DefaultRetentionConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			opts := RetentionOptions{Config: cfg, Now: now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1}
			if tc.opts != nil {
				tc.opts(&opts)
			}
			rep, err := Retention(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := deleted(rep); !slices.Equal(got, tc.deleted) {
				t.Fatalf("deleted %v, want %v", got, tc.deleted)
			}
			if rep.Summary.NewLogStartOffset != tc.newStart {
				t.Errorf("new log start %d, want %d", rep.Summary.NewLogStartOffset, tc.newStart)
			}
			for i, r := range tc.reasons {
				if got := rep.Segments[i].Reason; got == nil || *got != r {
					t.Errorf("segment %d reason %v, want %s", i, got, r)
				}
			}
			for i, h := range tc.heldBy {
				if rep.Segments[i].HeldBy != h {
					t.Errorf("segment %d held by %q, want %q", i, rep.Segments[i].HeldBy, h)
				}
			}
			if !slices.Equal(rep.Summary.FutureTimestampSegments, tc.future) && len(tc.future)+len(rep.Summary.FutureTimestampSegments) > 0 {
				t.Errorf("future segments %v, want %v", rep.Summary.FutureTimestampSegments, tc.future)
			}
		})
	}
}

// TestRetentionForecast: deletableAt is the first moment time retention
// deletes a segment, never before the segments ahead of it.
func TestRetentionForecast(t *testing.T) {
	now := int64(1800000000000)
	ret := 7 * day
	dir, _ := buildPartition(t, []seg{{2, now - 3*day, true}, {2, now - 5*day, true}, {2, now - day, true}}, now)
	cfg := DefaultRetentionConfig()
	cfg.RetentionMs = ret
	rep, err := Retention(dir, RetentionOptions{Config: cfg, Now: now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{now - 3*day + ret + 1, now - 3*day + ret + 1, now - day + ret + 1}
	for i, w := range want {
		if got := rep.Segments[i].DeletableAt; got == nil || *got != w {
			t.Errorf("segment %d deletable at %v, want %d", i, got, w)
		}
	}
	// At that moment (and not one ms before) the first two go.
	for _, c := range []struct {
		at   int64
		gone int
	}{{want[0] - 1, 0}, {want[0], 2}, {want[2], 3}} {
		rep, err := Retention(dir, RetentionOptions{Config: cfg, Now: c.at, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(deleted(rep)); got != c.gone {
			t.Errorf("at %d: %d segments go, want %d", c.at, got, c.gone)
		}
	}
	// Deletable now by size: deletable at now; the time forecast of the
	// rest no longer waits for it.
	cfg.RetentionBytes = 1
	rep, _ = Retention(dir, RetentionOptions{Config: cfg, Now: now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1})
	if got := rep.Segments[0].DeletableAt; !rep.Segments[0].Deletable || got == nil || *got != now {
		t.Errorf("deleted by size: deletable at %v, want now %d", got, now)
	}
	if got := rep.Segments[2].DeletableAt; got == nil || *got != now-day+ret+1 {
		t.Errorf("active segment deletable at %v, want %d", got, now-day+ret+1)
	}
	cfg.RetentionBytes = -1
	cfg.RetentionMs = -1
	rep, _ = Retention(dir, RetentionOptions{Config: cfg, Now: now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1})
	for i, s := range rep.Segments {
		if s.DeletableAt != nil {
			t.Errorf("segment %d: deletable at %d with unlimited retention", i, *s.DeletableAt)
		}
	}
}

// TestRetentionCompaction: the cleaner's dirty ratio from the log dir's
// cleaner-offset-checkpoint (LogCleanerManager.cleanableOffsets).
func TestRetentionCompaction(t *testing.T) {
	now := int64(1800000000000)
	dir, sizes := buildPartition(t, []seg{{3, now, true}, {3, now, true}, {3, now, true}, {3, now, true}}, now)
	cp := format.AppendOffsetCheckpoint(nil, []format.OffsetEntry{{Topic: "topic", Partition: 0, Offset: 3}})
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), partition.CleanerCheckpoint), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		ratio            float64
		lag              int64
		hw               int64
		uncleanable      int64
		clean, cleanable int64
		ok               bool
	}{
		{"dirty from 3 to the active segment", 0.5, 0, -1, 9, sizes[0], sizes[1] + sizes[2], true},
		{"ratio not reached", 0.9, 0, -1, 9, sizes[0], sizes[1] + sizes[2], false},
		{"the high watermark bounds it", 0.5, 0, 7, 6, sizes[0], sizes[1], true},
		{"min.compaction.lag.ms keeps young segments", 0.5, day, -1, 3, sizes[0], 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultRetentionConfig()
			cfg.CleanupPolicy, cfg.MinCleanableDirtyRatio, cfg.MinCompactionLagMs = "compact", c.ratio, c.lag
			rep, err := Retention(dir, RetentionOptions{Config: cfg, Now: now, HighWatermark: c.hw, LogStartOffset: -1, CleanerOffset: -1})
			if err != nil {
				t.Fatal(err)
			}
			k := rep.Summary.Compaction
			if k == nil || k.FirstDirtyOffset != 3 || k.FirstUncleanableOffset != c.uncleanable || k.CleanBytes != c.clean || k.CleanableBytes != c.cleanable || k.Cleanable != c.ok {
				t.Fatalf("%+v", k)
			}
		})
	}
}

func TestParseRetentionConfig(t *testing.T) {
	describe := []byte(`Dynamic configs for topic orders are:
  retention.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=3600000, DEFAULT_CONFIG:log.retention.hours=168}
  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete}
  min.cleanable.dirty.ratio=0.2 sensitive=false synonyms={}
`)
	cfg, err := ParseRetentionConfig(describe, DefaultRetentionConfig())
	if err != nil || cfg.RetentionMs != 3600000 || cfg.CleanupPolicy != "compact,delete" || cfg.MinCleanableDirtyRatio != 0.2 || cfg.RetentionBytes != -1 {
		t.Fatalf("%+v %v", cfg, err)
	}
	props := []byte("# broker\nlog.retention.hours=1\nlog.retention.bytes=1000\nretention.bytes=500\n")
	cfg, err = ParseRetentionConfig(props, DefaultRetentionConfig())
	if err != nil || cfg.RetentionMs != 3600000 || cfg.RetentionBytes != 500 {
		t.Fatalf("%+v %v", cfg, err)
	}
	if _, err := ParseRetentionConfig([]byte("a=1\nretention.ms=soon\n"), DefaultRetentionConfig()); err == nil {
		t.Fatal("bad number accepted")
	}
}

func TestRetentionFailures(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "topic-0")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := RetentionOptions{Config: DefaultRetentionConfig(), HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1}
	if _, err := Retention(empty, opts); err == nil {
		t.Error("no error for a partition without segments")
	}
	if _, err := Retention(filepath.Join(t.TempDir(), "missing-0"), opts); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestDiffFailures(t *testing.T) {
	a, _ := twoReplicas(t)
	if _, err := Diff([]string{a}, DiffOptions{}); err == nil {
		t.Error("one replica accepted")
	}
	if _, err := Diff([]string{a, filepath.Join(t.TempDir(), "missing-0")}, DiffOptions{}); err == nil {
		t.Error("no error for a missing replica")
	}
}

// TestRetentionEmptyActiveSegment: every closed segment expired and the
// active one empty: the closed ones go, the empty one stays (Kafka never
// deletes a last segment that is empty) and no roll is needed.
func TestRetentionEmptyActiveSegment(t *testing.T) {
	now := int64(1800000000000)
	dir, _ := buildPartition(t, []seg{{3, now - 30*day, true}, {3, now - 20*day, true}}, now)
	if err := os.WriteFile(filepath.Join(dir, partition.FileName(6, partition.LogSuffix)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRetentionConfig()
	rep, err := Retention(dir, RetentionOptions{Config: cfg, Now: now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := deleted(rep); !slices.Equal(got, []int64{0, 3}) || rep.Summary.Rolled || rep.Summary.NewLogStartOffset != 6 || rep.Summary.LogEndOffset != 6 {
		t.Fatalf("deleted %v rolled %v new start %d end %d", got, rep.Summary.Rolled, rep.Summary.NewLogStartOffset, rep.Summary.LogEndOffset)
	}
	if h := rep.Segments[2].HeldBy; h != "empty-active-segment" {
		t.Errorf("held by %q", h)
	}
}

// TestRetentionProducedPartition: a partition written by klog produce (its
// own rolls and indexes), aged from the batches (--recovered) and from its
// time indexes: the decisions follow the ages reported.
func TestRetentionProducedPartition(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, SegmentBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	base := int64(1700000000000)
	for i := 0; i < 60; i++ {
		recs := []format.Record{{Value: make([]byte, 300), Timestamp: base + int64(i)*3600000}}
		if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	now := base + 59*3600000 + 1
	cfg := DefaultRetentionConfig()
	cfg.RetentionMs = 24 * 3600000
	for _, recovered := range []bool{true, false} {
		rep, err := Retention(dir, RetentionOptions{Config: cfg, Now: now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1, Recovered: recovered})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Segments) < 3 || rep.Summary.LogEndOffset != 60 {
			t.Fatalf("%d segments, log end %d", len(rep.Segments), rep.Summary.LogEndOffset)
		}
		// Only a prefix goes, exactly the segments older than a day.
		prefix := true
		for _, s := range rep.Segments {
			expired := now-s.LargestTimestamp > cfg.RetentionMs
			if recovered && s.AgeSource != RetentionAgeBatches {
				t.Errorf("segment %d aged from %s", s.BaseOffset, s.AgeSource)
			}
			want := prefix && expired && !s.Active
			if s.Deletable != want {
				t.Errorf("recovered %v: segment %d (age %d) deletable %v, want %v", recovered, s.BaseOffset, s.LargestTimestamp, s.Deletable, want)
			}
			prefix = prefix && expired
		}
		if rep.Summary.DeletableSegments == 0 {
			t.Errorf("recovered %v: nothing deletable", recovered)
		}
	}
}
