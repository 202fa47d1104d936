package fetch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// TestListOffsetsIsolation: for a consumer, LATEST is the high watermark
// (read_uncommitted) or the last stable offset (read_committed), and an
// answer at or past that bound is none (Partition.fetchOffsetForTimestamp).
// The high watermark comes from the log dir's replication-offset-checkpoint.
func TestListOffsetsIsolation(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-0")
	ts := int64(1_700_000_000_000)
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, Now: func() time.Time { return time.UnixMilli(ts + 1000) }})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range []produce.Batch{
		{}, // 0
		{}, // 1
		{Producer: &produce.Producer{ID: 7}, Transactional: true}, // 2: open transaction, LSO 2
		{}, // 3
		{}, // 4
	} {
		b.Records = []format.Record{{Value: []byte("v"), Timestamp: ts + int64(i)*10}}
		if _, err := a.Append(&b); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	cp := format.AppendOffsetCheckpoint(nil, []format.OffsetEntry{{Topic: "orders", Partition: 0, Offset: 4}})
	if err := os.WriteFile(filepath.Join(logDir, partition.ReplicationCheckpoint), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	l := open(t, dir)
	cases := []struct {
		target int64
		iso    Isolation
		offset int64 // -1: none
	}{
		{partition.LatestTimestamp, ReadUncommitted, 4},
		{partition.LatestTimestamp, ReadCommitted, 2},
		{partition.EarliestTimestamp, ReadCommitted, 0},
		{ts + 10, ReadUncommitted, 1},
		{ts + 10, ReadCommitted, 1},
		{ts + 20, ReadUncommitted, 2},
		{ts + 20, ReadCommitted, -1}, // at the LSO
		{ts + 30, ReadUncommitted, 3},
		{ts + 40, ReadUncommitted, -1}, // at the high watermark
		{partition.MaxTimestamp, ReadUncommitted, -1},
		{ts + 41, ReadUncommitted, -1}, // no record
	}
	for _, c := range cases {
		r, err := ListOffsets(l, c.target, c.iso)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Offset
		if !r.Found {
			got = -1
		}
		if got != c.offset {
			t.Errorf("target %d %v: offset %d (%+v), want %d", c.target, c.iso, got, r, c.offset)
		}
	}
}
