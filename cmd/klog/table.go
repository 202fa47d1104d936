package main

import (
	"io"
	"os"
	"strconv"

	"github.com/klog-dev/klog/dump"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Tables that fit: the views (segments, stats, find) fit their tables to the
// terminal, cutting long cells with "…", and --format tsv writes plain
// tab-separated values with a header line for awk.

var formatFlag = &cli.StringFlag{Name: "format", Value: "table", Usage: "table (fitted to the terminal width, or $COLUMNS), tsv (tab-separated with a header line; other lines start with #) or json (as --json)"}

// viewFormat reads --format and --json of a view command.
func viewFormat(c *cli.Context) (string, error) { return outputFormat(c, viewsJSONFlag.Name) }

// outputFormat reads --format and the command's --json flag (named
// jsonFlag), which is --format json.
func outputFormat(c *cli.Context, jsonFlag string) (string, error) {
	f := c.String(formatFlag.Name)
	switch f {
	case "table", "tsv", "json":
	default:
		return "", usageError("%s: --format must be table, tsv or json, got %q", commandPath(c), f)
	}
	if c.Bool(jsonFlag) {
		if c.IsSet(formatFlag.Name) && f != "json" {
			return "", usageError("%s: --json and --format %s exclude each other", commandPath(c), f)
		}
		return "json", nil
	}
	return f, nil
}

// styled wraps w so that the views' tables follow format.
func styled(c *cli.Context, w io.Writer, format string) io.Writer {
	st := dump.TableStyle{TSV: format == "tsv"}
	if !st.TSV {
		st.MaxWidth = terminalWidth(c.App.Writer)
	}
	return &dump.StyledWriter{W: w, Style: st}
}

// terminalWidth is the width of the terminal w is, else $COLUMNS, else 0
// (no limit: a file or a pipe gets whole cells).
func terminalWidth(w io.Writer) int {
	if f, ok := osFile(w); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}
