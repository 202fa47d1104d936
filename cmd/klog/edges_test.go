package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/hostile"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"golang.org/x/sys/unix"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyNeverSilentOK: a named file is checked as what its name and
// content say, whatever it is called; what klog cannot classify is an
// error; stdin is read with -; an empty directory is an error; unknown
// files in directories are listed as skipped.
func TestVerifyNeverSilentOK(t *testing.T) {
	dir := t.TempDir()
	badCRC := segments(t, "kafka-written", "derived-corrupt", "bad-crc-none", "00000000000000000000.log")
	good := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	copyFile(t, badCRC, filepath.Join(dir, "x.log"))
	copyFile(t, badCRC, filepath.Join(dir, "00000000000000000000.log.swap"))
	copyFile(t, badCRC, filepath.Join(dir, "00000000000000000000.log.deleted"))
	copyFile(t, good, filepath.Join(dir, "renamed.log"))
	copyFile(t, badCRC, filepath.Join(dir, "segment.bin"))
	os.WriteFile(filepath.Join(dir, "passwd"), []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	part := filepath.Join(dir, "t-0")
	os.Mkdir(part, 0o755)
	copyFile(t, good, filepath.Join(part, "00000000000000000000.log"))
	os.WriteFile(filepath.Join(part, "notes.txt"), []byte("hello"), 0o644)
	badBytes, _ := os.ReadFile(badCRC)
	goodBytes, _ := os.ReadFile(good)

	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		has   string // in stdout+stderr
	}{
		{"renamed segment is read", "", []string{"verify", filepath.Join(dir, "x.log")}, ExitFindings, "crc-mismatch"},
		{"renamed clean segment", "", []string{"verify", filepath.Join(dir, "renamed.log")}, ExitOK, "ok (4 batches"},
		{"swap file is a segment", "", []string{"verify", filepath.Join(dir, "00000000000000000000.log.swap")}, ExitFindings, "crc-mismatch"},
		{"deleted file is a segment", "", []string{"verify", filepath.Join(dir, "00000000000000000000.log.deleted")}, ExitFindings, "crc-mismatch"},
		{"not a Kafka file", "", []string{"verify", filepath.Join(dir, "passwd")}, ExitTrouble, "not a Kafka file"},
		{"no Kafka name, a segment's content", "", []string{"verify", filepath.Join(dir, "segment.bin")}, ExitFindings, "crc-mismatch"},
		{"stdin corrupt", string(badBytes), []string{"verify", "-"}, ExitFindings, "-: 1 problem"},
		{"stdin clean", string(goodBytes), []string{"verify", "-"}, ExitOK, "-: ok"},
		{"stdin not a Kafka file", "root:x:0:0:root:/root:/bin/bash\n", []string{"verify", "-"}, ExitTrouble, "-: error: not a Kafka file: the first bytes do not start a segment: magic 47 at byte 16"},
		{"stdin not a Kafka file, JSON", "root:x:0:0:root:/root:/bin/bash\n", []string{"verify", "--json", "-"}, ExitTrouble, `"path":"-","fileKind":"unknown"`},
		{"stdin empty is an empty segment", "", []string{"verify", "-"}, ExitOK, "-: ok (0 batches"},
		{"stdin cut inside the first header", string(goodBytes[:10]), []string{"verify", "-"}, ExitFindings, "truncated at position 0"},
		{"stdin bad CRC in the first batch", string(badBytes), []string{"verify", "-"}, ExitFindings, "crc-mismatch at position 0"},
		{"/dev/stdin is not a regular file", "", []string{"verify", "/dev/stdin"}, ExitTrouble, "not a regular file"},
		{"empty directory", "", []string{"verify", filepath.Join(dir, "empty")}, ExitTrouble, "holds no Kafka file"},
		{"unknown file listed as ignored", "", []string{"verify", part}, ExitOK, "notes.txt: ignored (not a Kafka file)"},
		{"ignored in JSON", "", []string{"verify", "--json", part}, ExitOK, `"ignored":"not a Kafka file"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := prodRun(t, c.stdin, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
			if !strings.Contains(out+errs, c.has) {
				t.Errorf("output lacks %q:\n%s%s", c.has, out, errs)
			}
		})
	}
}

// TestDumpNeverSilentOK: the same rules for dump, within Kafka's output.
func TestDumpNeverSilentOK(t *testing.T) {
	dir := t.TempDir()
	good := segments(t, "kafka-written", "v2-none", "00000000000000000000.log")
	goodBytes, _ := os.ReadFile(good)
	copyFile(t, good, filepath.Join(dir, "renamed.log"))
	os.WriteFile(filepath.Join(dir, "passwd"), []byte("root:x:0:0\n"), 0o644)
	part := filepath.Join(dir, "t-0")
	os.Mkdir(part, 0o755)
	copyFile(t, good, filepath.Join(part, "00000000000000000000.log"))
	os.WriteFile(filepath.Join(part, "notes.txt"), []byte("hello"), 0o644)
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		has   string
	}{
		{"missing path", "", []string{"dump", "/no/such/path"}, ExitTrouble, "no such file"},
		{"not a Kafka file", "", []string{"dump", filepath.Join(dir, "passwd")}, ExitTrouble, "not a Kafka file"},
		{"not a Kafka file, JSON", "", []string{"dump", "--json", filepath.Join(dir, "passwd")}, ExitTrouble, `"ignored":true,"error":"not a Kafka file"`},
		{"renamed segment", "", []string{"dump", filepath.Join(dir, "renamed.log")}, ExitOK, "Log starting offset: unknown"},
		{"stdin", string(goodBytes), []string{"dump", "-"}, ExitOK, "baseOffset: 0 lastOffset: 3"},
		{"stdin not a Kafka file", "root:x:0:0:root:/root:/bin/bash\n", []string{"dump", "-"}, ExitTrouble, "klog: dump: -: not a Kafka file: the first bytes do not start a segment"},
		{"stdin not a Kafka file, JSON", "root:x:0:0:root:/root:/bin/bash\n", []string{"dump", "--json", "-"}, ExitTrouble, `{"type":"file","path":"-","ignored":true,"error":"not a Kafka file: `},
		{"stdin empty", "", []string{"dump", "-"}, ExitOK, "Log starting offset: unknown"},
		{"unknown file in a directory is listed", "", []string{"dump", part}, ExitOK, "Ignoring unknown file " + filepath.Join(part, "notes.txt")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := prodRun(t, c.stdin, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, clip(out), errs)
			}
			if !strings.Contains(out+errs, c.has) {
				t.Errorf("output lacks %q:\n%s%s", c.has, clip(out), errs)
			}
		})
	}
}

