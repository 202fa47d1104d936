package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

var (
	verifyJSONFlag     = &cli.BoolFlag{Name: "json", Usage: "write one JSON object per file to stdout"}
	verifyJobsFlag     = &cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "files verified in parallel (default: number of CPUs)"}
	verifyQuiet        = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only files with findings (and the summary)"}
	verifyFailFastFlag = &cli.BoolFlag{Name: "fail-fast", Usage: "stop at the first file with a finding or an I/O error"}
)

var verifyCommand = &cli.Command{
	Name:      "verify",
	Usage:     "check CRCs, structure, offsets, indexes, snapshots and checkpoints",
	ArgsUsage: "PATH...",
	Description: `PATH is a segment, index, snapshot or checkpoint file, a partition directory,
or a log directory (searched recursively); - reads a segment from stdin (a
stream whose first bytes cannot start a segment is not a Kafka file). A
file named here that is not a Kafka file is an error (exit 2); inside
directories such files are listed as ignored. Every v2 batch's CRC-32C and every
v0/v1 message's CRC-32 is checked, every record decoded (compressed batches
decompressed), offsets checked across batches and segments, and indexes,
producer snapshots and checkpoints checked against the log.

Each file's verdict goes to stdout as soon as that file (and the partition
checks that concern it) is done, in a stable order: arguments in order,
directories in offset order, a log dir's checkpoints after its partitions.
Its findings follow, indented. One summary line ends the run: files,
batches, records, bytes, problems, elapsed. --json writes one object per
file instead (no summary). --fail-fast stops at the first file with a
finding. On a terminal, progress in bytes is shown on stderr.

Exit status: 0 clean, 1 findings, 2 usage or I/O trouble.`,
	Flags:  append([]cli.Flag{verifyJSONFlag, verifyJobsFlag, verifyQuiet, verifyFailFastFlag, noProgressFlag, maxBatchFlag}, verifyFleetFlags...),
	Action: runVerify,
}

// verifyProgress wires a progress bar into opts when one is wanted and
// returns it (nil draws nothing). The run lists a log dir a few hundred
// partitions at a time, so the bar's total grows piece by piece.
func verifyProgress(c *cli.Context, opts *verify.Options, jsonOut bool) *progress {
	bar := newProgress(c, "verifying", jsonOut, func() int64 { return 0 })
	if bar == nil {
		return nil
	}
	var told int64
	opts.Progress = func(read, total int64) {
		bar.setTotal(total)
		bar.add(read - told)
		told = read
	}
	return bar
}

func runVerify(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("verify: no PATH given")
	}
	start := time.Now()
	jsonOut, quiet, failFast := c.Bool(verifyJSONFlag.Name), c.Bool(verifyQuiet.Name), c.Bool(verifyFailFastFlag.Name)
	out := bufio.NewWriter(c.App.Writer)
	opts := verify.Options{Jobs: c.Int(verifyJobsFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name), Stdin: c.App.Reader}
	if err := fleetOptions(c, &opts); err != nil {
		return err
	}
	bar := verifyProgress(c, &opts, jsonOut)
	fleet := newFleetOutputs(c, &opts, start)
	var (
		sum      verifySummary
		stopped  bool
		writeErr error
		runErr   error
		b        strings.Builder
	)
	// A few hundred partitions at a time: memory stays bounded on a
	// broker's log dir of any size.
	for f, err := range verify.Files(c.Context, args, opts) {
		if err != nil {
			runErr = err
			break
		}
		sum.add(f)
		fleet.add(f)
		if !quiet || !f.OK { // --quiet: only the files with findings, in JSON too
			if err := writeFileReport(out, &b, f, jsonOut); err != nil && writeErr == nil {
				writeErr = err
			}
		}
		bar.clear()
		if err := out.Flush(); err != nil && writeErr == nil {
			writeErr = err
		}
		if failFast && !f.OK {
			stopped = true
			break
		}
	}
	bar.finish()
	if sig := interrupted(c.Context); sig != nil {
		// Stopped by a signal: the verdicts printed so far stand; run
		// says the output is partial and exits 130/143.
		out.Flush()
		return sig
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) && c.Context.Err() != nil {
			return troubleError("verify: interrupted")
		}
		return troubleError("verify: %w", runErr)
	}
	if err := fleet.write(time.Since(start)); err != nil {
		return err
	}
	if !jsonOut {
		sum.write(out, time.Since(start), stopped)
	}
	if err := out.Flush(); err != nil && writeErr == nil {
		writeErr = err
	}
	if writeErr != nil {
		return troubleError("verify: %w", writeErr)
	}
	return sum.exit()
}

