package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes, the diff/grep convention; a public interface.
const (
	ExitOK       = 0 // clean
	ExitFindings = 1 // corruption or inconsistency found
	ExitTrouble  = 2 // usage or I/O trouble
)

// version is set at build time with -ldflags "-X main.version=..."; else
// `klog version` reports the module version from the build info.
var version = defaultVersion

const defaultVersion = "0.1.0-dev"

// int32Flags refuses a value of the named int flags outside 0..2^31-1:
// they fill Kafka's int32 fields (max bytes, epochs), and a larger one
// would wrap without a word.
func int32Flags(c *cli.Context, names ...string) error {
	for _, n := range names {
		if v := c.Int(n); v < 0 || v > math.MaxInt32 {
			return usageError("%s: --%s must be between 0 and %d, got %d", commandPath(c), n, math.MaxInt32, v)
		}
	}
	return nil
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	cmds := []*cli.Command{dumpCommand, verifyCommand, produceCommand, fetchCommand, offsetsCommand, replicateCommand, recoverCommand, tailCommand, segmentsCommand, statsCommand, findCommand,
		retentionCommand, reportCommand, diffCommand, redactCommand, serveCommand, metadataCommand, groupsCommand, transactionsCommand, lsCommand, tieredCommand, versionCommand, completionCommand}
	prepareCommands(cmds)
	return &cli.App{
		Name:      "klog",
		Usage:     "read, check and write Apache Kafka partition logs on disk",
		UsageText: "klog [--version] COMMAND [OPTIONS] [ARGUMENTS...]\nklog help COMMAND",
		Version:   version,
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// Errors come back to run, which maps them to exit codes; the
		// default handler would call os.Exit.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageErrorHandler,
		Action:         rootAction,
		Commands:       cmds,
	}
}

// run is main without os.Exit: tests call it with buffers. A run stopped
// by a signal exits 128+N (130 for SIGINT, 143 for SIGTERM) and says on
// stderr that its output is partial, unless a signal is the command's
// normal stop (serve: signalIsStop) or ends a follower (signalEndsFollow).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &stdoutWriter{w: stdout}
	code := runApp(ctx, args, stdin, out, stderr)
	if out.err != nil && code < ExitTrouble {
		// The data did not reach stdout (a full disk, a closed file):
		// whatever the command found, the caller did not get it. A closed
		// pipe never gets here: the write raised SIGPIPE.
		fmt.Fprintln(stderr, "klog: "+commandName(args)+out.err.Error())
		code = exitCode(out.err)
	}
	return code
}

// stdoutWriter is stdout that remembers its first write error, so that
// no command exits 0 or 1 when its output was lost.
type stdoutWriter struct {
	w   io.Writer
	err error
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// osFile is the *os.File behind w (stdout through its stdoutWriter), for
// the terminal checks.
func osFile(w io.Writer) (*os.File, bool) {
	if s, ok := w.(*stdoutWriter); ok {
		w = s.w
	}
	f, ok := w.(*os.File)
	return f, ok
}

// commandName is "CMD: " for the command args run, or "".
func commandName(args []string) string {
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			return a + ": "
		}
	}
	return ""
}

func runApp(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	if n := len(args); n >= 2 && args[n-1] == completeFlag {
		for _, c := range complete(app, args[1:n-1]) {
			fmt.Fprintln(stdout, c)
		}
		return ExitOK
	}
	args = normalizeArgs(app, args)
	if len(args) >= 3 && (args[1] == "help" || args[1] == "h") && isHelpWord(args[2]) {
		// "klog help help", "klog help --help": the help of help is the
		// usage, which says how to use it (urfave/cli adds its help command
		// only while running, so app.Command does not know it here).
		args = args[:2]
	}
	if len(args) >= 3 && (args[1] == "help" || args[1] == "h") && app.Command(args[2]) == nil {
		return report(stderr, unknownCommand(app, args[2]))
	}
	err := app.RunContext(ctx, args)
	if sig := interrupted(ctx); sig != nil && app.Metadata[signalStopsKey] != true {
		if app.Metadata[signalEndsFollowKey] == true {
			fmt.Fprintln(stderr, "klog: "+sig.Error()+": stopped following")
		} else {
			fmt.Fprintln(stderr, "klog: "+sig.Error()+": stopped at a record boundary; the output is partial")
		}
		return exitCode(sig)
	}
	return report(stderr, err)
}

// isHelpWord reports whether a names help itself: the help command or flag.
func isHelpWord(a string) bool {
	switch a {
	case "help", "h", "--help", "-h":
		return true
	}
	return false
}

// report prints err (if it has a message) and returns its exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "klog: "+ee.msg)
		}
		return exitCode(err)
	}
	// Other urfave/cli errors are usage errors.
	fmt.Fprintln(stderr, "klog: "+err.Error())
	return exitCode(err)
}
