package inspect

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/olekukonko/tablewriter"
)

// tableWriter is a writer that lays out tables itself (cmd/klog's
// --format: a terminal width, or TSV).
type tableWriter interface {
	WriteTable(header []string, rows [][]string) error
}

// writeTable renders rows under a header (tablewriter v1), for people, or
// through w's own table layout when it has one.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	if tw, ok := w.(tableWriter); ok {
		return tw.WriteTable(header, rows)
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

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// bytesCell is a byte count for a table cell: the exact number with its
// human form beside it, "1128 (1.1 KiB)"; below 1 KiB (either sign) just
// the number.
func bytesCell(n int64) string {
	a := n
	if a < 0 {
		a = -a
	}
	const unit = 1024
	if a < unit {
		return i64(n)
	}
	div, exp := int64(unit), 0
	for m := a / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return i64(n) + " (" + strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "KMGTPE"[exp:exp+1] + "iB)"
}

// msTime prints epoch ms as UTC RFC 3339 with milliseconds.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }
