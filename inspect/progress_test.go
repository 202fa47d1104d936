package inspect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOnBytesAddsUpToTheFiles: the progress hooks of stats and segments
// report exactly the bytes of the files they read, and the reports are the
// same with and without them.
func TestOnBytesAddsUpToTheFiles(t *testing.T) {
	dir := viewsFixture(t, "unifiedlog-producer/topic-0")
	var logs int64
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".log") {
			st, err := os.Stat(filepath.Join(dir, de.Name()))
			if err != nil {
				t.Fatal(err)
			}
			logs += st.Size()
		}
	}
	var n atomic.Int64
	with, err := CollectStats(context.Background(), []string{dir}, StatsOptions{OnBytes: func(b int64) { n.Add(b) }})
	if err != nil {
		t.Fatal(err)
	}
	without, err := CollectStats(context.Background(), []string{dir}, StatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != logs || with.Bytes != without.Bytes || with.Batches != without.Batches {
		t.Errorf("stats: OnBytes told %d of %d bytes; batches %d vs %d", n.Load(), logs, with.Batches, without.Batches)
	}
	n.Store(0)
	ps, err := Segments(context.Background(), dir, SegmentsOptions{OnBytes: func(b int64) { n.Add(b) }})
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != logs || len(ps.Segments) == 0 {
		t.Errorf("segments: OnBytes told %d of %d bytes (%d rows)", n.Load(), logs, len(ps.Segments))
	}
}
