package recovery

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestKRaftSnapshots: a __cluster_metadata partition is loaded as
// KafkaMetadataLog.apply does after UnifiedLog: partial snapshots go, and the
// log is emptied and started at the latest snapshot's end offset when that
// snapshot is past the log (same epoch) or of a later epoch; the recovered
// copy keeps the snapshots.
func TestKRaftSnapshots(t *testing.T) {
	seg, err := os.ReadFile(segments(t, "kafka-written", "v2-none", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	const snapName = "00000000000000000100-0000000001.checkpoint"
	cases := []struct {
		name       string
		topic      string
		files      []string // the log when "log", else snapshot names
		start, end int64    // -1: the log's own end
		truncated  string
		snapshots  int
	}{
		{"only a snapshot", "__cluster_metadata-0", []string{snapName}, 100, 100, snapName, 1},
		// The log's batches are of leader epoch 5 (from offset 4).
		{"snapshot past the log, same epoch", "__cluster_metadata-0", []string{"log", "00000000000000000100-0000000005.checkpoint"}, 100, 100, "00000000000000000100-0000000005.checkpoint", 1},
		{"snapshot of an earlier epoch past the log", "__cluster_metadata-0", []string{"log", snapName}, 0, -1, "", 1},
		{"snapshot inside the log, same epoch", "__cluster_metadata-0", []string{"log", "00000000000000000002-0000000005.checkpoint"}, 0, -1, "", 1},
		{"snapshot of a later epoch inside the log", "__cluster_metadata-0", []string{"log", "00000000000000000002-0000000006.checkpoint"}, 2, 2, "00000000000000000002-0000000006.checkpoint", 1},
		{"partial snapshot deleted", "__cluster_metadata-0", []string{"log", "00000000000000000002-0000000000.checkpoint.part"}, 0, -1, "", 0},
		{"not the metadata log", "orders-0", []string{"log", snapName}, 0, -1, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), c.topic)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.files {
				name := f
				if f == "log" {
					name = "00000000000000000000.log"
				}
				if err := os.WriteFile(filepath.Join(dir, name), seg, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			plan, err := PlanDir(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			end := c.end
			if end < 0 {
				clean, err := PlanDir(segments(t, "kafka-written", "v2-none"), Options{})
				if err != nil {
					t.Fatal(err)
				}
				end = clean.LogEndOffset
			}
			truncated := ""
			if plan.TruncatedToSnapshot != "" {
				truncated = filepath.Base(plan.TruncatedToSnapshot)
			}
			if !plan.Loads || plan.LogStartOffset != c.start || plan.LogEndOffset != end || truncated != c.truncated || len(plan.KRaftSnapshots) != c.snapshots {
				t.Fatalf("loads %v start %d end %d truncated %q snapshots %v; want %d %d %q %d (%+v)", plan.Loads, plan.LogStartOffset, plan.LogEndOffset,
					truncated, plan.KRaftSnapshots, c.start, end, c.truncated, c.snapshots, plan)
			}
			if c.truncated != "" && (!plan.NewEmptySegment || len(plan.live) != 0) {
				t.Errorf("truncated, but new segment %v, %d live", plan.NewEmptySegment, len(plan.live))
			}
			out := filepath.Join(t.TempDir(), c.topic)
			if err := plan.WriteRecovered(out); err != nil {
				t.Fatal(err)
			}
			for _, ks := range plan.KRaftSnapshots {
				if got, err := os.ReadFile(filepath.Join(out, filepath.Base(ks.Path))); err != nil || len(got) != len(seg) {
					t.Errorf("recovered copy lacks snapshot %s: %v", ks.Path, err)
				}
			}
			if c.truncated != "" {
				names, _ := filepath.Glob(filepath.Join(out, "*.log"))
				if len(names) != 1 || filepath.Base(names[0]) != fmt.Sprintf("%020d.log", c.start) {
					t.Errorf("recovered segments %v, want one empty segment at %d", names, c.start)
				}
			}
		})
	}
}
