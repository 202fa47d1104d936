package dump

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/mattn/go-runewidth"
)

func TestWriteTableFitsWidth(t *testing.T) {
	long := strings.Repeat("v", 1024)
	header := []string{"step", "result"}
	rows := [][]string{{"query", "offset 48"}, {"value", long}, {"key", "3 bytes: txA\n" + long}}
	for _, width := range []int{40, 80, 200} {
		var b bytes.Buffer
		if err := WriteTable(&StyledWriter{W: &b, Style: TableStyle{MaxWidth: width}}, header, rows); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			if w := runewidth.StringWidth(l); w > width {
				t.Errorf("width %d: line of %d columns: %q", width, w, l)
			}
		}
		if !strings.Contains(b.String(), "…") || !strings.Contains(b.String(), "offset 48") {
			t.Errorf("width %d: no cut cell or lost a short one:\n%s", width, b.String())
		}
	}
	// No limit: whole cells.
	var b bytes.Buffer
	if err := WriteTable(&b, header, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), long) || strings.Contains(b.String(), "…") {
		t.Error("without a width the cells must be whole")
	}
}

func TestWriteTableTSV(t *testing.T) {
	var b bytes.Buffer
	w := &StyledWriter{W: &b, Style: TableStyle{TSV: true}}
	io.WriteString(w, "title: 2 segments\n")
	if err := WriteTable(w, []string{"base offset", "bytes"}, [][]string{{"0", "1121 (1.1 KiB)"}, {"16", "a\tb\nc"}}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "  problem")
	io.WriteString(w, " line\n")
	want := "# title: 2 segments\nbase offset\tbytes\n0\t1121 (1.1 KiB)\n16\ta b c\n#   problem line\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestViewBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1023: "1023", 1024: "1024 (1.0 KiB)", 1121: "1121 (1.1 KiB)", 1 << 30: "1073741824 (1.0 GiB)"} {
		if got := viewBytes(n); got != want {
			t.Errorf("viewBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestViewBytesOf(t *testing.T) {
	for n, want := range map[int64]string{1: "1 byte", 79: "79 bytes", 1128: "1128 bytes (1.1 KiB)", 5 << 20: "5242880 bytes (5.0 MiB)"} {
		if got := viewBytesOf(n); got != want {
			t.Errorf("viewBytesOf(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestViewTablesShowHumanBytes: the stats and find tables show byte counts
// as "exact (human)".
func TestViewTablesShowHumanBytes(t *testing.T) {
	var b bytes.Buffer
	r := &StatsReport{Bytes: 2048, BatchBytes: Distribution{Min: 1128, Max: 3 << 20},
		Codecs: []CodecStats{{Codec: "none", BatchBytes: 1128, StoredBytes: 1100, RecordBytes: 1050}},
		Hours:  []HourStats{{Hour: "2026-01-01T00", Batches: 1, Bytes: 1128}}}
	if err := WriteStatsTable(&b, r, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2048 (2.0 KiB)", "3145728 (3.0 MiB)", "1128 (1.1 KiB)", "1100 (1.1 KiB)", "1050 (1.0 KiB)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stats table without %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteFindTable(&b, &FindResult{Query: "offset", LogBytesRead: 4096, IndexBytesRead: 16}, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "4096 (4.0 KiB) of logs, 16 of indexes") {
		t.Errorf("find table without human bytes:\n%s", b.String())
	}
	b.Reset()
	seg := SegmentRow{Log: "x.log", SizeBytes: 1 << 20, Tail: format.TailZeros.String(), TailBytes: 8192, LastOffset: -1, MinTimestamp: -1, MaxTimestamp: -1}
	if err := WriteSegmentsTable(&b, &PartitionSegments{Dir: "d", Partition: -1, Segments: []SegmentRow{seg}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1048576 (1.0 MiB)") || !strings.Contains(b.String(), "8192 (8.0 KiB) "+seg.Tail+" at end") {
		t.Errorf("segments table without human bytes:\n%s", b.String())
	}
}
