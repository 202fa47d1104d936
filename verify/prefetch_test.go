package verify

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/klog-dev/klog/internal/klogtest"
)

// TestPrefetchFindsWhatOneJobFinds: a segment checked with a prefetcher
// (two jobs, one file), whose batches are checked where the prefetched
// chunks hold them, gets the report --jobs 1 gets, findings included: a
// CRC mismatch just past a chunk boundary, one in a batch spanning two
// chunks, and a torn tail.
func TestPrefetchFindsWhatOneJobFinds(t *testing.T) {
	dir := t.TempDir()
	p := klogtest.WriteSegment(t, dir, 0, 6<<20)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range []int64{prefetchChunk + 100, 3*prefetchChunk - 3} {
		if _, err := f.WriteAt([]byte{0xff}, pos); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := f.Stat()
	if err := f.Truncate(st.Size() - 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	report := func(jobs int) (string, int) {
		rep, err := collect(context.Background(), []string{p}, Options{Jobs: jobs, KeepCache: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rep.Files {
			rep.Files[i].BytesRead = 0
		}
		js, err := json.Marshal(rep.Files)
		if err != nil {
			t.Fatal(err)
		}
		return string(js), rep.Findings()
	}
	one, n := report(1)
	two, _ := report(2)
	if n < 3 {
		t.Fatalf("%d findings, want the two CRC mismatches and the tail: %s", n, one)
	}
	if one != two {
		t.Errorf("with a prefetcher:\n%s\nwith one job:\n%s", two, one)
	}
}