// TestExitCodeTable is the README's exit-code table, row by row.
func TestExitCodeTable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	cases := []struct {
		name string
		err  error
		code int
	}{
		{"clean", nil, 0},
		{"findings", &exitError{code: ExitFindings}, 1},
		{"offset out of range (fetch)", wrap(fetch.ErrOffsetOutOfRange), 1},
		{"offset out of range (find)", wrap(inspect.ErrOffsetOutOfRange), 1},
		{"fenced producer", wrap(&produce.FencedError{ProducerID: 1, Epoch: 0, Current: 1}), 1},
		{"invalid tail", wrap(&produce.InvalidTailError{}), 1},
		{"broker lock held", wrap(&safeio.BrokerLockError{Path: "/d/.lock"}), 2},
		{"partition lock held", wrap(produce.ErrLocked), 2},
		{"usage", usageError("bad flag"), 2},
		{"I/O", wrap(os.ErrPermission), 2},
		{"SIGINT", &signalError{sig: syscall.SIGINT}, 130},
		{"SIGTERM", &signalError{sig: syscall.SIGTERM}, 143},
	}
	for _, c := range cases {
		if got := exitCode(c.err); got != c.code {
			t.Errorf("%s: exitCode = %d, want %d", c.name, got, c.code)
		}
	}
	// And through the commands.
	dir := t.TempDir()
	part := filepath.Join(dir, "t-0")
	if code, _, errs := prodRun(t, "a\nb\n", "produce", "--log", part); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, errs)
	}
	corrupt := func(name string) string { return segments(t, "kafka-written", "derived-corrupt", name) }
	clean := segments(t, "kafka-written", "v2-none")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"fetch", "--log", part, "--offset", "99"}, ExitFindings},
		{[]string{"find", "--offset", "99", part}, ExitFindings},
		// The views: what they see wrong in the data is a finding.
		{[]string{"segments", corrupt("truncated-tail")}, ExitFindings},
		{[]string{"segments", corrupt("bad-crc-none")}, ExitFindings},
		{[]string{"segments", clean}, ExitOK},
		{[]string{"stats", corrupt("bad-crc-none")}, ExitFindings},
		{[]string{"stats", corrupt("truncated-tail")}, ExitFindings},
		{[]string{"stats", clean}, ExitOK},
		{[]string{"find", "--offset", "0", corrupt("bad-crc-none")}, ExitFindings},
		{[]string{"find", "--offset", "0", clean}, ExitOK},
		{[]string{"offsets", corrupt("bad-crc-none")}, ExitOK}, // judges no data
	} {
		if code, _, errs := prodRun(t, "", c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.code, errs)
		}
	}
	if code, _, _ := prodRun(t, "x\n", "produce", "--log", part, "--producer-id", "7", "--producer-epoch", "3"); code != 0 {
		t.Fatalf("produce epoch 3: exit %d", code)
	}
	if code, _, errs := prodRun(t, "x\n", "produce", "--log", part, "--producer-id", "7", "--producer-epoch", "2"); code != ExitFindings ||
		!strings.HasPrefix(errs, "klog: produce: producer 7 epoch 2 is older") {
		t.Errorf("fenced producer: exit %d, want 1, one prefix: %s", code, errs)
	}
	// Fenced by leader epoch (FENCED_LEADER_EPOCH) is the same answer.
	if code, _, errs := prodRun(t, "x\n", "produce", "--log", part, "--leader-epoch", "5"); code != 0 {
		t.Fatalf("produce leader epoch 5: exit %d: %s", code, errs)
	}
	if code, _, errs := prodRun(t, "x\n", "produce", "--log", part, "--leader-epoch", "4"); code != ExitFindings {
		t.Errorf("fenced leader epoch: exit %d, want 1: %s", code, errs)
	}
}

