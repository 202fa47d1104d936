package verify

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFile copies a fixture file into dir.
func copyFile(t *testing.T, src, dir string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerdictsTellTheTruth (issue 24 item 10): an ignored file is not "ok"
// (it was not checked) nor failed; a missing .log is one problem however
// many index files it has; a run that read nothing does not say it
// verified a file; a symlinked partition directory is read through and
// reported as a link, not "not a Kafka file".
func TestVerdictsTellTheTruth(t *testing.T) {
	src := segments(t, "kafka-written", "v2-transactions")
	root := t.TempDir()
	logDir := filepath.Join(root, "logs")
	orders := filepath.Join(logDir, "orders-0")
	other := filepath.Join(root, "disk2", "pay-0")
	lone := filepath.Join(logDir, "lone-0")
	for _, d := range []string{orders, other, lone} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"} {
		copyFile(t, filepath.Join(src, f), orders)
		copyFile(t, filepath.Join(src, f), other)
	}
	// Two index files without their .log.
	copyFile(t, filepath.Join(src, "00000000000000000000.index"), lone)
	copyFile(t, filepath.Join(src, "00000000000000000000.timeindex"), lone)
	os.WriteFile(filepath.Join(orders, "notes.txt"), []byte("hello\n"), 0o644)
	if err := os.Symlink(other, filepath.Join(logDir, "pay-0")); err != nil {
		t.Fatal(err)
	}

	rep, err := collect(context.Background(), []string{logDir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum Summary
	byPath := map[string]*FileReport{}
	for i := range rep.Files {
		f := &rep.Files[i]
		byPath[f.Path] = f
		sum.Add(f)
	}
	notes := byPath[filepath.Join(orders, "notes.txt")]
	if notes == nil || notes.OK || notes.Failed() || notes.Ignored == "" {
		t.Errorf("notes.txt: %+v, want ignored, not ok, not failed", notes)
	}
	link := byPath[filepath.Join(logDir, "pay-0")]
	if link == nil || link.Kind != "link" || link.LinkTarget != other || !link.OK {
		t.Errorf("the symlinked partition: %+v, want a link report", link)
	}
	if f := byPath[filepath.Join(logDir, "pay-0", "00000000000000000000.log")]; f == nil || !f.OK || f.Records == 0 {
		t.Errorf("the log through the link: %+v, want it checked", f)
	}
	missing := 0
	for _, f := range rep.Files {
		for _, p := range f.Problems {
			if p.Kind == KindMissingLog && !p.Info {
				missing++
			}
		}
	}
	if missing != 1 || sum.Problems != 1 {
		t.Errorf("missing-log findings %d, summary problems %d; want 1 and 1", missing, sum.Problems)
	}

	// Nothing read: no file verified.
	var none Summary
	for f := range Files(context.Background(), []string{filepath.Join(root, "nope.log"), t.TempDir()}, Options{}) {
		none.Add(f)
	}
	var b bytes.Buffer
	none.WriteText(&b, 0, false)
	if none.Files != 0 || none.IOErrors != 2 || !strings.HasPrefix(b.String(), "verified 0 files") {
		t.Errorf("summary of a run that read nothing: %+v %q", none, b.String())
	}
}
