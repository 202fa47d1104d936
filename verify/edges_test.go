package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/internal/hostile"
)

// TestProblemsCappedPerKind: a batch of many bad records keeps the first
// MaxProblemsPerKind problems of a kind and counts the rest, so memory does
// not grow with the records; the count of findings stays exact.
func TestProblemsCappedPerKind(t *testing.T) {
	const n = 50_000
	bomb, err := hostile.OffsetDeltaBomb(n)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "t-0")
	os.Mkdir(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := collect(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Files[0]
	kept := 0
	for _, p := range f.Problems {
		if p.Kind == KindRecordOffset {
			kept++
		}
	}
	if kept != MaxProblemsPerKind {
		t.Errorf("kept %d record-offset problems, want %d", kept, MaxProblemsPerKind)
	}
	// Every record after the first repeats offset delta 0.
	if got := int64(kept) + f.Omitted[KindRecordOffset]; got != n-1 {
		t.Errorf("record-offset problems: %d kept + %d omitted, want %d", kept, f.Omitted[KindRecordOffset], n-1)
	}
	if f.Findings() < n-1 || f.OK {
		t.Errorf("Findings() = %d, OK %v", f.Findings(), f.OK)
	}
}

// TestDecompressBudgetSharedAcrossJobs: 16 zstd bombs verified with 16
// jobs are all reported as decompress problems, one at a time past the
// small per-job cap.
func TestDecompressBudgetSharedAcrossJobs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	os.Mkdir(dir, 0o755)
	for i := 0; i < 16; i++ {
		b := hostile.Batch(int64(i), 4, 0, 1, hostile.ZstdRLEFrame(256<<20))
		if err := os.WriteFile(filepath.Join(dir, hostileName(int64(i))), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := collect(context.Background(), []string{dir}, Options{Jobs: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		found := false
		for _, p := range f.Problems {
			found = found || p.Kind == KindDecompress
		}
		if !found {
			t.Errorf("%s: no decompress problem: %+v", f.Path, f.Problems)
		}
	}
}

func hostileName(base int64) string {
	s := "00000000000000000000" + itoa(base)
	return s[len(s)-20:] + ".log"
}

// TestStoredHostileSegments: every stored hostile segment is a finding,
// never "ok", and costs no more than its per-kind problems.
func TestStoredHostileSegments(t *testing.T) {
	matches, _ := filepath.Glob(filepath.Join("..", "testdata", "hostile", "*.log"))
	if len(matches) == 0 {
		t.Fatal("no stored hostile segments")
	}
	for _, m := range matches {
		rep, err := collect(context.Background(), []string{m}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		f := rep.Files[0]
		if f.OK || f.Findings() == 0 {
			t.Errorf("%s: ok, want a finding", m)
		}
		if len(f.Problems) > MaxProblemsPerKind*4 {
			t.Errorf("%s: %d problems kept", m, len(f.Problems))
		}
	}
}
