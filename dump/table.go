package dump

import (
	"io"

	"github.com/olekukonko/tablewriter"
)

// WriteTable renders rows under a header with tablewriter (v1 API), for
// the views people read; never used for kafka-dump-log output.
func WriteTable(w io.Writer, header []string, rows [][]string) error {
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
