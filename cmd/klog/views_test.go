package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/verify"
)

// copyPartition copies a fixture partition's data files (not the oracle
// .txt outputs) into a writable directory named like it.
func copyPartition(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() || strings.HasSuffix(de.Name(), ".txt") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, de.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// badIndexPartition is unifiedlog-producer/topic-0 with the position of
// entry 1 of 00000000000000000016.index (offset 23) moved inside a batch.
func badIndexPartition(t *testing.T) string {
	t.Helper()
	dir := copyPartition(t, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
	p := filepath.Join(dir, "00000000000000000016.index")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[8+4:], 231)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// overlapPartition is unifiedlog-producer/topic-0 with its first segment
// copied under the later name 00000000000000000100.
func overlapPartition(t *testing.T) string {
	t.Helper()
	dir := copyPartition(t, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
	for _, s := range []string{".log", ".index", ".timeindex"} {
		b, err := os.ReadFile(filepath.Join(dir, "00000000000000000000"+s))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000100"+s), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestViewsExitCodes(t *testing.T) {
	producer := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	sparse := segments(t, "kafka-written", "v2-baseoffset-sparseindex")
	badIndex := badIndexPartition(t)
	overlap := overlapPartition(t)
	missing := filepath.Join(t.TempDir(), "nope")
	cases := []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"segments", []string{"segments", producer}, ExitOK, "3 segments", ""},
		{"segments of a log dir", []string{"segments", segments(t, "kafka-written", "unifiedlog-v1")}, ExitOK, "3 segments", ""},
		{"segments of two dirs", []string{"segments", producer, sparse}, ExitOK, "1234567", ""},
		{"segments, wrong index entry", []string{"segments", badIndex}, ExitFindings, "1 problem", ""},
		{"segments, overlap", []string{"segments", overlap}, ExitFindings, "OVERLAP 16", ""},
		{"segments, no DIR", []string{"segments"}, ExitTrouble, "", "no DIR"},
		{"segments, flag after DIR", []string{"segments", producer, "--json"}, ExitOK, `"type":"segment"`, ""},
		{"segments, missing DIR", []string{"segments", missing}, ExitTrouble, "", "nope"},
		{"segments of an empty dir", []string{"segments", t.TempDir()}, ExitTrouble, "", "no partition directory"},
		{"stats of an empty dir", []string{"stats", t.TempDir()}, ExitTrouble, "", "no segment"},
		{"segments of a file", []string{"segments", filepath.Join(producer, "00000000000000000000.log")}, ExitTrouble, "", "not a directory"},
		{"stats", []string{"stats", producer}, ExitOK, "Bytes per hour", ""},
		{"stats of files and dirs", []string{"stats", filepath.Join(producer, "00000000000000000000.log"), sparse}, ExitOK, "snappy", ""},
		{"stats, partial last batch", []string{"stats", segments(t, "kafka-written", "derived-corrupt", "truncated-tail")}, ExitFindings, "truncated", ""},
		{"stats, bad --top", []string{"stats", "--top", "-1", producer}, ExitTrouble, "", "--top"},
		{"stats, missing", []string{"stats", missing}, ExitTrouble, "", "nope"},
		{"find offset", []string{"find", "--offset", "1234600", sparse}, ExitOK, "entry 0: offset 1234587 -> position 1119 (ok)", ""},
		{"find offset in a gap", []string{"find", "--offset", "1234690", sparse}, ExitOK, "offset 1234690 is absent", ""},
		{"find timestamp in ms", []string{"find", "--timestamp", "1700001000030", producer}, ExitOK, "timestamp 2023-11-14T22:30:00.030Z", ""},
		{"find timestamp in RFC 3339", []string{"find", "--timestamp", "2023-11-14T22:30:00.030Z", producer}, ExitOK, "offset 26", ""},
		{"find, no record after the timestamp", []string{"find", "--timestamp", "2030-01-01T00:00:00Z", producer}, ExitOK, "│ record", ""},
		{"find, wrong index entry", []string{"find", "--offset", "24", badIndex}, ExitFindings, "index-mismatch", ""},
		{"find, out of range", []string{"find", "--offset", "49", producer}, ExitFindings, "", "out of range"},
		{"find, both queries", []string{"find", "--offset", "1", "--timestamp", "1", producer}, ExitTrouble, "", "exactly one of"},
		{"find, no query", []string{"find", producer}, ExitTrouble, "", "exactly one of"},
		{"find, bad timestamp", []string{"find", "--timestamp", "yesterday", producer}, ExitTrouble, "", "RFC 3339"},
		{"find, two dirs", []string{"find", "--offset", "1", producer, sparse}, ExitTrouble, "", "exactly one partition DIR"},
		{"find, not a partition", []string{"find", "--offset", "1", missing}, ExitTrouble, "", "not a partition directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, clip(out), errs)
			}
			if c.stdoutHas != "" && !strings.Contains(out, c.stdoutHas) {
				t.Errorf("stdout lacks %q:\n%s", c.stdoutHas, out)
			}
			if c.stderrHas != "" && !strings.Contains(errs, c.stderrHas) {
				t.Errorf("stderr lacks %q:\n%s", c.stderrHas, errs)
			}
		})
	}
}

