package verify_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/verify"
)

// TestInterruptedRunSaysSo (issue 24 item 9): a signal in the middle of a
// log hands out that log's report marked partial (not ok, not failed, not
// an I/O error), and no partition check judges the cut log: no spurious
// snapshot-range finding for a snapshot at the real log end.
func TestInterruptedRunSaysSo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	a, err := produce.Open(dir, produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]format.Record, 50)
	for i := range recs {
		recs[i].Value = bytes.Repeat([]byte{'v'}, 200)
	}
	for range 1000 {
		if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close() // writes the producer snapshot at the log end
	for _, jobs := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		var once bool
		opts := verify.Options{Jobs: jobs, Progress: func(read, total int64) {
			if read > 0 && !once {
				once = true
				cancel() // the first progress report is inside the log
			}
		}}
		var reps []*verify.FileReport
		var runErr error
		for f, err := range verify.Files(ctx, []string{dir}, opts) {
			if err != nil {
				runErr = err
				break
			}
			c := *f
			reps = append(reps, &c)
		}
		cancel()
		if runErr == nil {
			t.Fatalf("jobs %d: the run was not interrupted", jobs)
		}
		if len(reps) == 0 || !strings.HasSuffix(reps[0].Path, ".log") || !reps[0].Partial || reps[0].OK || reps[0].Failed() || reps[0].Err != "" {
			t.Fatalf("jobs %d: first report %+v, want the log, partial", jobs, reps)
		}
		for _, f := range reps {
			if f.Findings() > 0 {
				t.Errorf("jobs %d: %s: %v after an interruption", jobs, f.Path, f.Problems)
			}
		}
	}
}
