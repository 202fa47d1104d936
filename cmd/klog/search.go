package main

import (
	"fmt"
	"strings"

	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/search"
	"github.com/urfave/cli/v2"
)

// find --key / --where: search records across partitions (package search).
var (
	findKeyFlag  = &cli.StringFlag{Name: "key", Usage: "find the records whose key is exactly `K` (every partition of the PATHs, in parallel)"}
	findEndFlag  = &cli.StringFlag{Name: "end", Usage: "with --key or --where, stop at offset `N` (exclusive) or at e@T (kcat's: the offset the lookup by timestamp gives for T)"}
	findJobsFlag = &cli.IntFlag{Name: "jobs", Usage: "partitions searched at once (0: one per CPU)"}
)

// searching reports whether find runs as a search: --key or --where, or a
// payload flag (a key or value format, a format string, -c) with --offset
// or --timestamp, which then prints the record found there (and the next
// ones with -c) decoded or formatted, as a search from that offset does.
func searching(c *cli.Context) bool {
	return c.IsSet(findKeyFlag.Name) || c.IsSet(whereFlag.Name) || lookupWithPayload(c)
}

// lookupWithPayload: find --offset/--timestamp with a payload flag.
func lookupWithPayload(c *cli.Context) bool {
	for _, f := range []string{keyFormatFlag.Name, valueFormatFlag.Name, kcatFormatFlag.Name, countFlag.Name} {
		if c.IsSet(f) {
			return true
		}
	}
	return strings.Contains(c.String(formatFlag.Name), "%")
}

// runSearch: PATH... are partition or log directories; every partition is
// searched; exit 0 with matches, 1 with none or with findings, 2 trouble.
func runSearch(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("find: give a partition or log directory PATH with --key or --where")
	}
	dirs, err := partition.PartitionDirs(args)
	if err != nil {
		return fail("find", err)
	}
	if len(dirs) == 0 {
		return usageError("find: %v holds no partition directory", args)
	}
	q, out, err := searchQuery(c, dirs)
	if err != nil {
		return err
	}
	w := search.NewWriter(c.App.Writer, out)
	st, probs, err := search.Search(c.Context, dirs, q, w.Match)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fail("find", err)
	}
	for _, p := range probs {
		fmt.Fprintf(c.App.ErrWriter, "klog: find: %s at position %d, offset %d: %s: %s\n", p.Path, p.Position, p.Offset, p.Kind, p.Message)
	}
	if ferr := q.Where.Err(); ferr != nil {
		fmt.Fprintf(c.App.ErrWriter, "klog: find: %v (such records did not match)\n", ferr)
	}
	switch {
	case len(probs) > 0:
		return findingsError("")
	case st.Matches == 0:
		return findingsError("find: no record matches (%d partitions, %d records examined)", st.Partitions, st.RecordsExamined)
	}
	return nil
}

// searchQuery reads the search flags into a query and an output.
func searchQuery(c *cli.Context, dirs []string) (search.Query, search.Output, error) {
	q := search.NewQuery()
	var out search.Output
	po, err := readPayloadOptions(c, dirs)
	if err != nil {
		return q, out, err
	}
	q.Decoder, q.KeyFormat, q.ValueFormat, q.Limit = po.decoder, po.keyFormat, po.valueFormat, c.Int(countFlag.Name)
	if !c.IsSet(findKeyFlag.Name) && !c.IsSet(whereFlag.Name) && !c.IsSet(countFlag.Name) {
		q.Limit = 1 // the record at --offset (or the next one present)
	}
	q.Jobs, q.MaxBatchBytes = c.Int(findJobsFlag.Name), c.Int(maxBatchFlag.Name)
	if c.IsSet(findKeyFlag.Name) {
		q.Key, q.HasKey = []byte(c.String(findKeyFlag.Name)), true
	}
	if c.IsSet(whereFlag.Name) {
		if q.Where, err = parseWhere(c); err != nil {
			return q, out, err
		}
	}
	if err := searchRange(c, &q); err != nil {
		return q, out, err
	}
	if out.Record, err = recordOptions(c, true); err != nil {
		return q, out, err
	}
	format, err := viewFormat(c)
	if po.format == nil && err != nil {
		return q, out, err
	}
	out.Format, out.JSON = po.format, format == "json"
	return q, out, nil
}

// searchRange reads --offset (N, earliest/beginning, s@T, @T), --timestamp
// and --end (N, e@T).
func searchRange(c *cli.Context, q *search.Query) error {
	if s := c.String(findOffsetFlag.Name); s != "" {
		if ts, ok, err := atTime(s, "s@", "@"); ok {
			if err != nil {
				return usageError("find: --offset: %v", err)
			}
			q.FromTimestamp = ts
		} else {
			o, err := parseOffset(s)
			if err != nil {
				return usageError("find: --offset: %v", err)
			}
			if o.kind != offsetAbsolute && o.kind != offsetEarliest {
				return usageError("find: --offset with --key, --where or a payload flag: N, earliest, s@T or @T")
			}
			q.FromOffset = o.n
		}
	}
	if c.IsSet(findTimestampFlag.Name) {
		ts, err := parseTime(c.String(findTimestampFlag.Name))
		if err != nil {
			return usageError("find: --timestamp: %v", err)
		}
		q.FromTimestamp = ts
	}
	if s := c.String(findEndFlag.Name); s != "" {
		if ts, ok, err := atTime(s, "e@"); ok {
			if err != nil {
				return usageError("find: --end: %v", err)
			}
			q.ToTimestamp = ts
			return nil
		}
		o, err := parseOffset(s)
		if err != nil || o.kind != offsetAbsolute {
			return usageError("find: --end: want an offset N or e@T, got %q", s)
		}
		q.ToOffset = o.n
	}
	return nil
}
