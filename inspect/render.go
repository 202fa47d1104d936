package inspect

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
)

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

// bytesCell is a byte count for a table cell: dump.ViewBytes, the exact
// number with its human form beside it ("1128 (1.1 KiB)"), for negative
// counts too ("-4096 (-4.0 KiB)", a what-if that saves nothing).
func bytesCell(n int64) string {
	if n >= 0 || n == math.MinInt64 {
		return dump.ViewBytes(n)
	}
	return "-" + strings.Replace(dump.ViewBytes(-n), "(", "(-", 1)
}

// bytesOf is bytesCell in prose: "79 bytes", "1128 bytes (1.1 KiB)".
func bytesOf(n int64) string {
	c := bytesCell(n)
	if i := strings.IndexByte(c, ' '); i >= 0 {
		return c[:i] + " bytes" + c[i:]
	}
	if n == 1 {
		return c + " byte"
	}
	return c + " bytes"
}

// msTime prints epoch ms as UTC RFC 3339 with milliseconds.
func msTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }
