package main

import (
	"bufio"
	"context"
	"errors"
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
		sum      verify.Summary
		stopped  bool
		writeErr error
		runErr   error
	)
	// A few hundred partitions at a time: memory stays bounded on a
	// broker's log dir of any size.
	for f, err := range verify.Files(c.Context, args, opts) {
		if err != nil {
			runErr = err
			break
		}
		sum.Add(f)
		fleet.add(f)
		if !quiet || !f.OK { // --quiet: only the files with findings, in JSON too
			if err := writeFileReport(out, f, jsonOut); err != nil && writeErr == nil {
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
		if err := sum.WriteText(out, time.Since(start), stopped); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	if err := out.Flush(); err != nil && writeErr == nil {
		writeErr = err
	}
	if writeErr != nil {
		return troubleError("verify: %w", writeErr)
	}
	return verifyExit(&sum)
}

// verifyExit is the run's exit code: 2 when a file could not be read
// (every file is reported: all of them, or up to --fail-fast's stop), 1
// for findings.
func verifyExit(s *verify.Summary) error {
	switch {
	case s.IOErrors > 0:
		return troubleError("")
	case s.Problems > 0:
		return findingsError("")
	}
	return nil
}

// writeFileReport writes one file's verdict: a fileReport object, or the
// text lines.
func writeFileReport(out *bufio.Writer, f *verify.FileReport, jsonOut bool) error {
	if jsonOut {
		return writeJSONLine(out, "fileReport", f)
	}
	return f.WriteText(out)
}
