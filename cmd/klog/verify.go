package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

var (
	verifyJSONFlag = &cli.BoolFlag{Name: "json", Usage: "write one JSON object per file to stdout"}
	verifyJobsFlag = &cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "files verified in parallel (default: number of CPUs)"}
	verifyQuiet    = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only files with findings"}
)

var verifyCommand = &cli.Command{
	Name:      "verify",
	Usage:     "check CRCs, structure, offsets, indexes, snapshots and checkpoints",
	ArgsUsage: "PATH...",
	Description: `PATH is a segment, index, snapshot or checkpoint file, a partition directory,
or a log directory (searched recursively); - reads a segment from stdin. A
file named here that is not a Kafka file is an error (exit 2); inside
directories such files are listed as skipped. Every v2 batch's CRC-32C and every
v0/v1 message's CRC-32 is checked, every record decoded (compressed batches
decompressed), offsets checked across batches and segments, and indexes,
producer snapshots and checkpoints checked against the log.

A one-line verdict per file goes to stderr, followed by its findings; --json
writes one object per file to stdout instead. Exit status: 0 clean, 1
findings, 2 usage or I/O trouble.`,
	Flags:  []cli.Flag{verifyJSONFlag, verifyJobsFlag, verifyQuiet, maxBatchFlag},
	Action: runVerify,
}

func runVerify(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("verify: no PATH given")
	}
	if err := checkArgs(args); err != nil {
		return err
	}
	opts := verify.Options{Jobs: c.Int(verifyJobsFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name), Stdin: c.App.Reader}
	errw := c.App.ErrWriter
	if isTerminal(errw) {
		opts.Progress = func(done, total int) {
			if total >= 20 {
				fmt.Fprintf(errw, "\rverifying: %d/%d files", done, total)
				if done == total {
					io.WriteString(errw, "\r\033[K")
				}
			}
		}
	}
	rep, err := verify.Run(c.Context, args, opts)
	if err != nil && (rep == nil || !rep.Partial) {
		return fail("verify", err)
	}
	if c.Bool(verifyJSONFlag.Name) {
		enc := json.NewEncoder(c.App.Writer)
		for i := range rep.Files {
			if err := enc.Encode(&rep.Files[i]); err != nil {
				return fail("verify", err)
			}
		}
	} else {
		var b strings.Builder
		for i := range rep.Files {
			f := &rep.Files[i]
			if c.Bool(verifyQuiet.Name) && f.OK && !f.Partial {
				continue
			}
			writeVerdict(&b, f)
		}
		io.WriteString(errw, b.String())
	}
	switch {
	case rep.Partial:
		return err // the signal's exit code; run says the output is partial
	case rep.IOErrors() > 0:
		return &exitError{code: ExitTrouble}
	case rep.Findings() > 0:
		return &exitError{code: ExitFindings}
	}
	return nil
}

// writeVerdict renders one file: "PATH: ok (N batches, M records, B bytes)"
// or "PATH: K problems" and one indented line per problem.
func writeVerdict(b *strings.Builder, f *verify.FileReport) {
	b.WriteString(f.Path)
	b.WriteString(": ")
	n := f.Findings()
	switch {
	case f.Skipped != "":
		b.WriteString("skipped (" + f.Skipped + ")")
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
		b.WriteString(p.Kind + " at position " + strconv.FormatInt(p.Position, 10))
		if p.Offset >= 0 {
			b.WriteString(", offset " + strconv.FormatInt(p.Offset, 10))
		}
		b.WriteString(": " + p.Message + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Omitted)) {
		b.WriteString("  … and " + strconv.FormatInt(f.Omitted[k], 10) + " more " + k + " problems (the first " + strconv.Itoa(verify.MaxProblemsPerKind) + " of each kind are listed)\n")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
