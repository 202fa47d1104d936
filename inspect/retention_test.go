package inspect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kafkaRetention is the part of a kafka-retention.json oracle file (Kafka
// 4.3.1's own UnifiedLog.deleteOldSegments; see testdata/README.md) the
// tests compare against.
type kafkaRetention struct {
	Directory     string           `json:"directory"`
	MtimesApplied map[string]int64 `json:"mtimes_applied"`
	Cases         []struct {
		Open              string            `json:"open"`
		NowMs             int64             `json:"now_ms"`
		RetentionMs       int64             `json:"retention_ms"`
		RetentionBytes    int64             `json:"retention_bytes"`
		HighWatermark     int64             `json:"high_watermark"`
		HighWatermarkSpec string            `json:"high_watermark_spec"`
		LogEndOffset      int64             `json:"log_end_offset"`
		LogStartBefore    int64             `json:"log_start_offset_before"`
		LogSizeBefore     int64             `json:"log_size_before"`
		Deleted           []int64           `json:"deleted_segments"`
		Rolled            []int64           `json:"new_segments_rolled"`
		LogStartAfter     int64             `json:"log_start_offset_after"`
		LogSizeAfter      int64             `json:"log_size_after"`
		Reasons           map[string]string `json:"reasons"`
		FutureWarnings    []int64           `json:"future_timestamp_warning_segments"`
		Set               string            `json:"set"`
	} `json:"cases"`
}

// copyFixture copies a partition directory from the repository's testdata
// into a temporary directory and sets every file's modification time, as the
// oracle run did.
func copyFixture(t *testing.T, src string, mtime int64) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "p-0")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	mt := time.UnixMilli(mtime)
	for _, de := range des {
		if de.IsDir() || strings.HasSuffix(de.Name(), ".txt") || strings.HasPrefix(de.Name(), "kafka-") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, de.Name())
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestRetentionKafkaOracle replays every case of every kafka-retention.json:
// the segments deleted, the reason of each (with the age source Kafka's log
// line names), the new log start offset, the roll, the bytes deleted and
// the future-timestamp warnings about segments that existed before the
// pass.
func TestRetentionKafkaOracle(t *testing.T) {
	files, err := filepath.Glob("testdata/kafka-retention/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no oracle files: %v", err)
	}
	total := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var k kafkaRetention
		if err := json.Unmarshal(data, &k); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(k.Directory, "shared/fixtures/kafka-written/")
		src := filepath.Join("..", "testdata", "segments", "kafka-written", rel)
		dir := copyFixture(t, src, k.MtimesApplied["all_files"])
		for i, c := range k.Cases {
			name := filepath.Base(f) + "/" + strconv.Itoa(i) + "/" + c.Open + "/" + c.Set
			cfg := DefaultRetentionConfig()
			cfg.RetentionMs, cfg.RetentionBytes = c.RetentionMs, c.RetentionBytes
			rep, err := Retention(dir, RetentionOptions{Config: cfg, Now: c.NowMs, HighWatermark: c.HighWatermark,
				LogStartOffset: c.LogStartBefore, CleanerOffset: -1, Recovered: c.Open == "unclean"})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			total++
			sum := rep.Summary
			if sum.LogEndOffset != c.LogEndOffset {
				t.Errorf("%s: log end offset %d, Kafka %d", name, sum.LogEndOffset, c.LogEndOffset)
			}
			var deleted []int64
			reasons := map[string]string{}
			for _, s := range rep.Segments {
				if !s.Deletable {
					continue
				}
				deleted = append(deleted, s.BaseOffset)
				r := *s.Reason
				if r == RetentionReasonMs {
					if s.AgeSource == RetentionAgeMtime {
						r += " (last modified time)"
					} else {
						r += " (largest record timestamp)"
					}
				}
				reasons[strconv.FormatInt(s.BaseOffset, 10)] = r
			}
			if !slices.Equal(deleted, c.Deleted) && !(len(deleted) == 0 && len(c.Deleted) == 0) {
				t.Errorf("%s: deleted %v, Kafka %v (hw %d ms %d bytes %d now %d)", name, deleted, c.Deleted, c.HighWatermark, c.RetentionMs, c.RetentionBytes, c.NowMs)
				continue
			}
			for k, v := range c.Reasons {
				if reasons[k] != v {
					t.Errorf("%s: segment %s reason %q, Kafka %q", name, k, reasons[k], v)
				}
			}
			if sum.NewLogStartOffset != c.LogStartAfter {
				t.Errorf("%s: new log start %d, Kafka %d", name, sum.NewLogStartOffset, c.LogStartAfter)
			}
			if sum.Rolled != (len(c.Rolled) > 0) {
				t.Errorf("%s: rolled %v, Kafka rolled %v", name, sum.Rolled, c.Rolled)
			}
			if got := c.LogSizeBefore - sum.DeletableBytes; got != c.LogSizeAfter {
				t.Errorf("%s: size after %d, Kafka %d", name, got, c.LogSizeAfter)
			}
			var want []int64
			for _, w := range c.FutureWarnings {
				if !slices.Contains(c.Rolled, w) {
					want = append(want, w)
				}
			}
			if !slices.Equal(sum.FutureTimestampSegments, want) && !(len(want) == 0 && len(sum.FutureTimestampSegments) == 0) {
				t.Errorf("%s: future-timestamp segments %v, Kafka %v", name, sum.FutureTimestampSegments, want)
			}
		}
	}
	if total < 2000 {
		t.Errorf("only %d oracle cases", total)
	}
	t.Logf("%d Kafka cases compared", total)
}

// TestRetentionFindings: a future largest timestamp that holds back time
// retention is a finding, named by the file and position its age was read
// from and the segment's base offset; none when "now" is after every
// segment.
func TestRetentionFindings(t *testing.T) {
	dir := viewsFixture(t, "unifiedlog-producer/topic-0")
	for _, c := range []struct {
		name string
		now  int64
		n    int
	}{
		{"every segment in the future", 1577836800000, 3},
		{"now after every segment", 1800000000000, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Retention(dir, RetentionOptions{Config: DefaultRetentionConfig(), Now: c.now, HighWatermark: -1, LogStartOffset: -1, CleanerOffset: -1})
			if err != nil {
				t.Fatal(err)
			}
			n, first := rep.Findings()
			if n != c.n || (n > 0) != (first != nil) {
				t.Fatalf("Findings() = %d, %+v; want %d", n, first, c.n)
			}
			if n > 0 && (!strings.HasSuffix(first.Path, "00000000000000000000.timeindex") || first.Position != 36 || first.Offset != 0) {
				t.Errorf("first %+v, want the first segment's .timeindex, its last entry at 36, offset 0", first)
			}
		})
	}
}
