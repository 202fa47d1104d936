package dump

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestCutLine(t *testing.T) {
	cases := []struct {
		cell string
		w    int
		want string
	}{
		{"1121 (1.1 KiB)", 14, "1121 (1.1 KiB)"},
		{"1121 (1.1 KiB)", 13, "1121"},
		{"1121 (1.1 KiB)", 4, "1121"},
		{"1121 (1.1 KiB)", 3, "11…"},
		{"2023-11-14T22:30:00.004Z", 23, "2023-11-14T22:30Z"},
		{"2023-11-14T22:30:00.004Z", 16, "2023-11-14T22:30"},
		{"2023-11-14T22:30:00.004Z", 12, "2023-11-14"},
		{"2023-11-14T22:30:00.004Z", 8, "2023-11…"},
		{"none,gzip,snappy,lz4", 15, "none,gzip,+2"},
		{"none,gzip,snappy,lz4", 7, "none,+3"},
		{"delete: retention.ms", 12, "delete: ret…"},
		{"a/b/00000000000000000016.log", 28, "a/b/00000000000000000016.log"},
		{"a/b/00000000000000000016.log", 26, "…/00000000000000000016.log"},
		{"a/b/00000000000000000016.log", 8, "…016.log"},
	}
	for _, c := range cases {
		if got := cutLine(c.cell, c.w); got != c.want {
			t.Errorf("cutLine(%q, %d) = %q, want %q", c.cell, c.w, got, c.want)
		}
	}
	// A cell of several lines keeps its first; later lines that do not fit
	// go.
	if got := cutTo("2023-11-14T22:30:00.004Z\n1700001000004", 10); got != "2023-11-14" {
		t.Errorf("two lines cut to %q", got)
	}
}

// TestLayoutOrder: headers abbreviate first, then columns drop (highest
// Drop first), and only then are cells cut.
func TestLayoutOrder(t *testing.T) {
	header := []string{"base offset", "bytes", "index entries", "timeindex entries", "min timestamp"}
	rows := [][]string{{"0", "1121 (1.1 KiB)", "4", "4", "2023-11-14T22:30:00.004Z"}}
	width := func(h []string, r [][]string) int {
		var b bytes.Buffer
		if err := WriteTable(&b, h, r); err != nil {
			t.Fatal(err)
		}
		w := 0
		for _, l := range strings.Split(b.String(), "\n") {
			w = max(w, runewidth.StringWidth(l))
		}
		return w
	}
	full := width(header, rows)
	h, _ := Layout(header, rows, full)
	if strings.Join(h, "|") != strings.Join(header, "|") {
		t.Errorf("a table that fits changed: %v", h)
	}
	h, r := Layout(header, rows, full-1)
	if h[0] != "base" || len(h) != 5 || r[0][1] != "1121 (1.1 KiB)" {
		t.Errorf("one column too wide: %v %v, want the headers abbreviated only", h, r)
	}
	h, r = Layout(header, rows, 56)
	if strings.Join(h, "|") != "base|bytes|min ts" || r[0][1] != "1121 (1.1 KiB)" || r[0][2] != "2023-11-14T22:30:00.004Z" {
		t.Errorf("56 columns: %v %v, want tidx and idx dropped, no cell cut", h, r)
	}
	if w := width(h, r); w > 56 {
		t.Errorf("56 columns: drawn %d wide", w)
	}
	h, r = Layout(header, rows, 40)
	if strings.Join(h, "|") != "base|bytes" || r[0][1] != "1121 (1.1 KiB)" {
		t.Errorf("40 columns: %v %v, want min ts dropped too, bytes whole", h, r)
	}
	h, r = Layout(header, rows, 20)
	if strings.Join(h, "|") != "base|bytes" || r[0][1] != "1121" {
		t.Errorf("20 columns: %v %v, want bytes cut to its number", h, r)
	}
	for _, w := range []int{60, 40, 30, 20, 15} {
		h, r := Layout(header, rows, w)
		if got := width(h, r); got > w && len(h) > 1 {
			t.Errorf("%d columns: drawn %d wide: %v %v", w, got, h, r)
		}
	}
}

// TestPlainLines: a borderless table fits its width with one space
// between columns, gets back the border columns Layout reserves (no
// header shortened while the whole table fits), and its short headers take
// the header's case.
func TestPlainLines(t *testing.T) {
	header := []string{"GROUP", "PARTITION", "CURRENT-OFFSET", "HOST", "Partition"}
	rows := [][]string{{"g1", "0", "42", "/127.0.0.1", "3"}}
	whole := PlainLines(header, rows, 0)
	if whole[0] != "GROUP PARTITION CURRENT-OFFSET HOST       Partition" || whole[1] != "g1    0         42             /127.0.0.1 3" {
		t.Fatalf("unfitted: %q", whole)
	}
	if got := PlainLines(header, rows, len(whole[0])); strings.Join(got, "\n") != strings.Join(whole, "\n") {
		t.Errorf("a table that fits changed: %q", got)
	}
	got := PlainLines(header, rows, len(whole[0])-1)
	if got[0] != "GROUP PART OFFSET HOST       Part" {
		t.Errorf("one column short: %q, want the headers shortened in their case", got)
	}
	for _, w := range []int{40, 30, 20, 12} {
		for _, l := range PlainLines(header, rows, w) {
			if LineWidth(l) > w {
				t.Errorf("%d columns: %q is %d wide", w, l, LineWidth(l))
			}
		}
	}
	if LineWidth("ab\tc") != 9 || LineWidth("abcdefgh\t") != 16 {
		t.Errorf("tabs: %d %d", LineWidth("ab\tc"), LineWidth("abcdefgh\t"))
	}
}
