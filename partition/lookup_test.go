package partition

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
)

// The oracle: kafka-listoffsets.json, Kafka 4.3.1's own answers beside each
// partition it wrote (testdata/kafka-listoffsets/PROVENANCE.md).
type kafkaAnswer struct {
	Found       *bool           `json:"found"`
	Offset      int64           `json:"offset"`
	Timestamp   int64           `json:"timestamp"`
	LeaderEpoch json.RawMessage `json:"leader_epoch"`
}

type kafkaSegment struct {
	BaseOffset        int64 `json:"base_offset"`
	MaxTimestampSoFar int64 `json:"max_timestamp_so_far"`
	OffsetOfMaxSoFar  int64 `json:"offset_of_max_timestamp_so_far"`
	LargestTimestamp  int64 `json:"largest_timestamp"`
	LastModifiedMs    int64 `json:"last_modified_ms"`
	TimeIndexEntries  int   `json:"time_index_entries"`
	Bytes             int64 `json:"bytes"`
	NextOffset        int64 `json:"next_offset"`
}

type kafkaMode struct {
	LogStartOffset   int64           `json:"log_start_offset"`
	LogEndOffset     int64           `json:"log_end_offset"`
	HighWatermark    int64           `json:"high_watermark"`
	LastStableOffset int64           `json:"last_stable_offset"`
	LatestEpoch      json.RawMessage `json:"latest_leader_epoch"`
	Segments         []kafkaSegment  `json:"segments"`
	Queries          []struct {
		Target          int64       `json:"target"`
		UnifiedLog      kafkaAnswer `json:"unified_log"`
		ReadUncommitted kafkaAnswer `json:"list_offsets_read_uncommitted"`
		ReadCommitted   kafkaAnswer `json:"list_offsets_read_committed"`
	} `json:"queries"`
}

type kafkaListOffsets struct {
	Mtimes map[string]int64      `json:"mtimes_applied"`
	Modes  map[string]*kafkaMode `json:"modes"`
}

// epochOf reads Kafka's leader_epoch: "none" or a number.
func epochOf(t *testing.T, raw json.RawMessage) int32 {
	t.Helper()
	if string(raw) == `"none"` {
		return NoEpoch
	}
	v, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil {
		t.Fatalf("leader_epoch %s", raw)
	}
	return int32(v)
}

