package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes, the diff/grep convention; a public interface.
const (
	ExitOK       = 0 // clean
	ExitFindings = 1 // corruption or inconsistency found
	ExitTrouble  = 2 // usage or I/O trouble
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// exitError carries an exit code and an optional message for stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
func (e *exitError) ExitCode() int { return e.code }

var _ cli.ExitCoder = (*exitError)(nil)

func usageError(format string, a ...any) error {
	return &exitError{code: ExitTrouble, msg: fmt.Sprintf(format, a...)}
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "klog",
		Usage:     "read, check and write Apache Kafka partition logs on disk",
		Version:   version,
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// Errors come back to run, which maps them to exit codes; the
		// default handler would call os.Exit.
		ExitErrHandler:       func(*cli.Context, error) {},
		HideHelpCommand:      true,
		EnableBashCompletion: true,
		Commands:             []*cli.Command{dumpCommand, verifyCommand, produceCommand, fetchCommand, offsetsCommand, replicateCommand, recoverCommand, tailCommand, segmentsCommand, statsCommand, findCommand},
	}
}

// run is main without os.Exit: tests call it with buffers. A run stopped
// by a signal exits 128+N (130 for SIGINT, 143 for SIGTERM) and says on
// stderr that its output is partial.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, args)
	if sig := interrupted(ctx); sig != nil {
		fmt.Fprintln(stderr, "klog: "+sig.Error()+": stopped at a record boundary; the output is partial")
		return exitCode(sig)
	}
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "klog: "+ee.msg)
		}
		return ee.code
	}
	// Flag parsing and other urfave/cli errors are usage errors.
	fmt.Fprintln(stderr, "klog: "+err.Error())
	return exitCode(err)
}

// checkArgs rejects flags placed after the first file: urfave/cli v2 would
// silently treat them as file names.
func checkArgs(args []string) error {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && a != "-" {
			return usageError("flags must come before FILE arguments (got %q after a file)", a)
		}
	}
	return nil
}
