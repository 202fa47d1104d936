package recovery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klog-dev/klog/partition"
)

// kafkaRecovery is the part of a kafka-recovery.json this test reads: what
// Kafka 4.3.1's UnifiedLog did opening the directory after an unclean
// shutdown.
type kafkaRecovery struct {
	OriginalFiles map[string]int64 `json:"original_files"`
	Unclean       struct {
		Opened         bool  `json:"opened"`
		LogStartOffset int64 `json:"log_start_offset"`
		LogEndOffset   int64 `json:"log_end_offset"`
		PerSegment     []struct {
			File      string `json:"file"`
			Deleted   bool   `json:"deleted_by_kafka"`
			Kept      int64  `json:"kept_bytes"`
			Truncated int64  `json:"truncated_bytes"`
		} `json:"per_original_segment"`
		FilesAfter map[string]int64 `json:"files_after_close"`
	} `json:"unified_log_unclean_open"`
}

// TestRecoverMatchesKafka compares the plan, and the directory recover
// --output writes, with Kafka's own answer beside every Kafka-written
// partition and derived-corrupt case.
func TestRecoverMatchesKafka(t *testing.T) {
	t.Parallel()
	root := segments(t, "kafka-written")
	var oracles []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "kafka-recovery.json" {
			oracles = append(oracles, p)
		}
		return nil
	})
	if len(oracles) != 33 {
		t.Fatalf("found %d kafka-recovery.json files, want 33", len(oracles))
	}
	for _, o := range oracles {
		name, _ := filepath.Rel(root, filepath.Dir(o))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(o)
			if err != nil {
				t.Fatal(err)
			}
			var k kafkaRecovery
			if err := json.Unmarshal(data, &k); err != nil {
				t.Fatal(err)
			}
			// The directory exactly as Kafka was given it.
			dir := filepath.Join(t.TempDir(), "topic-0")
			os.Mkdir(dir, 0o755)
			for f, size := range k.OriginalFiles {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(o), f))
				if err != nil || int64(len(b)) != size {
					t.Fatalf("%s: %v (%d bytes, oracle says %d)", f, err, len(b), size)
				}
				os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
			plan, err := PlanDir(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			u := k.Unclean
			if plan.Loads != u.Opened {
				t.Fatalf("loads %v (%s), Kafka opened %v", plan.Loads, plan.KafkaError, u.Opened)
			}
			if plan.LogStartOffset != u.LogStartOffset || plan.LogEndOffset != u.LogEndOffset {
				t.Errorf("log start/end %d/%d, Kafka %d/%d", plan.LogStartOffset, plan.LogEndOffset, u.LogStartOffset, u.LogEndOffset)
			}
			if len(plan.Segments) != len(u.PerSegment) {
				t.Fatalf("%d segments planned, Kafka recovered %d", len(plan.Segments), len(u.PerSegment))
			}
			for i, ks := range u.PerSegment {
				s := plan.Segments[i]
				if filepath.Base(s.Log) != ks.File {
					t.Fatalf("segment %d is %s, Kafka's %s", i, s.Log, ks.File)
				}
				if (s.Action == ActionDelete) != ks.Deleted || s.ValidBytes != ks.Kept || s.TruncateBytes != ks.Truncated {
					t.Errorf("%s: %s keeping %d truncating %d; Kafka deleted=%v kept %d truncated %d",
						ks.File, s.Action, s.ValidBytes, s.TruncateBytes, ks.Deleted, ks.Kept, ks.Truncated)
				}
				want := ActionKeep
				if ks.Deleted {
					want = ActionDelete
				} else if ks.Truncated > 0 {
					want = ActionTruncate
				}
				if s.Action != want {
					t.Errorf("%s: action %s, want %s", ks.File, s.Action, want)
				}
			}
			// Every file Kafka removed is a planned deletion, and every
			// planned deletion is gone afterwards (or recreated as the new
			// empty segment).
			deleted := map[string]bool{}
			for _, f := range plan.DeletedFiles {
				deleted[filepath.Base(f.Path)] = true
				if _, ok := u.FilesAfter[filepath.Base(f.Path)]; ok && !(plan.NewEmptySegment && partition.IsSegmentFile(filepath.Base(f.Path))) {
					t.Errorf("plan deletes %s, which Kafka kept", f.Path)
				}
			}
			for f := range k.OriginalFiles {
				if _, ok := u.FilesAfter[f]; !ok && !deleted[f] {
					t.Errorf("Kafka removed %s; the plan does not say so", f)
				}
			}
			// recover --output leaves the files Kafka leaves (producer
			// snapshots aside: Kafka writes new ones), with their sizes.
			out := filepath.Join(t.TempDir(), "out-0")
			if err := plan.WriteRecovered(out); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			des, _ := os.ReadDir(out)
			for _, de := range des {
				info, _ := de.Info()
				got[de.Name()] = info.Size()
			}
			var diffs []string
			for f, size := range u.FilesAfter {
				if strings.HasSuffix(f, partition.SnapshotSuffix) {
					continue
				}
				if g, ok := got[f]; !ok || g != size {
					diffs = append(diffs, f)
				}
			}
			for f := range got {
				if _, ok := u.FilesAfter[f]; !ok {
					diffs = append(diffs, f+" (extra)")
				}
			}
			if len(diffs) > 0 {
				sort.Strings(diffs)
				t.Errorf("recovered copy differs from what Kafka left: %v\nklog: %v\nKafka: %v", diffs, got, u.FilesAfter)
			}
		})
	}
}
