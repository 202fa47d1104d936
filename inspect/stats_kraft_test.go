package inspect

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestStatsReadsKRaftSnapshots: stats of a partition directory reads its
// KRaft snapshots as it reads one named on the command line, so that a
// __cluster_metadata copy holding only its snapshot has stats.
func TestStatsReadsKRaftSnapshots(t *testing.T) {
	seg, err := os.ReadFile("../testdata/segments/kafka-written/v2-none/00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "00000000000000000059-0000000001.checkpoint")
	if err := os.WriteFile(snap, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	fromDir, err := CollectStats(context.Background(), []string{dir}, StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := CollectStats(context.Background(), []string{snap}, StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fromDir.Files != 1 || fromDir.Records == 0 || fromDir.Records != fromFile.Records || fromDir.Batches != fromFile.Batches {
		t.Errorf("directory: %d files %d batches %d records; the file: %d batches %d records",
			fromDir.Files, fromDir.Batches, fromDir.Records, fromFile.Batches, fromFile.Records)
	}
}
