//go:build linux

package verify

import (
	"bytes"
	"context"
	"io"
	"math/bits"
	"os"
	"testing"

	"github.com/klog-dev/klog/internal/klogtest"
	"golang.org/x/sys/unix"
)

// resident is the fraction of the file's pages in the page cache.
func resident(t *testing.T, p string) float64 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	cold := mincoreCold(f, 0, st.Size())
	if cold == nil {
		t.Fatal("mincore failed")
	}
	pages := (st.Size() + int64(pageSize) - 1) / int64(pageSize)
	n := 0
	for _, w := range cold {
		n += bits.OnesCount64(w)
	}
	return 1 - float64(n)/float64(pages)
}

// makeCold writes the file's pages back and drops them from the cache.
func makeCold(t *testing.T, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if r := resident(t, p); r > 0.05 {
		// tmpfs and some overlay filesystems keep every page: there is
		// nothing to measure there.
		if os.Getenv("CI") != "" {
			t.Fatalf("cannot make %s cold (%.0f%% resident after DONTNEED)", p, 100*r)
		}
		t.Skipf("this filesystem keeps pages after DONTNEED (%.0f%% resident)", 100*r)
	}
}

// warm reads the first n bytes of the file (through the page cache).
func warm(t *testing.T, p string, n int64) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// No read-ahead: exactly the pages read become resident.
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(f, n)); err != nil {
		t.Fatal(err)
	}
}

// TestPageCacheCare measures page-cache residency around a verify: a cold
// file is back near zero after it (and fully cached with --keep-cache, so
// the measure can see a difference); a cached file stays cached; of a half
// cached file, the cached half stays and the other half goes. A control
// file warmed alike and never verified tells memory pressure (the kernel
// evicting pages itself) from verify's doing.
func TestPageCacheCare(t *testing.T) {
	dir := t.TempDir()
	p := klogtest.WriteSegment(t, dir, 0, 8<<20)
	control := klogtest.WriteSegment(t, t.TempDir(), 0, 8<<20) // warmed alike, never verified
	st, _ := os.Stat(p)
	half := st.Size() / 2 &^ int64(pageSize-1)
	cases := []struct {
		name      string
		keepCache bool
		jobs      int
		warmBytes int64
		// residency wanted after the run: at least min, at most max
		min, max float64
	}{
		{"cold", false, 1, 0, 0, 0.02},
		{"cold,jobs=2 (prefetch)", false, 2, 0, 0, 0.02},
		{"cold,keep-cache", true, 1, 0, 0.98, 1},
		{"cached", false, 1, -1, 0.999, 1},
		{"half cached", false, 1, half, 0.45, 0.55},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			makeCold(t, p)
			makeCold(t, control)
			switch {
			case tc.warmBytes < 0:
				warm(t, p, st.Size())
				warm(t, control, st.Size())
			case tc.warmBytes > 0:
				warm(t, p, tc.warmBytes)
				warm(t, control, tc.warmBytes)
			}
			before, controlBefore := resident(t, p), resident(t, control)
			rep, err := collect(context.Background(), []string{p}, Options{Jobs: tc.jobs, KeepCache: tc.keepCache})
			if err != nil || rep.Findings() != 0 || rep.BytesRead < st.Size() {
				t.Fatal(err, rep.Findings(), rep.BytesRead)
			}
			after := resident(t, p)
			t.Logf("resident before %.3f, after %.3f", before, after)
			if c := resident(t, control); c < controlBefore-0.01 {
				// The kernel evicted pages of a file nobody touched: on a
				// machine short of memory, residency says nothing of what
				// verify did (TestDropColdRuns checks that without the
				// kernel).
				t.Skipf("memory pressure: an untouched file went from %.3f to %.3f resident", controlBefore, c)
			}
			if after < tc.min || after > tc.max {
				t.Errorf("resident before %.3f, after %.3f; want %.3f..%.3f", before, after, tc.min, tc.max)
			}
			if tc.warmBytes > 0 {
				// The half read before is the half that stays.
				f, _ := os.Open(p)
				cold := mincoreCold(f, 0, st.Size())
				f.Close()
				for pg := int64(0); pg < half/int64(pageSize); pg++ {
					if cold[pg/64]&(1<<(pg%64)) != 0 {
						t.Fatalf("page %d was cached before verify and is not after", pg)
					}
				}
			}
		})
	}
}

