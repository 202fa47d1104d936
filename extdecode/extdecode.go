// Package extdecode runs an external decoder: one process, started once,
// that reads one hex-encoded value per line on its standard input and
// answers one line per value on its standard output, in order (the
// protocol of etcd-dump-logs' -stream-decoder). klog dump --value-decoder-cmd
// uses it for formats Kafka's tool decodes only with a JVM plug-in
// (--value-decoder-class).
//
// The process is bounded: an answer must come within Options.Timeout and
// be at most Options.MaxLineBytes long; a process that exits, stops
// reading, answers late or answers too much is killed and reported with
// what it wrote to its standard error last.
package extdecode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// Defaults.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxLineBytes = 1 << 20
	// stderrTail is how much of the process's standard error an error
	// quotes.
	stderrTail = 2048
)

// Options configures a Decoder.
type Options struct {
	// Command is run by the shell (sh -c; cmd /C on Windows), so it may
	// hold arguments and quoting.
	Command string
	// Timeout bounds the wait for each answer (0: DefaultTimeout).
	Timeout time.Duration
	// MaxLineBytes bounds one answer (0: DefaultMaxLineBytes).
	MaxLineBytes int
	// Stderr receives the process's standard error as it writes it (nil:
	// discarded); the last bytes are kept for error messages either way.
	Stderr io.Writer
}

// Error is the decoder process misbehaving.
type Error struct {
	Command string
	Reason  string // what went wrong
	Stderr  string // the last bytes it wrote to its standard error
}

func (e *Error) Error() string {
	msg := "decoder command " + strconv.Quote(e.Command) + " " + e.Reason
	if e.Stderr != "" {
		msg += "; its stderr ends: " + strconv.Quote(e.Stderr)
	}
	return msg
}

// ErrClosed is returned by Decode after Close or a failure.
var ErrClosed = errors.New("decoder command is not running")

type answer struct {
	line []byte
	err  error
}

// Decoder is a running decoder process. Decode calls must not overlap.
type Decoder struct {
	opts    Options
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	answers chan answer
	writes  chan []byte
	wrote   chan error
	stderr  *tailBuffer
	quit    chan struct{} // closed by Close: the reader and writer stop
	done    chan struct{} // closed when the process has exited
	waitErr error
	failed  error
	req     []byte
}

