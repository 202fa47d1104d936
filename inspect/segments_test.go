package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/internal/verifytest"

	"github.com/klog-dev/klog/verify"
)

type segWant struct {
	base, first, last int64
	batches, records  int64
	indexEntries      int64
	timeEntries       int64
	minTS, maxTS      int64
	codecs            []string
	gap, overlap      int64
	health            string
}

func TestSegments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		dir      string
		edit     func(t *testing.T, dir string)
		want     []segWant
		findings int
		kinds    []verify.Kind // problem kinds, in row order
	}{
		{name: "three segments", dir: "unifiedlog-producer/topic-0", want: []segWant{
			{0, 0, 15, 12, 16, 4, 4, 1700001000004, 1700001000016, []string{"none", "gzip", "snappy"}, 0, 0, "ok"},
			{16, 16, 31, 12, 16, 4, 4, 1700001000020, 1700001000032, []string{"none", "gzip", "snappy", "lz4", "zstd"}, 0, 0, "ok"},
			{32, 32, 48, 13, 17, 4, 4, 1700001000036, 1700001000048, []string{"none", "gzip", "zstd"}, 0, 0, "ok"},
		}},
		{name: "sparse index and an offset gap inside the segment", dir: "v2-baseoffset-sparseindex", want: []segWant{
			{1234567, 1234567, 1234697, 41, 121, 6, 7, 1700000000000, 1700000005000, []string{"none", "snappy"}, 0, 0, "ok"},
		}},
		{name: "legacy v0: wrappers start at their first inner offset", dir: "unifiedlog-v0/topic-0", want: []segWant{
			{0, 0, 11, 10, 12, 9, 0, -1, -1, []string{"none", "gzip"}, 0, 0, "ok"},
			{12, 12, 23, 10, 12, 9, 0, -1, -1, []string{"none", "gzip"}, 0, 0, "ok"},
		}},
		{name: "preallocated indexes count real entries only", dir: "v2-active-segment-unclosed", want: []segWant{
			{0, 0, 9, 5, 10, 4, 4, 1700000000000, 1700000000004, []string{"none"}, 0, 0, "ok"},
		}},
		{name: "wrong index entry", dir: "unifiedlog-producer/topic-0",
			edit: func(t *testing.T, dir string) {
				viewsEditIndex(t, filepath.Join(dir, "00000000000000000016.index"), 1, -1, 231)
			},
			want: []segWant{
				{0, 0, 15, 12, 16, 4, 4, 1700001000004, 1700001000016, []string{"none", "gzip", "snappy"}, 0, 0, "ok"},
				{16, 16, 31, 12, 16, 4, 4, 1700001000020, 1700001000032, []string{"none", "gzip", "snappy", "lz4", "zstd"}, 0, 0, "1 problem"},
				{32, 32, 48, 13, 17, 4, 4, 1700001000036, 1700001000048, []string{"none", "gzip", "zstd"}, 0, 0, "ok"},
			}, findings: 1, kinds: []verify.Kind{verify.KindIndexMismatch}},
		{name: "overlap: a segment copied under a later name", dir: "unifiedlog-producer/topic-0",
			edit: func(t *testing.T, dir string) {
				for _, suffix := range []string{".log", ".index", ".timeindex"} {
					viewsCopyFile(t, filepath.Join(dir, "00000000000000000000"+suffix), filepath.Join(dir, "00000000000000000100"+suffix))
				}
			},
			want: []segWant{
				{0, 0, 15, 12, 16, 4, 4, 1700001000004, 1700001000016, []string{"none", "gzip", "snappy"}, 0, 0, "ok"},
				{16, 16, 31, 12, 16, 4, 4, 1700001000020, 1700001000032, []string{"none", "gzip", "snappy", "lz4", "zstd"}, 0, 0, "ok"},
				{32, 32, 48, 13, 17, 4, 4, 1700001000036, 1700001000048, []string{"none", "gzip", "zstd"}, 0, 0, "ok"},
				// verify finds the copied indexes name offsets below the
				// segment's base offset.
				{100, 0, 15, 12, 16, 4, 4, 1700001000004, 1700001000016, []string{"none", "gzip", "snappy"}, 0, 16, "8 problems"},
			}, findings: 9}, // the 8 index problems and the overlap
		{name: "gap: the middle segment removed", dir: "unifiedlog-producer/topic-0",
			edit: func(t *testing.T, dir string) {
				for _, suffix := range []string{".log", ".index", ".timeindex", ".txnindex", ".snapshot"} {
					if err := os.Remove(filepath.Join(dir, "00000000000000000016"+suffix)); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: []segWant{
				{0, 0, 15, 12, 16, 4, 4, 1700001000004, 1700001000016, []string{"none", "gzip", "snappy"}, 0, 0, "ok"},
				{32, 32, 48, 13, 17, 4, 4, 1700001000036, 1700001000048, []string{"none", "gzip", "zstd"}, 16, 0, "ok"},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := viewsFixture(t, c.dir)
			if c.edit != nil {
				dir = viewsCopyDir(t, dir)
				c.edit(t, dir)
			}
			ps, err := Segments(context.Background(), dir, SegmentsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps.Segments) != len(c.want) {
				t.Fatalf("%d rows, want %d", len(ps.Segments), len(c.want))
			}
			for i, w := range c.want {
				s := ps.Segments[i]
				got := segWant{s.BaseOffset, s.FirstOffset, s.LastOffset, s.Batches, s.Records, s.IndexEntries, s.TimeIndexEntries,
					s.MinTimestamp, s.MaxTimestamp, s.Codecs, s.GapBefore, s.OverlapBefore, s.IndexHealth}
				if !segWantEqual(got, w) {
					t.Errorf("row %d:\n got %+v\nwant %+v\nproblems %+v", i, got, w, s.Problems)
				}
				if s.Tail != "none" || s.ValidBytes != s.SizeBytes {
					t.Errorf("row %d: tail %s, valid %d of %d bytes", i, s.Tail, s.ValidBytes, s.SizeBytes)
				}
			}
			if got, _ := ps.Findings(); got != c.findings {
				t.Errorf("Findings() = %d, want %d", got, c.findings)
			}
			var kinds []verify.Kind
			for _, s := range ps.Segments {
				for _, p := range s.Problems {
					if p.Kind == verify.KindIndexMismatch || p.Kind == verify.KindIndexSanity || p.Kind == verify.KindSegmentOverlap {
						kinds = append(kinds, p.Kind)
					}
				}
			}
			if c.kinds != nil && !slices.Equal(kinds, c.kinds) {
				t.Errorf("problem kinds %v, want %v", kinds, c.kinds)
			}
			if c.want[len(c.want)-1].overlap > 0 && !slices.Contains(kinds, verify.KindSegmentOverlap) {
				t.Errorf("no %s problem among %v", verify.KindSegmentOverlap, kinds)
			}
			checkSegmentsOutput(t, ps)
		})
	}
}

func segWantEqual(a, b segWant) bool {
	return a.base == b.base && a.first == b.first && a.last == b.last && a.batches == b.batches && a.records == b.records &&
		a.indexEntries == b.indexEntries && a.timeEntries == b.timeEntries && a.minTS == b.minTS && a.maxTS == b.maxTS &&
		slices.Equal(a.codecs, b.codecs) && a.gap == b.gap && a.overlap == b.overlap && a.health == b.health
}

// checkSegmentsOutput renders both views: JSON reads back row by row, and
// the table has a line per segment with its base offset.
func checkSegmentsOutput(t *testing.T, ps *PartitionSegments) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSegmentsJSON(&buf, ps); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(ps.Segments) {
		t.Fatalf("%d JSON lines for %d segments", len(lines), len(ps.Segments))
	}
	for i, l := range lines {
		var row SegmentRow
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		if row.Type != "segment" || row.BaseOffset != ps.Segments[i].BaseOffset || row.MinTime != viewISO(row.MinTimestamp) {
			t.Errorf("JSON row %d: %s", i, l)
		}
	}
	buf.Reset()
	if err := WriteSegmentsTable(&buf, ps); err != nil {
		t.Fatal(err)
	}
	for _, s := range ps.Segments {
		if !strings.Contains(buf.String(), "│ "+viewItoa(s.BaseOffset)+" ") {
			t.Errorf("table lacks a row for segment %d:\n%s", s.BaseOffset, buf.String())
		}
	}
}