// TestSignals: SIGINT and SIGTERM stop a long dump or verify by themselves
// (not by the fallback exit), with exit 130 or 143, whole lines on stdout
// and a note that the output is partial. The signal comes while klog is
// writing, whatever the machine's load: after its first line, with the
// pipe left full.
func TestSignals(t *testing.T) {
	dir, bin := subprocessDir(t, "klog-signals-")
	part := filepath.Join(dir, "t-0")
	os.Mkdir(part, 0o755)
	bomb, err := hostile.OffsetDeltaBomb(4_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(part, "00000000000000000000.log"), bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	// verify prints a line per file: a log dir of more files than a pipe
	// holds lines keeps it writing when the signal comes.
	many := filepath.Join(dir, "many")
	for p := range 40 {
		pd := filepath.Join(many, "t-"+strconv.Itoa(p))
		os.MkdirAll(pd, 0o755)
		for s := range 100 {
			os.WriteFile(filepath.Join(pd, partition.FileName(int64(s)*10, partition.LogSuffix)), nil, 0o644)
		}
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		args []string
	}{
		{syscall.SIGINT, 130, []string{"dump", "--deep-iteration", part}},
		{syscall.SIGTERM, 143, []string{"dump", "--json", "--deep-iteration", part}},
		{syscall.SIGINT, 130, []string{"verify", many}},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), "KLOG_SIGNAL_GRACE=5m", "KLOG_SIGNAL_ACK=1")
		stdout, _ := cmd.StdoutPipe()
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// stderr is read as it comes: klog's "signal received" says its
		// context is cancelled.
		var errb strings.Builder
		acked, errDone := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(errDone)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				errb.WriteString(sc.Text() + "\n")
				if sc.Text() == "klog: signal received" {
					close(acked)
				}
			}
		}()
		// The first line says klog is running with its handlers; not
		// reading further holds it on a full pipe, so it is still
		// running when the signal comes, however loaded the machine. It
		// is let go on only once the signal has reached its context:
		// before, it could finish the last files in the time the runtime
		// took to deliver the signal, and exit 0.
		br := bufio.NewReader(stdout)
		first, err := br.ReadBytes('\n')
		if err != nil {
			<-errDone // stdout ended: klog is gone, and its stderr with it
			t.Fatalf("%v: no output: %v\n%s", c.args, err, errb.String())
		}
		hang := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }) // not stopping at all
		cmd.Process.Signal(c.sig)
		select {
		case <-acked:
		case <-errDone:
			t.Fatalf("%v: stderr closed before klog said the signal was received", c.args)
		}
		rest, _ := io.ReadAll(br)
		out := append(first, rest...)
		<-errDone
		cmd.Wait()
		if !hang.Stop() {
			t.Fatalf("%v: still running two minutes after %v", c.args, c.sig)
		}
		if code := cmd.ProcessState.ExitCode(); code != c.code {
			t.Errorf("%v after %v: exit %d, want %d\n%s", c.args, c.sig, code, c.code, errb.String())
		}
		if strings.Contains(errb.String(), "did not stop") {
			t.Errorf("%v: stopped by the fallback, not by itself", c.args)
		}
		if len(out) > 0 && out[len(out)-1] != '\n' {
			t.Errorf("%v: stdout ends inside a line: %q", c.args, out[max(0, len(out)-80):])
		}
		if c.args[1] == "--json" && !strings.HasSuffix(string(out), `{"type":"interrupted","reason":"terminated (SIGTERM)"}`+"\n") {
			t.Errorf("%v: the NDJSON stream does not end with a partial marker: %q", c.args, out[max(0, len(out)-120):])
		}
		if !strings.Contains(errb.String(), "output is partial") {
			t.Errorf("%v: stderr does not say the output is partial: %s", c.args, errb.String())
		}
	}
}