// Start starts the process. It runs until Close, or until ctx ends.
func Start(ctx context.Context, opts Options) (*Decoder, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.Command == "" {
		return nil, errors.New("extdecode: no command")
	}
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", opts.Command)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", opts.Command)
	}
	d := &Decoder{opts: opts, cmd: cmd, answers: make(chan answer, 1), writes: make(chan []byte), wrote: make(chan error, 1),
		stderr: &tailBuffer{max: stderrTail, w: opts.Stderr}, quit: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = d.stderr
	// The process gets no more time to exit than it gets to answer.
	cmd.WaitDelay = opts.Timeout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe, not StdoutPipe: Wait closes StdoutPipe's end as soon
	// as the process exits, losing whatever the reader has not read yet
	// (a last line without its newline became "exited without answering").
	stdout, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, &Error{Command: opts.Command, Reason: "did not start: " + err.Error()}
	}
	d.stdin = stdin
	go d.read(stdout)
	go d.write()
	go func() {
		d.waitErr = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// read hands each line of stdout to Decode, and the end of it.
func (d *Decoder) read(stdout io.ReadCloser) {
	defer stdout.Close()
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := readLine(br, d.opts.MaxLineBytes)
		select {
		case d.answers <- answer{line, err}:
		case <-d.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its "\n" (or "\r\n"), at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max+2 {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return line, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		if len(line) > max {
			return nil, errLineTooLong
		}
		return line, nil
	}
}

// write writes the requests, so that a process that stops reading cannot
// block Decode past its timeout.
func (d *Decoder) write() {
	for {
		select {
		case req := <-d.writes:
			_, err := d.stdin.Write(req)
			d.wrote <- err // one result per request; Decode takes it
		case <-d.quit:
			return
		}
	}
}

// Decode sends value and returns the process's answer line (without its
// newline). The line is valid until the next call.
func (d *Decoder) Decode(value []byte) ([]byte, error) {
	if d.failed != nil {
		return nil, d.failed
	}
	d.req = append(hex.AppendEncode(d.req[:0], value), '\n')
	timer := time.NewTimer(d.opts.Timeout)
	defer timer.Stop()
	select {
	case d.writes <- d.req:
	case <-timer.C:
		return nil, d.fail("did not read its input within " + d.opts.Timeout.String())
	}
	wrote := false
	for {
		select {
		case err := <-d.wrote:
			wrote = true
			if err != nil {
				return nil, d.writeFailed(err, timer.C)
			}
		case a := <-d.answers:
			if !wrote {
				// It answered before reading all of the request; take
				// the write's result first.
				select {
				case err := <-d.wrote:
					if err != nil && a.err == nil {
						return nil, d.fail("stopped reading its input (" + err.Error() + ")" + d.exitStatus())
					}
				case <-timer.C:
					return nil, d.fail("did not read its input within " + d.opts.Timeout.String())
				}
			}
			switch {
			case a.err == errLineTooLong:
				return nil, d.fail("answered with a line over " + strconv.Itoa(d.opts.MaxLineBytes) + " bytes")
			case a.err == io.EOF && len(a.line) > 0:
				return nil, d.fail("ended its output without a newline" + d.exitStatus())
			case a.err != nil:
				return nil, d.fail("exited without answering" + d.exitStatus())
			}
			return a.line, nil
		case <-timer.C:
			if !wrote {
				return nil, d.fail("did not read its input within " + d.opts.Timeout.String())
			}
			return nil, d.fail("did not answer within " + d.opts.Timeout.String())
		}
	}
}

// writeFailed says why a request could not be written. A process that
// exited closed its input too, so the pipe breaks whether it died before
// reading or after its last answer; which one is known only from its
// output, so writeFailed waits for the reader's verdict (at most until
// the timer) instead of racing the process's exit.
func (d *Decoder) writeFailed(err error, timeout <-chan time.Time) error {
	select {
	case a := <-d.answers:
		if a.err != nil && len(a.line) == 0 {
			return d.fail("exited without answering" + d.exitStatus())
		}
	case <-timeout:
	}
	return d.fail("stopped reading its input (" + err.Error() + ")" + d.exitStatus())
}

// exitStatus waits briefly for the process to exit and says how it did.
func (d *Decoder) exitStatus() string {
	select {
	case <-d.done:
	case <-time.After(d.opts.Timeout):
		return ""
	}
	var ee *exec.ExitError
	if errors.As(d.waitErr, &ee) {
		return " (" + ee.ProcessState.String() + ")"
	}
	if d.waitErr == nil {
		return " (exit status 0)"
	}
	return ""
}

func (d *Decoder) fail(reason string) error {
	if d.cmd.Process != nil {
		d.cmd.Process.Kill()
	}
	d.failed = &Error{Command: d.opts.Command, Reason: reason, Stderr: d.stderr.String()}
	return d.failed
}

// Close closes the process's input and waits for it to exit (at most the
// timeout, then it is killed). Unless Decode already failed, an exit
// status other than 0, or lines left unread (more answers than values), is
// an error.
func (d *Decoder) Close() error {
	defer close(d.quit)
	if d.failed != nil {
		<-d.done
		return nil
	}
	d.failed = ErrClosed
	d.stdin.Close()
	select {
	case <-d.done:
	case <-time.After(d.opts.Timeout):
		d.cmd.Process.Kill()
		<-d.done
		return &Error{Command: d.opts.Command, Reason: "did not exit within " + d.opts.Timeout.String() + " of the end of its input",
			Stderr: d.stderr.String()}
	}
	select {
	case a := <-d.answers:
		if a.err == nil || len(a.line) > 0 {
			return &Error{Command: d.opts.Command, Reason: "wrote more lines than it was given values", Stderr: d.stderr.String()}
		}
	case <-time.After(d.opts.Timeout):
	}
	if d.waitErr != nil {
		return &Error{Command: d.opts.Command, Reason: "failed at the end: " + d.waitErr.Error(), Stderr: d.stderr.String()}
	}
	return nil
}

// tailBuffer passes writes on and keeps the last max bytes.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
	w   io.Writer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		t.w.Write(p)
	}
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
