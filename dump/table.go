package dump

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
)

// TableStyle says how WriteTable lays out the views' tables.
type TableStyle struct {
	// TSV writes tab-separated values under a header line, for awk: tabs
	// and newlines in cells become spaces, and whatever else the view
	// writes (titles, problem lines) is kept as "# " comment lines.
	TSV bool
	// SameHeader, with TSV: the rows continue a table whose header line was
	// already written (segments of the next partition), so the header is
	// not repeated and the stream stays one table for awk and sort.
	SameHeader bool
	// MaxWidth fits a table in this many columns (0: no limit): see
	// Layout.
	MaxWidth int
}

// StyledWriter carries a TableStyle to WriteTable through the views'
// Write*Table functions, whose signatures stay as they are.
type StyledWriter struct {
	W     io.Writer
	Style TableStyle
	mid   bool // inside a line (TSV comments)
}

// Write passes p on; in TSV mode as comment lines.
func (s *StyledWriter) Write(p []byte) (int, error) {
	if !s.Style.TSV {
		return s.W.Write(p)
	}
	var b bytes.Buffer
	for _, c := range p {
		if !s.mid {
			b.WriteString("# ")
		}
		b.WriteByte(c)
		s.mid = c != '\n'
	}
	if _, err := s.W.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteTable lets packages that do not import dump (inspect) render
// their tables in the style it carries.
func (s *StyledWriter) WriteTable(header []string, rows [][]string) error {
	return WriteTable(s, header, rows)
}

// WriteTable renders rows under a header with tablewriter (v1 API), for
// the views people read; never used for kafka-dump-log output. Through a
// StyledWriter it fits a width or writes TSV.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
	var style TableStyle
	if sw, ok := w.(*StyledWriter); ok {
		style, w = sw.Style, sw.W
	}
	if style.TSV {
		if style.SameHeader {
			header = nil
		}
		return writeTSV(w, header, rows)
	}
	if style.MaxWidth > 0 {
		header, rows = Layout(header, rows, style.MaxWidth)
	}
	t := tablewriter.NewWriter(w)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

func writeTSV(w io.Writer, header []string, rows [][]string) error {
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ").Replace(c))
		}
		b.WriteByte('\n')
	}
	if header != nil {
		line(header)
	}
	for _, r := range rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ViewBytes is an exact byte count with its human form beside it:
// "1234567 (1.2 MiB)"; below 1 KiB just the number.
func ViewBytes(n int64) string { return viewBytes(n) }

func viewBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatInt(n, 10) + " (" + strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "KMGTPE"[exp:exp+1] + "iB)"
}
