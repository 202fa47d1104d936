package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

var (
	recoverOutFlag     = &cli.StringFlag{Name: "output", Usage: "write the recovered partition (valid prefix, rebuilt indexes) to this new directory"}
	recoverSalvageFlag = &cli.BoolFlag{Name: "salvage", Usage: "also read past corrupt regions and write every record that can be saved as NDJSON to stdout"}
	recoverJSONFlag    = &cli.BoolFlag{Name: "json", Usage: "print the plan as one JSON object"}
)

var recoverCommand = &cli.Command{
	Name:      "recover",
	Usage:     "show what the broker's recovery would do to a partition (dry run), or write the recovered copy",
	ArgsUsage: "PARTITION-DIR",
	Description: `The broker's recovery (LogSegment.recover) validates every batch of an
unflushed segment, silently truncates at the first invalid one, deletes every
later segment and rebuilds the indexes. klog recover says what it would cut,
where, which offsets it would drop and what it would rebuild, and changes
nothing. --output DIR writes the recovered partition to a new directory.
--salvage scans past corrupt regions for the next valid batch and exports the
records that can still be saved (NDJSON on stdout), reporting every skipped
byte range on stderr. Exit status: 0 nothing to recover, 1 recovery would
change the partition, 2 usage or I/O trouble.`,
	Flags:  []cli.Flag{recoverOutFlag, recoverSalvageFlag, recoverJSONFlag},
	Action: runRecover,
}

func runRecover(c *cli.Context) error {
	if c.Args().Len() != 1 {
		return usageError("recover: give one partition directory")
	}
	dir := c.Args().First()
	plan, err := verify.PlanRecovery(dir, verify.RecoverOptions{})
	if err != nil {
		return fail("recover", err)
	}
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	report := out
	if c.Bool(recoverSalvageFlag.Name) {
		report = bufio.NewWriter(c.App.ErrWriter) // stdout carries the records
		defer report.Flush()
	}
	if c.Bool(recoverJSONFlag.Name) {
		json.NewEncoder(report).Encode(plan)
	} else {
		for _, s := range plan.Segments {
			name := s.Log
			switch {
			case s.Delete:
				fmt.Fprintf(report, "%s: recovery would delete this segment (it follows a truncated one)%s\n", name, dropped(s))
			case s.TruncateBytes > 0:
				fmt.Fprintf(report, "%s: recovery would truncate %d bytes at position %d%s: %s\n", name, s.TruncateBytes, s.ValidBytes, dropped(s), s.Reason)
			default:
				fmt.Fprintf(report, "%s: intact\n", name)
			}
			if !s.Delete && (s.IndexChanged || s.TimeIndexChanged || s.TruncateBytes > 0) {
				fmt.Fprintf(report, "  and rebuild %s (%d entries) and %s (%d entries)\n",
					filepath.Base(replaceExt(name, ".index")), s.IndexEntries, filepath.Base(replaceExt(name, ".timeindex")), s.TimeIndexEntries)
			}
		}
		fmt.Fprintf(report, "log end offset after recovery: %d\n", plan.LogEndOffset)
	}
	if o := c.String(recoverOutFlag.Name); o != "" {
		if err := plan.WriteRecovered(o); err != nil {
			return fail("recover", err)
		}
		fmt.Fprintf(report, "wrote the recovered partition to %s\n", o)
	}
	if c.Bool(recoverSalvageFlag.Name) {
		for _, s := range plan.Segments {
			skipped, err := verify.Salvage(s.Log, 0, func(b *format.Batch, r *format.Record) error {
				if b.IsControl() {
					return nil
				}
				fmt.Fprintf(out, `{"offset":%d,"timestamp":%d,"key":%s,"value":%s`, r.Offset, r.Timestamp, jsonString(r.Key), jsonString(r.Value))
				if r.Key != nil && !validUTF8(r.Key) {
					out.WriteString(`,"keyEncoding":"base64"`)
				}
				if r.Value != nil && !validUTF8(r.Value) {
					out.WriteString(`,"valueEncoding":"base64"`)
				}
				out.WriteString("}\n")
				return nil
			})
			if err != nil {
				return fail("recover", err)
			}
			for _, k := range skipped {
				fmt.Fprintf(report, "%s: skipped bytes %d..%d (%d bytes)\n", k.Path, k.From, k.To, k.To-k.From)
			}
		}
	}
	if plan.Changes() {
		return &exitError{code: ExitFindings}
	}
	return nil
}

func dropped(s verify.SegmentRecovery) string {
	if s.FirstDropped < 0 {
		return ""
	}
	return ", dropping offsets " + strconv.FormatInt(s.FirstDropped, 10) + ".." + strconv.FormatInt(s.LastDropped, 10)
}

func replaceExt(p, ext string) string { return p[:len(p)-len(filepath.Ext(p))] + ext }