// TestSignalsStdinOpen: verify -, dump - and produce waiting on a stdin
// that stays open (a pipe whose writer never closes it, a terminal) stop on SIGINT or
// SIGTERM at once, not through the fallback exit 0.8 s later: exit 130 or
// 143, the "output is partial" note, and dump --json's interrupted marker.
// Before, the read of stdin did not see the signal and the fallback exit
// ("did not stop within a second") ended the process after 808 ms.
func TestSignalsStdinOpen(t *testing.T) {
	dir, bin := subprocessDir(t, "klog-signals-stdin-")
	seg, err := os.ReadFile(segments(t, "kafka-written", "v2-none", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
		tty  bool   // stdin is a terminal, not a pipe
		head []byte // written to stdin before it stalls
		args []string
	}{
		{"verify, nothing written", syscall.SIGINT, 130, false, nil, []string{"verify", "-"}},
		{"verify --json, a segment written", syscall.SIGTERM, 143, false, seg, []string{"verify", "--json", "-"}},
		{"dump, half a segment written", syscall.SIGINT, 130, false, seg[:len(seg)/2], []string{"dump", "-"}},
		{"dump --json, nothing written", syscall.SIGTERM, 143, false, nil, []string{"dump", "--json", "-"}},
		{"verify on a terminal", syscall.SIGINT, 130, true, nil, []string{"verify", "-"}},
		{"produce, a record written", syscall.SIGTERM, 143, false, []byte("a\n"), []string{"produce", "--log", filepath.Join(dir, "p-0")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A signal before klog's handlers are in place kills it (the
			// machine started it late): then again, waiting longer.
			for wait := 500 * time.Millisecond; ; wait *= 2 {
				cmd := exec.Command(bin, c.args...)
				cmd.Env = append(os.Environ(), "KLOG_SIGNAL_GRACE=5m")
				var stdin io.WriteCloser
				if c.tty {
					ptmx, tty, err := pty.Open()
					if err != nil {
						t.Skipf("no pseudo-terminal: %v", err)
					}
					defer ptmx.Close()
					defer tty.Close()
					cmd.Stdin = tty
				} else {
					if stdin, err = cmd.StdinPipe(); err != nil {
						t.Fatal(err)
					}
					defer stdin.Close() // only after the process is gone
				}
				var out, errb strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if len(c.head) > 0 {
					stdin.Write(c.head)
				}
				time.Sleep(wait) // klog is waiting on stdin
				sent := time.Now()
				cmd.Process.Signal(c.sig)
				cmd.Wait()
				took := time.Since(sent)
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && wait < 16*time.Second {
					t.Logf("the signal came %v after the start, before klog's handlers: again", wait)
					continue
				}
				if code := cmd.ProcessState.ExitCode(); code != c.code {
					t.Errorf("exit %d, want %d\n%s", code, c.code, errb.String())
				}
				if strings.Contains(errb.String(), "did not stop") {
					t.Errorf("stopped %v after the signal by the fallback, not by itself:\n%s", took, errb.String())
				}
				if !strings.Contains(errb.String(), "the output is partial") {
					t.Errorf("stderr does not say the output is partial: %s", errb.String())
				}
				if c.args[1] == "--json" && c.args[0] == "dump" && !strings.HasSuffix(out.String(), `{"type":"interrupted","reason":"terminated (SIGTERM)"}`+"\n") {
					t.Errorf("the NDJSON stream does not end with the interrupted marker: %q", out.String())
				}
				t.Logf("stopped %v after the signal", took)
				break
			}
		})
	}
}

// lockHelper holds a POSIX record lock on path (as a broker's
// FileChannel.tryLock does) until its stdin closes.
func lockHelper(path string) int {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// TestBrokerLockRefused: with another process holding the log directory's
// .lock the way a broker does, every writer refuses with exit 2 and names
// the lock; readers still read.
func TestBrokerLockRefused(t *testing.T) {
	logDir := t.TempDir()
	part := filepath.Join(logDir, "t-0")
	if code, _, errs := prodRun(t, "a\n", "produce", "--log", part); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, errs)
	}
	if err := safeio.CheckBrokerLock(logDir); err != nil {
		t.Fatalf("no lock held yet: %v", err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "KLOG_LOCK_HELPER="+filepath.Join(logDir, ".lock"))
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("lock helper: %q", line)
	}
	for _, args := range [][]string{
		{"produce", "--log", part},
		{"recover", "--output", filepath.Join(logDir, "t-1"), part},
	} {
		code, _, errs := prodRun(t, "b\n", args...)
		if code != ExitTrouble || !strings.Contains(errs, ".lock is locked by a running broker") {
			t.Errorf("%v: exit %d, want 2 naming the broker's lock: %s", args, code, errs)
		}
	}
	if code, _, errs := prodRun(t, "", "verify", part); code != 0 {
		t.Errorf("verify under a broker lock: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(logDir, "t-1")); err == nil {
		t.Errorf("recover --output wrote under the broker's lock")
	}
}

// TestWritersRefuseSymlinks: produce never writes through a symlinked
// index or log, recover --output never copies a symlink's target, and
// recovered files keep their source's permissions.
func TestWritersRefuseSymlinks(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "t-0")
	if code, _, errs := prodRun(t, "a\nb\n", "produce", "--log", part); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, errs)
	}
	outside := filepath.Join(dir, "precious")
	os.WriteFile(outside, []byte("do not touch, not an index"), 0o600)
	idx := filepath.Join(part, "00000000000000000000.index")
	os.Remove(idx)
	if err := os.Symlink(outside, idx); err != nil {
		t.Fatal(err)
	}
	code, _, errs := prodRun(t, "c\n", "produce", "--log", part)
	if code != ExitTrouble || !strings.Contains(errs, "symlink") {
		t.Errorf("produce through a symlinked .index: exit %d, want 2 naming the symlink: %s", code, errs)
	}
	if data, _ := os.ReadFile(outside); string(data) != "do not touch, not an index" {
		t.Errorf("the symlink's target changed: %q", data)
	}
	// recover --output: a symlinked .log is refused, not copied.
	part2 := filepath.Join(dir, "u-0")
	if code, _, errs := prodRun(t, "a\n", "produce", "--log", part2); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, errs)
	}
	log := filepath.Join(part2, "00000000000000000000.log")
	data, _ := os.ReadFile(log)
	os.WriteFile(log, append(data, 1, 2, 3), 0o600) // a tail to cut: recovery changes something
	os.Chmod(log, 0o600)
	if code, _, errs := prodRun(t, "", "recover", "--output", filepath.Join(dir, "u-out"), part2); code == ExitTrouble {
		t.Fatalf("recover --output: exit 2: %s", errs)
	}
	st, err := os.Stat(filepath.Join(dir, "u-out", "00000000000000000000.log"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("recovered .log mode %v (%v), want the source's 0600", st.Mode().Perm(), err)
	}
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, data, 0o600)
	os.Remove(log)
	os.Symlink(secret, log)
	code, _, errs = prodRun(t, "", "recover", "--output", filepath.Join(dir, "u-out2"), part2)
	if code != ExitTrouble {
		t.Errorf("recover --output of a symlinked .log: exit %d, want 2: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "u-out2", "00000000000000000000.log")); err == nil {
		t.Errorf("recover --output copied a symlink's target")
	}
}

