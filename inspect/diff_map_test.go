package inspect

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDiffMapSameAnswer: the mapped scan (with the default window, and with
// windows so small that batches straddle their ends and the scan remaps
// often) answers exactly as the pread scan, on agreeing replicas and on a
// replica that is behind.
func TestDiffMapSameAnswer(t *testing.T) {
	if !canMap {
		t.Skip("no mmap on this platform")
	}
	root := t.TempDir()
	a, c := filepath.Join(root, "a", "t-0"), filepath.Join(root, "c", "t-0")
	genPartition(t, 2<<20, 1, a, c)
	long := filepath.Join(root, "long", "t-0")
	genPartition(t, 3<<20, 1, long) // the same batches, and more
	defer func(m bool, w, s int64) { diffMap, diffMapWindow, diffMapSlack = m, w, s }(diffMap, diffMapWindow, diffMapSlack)
	for _, dirs := range [][]string{{a, c}, {a, long}} {
		diffMap = false
		want, err := Diff(dirs, DiffOptions{Leader: -1})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ window, slack int64 }{{16 << 20, 1 << 20}, {64 << 10, 4 << 10}, {8 << 10, 512}} {
			diffMap, diffMapWindow, diffMapSlack = true, tc.window, tc.slack
			got, err := Diff(dirs, DiffOptions{Leader: -1})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%v window %d: mapped scan %+v, pread scan %+v", dirs, tc.window, got, want)
			}
		}
	}
}

// TestDiffMapTruncated: a segment truncated while it is mapped (a broker
// truncating a live log) ends that replica's scan with an error naming the
// file; the fault on the lost pages does not end the process.
func TestDiffMapTruncated(t *testing.T) {
	if !canMap {
		t.Skip("no mmap on this platform")
	}
	root := t.TempDir()
	a, c := filepath.Join(root, "a", "t-0"), filepath.Join(root, "c", "t-0")
	genPartition(t, 2<<20, 1, a, c)
	victim := filepath.Join(c, "00000000000000000000.log")
	defer func(f func(*os.File)) { diffAfterMap = f }(diffAfterMap)
	diffAfterMap = func(f *os.File) {
		if f.Name() == victim {
			if err := os.Truncate(victim, 4096); err != nil {
				t.Error(err)
			}
		}
	}
	rep, err := Diff([]string{a, c}, DiffOptions{Leader: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Replicas[1].Problems
	if len(p) != 1 || !strings.Contains(p[0], victim+": the file shrank while being read") {
		t.Fatalf("problems %q", p)
	}
	if rep.Identical {
		t.Error("a replica read only in part counts as identical")
	}
}