// copyPartition copies a testdata partition into a temporary directory
// (tests must not change the repository's modification times).
func copyPartition(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() || strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, de.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// setMtimes sets every file's modification time, as the oracle did.
func setMtimes(t *testing.T, dir string, ms int64) {
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

func openLog(t *testing.T, dir string, mode IndexMode) *Log {
	t.Helper()
	l, err := OpenLog(dir, LogOptions{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestListOffsetsMatchesKafka compares every answer Kafka 4.3.1 gave for its
// own partitions, opened cleanly (indexes as found) and after an unclean
// shutdown (indexes rebuilt), with the lookups of this package.
func TestListOffsetsMatchesKafka(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir("testdata/kafka-listoffsets", func(p string, de fs.DirEntry, err error) error {
		if err == nil && de.Name() == "kafka-listoffsets.json" {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) != 21 {
		t.Fatalf("found %d oracle files (want 21): %v", len(files), err)
	}
	for _, file := range files {
		name := strings.TrimPrefix(filepath.Dir(file), "testdata/kafka-listoffsets/")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var o kafkaListOffsets
			if err := json.Unmarshal(data, &o); err != nil {
				t.Fatal(err)
			}
			ms, ok := o.Mtimes["all_files"]
			if !ok || len(o.Mtimes) != 1 {
				t.Fatalf("mtimes_applied %v", o.Mtimes)
			}
			dir := copyPartition(t, filepath.Dir(file))
			setMtimes(t, dir, ms)
			for mode, m := range map[IndexMode]*kafkaMode{IndexesAsFound: o.Modes["clean_open"], IndexesRebuilt: o.Modes["unclean_open"]} {
				checkMode(t, dir, mode, m)
			}
		})
	}
}

func checkMode(t *testing.T, dir string, mode IndexMode, m *kafkaMode) {
	t.Helper()
	if m == nil {
		t.Fatalf("%v: no answers", mode)
	}
	l := openLog(t, dir, mode)
	o, err := l.Offsets()
	if err != nil {
		t.Fatal(err)
	}
	if o.LogStartOffset != m.LogStartOffset || o.LogEndOffset != m.LogEndOffset {
		t.Errorf("%v: log start/end %d/%d, Kafka %d/%d", mode, o.LogStartOffset, o.LogEndOffset, m.LogStartOffset, m.LogEndOffset)
	}
	// No replication-offset-checkpoint: the high watermark is the log
	// end offset, as it was for Kafka; the last stable offset comes from
	// the producer state.
	if o.HighWatermark != m.HighWatermark || o.LastStableOffset != m.LastStableOffset {
		t.Errorf("%v: high watermark %d, last stable offset %d; Kafka %d, %d", mode, o.HighWatermark, o.LastStableOffset, m.HighWatermark, m.LastStableOffset)
	}
	if got, want := l.LatestEpoch(), epochOf(t, m.LatestEpoch); got != want {
		t.Errorf("%v: latest epoch %d, Kafka %d", mode, got, want)
	}
	segs := l.Segments()
	if len(segs) != len(m.Segments) {
		t.Fatalf("%v: %d segments, Kafka %d", mode, len(segs), len(m.Segments))
	}
	for i, ks := range m.Segments {
		s := segs[i]
		largest, _ := s.LargestTimestamp()
		if s.BaseOffset != ks.BaseOffset || s.MaxTimestamp != ks.MaxTimestampSoFar || s.MaxTimestampOffset != ks.OffsetOfMaxSoFar ||
			largest != ks.LargestTimestamp || s.ModTime != ks.LastModifiedMs || s.TimeIndexEntries != ks.TimeIndexEntries || s.Size != ks.Bytes {
			t.Errorf("%v: segment %d: base %d max %d@%d largest %d mtime %d entries %d size %d; Kafka %+v", mode, i,
				s.BaseOffset, s.MaxTimestamp, s.MaxTimestampOffset, largest, s.ModTime, s.TimeIndexEntries, s.Size, ks)
		}
	}
	n := 0
	for _, q := range m.Queries {
		if q.Target == -5 || q.Target == -6 {
			continue // tiered storage targets: not a local log's question
		}
		n++
		got, err := l.FetchOffsetByTimestamp(q.Target)
		if err != nil {
			t.Fatalf("%v: target %d: %v", mode, q.Target, err)
		}
		compareAnswer(t, mode.String()+" unified_log", q.Target, got, q.UnifiedLog)
		for _, c := range []struct {
			iso   string
			bound int64
			want  kafkaAnswer
		}{{"read_uncommitted", m.HighWatermark, q.ReadUncommitted}, {"read_committed", m.LastStableOffset, q.ReadCommitted}} {
			got, err := l.ListOffsets(q.Target, c.bound)
			if err != nil {
				t.Fatal(err)
			}
			compareAnswer(t, mode.String()+" "+c.iso, q.Target, got, c.want)
		}
	}
	if n < 5 {
		t.Errorf("%v: only %d queries compared", mode, n)
	}
}

func compareAnswer(t *testing.T, what string, target int64, got TimestampAndOffset, want kafkaAnswer) {
	t.Helper()
	if want.Found != nil && !*want.Found {
		if got.Found {
			t.Errorf("%s: target %d: got offset %d (ts %d), Kafka found nothing", what, target, got.Offset, got.Timestamp)
		}
		return
	}
	wantEpoch := epochOf(t, want.LeaderEpoch)
	if want.Found != nil && !got.Found {
		t.Errorf("%s: target %d: found nothing, Kafka offset %d", what, target, want.Offset)
		return
	}
	gotOffset, gotTS, gotEpoch := got.Offset, got.Timestamp, got.LeaderEpoch
	if !got.Found {
		gotOffset, gotTS, gotEpoch = -1, -1, NoEpoch
	}
	if gotOffset != want.Offset || gotTS != want.Timestamp || gotEpoch != wantEpoch {
		t.Errorf("%s: target %d: got offset %d ts %d epoch %d, Kafka offset %d ts %d epoch %d", what, target,
			gotOffset, gotTS, gotEpoch, want.Offset, want.Timestamp, wantEpoch)
	}
}

// TestTranslateOffset: LogSegment.translateOffset on a real segment
// (00000000000000000016 of unifiedlog-producer, whose .index is (20, 230)
// (23, 490) (26, 694) (30, 972)), with its index, without one, with a hint,
// and with an entry that points inside a batch.
func TestTranslateOffset(t *testing.T) {
	t.Parallel()
	dir := "testdata/kafka-listoffsets/unifiedlog-producer/topic-0"
	f, err := os.Open(filepath.Join(dir, "00000000000000000016.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, "00000000000000000016.index"))
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), good...)
	bad[8+7] = 0xEB // entry 1: position 490 -> 491, inside a batch
	cases := []struct {
		name      string
		index     []byte
		offset    int64
		hint      int64
		pos, last int64
		found     bool
	}{
		{"before the first entry", good, 17, 0, 0, 17, true},
		{"inside a batch", good, 25, 0, 568, 25, true},
		{"no index", nil, 25, 0, 568, 25, true},
		{"hint past the entry", good, 28, 790, 790, 28, true},
		{"hint at the end", good, 32, 1128, 0, 0, false},
		{"bad entry: rescan from 0", bad, 25, 0, 568, 25, true},
		{"past the segment", good, 40, 0, 0, 0, false},
	}
	for _, c := range cases {
		idx := &format.OffsetIndex{BaseOffset: 16, Data: c.index}
		bp, ok, err := TranslateOffset(f, st.Size(), idx, c.offset, c.hint)
		if err != nil || ok != c.found || (ok && (bp.Pos != c.pos || bp.LastOffset != c.last)) {
			t.Errorf("%s: %+v %v %v, want position %d last offset %d", c.name, bp, ok, err, c.pos, c.last)
		}
	}
}