// exit is the run's exit code: 2 when a file could not be read (every
// file is reported: all of them, or up to --fail-fast's stop), 1 for
// findings.
func (s *verifySummary) exit() error {
	switch {
	case s.ioErrors > 0:
		return troubleError("")
	case s.problems > 0:
		return findingsError("")
	}
	return nil
}

// verifySummary adds up the files reported so far.
type verifySummary struct {
	files, batches, records, bytes int64
	problems, ioErrors, ignored    int
}

func (s *verifySummary) add(f *verify.FileReport) {
	if f.Ignored != "" {
		s.ignored++ // listed, not checked
		return
	}
	s.files++
	if f.Kind == "log" || f.Kind == "checkpoint" {
		s.batches += f.Batches
		s.records += f.Records // other kinds count entries there
	}
	s.bytes += f.Bytes
	s.problems += f.Findings()
	if f.Err != "" {
		s.ioErrors++
	}
}

// write prints the summary line, e.g. "verified 3 files: 4 batches, 59
// records, 2385 bytes (2.3 KiB), 0 problems in 0.0s".
func (s *verifySummary) write(w io.Writer, elapsed time.Duration, stopped bool) {
	var b strings.Builder
	if stopped {
		b.WriteString("stopped at the first finding after ")
	} else {
		b.WriteString("verified ")
	}
	b.WriteString(plural(s.files, "file", "files") + ": " + plural(s.batches, "batch", "batches") + ", " +
		plural(s.records, "record", "records") + ", " + plural(s.bytes, "byte", "bytes"))
	if s.bytes >= 1024 {
		// The human form only says something from 1 KiB on, as in the tables.
		b.WriteString(" (" + humanBytes(s.bytes) + ")")
	}
	b.WriteString(", " + plural(int64(s.problems), "problem", "problems"))
	if s.ioErrors > 0 {
		b.WriteString(", " + plural(int64(s.ioErrors), "unreadable file", "unreadable files"))
	}
	if s.ignored > 0 {
		b.WriteString(", " + plural(int64(s.ignored), "file", "files") + " ignored (not Kafka files)")
	}
	b.WriteString(" in " + strconv.FormatFloat(elapsed.Seconds(), 'f', 1, 64) + "s\n")
	io.WriteString(w, b.String())
}

// writeFileReport writes one file's verdict: a fileReport object, or the
// text lines (rendered in b).
func writeFileReport(out *bufio.Writer, b *strings.Builder, f *verify.FileReport, jsonOut bool) error {
	if jsonOut {
		return writeJSONLine(out, "fileReport", f)
	}
	b.Reset()
	writeVerdict(b, f)
	_, err := out.WriteString(b.String())
	return err
}

// writeVerdict renders one file: "PATH: ok (N batches, M records, B bytes)"
// or "PATH: K problems" and one indented line per problem.
func writeVerdict(b *strings.Builder, f *verify.FileReport) {
	b.WriteString(f.Path)
	b.WriteString(": ")
	n := f.Findings()
	switch {
	case f.Ignored != "":
		b.WriteString("ignored (" + f.Ignored + ")")
	case f.Err != "":
		b.WriteString("error: " + f.Err)
	case n == 0:
		b.WriteString("ok (")
		switch f.Kind {
		case "log", "checkpoint":
			b.WriteString(plural(f.Batches, "batch", "batches") + ", " + plural(f.Records, "record", "records") + ", ")
		case "index", "timeindex", "txnindex", "snapshot", "leader-epoch-checkpoint", "offset-checkpoint":
			b.WriteString(plural(f.Records, "entry", "entries") + ", ")
		}
		b.WriteString(strconv.FormatInt(f.Bytes, 10) + " bytes)")
	case n == 1:
		b.WriteString("1 problem")
	default:
		b.WriteString(strconv.Itoa(n) + " problems")
	}
	b.WriteByte('\n')
	for _, p := range f.Problems {
		b.WriteString("  ")
		if p.Info {
			b.WriteString("info: ")
		}
		b.WriteString(string(p.Kind) + " at position " + strconv.FormatInt(p.Position, 10))
		if p.Offset >= 0 {
			b.WriteString(", offset " + strconv.FormatInt(p.Offset, 10))
		}
		b.WriteString(": " + p.Message + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Omitted)) {
		b.WriteString("  … and " + strconv.FormatInt(f.Omitted[k], 10) + " more " + string(k) + " problems (the first " + strconv.Itoa(verify.MaxProblemsPerKind) + " of each kind are listed)\n")
	}
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
