package verify

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
)

// TestOnFileStreamsTheReportInOrder: OnFile sees every file once, in the
// report's order, with its final verdict (partition checks included), and
// OnBytes adds up to OnStart's total.
func TestOnFileStreamsTheReportInOrder(t *testing.T) {
	root := t.TempDir()
	// A log dir with a checkpoint that names a partition, so that the log
	// dir's check runs after the partition's files.
	src := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	dst := filepath.Join(root, "topic-0")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "recovery-point-offset-checkpoint"), []byte("0\n1\ntopic 0 999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 4} {
		var streamed []FileReport
		var files int
		var total int64
		var read atomic.Int64
		rep, err := Run(context.Background(), []string{root, segments(t, "kafka-written", "coordinator")}, Options{
			Jobs:    jobs,
			OnStart: func(n int, b int64) { files, total = n, b },
			OnBytes: func(n int64) { read.Add(n) },
			OnFile:  func(f *FileReport) { streamed = append(streamed, *f) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if files != len(rep.Files) || len(streamed) != len(rep.Files) {
			t.Fatalf("jobs=%d: OnStart said %d files, OnFile saw %d, report has %d", jobs, files, len(streamed), len(rep.Files))
		}
		if !reflect.DeepEqual(streamed, rep.Files) {
			t.Errorf("jobs=%d: streamed reports differ from the final report", jobs)
		}
		if got := read.Load(); got != total || total == 0 {
			t.Errorf("jobs=%d: OnBytes added up to %d, OnStart said %d", jobs, got, total)
		}
		var cp *FileReport
		for i := range streamed {
			if filepath.Base(streamed[i].Path) == "recovery-point-offset-checkpoint" {
				cp = &streamed[i]
			}
		}
		if cp == nil || cp.Findings() == 0 {
			t.Errorf("jobs=%d: the checkpoint past the log end was streamed without its finding: %+v", jobs, cp)
		}
	}
}

// TestOnFileStopsEarly: cancelling from OnFile (verify --fail-fast) stops
// the run; what was streamed is a prefix of the full report's order.
func TestOnFileStopsEarly(t *testing.T) {
	full := run(t, segments(t, "kafka-written"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streamed []string
	_, err := Run(ctx, []string{segments(t, "kafka-written")}, Options{Jobs: 1, OnFile: func(f *FileReport) {
		streamed = append(streamed, f.Path)
		if len(streamed) == 3 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("no error after cancel")
	}
	if len(streamed) < 3 || len(streamed) >= len(full.Files) {
		t.Fatalf("streamed %d of %d files", len(streamed), len(full.Files))
	}
	for i, p := range streamed {
		if full.Files[i].Path != p {
			t.Errorf("file %d: streamed %s, full report has %s", i, p, full.Files[i].Path)
		}
	}
}
