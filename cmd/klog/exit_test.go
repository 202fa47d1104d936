package main

import (
	"errors"
	"io"
	"testing"

	"github.com/klog-dev/klog/fetch"
)

// TestExitErrorsWrap: the exit constructors keep their cause for
// errors.Is and errors.As, and exitCode gives each its code.
func TestExitErrorsWrap(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		cause error
		code  int
		msg   string
	}{
		{"trouble", troubleError("verify: %w", io.ErrUnexpectedEOF), io.ErrUnexpectedEOF, ExitTrouble, "verify: unexpected EOF"},
		{"findings", findingsError("fetch: %s: %w", "00.log", fetch.ErrOffsetOutOfRange), fetch.ErrOffsetOutOfRange, ExitFindings, "fetch: 00.log: " + fetch.ErrOffsetOutOfRange.Error()},
		{"fail keeps the cause's code", fail("fetch", fetch.ErrOffsetOutOfRange), fetch.ErrOffsetOutOfRange, ExitFindings, "fetch: " + fetch.ErrOffsetOutOfRange.Error()},
		{"usage", usageError("dump: --offset %q: %w", "x", io.EOF), io.EOF, ExitTrouble, `dump: --offset "x": EOF`},
		{"silent findings", findingsError(""), nil, ExitFindings, ""},
	}
	for _, c := range cases {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("%s: exit code %d, want %d", c.name, got, c.code)
		}
		if c.cause != nil && !errors.Is(c.err, c.cause) {
			t.Errorf("%s: %v does not wrap %v", c.name, c.err, c.cause)
		}
		if c.err.Error() != c.msg {
			t.Errorf("%s: message %q, want %q", c.name, c.err.Error(), c.msg)
		}
	}
}