// TestPageCacheSharedLog: the index checks read the log again; the log's
// pages are still dropped once every reader is done.
func TestPageCacheSharedLog(t *testing.T) {
	root := writeLogDir(t, 1, 1, 4<<20)
	p := lastLog(t, root+"/t-0")
	makeCold(t, p)
	rep, err := collect(context.Background(), []string{root}, Options{Jobs: 2})
	if err != nil || rep.Findings() != 0 {
		t.Fatal(err, rep.Findings())
	}
	if r := resident(t, p); r > 0.02 {
		t.Errorf("%.3f of the log resident after verify, want ~0", r)
	}
}

// TestDropColdRuns: of a residency map, verify drops exactly the runs of
// pages that were cold, up to the file's size, and nothing else.
func TestDropColdRuns(t *testing.T) {
	ps := int64(pageSize)
	size := 10*ps - 100 // the last page is partial
	cold := make([]uint64, 1)
	for _, pg := range []int{0, 1, 4, 7, 8, 9} {
		cold[0] |= 1 << pg
	}
	var got [][2]int64
	testDrop = func(off, n int64) { got = append(got, [2]int64{off, n}) }
	defer func() { testDrop = nil }()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dropCold(f, cold, size)
	want := [][2]int64{{0, 2 * ps}, {4 * ps, ps}, {7 * ps, size - 7*ps}}
	if len(got) != len(want) {
		t.Fatalf("dropped %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("dropped %v, want %v", got, want)
		}
	}
}

// TestQuickReads: a small file found all in the page cache is read with
// raw system calls (file.quick), and reads the same bytes; a small file
// with a page not cached, a file over one read window, and a run with
// --keep-cache (no residency asked) are read the ordinary way.
func TestQuickReads(t *testing.T) {
	dir := t.TempDir()
	small := klogtest.WriteSegment(t, dir, 0, 64<<10)
	large := klogtest.WriteSegment(t, t.TempDir(), 0, 2*quickBytes)
	cases := []struct {
		name      string
		path      string
		cold      bool
		keepCache bool
		quick     bool
	}{
		{name: "small, cached", path: small, quick: true},
		{name: "small, cold", path: small, cold: true},
		{name: "small, keep-cache", path: small, keepCache: true},
		{name: "large, cached", path: large},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cold {
				makeCold(t, tc.path)
			}
			rd := newReads(context.Background(), Options{KeepCache: tc.keepCache})
			s, err := rd.open(tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.f.quick != tc.quick {
				t.Errorf("quick = %v, want %v", s.f.quick, tc.quick)
			}
			got := make([]byte, len(want)+1)
			n, err := s.ReadAt(got, 0)
			if err != io.EOF || n != len(want) || !bytes.Equal(got[:n], want) {
				t.Errorf("read %d bytes, %v; want the file's %d, EOF", n, err, len(want))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.f.Close(); err != os.ErrClosed {
				t.Errorf("second close: %v, want os.ErrClosed", err)
			}
		})
	}
}

// TestLazyResidency: verify of a large log found all in the page cache
// asks no residency (its reads took cached pages only); of a log whose
// first half is cached, it asks from the first page that is not, once.
func TestLazyResidency(t *testing.T) {
	p := klogtest.WriteSegment(t, t.TempDir(), 0, 8<<20)
	st, _ := os.Stat(p)
	half := st.Size() / 2 &^ int64(pageSize-1)
	var froms []int64
	testSettle = func(from int64) { froms = append(froms, from) }
	defer func() { testSettle = nil }()
	for _, warmBytes := range []int64{st.Size(), half} {
		want := []int64{}
		if warmBytes < st.Size() {
			want = []int64{warmBytes}
		}
		// The kernel may reclaim a warmed page before verify reads it (a
		// machine under memory pressure, or reclaiming idle pages on its
		// own, as DAMON does): then residency is rightly asked earlier.
		// Such a run is tried again; three in a row fail.
		for attempt := 1; ; attempt++ {
			makeCold(t, p)
			warm(t, p, warmBytes)
			if r := resident(t, p); r < float64(warmBytes)/float64(st.Size())-0.01 {
				t.Skipf("cannot warm %s: %.3f resident", p, r)
			}
			froms = nil
			rep, err := collect(context.Background(), []string{p}, Options{Jobs: 1})
			if err != nil || rep.Findings() != 0 || rep.BytesRead < st.Size() {
				t.Fatal(err, rep.Findings(), rep.BytesRead)
			}
			if len(froms) == len(want) && (len(want) == 0 || froms[0] == want[0]) {
				break
			}
			if earlier := len(froms) == 1 && froms[0] < warmBytes; !earlier || attempt == 3 {
				t.Errorf("%d of %d bytes cached: residency asked from %v, want %v", warmBytes, st.Size(), froms, want)
				break
			}
		}
	}
}