var _ = errors.New

// TestFetchEdges: --max-bytes 0 returns the first batch whole (KIP-74);
// --follow honours --json, --offset overrides the commit and --reset none
// refuses to start without one.
func TestFetchEdges(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "t-0")
	for _, v := range []string{"a\nb\n", "c\n"} {
		if code, _, errs := prodRun(t, v, "produce", "--log", part, "--batch-records", "2"); code != 0 {
			t.Fatalf("produce: exit %d: %s", code, errs)
		}
	}
	code, out, errs := prodRun(t, "", "fetch", "--log", part, "--max-bytes", "0", "--json")
	if code != 0 || !strings.Contains(out, `"offset":0`) || !strings.Contains(out, `"offset":1`) || strings.Contains(out, `"offset":2`) {
		t.Errorf("--max-bytes 0: exit %d, want the first batch (offsets 0-1) only:\n%s%s", code, out, errs)
	}
	code, out, _ = prodRun(t, "", "fetch", "--log", part, "--max-bytes", "0", "--min-one-message=false", "--json")
	if code != 0 || strings.Contains(out, `"offset":`) {
		t.Errorf("--max-bytes 0 without KIP-74: exit %d, want no records:\n%s", code, out)
	}
	code, out, errs = prodRun(t, "", "fetch", "--log", part, "--follow", "--group", "g", "--json", "--timeout", "300ms")
	if code != 0 {
		t.Fatalf("follow: exit %d: %s", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, `{"type":`) {
			t.Errorf("follow --json: not a typed JSON object: %q", line)
		}
	}
	if !strings.Contains(out, `{"type":"consumerPosition","position":3,"highWatermark":3,"lag":0}`) {
		t.Errorf("follow --json: no position object:\n%s", out)
	}
	// The commit is at 3; --offset 1 overrides it.
	code, out, _ = prodRun(t, "", "fetch", "--log", part, "--follow", "--group", "g", "--offset", "1", "--json", "--timeout", "300ms")
	if code != 0 || !strings.Contains(out, `"type":"record","offset":1`) {
		t.Errorf("--offset 1 over a commit at 3: exit %d:\n%s", code, out)
	}
	code, _, errs = prodRun(t, "", "fetch", "--log", part, "--follow", "--group", "new", "--reset", "none", "--timeout", "300ms")
	if code != ExitTrouble || !strings.Contains(errs, "no committed offset") {
		t.Errorf("--reset none without a commit: exit %d: %s", code, errs)
	}
}

