package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/recovery"
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
	Description: `What Kafka 4.3.1 does when it opens the partition after an unclean
shutdown (LogLoader running LogSegment.recover on every segment), as a dry
run. Recovery checks batch framing only (size, CRC, offsets fitting the
segment), never records: it keeps a segment, truncates it at the first
invalid batch (deleting every later segment), moves a segment whose offsets
overflow it into new segments, or refuses to load the partition (the
exception Kafka throws is named). One line per segment, then the other
files Kafka deletes and the log start and end offsets; --json prints the
plan as one object. --output DIR writes what Kafka would leave (split
segments included) to a new directory, and refuses when Kafka would refuse
to load. --salvage scans past corrupt regions for the next valid batch and
exports the records that can still be saved (NDJSON on stdout), reporting
every skipped byte range on stderr. On a terminal, stderr shows the plan's
progress in bytes while it reads the segments (--no-progress turns it off;
never while --json or --salvage output goes to the same terminal). Exit status: 0 Kafka changes nothing, 1
Kafka changes the partition or refuses to load it, 2 usage or I/O trouble.`,
	Flags:  []cli.Flag{recoverOutFlag, recoverSalvageFlag, recoverJSONFlag, keyEncFlag, valueEncFlag, noProgressFlag},
	Action: runRecover,
}

// recoverArg is the one argument, a partition directory. It refuses a log directory or an unrelated one (no Kafka
// partition file and not named topic-N): planning it would answer "no
// segment survives; Kafka creates an empty one" (exit 1) about a partition
// that is not there.
func recoverArg(c *cli.Context) (string, error) {
	if c.Args().Len() != 1 {
		return "", usageError("recover: give one partition directory")
	}
	if c.String(recoverOutFlag.Name) == "-" {
		return "", usageError("recover: --output -: the recovered partition is a directory, never stdout; give a new DIR")
	}
	dir := c.Args().First()
	if st, err := os.Stat(dir); err == nil && st.IsDir() && !partition.IsPartitionDir(dir) {
		if _, _, named := partition.NameOf(dir); !named {
			return "", usageError("recover: %s is not a partition directory", dir)
		}
	}
	return dir, nil
}

func runRecover(c *cli.Context) error {
	dir, err := recoverArg(c)
	if err != nil {
		return err
	}
	recOpts, err := recordOptions(c, true)
	if err != nil {
		return err
	}
	// A bar while the plan reads the segments, cleared before the plan is
	// printed; none when --json or --salvage's NDJSON goes to the terminal.
	bar := newProgress(c, "planning", c.Bool(recoverJSONFlag.Name) || c.Bool(recoverSalvageFlag.Name),
		func() int64 { return logBytes([]string{dir}) })
	if partition.IsIncomplete(dir) {
		bar.finish()
		return findingsError("recover: %s is a copy klog did not finish writing (it holds %s): make it again from its source", dir, partition.IncompleteMarker)
	}
	plan, err := recovery.PlanDir(dir, recovery.Options{OnBytes: bar.addFunc(), Context: c.Context})
	bar.finish()
	if sig := interrupted(c.Context); sig != nil {
		return sig
	}
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
		writeJSON(report, plan) // a "recovery" object
	} else {
		writePlanText(report, plan)
	}
	if o := c.String(recoverOutFlag.Name); o != "" {
		if !plan.Loads {
			report.Flush()
			return findingsError("recover: Kafka would refuse to load %s (%s), so there is no recovered partition to write; nothing was written to %s. Use --salvage to export the records that can still be read.", dir, plan.KafkaError, o)
		}
		if err := plan.WriteRecoveredContext(c.Context, o); err != nil {
			if sig := interrupted(c.Context); sig != nil {
				fmt.Fprintf(report, "interrupted: %s is incomplete (it holds %s; verify reports it)\n", o, partition.IncompleteMarker)
				return sig
			}
			return fail("recover", err)
		}
		fmt.Fprintf(report, "wrote the recovered partition to %s\n", o)
	}
	if c.Bool(recoverSalvageFlag.Name) {
		if err := salvage(c.Context, dir, out, report, recOpts, c.Bool(recoverJSONFlag.Name)); err != nil {
			return err
		}
	}
	if plan.Changes() {
		return findingsError("")
	}
	return nil
}

