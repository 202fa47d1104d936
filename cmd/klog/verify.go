package main

import (
	"bufio"
	"context"
	"errors"
	"sync"
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

A log directory that holds __cluster_metadata-0 (or several given together,
one broker's or several brokers') is also checked against the KRaft
metadata image: a partition the image assigns to the broker that is not
there (image-missing-replica), a partition.metadata whose topic id is not
the image's (image-topic-id), a partition the image does not have or does
not assign to the broker (image-unknown-partition), a log dir whose
directory.id the image does not register (image-unknown-log-dir): one
report per log dir, fileKind metadata-image.

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

// verifyCutShort is how a verify a signal stopped, or whose walk failed,
// ends (nil for neither): after a signal the verdicts printed so far stand
// (the file in flight marked partial), then the summary of what was
// verified; run says the output is partial and exits 130/143.
func verifyCutShort(c *cli.Context, out *bufio.Writer, sum *verify.Summary, start time.Time, jsonOut bool, runErr error) error {
	if sig := interrupted(c.Context); sig != nil {
		if !jsonOut {
			sum.Interrupted = true
			sum.WriteText(out, time.Since(start), false)
		}
		out.Flush()
		return sig
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) && c.Context.Err() != nil {
			return troubleError("verify: interrupted")
		}
		return troubleError("verify: %w", runErr)
	}
	return nil
}

func runVerify(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("verify: no PATH given")
	}
	start := time.Now()
	jsonOut, quiet, failFast := c.Bool(verifyJSONFlag.Name), c.Bool(verifyQuiet.Name), c.Bool(verifyFailFastFlag.Name)
	out := bufio.NewWriter(c.App.Writer)
	// On a terminal each verdict is flushed as it comes (the bar is
	// cleared around it); into a pipe or a file within flushDelay, not
	// with a write per file.
	lazy := newLazyFlush(out, !isTerminal(c.App.Writer))
	defer lazy.stop()
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
		if !quiet || f.Failed() { // --quiet: only the files with findings, in JSON too
			if err := lazy.write(func() error { return writeFileReport(out, f, jsonOut) }); err != nil && writeErr == nil {
				writeErr = err
			}
		}
		bar.clear()
		if err := lazy.flush(); err != nil && writeErr == nil {
			writeErr = err
		}
		if failFast && f.Failed() {
			stopped = true
			break
		}
	}
	lazy.stop()
	bar.finish()
	if err := verifyCutShort(c, out, &sum, start, jsonOut, runErr); err != nil {
		return err
	}
	writeImageReports(c, args, stopped, out, &sum)
	if err := fleet.write(time.Since(start)); err != nil {
		return err
	}
	return finishVerify(out, &sum, time.Since(start), stopped, jsonOut, writeErr)
}

// finishVerify writes the summary (text output) and flushes, then gives the
// run's exit: trouble writing, else verifyExit's.
func finishVerify(out *bufio.Writer, sum *verify.Summary, took time.Duration, stopped, jsonOut bool, writeErr error) error {
	if !jsonOut {
		if err := sum.WriteText(out, took, stopped); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	if err := out.Flush(); err != nil && writeErr == nil {
		writeErr = err
	}
	if writeErr != nil {
		return troubleError("verify: %w", writeErr)
	}
	return verifyExit(sum)
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

// flushDelay is how long a verdict may wait in the buffer for the next
// ones when stdout is not a terminal.
const flushDelay = 100 * time.Millisecond

// lazyFlush flushes a writer at once, or (later) at most flushDelay after
// the first byte it holds, from a timer; stop ends the timer. Writes go
// through write, so that the timer's flush never runs in the middle of one.
type lazyFlush struct {
	mu      sync.Mutex
	w       *bufio.Writer
	later   bool
	pending *time.Timer
	err     error
}

func newLazyFlush(w *bufio.Writer, later bool) *lazyFlush { return &lazyFlush{w: w, later: later} }

// write runs fn, which writes to the writer, against the timer's flush.
func (l *lazyFlush) write(fn func() error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fn()
}

// flush flushes now, or arranges a flush within flushDelay; it returns the
// first write error seen.
func (l *lazyFlush) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.later {
		if err := l.w.Flush(); err != nil && l.err == nil {
			l.err = err
		}
		return l.err
	}
	if l.pending == nil && l.w.Buffered() > 0 {
		l.pending = time.AfterFunc(flushDelay, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.pending = nil
			if err := l.w.Flush(); err != nil && l.err == nil {
				l.err = err
			}
		})
	}
	return l.err
}

// stop ends a pending timer (the caller flushes what is left).
func (l *lazyFlush) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending != nil {
		l.pending.Stop()
		l.pending = nil
	}
}
