package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/produce"
)

// The exit-code contract, one table for every command (README, "Exit
// codes"): 1 means klog answered and the answer is "no" (the data has
// findings, the offset asked for is out of range, the producer is fenced:
// what a broker answers with an error code); 2 means klog could not answer
// (usage, I/O, a lock held by a broker or another writer); 128+N a signal.
const (
	ExitSIGINT  = 128 + int(syscall.SIGINT)  // 130
	ExitSIGTERM = 128 + int(syscall.SIGTERM) // 143
)

// exitCode is the one mapping from an error to an exit code.
func exitCode(err error) int {
	var (
		ee   *exitError
		sig  *signalError
		lock *safeio.BrokerLockError
		fe   *produce.FencedError
		tail *produce.InvalidTailError
		pe   *format.PosError
		cre  *format.CorruptRecordError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &sig):
		return 128 + int(sig.sig)
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &lock), errors.Is(err, produce.ErrLocked):
		return ExitTrouble
	case errors.As(err, &fe), errors.As(err, &tail),
		errors.Is(err, fetch.ErrOffsetOutOfRange), errors.Is(err, inspect.ErrOffsetOutOfRange):
		return ExitFindings
	case errors.As(err, &pe) && !errors.Is(err, format.ErrTooLarge), errors.As(err, &cre):
		// The data is at fault (a record that does not decode, a batch
		// that fails its CRC): klog answered, and the answer is "no", as
		// a broker answers CORRUPT_MESSAGE. A size over klog's own limit
		// is klog's limit, not the data's fault.
		return ExitFindings
	}
	return ExitTrouble
}

// exitError is how a command ends other than cleanly: the message run
// prints on stderr ("" when the command's output has said everything) and
// the error it wraps, whose kind exitCode turns into the exit code. It is
// built only here, by the constructors below, which say what happened;
// archtest checks that no other file writes an exitError literal.
type exitError struct {
	code int
	msg  string
	err  error
}

func (e *exitError) Error() string { return e.msg }

// Unwrap is the cause, for errors.Is and errors.As.
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the code exitCode gives the error.
func (e *exitError) ExitCode() int { return e.code }

var _ cli.ExitCoder = (*exitError)(nil)

// usageError is a usage problem (exit 2): a flag or an argument klog
// cannot act on. A %w in format wraps its operand.
func usageError(format string, a ...any) error { return newExitError(ExitTrouble, format, a) }

// troubleError is trouble (exit 2): klog could not answer, for I/O or
// another reason the message names ("" prints nothing more: the output
// said it).
func troubleError(format string, a ...any) error { return newExitError(ExitTrouble, format, a) }

// findingsError is an answer of "no" (exit 1): the data has findings, the
// offset is out of range, the producer is fenced ("" prints nothing more).
func findingsError(format string, a ...any) error { return newExitError(ExitFindings, format, a) }

func newExitError(code int, format string, a []any) error {
	if format == "" {
		return &exitError{code: code}
	}
	err := fmt.Errorf(format, a...)
	return &exitError{code: code, msg: err.Error(), err: err}
}

// fail wraps err for run: its message prefixed with the command, its code
// from exitCode.
func fail(cmd string, err error) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, cmd+": ") {
		// A package's own errors may already say "fetch: ": never
		// "klog: fetch: fetch: ...".
		msg = cmd + ": " + msg
	}
	return &exitError{code: exitCode(err), msg: msg, err: err}
}

// failWith is err with the message format makes, its code from exitCode.
func failWith(err error, format string, a ...any) error {
	return &exitError{code: exitCode(err), msg: fmt.Sprintf(format, a...), err: err}
}

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return "stopped by signal " + strconv.Itoa(int(e.sig))
}

// signalContext is cancelled, with a *signalError cause, on the first
// SIGINT or SIGTERM. Commands see ctx.Done, stop at a record boundary and
// flush; if one has not returned within the grace period, or a second
// signal comes, the process exits with the signal's code anyway.
func signalContext(grace func(code int)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 2)
	signalNotify(ch)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig := s.(syscall.Signal)
			cancel(&signalError{sig: sig})
			grace(128 + int(sig))
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signalStop(ch)
		cancel(nil)
	}
}

// signalStopsServer is set by a command whose normal stop is a signal
// (klog serve, like a broker): the process then skips the grace-period
// exit (serve gives in-flight requests their own time) and exits with the
// command's own code.
var signalStopsServer atomic.Bool

const signalStopsKey = "klog.signalStops"

// signalIsStop marks the running command as one a signal stops cleanly:
// run exits with its code (0 after a clean shutdown), not 128+N.
func signalIsStop(c *cli.Context) {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[signalStopsKey] = true
	signalStopsServer.Store(true)
}

const signalEndsFollowKey = "klog.signalEndsFollow"

// signalEndsFollow marks the running command as a follower (tail, fetch
// --follow): a signal is how one stops, so it still exits 128+N (the
// exit-code table's 130/143, as tail -f does) but stderr says it stopped
// following, not that its output is partial: every line it printed is
// whole.
func signalEndsFollow(c *cli.Context) {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[signalEndsFollowKey] = true
}

// interrupted returns the signal error when ctx was cancelled by one.
func interrupted(ctx context.Context) error {
	var sig *signalError
	if errors.As(context.Cause(ctx), &sig) {
		return sig
	}
	return nil
}
