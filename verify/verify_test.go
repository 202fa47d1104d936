package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
)

func segments(t testing.TB, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"../testdata/segments"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t testing.TB, paths ...string) *runReport {
	t.Helper()
	rep, err := collect(context.Background(), paths, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func kinds(f *FileReport) []string {
	var ks []string
	for _, p := range f.Problems {
		if !p.Info {
			ks = append(ks, string(p.Kind))
		}
	}
	return ks
}

func TestCleanFixturesVerify(t *testing.T) {
	t.Parallel()
	root := segments(t, "kafka-written")
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if !de.IsDir() || de.Name() == "derived-corrupt" {
			continue
		}
		rep := run(t, filepath.Join(root, de.Name()))
		if len(rep.Files) == 0 {
			t.Errorf("%s: no files verified", de.Name())
		}
		for i := range rep.Files {
			f := &rep.Files[i]
			if f.Failed() {
				t.Errorf("%s: %v %v", f.Path, kinds(f), f.Problems)
			}
		}
	}
}

func TestCorruptFixtures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dir, file   string
		kind        Kind
		pos, offset int64
	}{
		{"bad-crc-none", "00000000000000000000.log", KindCRCMismatch, 0, 0},
		{"bad-magic", "00000000000000000000.log", KindBadMagic, 0, 0},
		{"truncated-tail", "00000000000000000000.log", KindTruncated, 374, 9},
		{"garbage-log", "00000000000000000000.log", KindTrailingBytes, 0, -1},
		{"index-mismatch", "00000000000000000000.index", KindIndexMismatch, 8, 1},
		{"timeindex-disorder", "00000000000000000000.timeindex", KindTimeIndexOrder, 12, 7},
		{"index-odd-size", "00000000000000000000.timeindex", KindTimeIndexSanity, 36, -1},
		{"snapshot-bad-crc", "00000000000000000049.snapshot", KindSnapshotCRC, 0, 49},
		{"snapshot-truncated", "00000000000000000049.snapshot", KindSnapshotInvalid, 0, 49},
		{"txnindex-partial", "00000000000000000000.txnindex", KindTrailingBytes, 34, -1},
		{"index-no-log", "00000000000000000000.index", KindMissingLog, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			t.Parallel()
			rep := run(t, segments(t, "kafka-written", "derived-corrupt", c.dir, c.file))
			if len(rep.Files) != 1 {
				t.Fatalf("%d files", len(rep.Files))
			}
			f := &rep.Files[0]
			if f.OK {
				t.Fatalf("verified clean")
			}
			for _, p := range f.Problems {
				if p.Kind == c.kind {
					if p.Position != c.pos || p.Offset != c.offset {
						t.Errorf("%s at position %d offset %d, want %d %d", p.Kind, p.Position, p.Offset, c.pos, c.offset)
					}
					if c.kind == KindCRCMismatch && (p.Stored == nil || p.Computed == nil || *p.Stored == *p.Computed) {
						t.Errorf("crc-mismatch without distinct stored/computed: %+v", p)
					}
					return
				}
			}
			t.Errorf("no %s problem in %v", c.kind, f.Problems)
		})
	}
}

// TestBitFlips flips every bit of every batch's CRC-covered bytes (and of
// its CRC field) in a real segment: each flip must be a finding located at
// the batch that holds it.
func TestBitFlips(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"v2-none", "v2-gzip", "v2-transactions", "v1-none", "v0-none", "v1-gzip"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			orig, err := os.ReadFile(segments(t, "kafka-written", name, "00000000000000000000.log"))
			if err != nil {
				t.Fatal(err)
			}
			bounds := klogtest.BatchBounds(t, orig)
			dir := t.TempDir()
			p := filepath.Join(dir, "00000000000000000000.log")
			v := newVerifier(context.Background(), Options{}, newReads(context.Background(), Options{KeepCache: true}))
			for _, bd := range bounds {
				crcFrom := int64(format.LogOverhead) // legacy: CRC field, magic onwards
				if orig[bd[0]+16] >= 2 {
					crcFrom = 17 // v2: CRC field, attributes onwards
				}
				for at := bd[0] + crcFrom; at < bd[1]; at++ {
					for bit := 0; bit < 8; bit++ {
						data := append([]byte(nil), orig...)
						data[at] ^= 1 << bit
						f := checkBytes(v, p, data)
						if f.Findings() == 0 {
							t.Fatalf("flip of bit %d at byte %d (batch at %d) not detected", bit, at, bd[0])
						}
						if got := f.Problems[0].Position; got < bd[0] || got >= int64(len(data)) {
							t.Fatalf("flip at byte %d reported at position %d, batch starts at %d: %v", at, got, bd[0], f.Problems)
						}
					}
				}
			}
		})
	}
}