// TestVerifyPipe: cat seg.log | klog verify /dev/stdin reads the pipe as a
// segment (it used to say "ok" about bytes it never read).
func TestVerifyPipe(t *testing.T) {
	bin := klogBinary(t, "")
	bad, err := os.ReadFile(segments(t, "kafka-written", "derived-corrupt", "bad-crc-none", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "verify", "/dev/stdin")
	cmd.Stdin = strings.NewReader(string(bad))
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitFindings || !strings.Contains(string(out), "/dev/stdin: 1 problem") {
		t.Errorf("verify /dev/stdin on a pipe: exit %d, want 1 with the CRC finding:\n%s", code, out)
	}
}

// fullWriter is stdout on a full disk: every write fails.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutWriteError: when the data cannot be written to stdout (a full
// disk, /dev/full) no command exits 0 or 1 as if the caller had it: exit
// 2, one line naming the command and the error. offsets, recover, fetch,
// produce, replicate and version exited 0 with their output lost.
func TestStdoutWriteError(t *testing.T) {
	clean := segments(t, "kafka-written", "v2-none")
	corrupt := segments(t, "kafka-written", "derived-corrupt", "bad-crc-none")
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"offsets", "", []string{"offsets", clean}},
		{"offsets json", "", []string{"offsets", "--json", clean}},
		{"recover", "", []string{"recover", clean}},
		{"recover json", "", []string{"recover", "--json", clean}},
		{"fetch", "", []string{"fetch", clean}},
		{"fetch follow", "", []string{"fetch", clean, "--follow", "--timeout", "1s"}},
		{"produce acks", "a\nb\n", []string{"produce", filepath.Join(dir, "t-0")}},
		{"replicate", "", []string{"replicate", "--dir", filepath.Join(dir, "r"), "--records", "2", "--step"}},
		{"version", "", []string{"version"}},
		{"help", "", []string{"help", "dump"}},
		{"verify", "", []string{"verify", clean}},
		{"verify findings", "", []string{"verify", corrupt}}, // findings and I/O trouble together: 2
		{"dump", "", []string{"dump", clean}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var errw strings.Builder
			code := run(context.Background(), append([]string{"klog"}, c.args...), strings.NewReader(c.stdin), fullWriter{}, &errw)
			if code != ExitTrouble {
				t.Errorf("exit %d, want 2; stderr: %s", code, errw.String())
			}
			if !strings.Contains(errw.String(), "klog: "+c.args[0]+": ") || !strings.Contains(errw.String(), "no space left on device") {
				t.Errorf("stderr does not name the command and the write error: %q", errw.String())
			}
		})
	}
}

