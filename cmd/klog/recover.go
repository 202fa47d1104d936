package main

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
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
	Flags:  []cli.Flag{recoverOutFlag, recoverSalvageFlag, recoverJSONFlag, keyEncFlag, valueEncFlag},
	Action: runRecover,
}

func runRecover(c *cli.Context) error {
	if c.Args().Len() != 1 {
		return usageError("recover: give one partition directory")
	}
	dir := c.Args().First()
	recOpts, err := recordOptions(c, true)
	if err != nil {
		return err
	}
	plan, err := verify.PlanRecovery(dir, verify.RecoverOptions{})
	if err != nil {
		return &exitError{code: ExitTrouble, msg: "recover: " + err.Error()}
	}
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	report := out
	if c.Bool(recoverSalvageFlag.Name) {
		report = bufio.NewWriter(c.App.ErrWriter) // stdout carries the records
		defer report.Flush()
	}
	if c.Bool(recoverJSONFlag.Name) {
		writeJSONLine(report, "recoveryPlan", plan)
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
			return &exitError{code: ExitTrouble, msg: "recover: " + err.Error()}
		}
		fmt.Fprintf(report, "wrote the recovered partition to %s\n", o)
	}
	if c.Bool(recoverSalvageFlag.Name) {
		w := ndjson.NewWriter(out, recOpts)
		for _, s := range plan.Segments {
			path := s.Log
			withPath := func(l []byte) []byte { return ndjson.Str(l, "path", path) }
			skipped, err := verify.Salvage(s.Log, 0, func(b *format.Batch, r *format.Record) error {
				if b.IsControl() {
					return nil
				}
				return w.Record(b, r, withPath)
			})
			if err == nil {
				err = w.Flush()
			}
			if err != nil {
				return &exitError{code: ExitTrouble, msg: "recover: " + err.Error()}
			}
			for _, k := range skipped {
				if c.Bool(recoverJSONFlag.Name) {
					writeJSONLine(report, "skipped", k)
					continue
				}
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