// TestStructureFlips flips bits of the length and magic fields: caught by
// structure checks, never a panic.
func TestStructureFlips(t *testing.T) {
	t.Parallel()
	orig, err := os.ReadFile(segments(t, "kafka-written", "v2-none", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "00000000000000000000.log")
	v := newVerifier(context.Background(), Options{}, newReads(context.Background(), Options{KeepCache: true}))
	for _, bd := range klogtest.BatchBounds(t, orig) {
		for at := bd[0] + 8; at < bd[0]+17; at++ {
			if at >= bd[0]+12 && at < bd[0]+16 {
				continue // partitionLeaderEpoch: any value is valid
			}
			for bit := 0; bit < 8; bit++ {
				data := append([]byte(nil), orig...)
				data[at] ^= 1 << bit
				if f := checkBytes(v, p, data); f.Findings() == 0 {
					t.Errorf("flip of bit %d at byte %d (batch at %d) not detected", bit, at, bd[0])
				}
			}
		}
	}
}

// TestTruncationSweep cuts a segment at every byte: the verdict is clean at
// batch boundaries and truncated at the last valid batch otherwise.
func TestTruncationSweep(t *testing.T) {
	t.Parallel()
	orig, err := os.ReadFile(segments(t, "kafka-written", "v2-transactions", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	bounds := klogtest.BatchBounds(t, orig)
	dir := t.TempDir()
	p := filepath.Join(dir, "00000000000000000000.log")
	v := newVerifier(context.Background(), Options{}, newReads(context.Background(), Options{KeepCache: true}))
	for cut := 1; cut < len(orig); cut++ {
		f := checkBytes(v, p, orig[:cut])
		last := int64(0)
		for _, bd := range bounds {
			if bd[1] <= int64(cut) {
				last = bd[1]
			}
		}
		if last == int64(cut) {
			if !f.OK && f.Findings() > 0 {
				t.Errorf("cut at boundary %d: %v", cut, f.Problems)
			}
			continue
		}
		if len(f.Problems) != 1 || f.Problems[0].Kind != KindTruncated || f.Problems[0].Position != last ||
			*f.Problems[0].Bytes != int64(cut)-last {
			t.Errorf("cut at %d: %+v, want truncated at %d", cut, f.Problems, last)
		}
	}
}

func TestPartitionChecks(t *testing.T) {
	t.Parallel()
	src := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	dir := filepath.Join(t.TempDir(), "topic-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	des, _ := os.ReadDir(src)
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".txt") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(src, de.Name()))
		os.WriteFile(filepath.Join(dir, de.Name()), b, 0o644)
	}
	if rep := run(t, dir); rep.Findings() != 0 {
		t.Fatalf("clean partition has findings")
	}
	// A leader epoch past the log end and a second copy of segment 16
	// named as 40 (overlap) must both be found.
	os.WriteFile(filepath.Join(dir, "leader-epoch-checkpoint"), []byte("0\n2\n0 0\n1 999\n"), 0o644)
	b, _ := os.ReadFile(filepath.Join(dir, "00000000000000000016.log"))
	os.WriteFile(filepath.Join(dir, "00000000000000000040.log"), b, 0o644)
	rep := run(t, dir)
	var got []string
	for i := range rep.Files {
		got = append(got, kinds(&rep.Files[i])...)
	}
	all := strings.Join(got, ",")
	for _, want := range []Kind{KindCheckpointRange, KindSegmentOverlap, KindSegmentName} {
		if !strings.Contains(all, string(want)) {
			t.Errorf("missing %s in %s", want, all)
		}
	}
}

// checkBytes verifies data as the .log at path p, without touching the disk.
func checkBytes(v *verifier, p string, data []byte) *FileReport {
	f := &FileReport{Path: p, Kind: "log", FirstOffset: -1, LastOffset: -1, Bytes: int64(len(data))}
	if err := v.checkLogAt(f, classify(p), bytes.NewReader(data), int64(len(data))); err != nil {
		panic(err)
	}
	return f
}

// TestPrefetchSameReport: a segment verified with a spare worker (read
// ahead in a second goroutine) gives exactly the report of a single job,
// damaged or not.
func TestPrefetchSameReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := klogtest.WriteSegment(t, dir, 0, 9<<20)
	data, _ := os.ReadFile(p)
	bounds := klogtest.BatchBounds(t, data)
	for _, damage := range []int64{-1, bounds[len(bounds)/2][0] + 100, bounds[len(bounds)-1][0] + 20} {
		d := append([]byte(nil), data...)
		if damage >= 0 {
			d[damage] ^= 0x10
		}
		os.WriteFile(p, d, 0o644)
		one, err := collect(context.Background(), []string{p}, Options{Jobs: 1})
		if err != nil {
			t.Fatal(err)
		}
		two, err := collect(context.Background(), []string{p}, Options{Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(one)
		b, _ := json.Marshal(two)
		if string(a) != string(b) {
			t.Errorf("damage at %d: reports differ:\n%s\n%s", damage, a, b)
		}
		if (damage >= 0) == one.Files[0].OK {
			t.Errorf("damage at %d: ok=%v", damage, one.Files[0].OK)
		}
	}
}