// TestFollowersStopOnSignal: tail and fetch --follow are stopped by a
// signal as their normal end: 130/143 as the exit-code table says, and
// stderr says they stopped following, not that the output is partial.
func TestFollowersStopOnSignal(t *testing.T) {
	dir, bin := subprocessDir(t, "klog-follow-")
	part := filepath.Join(dir, "t-0")
	produce := exec.Command(bin, "produce", part)
	produce.Stdin = strings.NewReader("a\nb\n")
	if out, err := produce.CombinedOutput(); err != nil {
		t.Fatalf("produce: %v\n%s", err, out)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		args []string
	}{
		{syscall.SIGINT, 130, []string{"tail", part}},
		{syscall.SIGTERM, 143, []string{"tail", "--json", part}},
		{syscall.SIGINT, 130, []string{"fetch", "--follow", part}},
	} {
		cmd := exec.Command(bin, c.args...)
		cmd.Env = append(os.Environ(), "KLOG_SIGNAL_GRACE=5m")
		stdout, _ := cmd.StdoutPipe()
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Following once it has printed what is there: its first line.
		br := bufio.NewReader(stdout)
		first, _ := br.ReadBytes('\n')
		hang := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }) // not stopping at all
		cmd.Process.Signal(c.sig)
		rest, _ := io.ReadAll(br)
		out := string(first) + string(rest)
		cmd.Wait()
		if !hang.Stop() {
			t.Fatalf("%v: still running two minutes after %v", c.args, c.sig)
		}
		if code := cmd.ProcessState.ExitCode(); code != c.code {
			t.Errorf("%v after %v: exit %d, want %d\n%s", c.args, c.sig, code, c.code, errb.String())
		}
		if !strings.Contains(errb.String(), "stopped following") || strings.Contains(errb.String(), "partial") {
			t.Errorf("%v: stderr %q, want it to say it stopped following (and not partial)", c.args, errb.String())
		}
		if len(out) == 0 {
			t.Errorf("%v: printed nothing before the signal", c.args)
		}
	}
}

// subprocessDir is a world-readable temporary directory for a test that runs
// the klog binary as a subprocess, removed at the end, and the binary.
func subprocessDir(t *testing.T, prefix string) (dir, bin string) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return dir, klogBinary(t, dir)
}