// salvage writes every record of dir's segments that can be saved as NDJSON
// to out, and the byte ranges it skipped to report.
//
// A signal stops it between records: every line written is whole.
func salvage(ctx context.Context, dir string, out, report *bufio.Writer, recOpts ndjson.Options, jsonOut bool) error {
	d, err := partition.Open(dir)
	if err != nil {
		return troubleError("recover: %w", err)
	}
	w := ndjson.NewWriter(out, recOpts)
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		withPath := func(l []byte) []byte { return ndjson.Str(l, "path", s.Log) }
		var skipped []recovery.Skipped
		for r, err := range recovery.Salvage(s.Log, 0) {
			if ctx.Err() != nil {
				w.Flush()
				if sig := interrupted(ctx); sig != nil {
					return sig
				}
				return troubleError("recover: %w", ctx.Err())
			}
			switch {
			case err != nil:
				return fail("recover", err)
			case r.Skipped != nil:
				skipped = append(skipped, *r.Skipped)
			case !r.Batch.IsControl():
				if err := w.Record(r.Batch, r.Record, withPath); err != nil {
					return fail("recover", err)
				}
			}
		}
		if err := w.Flush(); err != nil {
			return fail("recover", err)
		}
		for _, k := range skipped {
			if jsonOut {
				writeJSONLine(report, "skipped", k)
				continue
			}
			fmt.Fprintf(report, "%s: skipped bytes %d..%d (%d bytes)\n", k.Path, k.From, k.To, k.To-k.From)
		}
	}
	return nil
}

// writePlanText prints the plan: one line per segment, one per other file
// deleted, and the verdict.
func writePlanText(w io.Writer, plan *recovery.Plan) {
	for _, s := range plan.Segments {
		switch s.Action {
		case recovery.ActionDelete:
			fmt.Fprintf(w, "%s: delete (%d bytes%s): %s\n", s.Log, s.Bytes, dropped(s), s.Reason)
		case recovery.ActionTruncate:
			fmt.Fprintf(w, "%s: truncate %d bytes at position %d%s: %s\n", s.Log, s.TruncateBytes, s.ValidBytes, dropped(s), s.Reason)
		case recovery.ActionMove:
			var parts []string
			for _, n := range s.NewSegments {
				p := fmt.Sprintf("%s (new base offset %d, bytes %d..%d", filepath.Base(n.Log), n.BaseOffset, n.Position, n.Position+n.Bytes)
				if n.Delete {
					p += ", then deleted"
				} else if n.TruncateBytes > 0 {
					p += fmt.Sprintf(", then %d bytes truncated", n.TruncateBytes)
				}
				parts = append(parts, p+")")
			}
			fmt.Fprintf(w, "%s: move to %s; the old files are renamed .deleted: %s\n", s.Log, strings.Join(parts, ", "), s.Reason)
		default:
			fmt.Fprintf(w, "%s: keep (%d bytes, last offset %d)\n", s.Log, s.Bytes, s.LastOffset)
		}
	}
	for _, f := range plan.DeletedFiles {
		fmt.Fprintf(w, "%s: delete: %s\n", f.Path, f.Reason)
	}
	if plan.TruncatedToSnapshot != "" {
		fmt.Fprintf(w, "%s: the metadata log starts again at its latest snapshot's end offset %d (KafkaMetadataLog.truncateToLatestSnapshot)\n", plan.TruncatedToSnapshot, plan.LogStartOffset)
	}
	if plan.NewEmptySegment {
		fmt.Fprintf(w, "%s: no segment survives; Kafka creates an empty one at offset %d\n", plan.Dir, plan.LogStartOffset)
	}
	if !plan.Loads {
		fmt.Fprintf(w, "Kafka refuses to load the partition: %s\n", plan.KafkaError)
		return
	}
	fmt.Fprintf(w, "Kafka loads the partition: log start offset %d, log end offset %d\n", plan.LogStartOffset, plan.LogEndOffset)
}

func dropped(s recovery.Segment) string {
	if s.FirstDropped < 0 {
		return ""
	}
	return ", dropping offsets " + strconv.FormatInt(s.FirstDropped, 10) + ".." + strconv.FormatInt(s.LastDropped, 10)
}