// TestViewsJSON checks that --json writes one object per line, decoding
// into the dump types whose tags are the schema.
func TestViewsJSON(t *testing.T) {
	producer := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	lines := func(t *testing.T, args ...string) (int, []string) {
		t.Helper()
		code, out, errs := klog(t, args...)
		if errs != "" && code == ExitOK {
			t.Errorf("stderr: %s", errs)
		}
		return code, strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	t.Run("segments", func(t *testing.T) {
		code, ls := lines(t, "segments", "--json", overlapPartition(t))
		if code != ExitFindings || len(ls) != 4 {
			t.Fatalf("exit %d, %d lines", code, len(ls))
		}
		var last inspect.SegmentRow
		if err := json.Unmarshal([]byte(ls[3]), &last); err != nil {
			t.Fatal(err)
		}
		if last.Type != "segment" || last.BaseOffset != 100 || last.OverlapBefore != 16 || last.Problems[len(last.Problems)-1].Kind != verify.KindSegmentOverlap {
			t.Errorf("last row %+v", last)
		}
	})
	t.Run("stats", func(t *testing.T) {
		code, ls := lines(t, "stats", "--json", producer)
		var r inspect.StatsReport
		if code != ExitOK || len(ls) != 1 {
			t.Fatalf("exit %d, %d lines", code, len(ls))
		}
		if err := json.Unmarshal([]byte(ls[0]), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != "stats" || r.Files != 3 || r.Batches != 37 || r.Producers.Distinct != 3 || r.ControlBatches != 12 {
			t.Errorf("report %+v", r)
		}
	})
	t.Run("find", func(t *testing.T) {
		code, ls := lines(t, "find", "--json", "--offset", "24", badIndexPartition(t))
		var r inspect.FindResult
		if code != ExitFindings || len(ls) != 1 {
			t.Fatalf("exit %d, %d lines", code, len(ls))
		}
		if err := json.Unmarshal([]byte(ls[0]), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != "find" || !r.Found || r.Record.Offset != 24 || r.Lookups[0].IndexEntry.OK || len(r.Problems) != 1 || r.Problems[0].Kind != verify.KindIndexMismatch {
			t.Errorf("result %+v", r)
		}
	})
}

// TestViewsSayUndecodableIsAFinding: a view that reads records tells the
// truth about them: segments and stats exit 1 on batches whose records do
// not decode (an unknown codec, a count they do not fill), and diff
// --records exits 1, not 2, when a listed batch's records do not decode
// (the data is at fault; klog answered). Before, segments and stats exited
// 0 (neither decoded v2 records) and diff --records 2.
func TestViewsSayUndecodableIsAFinding(t *testing.T) {
	gen := func(name string) string { return segments(t, "generated", name) }
	bad := filepath.Join(t.TempDir(), "b-0")
	os.Mkdir(bad, 0o755)
	copyFile(t, filepath.Join("..", "..", "testdata", "hostile", "endless-varint.log"), filepath.Join(bad, "00000000000000000000.log"))
	empty := filepath.Join(t.TempDir(), "b-0")
	os.Mkdir(empty, 0o755)
	for _, c := range []struct {
		args []string
		kind string
	}{
		{[]string{"segments", gen("corrupt-codec-5")}, "unsupported-codec"},
		{[]string{"stats", gen("corrupt-codec-5")}, "unsupported-codec"},
		{[]string{"segments", gen("corrupt-count-too-high")}, "record-count"},
		{[]string{"stats", gen("corrupt-count-too-high")}, "record-count"},
		{[]string{"segments", gen("corrupt-count-too-low")}, "record-count"},
		{[]string{"stats", gen("corrupt-count-too-low")}, "record-count"},
		{[]string{"segments", bad}, "record-decode"},
		{[]string{"diff", "--records", bad, empty}, "Found invalid record structure"},
	} {
		code, _, errs := klog(t, c.args...)
		if code != ExitFindings || !strings.Contains(errs, c.kind) {
			t.Errorf("klog %v: exit %d, want 1 naming %s: %s", c.args, code, c.kind, errs)
		}
	}
}
