package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFilesStreamsTheReportInOrder: Files yields every file once, in the
// order of one piece, with its final verdict (partition checks included), and
// Progress ends with the bytes read equal to the total.
func TestFilesStreamsTheReportInOrder(t *testing.T) {
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
		var read, total int64
		calls := 0
		paths := []string{root, segments(t, "kafka-written", "coordinator")}
		for f, err := range Files(context.Background(), paths, Options{
			Jobs: jobs,
			Progress: func(r, t int64) {
				calls++
				read, total = r, t
			},
		}) {
			if err != nil {
				t.Fatal(err)
			}
			streamed = append(streamed, *f)
		}
		// One job, one piece: what Files yields is the piece in order.
		whole, err := runPiece(context.Background(), paths, Options{Jobs: 1}, newReads(context.Background(), Options{KeepCache: true}), nil, func(*FileReport) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		if len(streamed) != len(whole.files) {
			t.Fatalf("jobs=%d: Files yielded %d reports, a piece holds %d", jobs, len(streamed), len(whole.files))
		}
		for i := range streamed {
			streamed[i].BytesRead, whole.files[i].BytesRead = 0, 0
		}
		if !reflect.DeepEqual(streamed, whole.files) {
			t.Errorf("jobs=%d: streamed reports differ from the piece's", jobs)
		}
		if read != total || total == 0 || calls < 2 {
			t.Errorf("jobs=%d: Progress ended at %d of %d bytes (%d calls)", jobs, read, total, calls)
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

// TestFilesStopsEarly: breaking out of the loop (verify --fail-fast) stops
// the run; what was yielded is a prefix of the full run's order.
func TestFilesStopsEarly(t *testing.T) {
	full := run(t, segments(t, "kafka-written"))
	for _, jobs := range []int{1, 2} {
		var streamed []string
		for f, err := range Files(context.Background(), []string{segments(t, "kafka-written")}, Options{Jobs: jobs}) {
			if err != nil {
				t.Fatal(err)
			}
			streamed = append(streamed, f.Path)
			if len(streamed) == 3 {
				break
			}
		}
		if len(streamed) != 3 {
			t.Fatalf("jobs=%d: yielded %d of %d files", jobs, len(streamed), len(full.Files))
		}
		for i, p := range streamed {
			if full.Files[i].Path != p {
				t.Errorf("jobs=%d: file %d: yielded %s, full run has %s", jobs, i, p, full.Files[i].Path)
			}
		}
	}
}

// TestFilesCancelled: a cancelled context ends the run with its error,
// yielded last, after a prefix of the reports in order.
func TestFilesCancelled(t *testing.T) {
	full := run(t, segments(t, "kafka-written"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streamed []string
	var last error
	for f, err := range Files(ctx, []string{segments(t, "kafka-written")}, Options{Jobs: 1}) {
		if err != nil {
			last = err
			continue
		}
		streamed = append(streamed, f.Path)
		if len(streamed) == 3 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("the run ended with %v, want context.Canceled", last)
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
