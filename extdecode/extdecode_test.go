package extdecode

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, command string, timeout time.Duration) *Decoder {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	d, err := Start(context.Background(), Options{Command: command, Timeout: timeout, MaxLineBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDecoderAnswers: each value goes out as one hex line, each answer
// line comes back without its newline (or \r\n), an empty value is an
// empty line, and a clean exit at the end of the input is no error.
func TestDecoderAnswers(t *testing.T) {
	t.Parallel()
	d := start(t, `while IFS= read -r l; do printf 'got:%s\r\n' "$l"; done`, 10*time.Second)
	for _, tc := range []struct{ in, want string }{{"ab", "got:6162"}, {"", "got:"}, {"\x00\xff\n", "got:00ff0a"}} {
		got, err := d.Decode([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("Decode(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := d.Decode(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Decode after Close: %v", err)
	}
}

// TestDecoderMisbehaves: every way the process can break the protocol is
// an *Error that says how, with its stderr; none hangs.
func TestDecoderMisbehaves(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte{7}, 256<<10) // more than a pipe holds
	tests := []struct {
		name, command string
		values        [][]byte
		want          string // in the error of the last Decode, or of Close
		atClose       bool
	}{
		{name: "exits at once", command: `echo broken >&2; exit 3`, values: [][]byte{{1}},
			want: "exit status 3"},
		{name: "exits after one answer", command: `read l; echo one`, values: [][]byte{{1}, {2}},
			want: "exited without answering"},
		{name: "never answers", command: `exec sleep 60`, values: [][]byte{{1}}, want: "did not answer within"},
		{name: "does not read", command: `exec sleep 60`, values: [][]byte{big}, want: "did not read its input within"},
		{name: "answers a line too long", command: `read l; head -c 500 /dev/zero | tr '\0' a; echo`, values: [][]byte{{1}},
			want: "line over 100 bytes"},
		{name: "answers without a newline", command: `read l; printf abc`, values: [][]byte{{1}},
			want: "without a newline"},
		{name: "answers twice per value", command: `while read l; do echo a; echo b; done`, values: [][]byte{{1}},
			want: "more lines than it was given values", atClose: true},
		{name: "fails at the end", command: `while read l; do echo ok; done; echo bye >&2; exit 4`, values: [][]byte{{1}},
			want: "exit status 4", atClose: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := start(t, tc.command, 2*time.Second)
			var err error
			for _, v := range tc.values {
				if _, err = d.Decode(v); err != nil {
					break
				}
			}
			cerr := d.Close()
			if tc.atClose {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				err = cerr
			}
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an *Error with %q", err, tc.want)
			}
			if strings.Contains(tc.command, ">&2") && e.Stderr == "" {
				t.Errorf("stderr not quoted: %v", err)
			}
		})
	}
}

func TestDecoderDoesNotStart(t *testing.T) {
	t.Parallel()
	d := start(t, `exec /nonexistent/decoder`, time.Second)
	_, err := d.Decode([]byte{1})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	d.Close()
}