// TestSegmentsAgreesWithVerify: batches, records and offsets of each row
// are what verify (which decodes every record) reports for the .log.
func TestSegmentsAgreesWithVerify(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"unifiedlog-producer/topic-0", "unifiedlog-v0/topic-0", "unifiedlog-v1/topic-0", "v2-transactions", "v1-gzip", "v0-snappy"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			p := viewsFixture(t, dir)
			ps, err := Segments(context.Background(), p, SegmentsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var logs []string
			for _, s := range ps.Segments {
				logs = append(logs, s.Log)
			}
			rep, err := verifytest.Run(context.Background(), logs, verify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range rep.Files {
				s := ps.Segments[i]
				if f.Batches != s.Batches || f.Records != s.Records || f.FirstOffset != s.FirstOffset || f.LastOffset != s.LastOffset {
					t.Errorf("%s: segments says %d batches, %d records, offsets %d..%d; verify %d, %d, %d..%d",
						filepath.Base(f.Path), s.Batches, s.Records, s.FirstOffset, s.LastOffset, f.Batches, f.Records, f.FirstOffset, f.LastOffset)
				}
			}
		})
	}
}

func TestPartitionDirs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		paths []string
		want  []string
		err   error
	}{
		{"partition directory", []string{viewsFixture(t, "unifiedlog-v1/topic-0")}, []string{viewsFixture(t, "unifiedlog-v1/topic-0")}, nil},
		{"log directory", []string{viewsFixture(t, "unifiedlog-v1")}, []string{viewsFixture(t, "unifiedlog-v1/topic-0")}, nil},
		{"missing", []string{filepath.Join(t.TempDir(), "nope")}, nil, fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := PartitionDirs(c.paths)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			var ioe *dump.IOError
			if c.err != nil && !errors.As(err, &ioe) {
				t.Errorf("err = %T, want *dump.IOError", err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func viewsCopyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSegmentsDataFindings: what segments sees in a .log is a finding of
// the row, counted by Findings with the first one returned: a torn last
// batch, a CRC mismatch, a magic other than 0 to 2, garbage; a zero tail
// (a preallocated segment) and clean segments are not.
func TestSegmentsDataFindings(t *testing.T) {
	t.Parallel()
	zeroDir := filepath.Join(t.TempDir(), "t-0")
	os.Mkdir(zeroDir, 0o755)
	data, err := os.ReadFile(viewsFixture(t, "v2-none/00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(zeroDir, "00000000000000000000.log"), append(data, make([]byte, 1024)...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dir  string
		n    int
		kind verify.Kind
		pos  int64
	}{
		{"torn tail", viewsFixture(t, "derived-corrupt/truncated-tail"), 3, verify.KindTruncated, 374}, // and the two index entries past it
		{"bad CRC", viewsFixture(t, "derived-corrupt/bad-crc-none"), 1, verify.KindCRCMismatch, 0},
		{"bad magic", viewsFixture(t, "derived-corrupt/bad-magic"), 1, verify.KindBadMagic, 0},
		{"garbage", viewsFixture(t, "derived-corrupt/garbage-log"), 1, verify.KindTrailingBytes, 0},
		{"zero tail", zeroDir, 0, "", 0},
		{"clean", viewsFixture(t, "v2-none"), 0, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ps, err := Segments(context.Background(), c.dir, SegmentsOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n, first := ps.Findings()
			if n != c.n {
				t.Fatalf("Findings() = %d, want %d: %+v", n, c.n, ps.Segments[0].Problems)
			}
			if n == 0 {
				if first != nil {
					t.Errorf("first = %+v with no findings", first)
				}
				return
			}
			if first.Kind != c.kind || first.Position != c.pos || !strings.HasSuffix(first.Path, ".log") {
				t.Errorf("first = %+v, want %s at %d in the .log", first, c.kind, c.pos)
			}
		})
	}
}
