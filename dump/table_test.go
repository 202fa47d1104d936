package dump

import (
	"bytes"
	"io"
	"strings"
	"testing"

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
