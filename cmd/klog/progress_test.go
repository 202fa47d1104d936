package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runOnPTY runs the klog that testscript.Main put on $PATH with stderr (and
// with ptyStdout, stdout too) on a pseudo-terminal, and returns what the
// terminal showed and what went to a piped stdout.
func runOnPTY(t *testing.T, env []string, ptyStdout bool, args ...string) (term, stdout string) {
	t.Helper()
	bin, err := exec.LookPath("klog")
	if err != nil {
		t.Fatalf("klog not on PATH (set up by testscript.Main): %v", err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "KLOG_PROGRESS_DELAY=0s"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	if ptyStdout {
		cmd.Stdout = tty
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var shown bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&shown, ptmx); close(copied) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("klog did not finish")
	}
	select {
	case <-copied: // EIO once the last writer closed
	case <-time.After(10 * time.Second):
		t.Fatal("terminal output did not end")
	}
	return shown.String(), out.String()
}

// TestProgressOnATerminal: verify (and stats, segments, recover) shows a progress bar in bytes on a
// terminal stderr, and clears it; not when piped, not with --no-progress,
// not when --json goes to the same terminal; no colour with NO_COLOR.
func TestProgressOnATerminal(t *testing.T) {
	dir := segments(t, "kafka-written")
	term, out := runOnPTY(t, []string{"NO_COLOR="}, false, "verify", dir)
	if !strings.Contains(term, "verifying") || !strings.Contains(term, "KiB") {
		t.Errorf("no progress bar in bytes on the terminal:\n%q", term)
	}
	if i := strings.LastIndex(term, "verifying"); i < 0 || strings.TrimRight(term[i:], " \r") == term[i:] {
		t.Errorf("the bar is not cleared at the end:\n%q", term)
	}
	if !strings.Contains(term, "\x1b[36m") {
		t.Errorf("no colour without NO_COLOR:\n%q", term)
	}
	if !strings.Contains(out, "verified ") || strings.Contains(out, "verifying") {
		t.Errorf("stdout has no summary, or has the progress bar:\n%s", out)
	}

	for _, cmd := range []string{"stats", "segments"} {
		term, out := runOnPTY(t, nil, false, cmd, segments(t, "kafka-written", "unifiedlog-producer", "topic-0"))
		if !strings.Contains(term, "reading") || !strings.Contains(term, "KiB") || strings.Contains(out, "reading") {
			t.Errorf("%s: no progress bar on the terminal, or one on stdout:\n%q", cmd, term)
		}
	}

	// recover: a bar while the plan reads the segments, cleared before the
	// plan; none with --no-progress or with --json on the same terminal.
	part := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	term, out = runOnPTY(t, nil, false, "recover", part)
	if !strings.Contains(term, "planning") || !strings.Contains(term, "KiB") || !strings.Contains(out, ": keep (") || strings.Contains(out, "planning") {
		t.Errorf("recover: no progress bar on the terminal, or one on stdout:\n%q\nstdout:\n%s", term, out)
	}
	if term, _ := runOnPTY(t, nil, false, "recover", part, "--no-progress"); strings.Contains(term, "planning") {
		t.Errorf("recover: progress despite --no-progress:\n%q", term)
	}
	if term, _ := runOnPTY(t, nil, true, "recover", "--json", part); strings.Contains(term, "planning") || !strings.Contains(term, `"type":"recovery"`) {
		t.Errorf("recover: progress mixed into --json on the terminal, or no plan:\n%q", term)
	}

	// dump: a bar while the dump goes to a file or a pipe, none while it
	// goes to the terminal.
	log := segments(t, "kafka-written", "unifiedlog-producer", "topic-0", "00000000000000000000.log")
	log2 := segments(t, "kafka-written", "unifiedlog-producer", "topic-0", "00000000000000000016.log")
	term, out = runOnPTY(t, nil, false, "dump", "--deep-iteration", log, log2)
	if !strings.Contains(term, "dumping") || !strings.Contains(out, "Dumping") {
		t.Errorf("dump to a pipe: no bar on the terminal:\n%q", term)
	}
	term, _ = runOnPTY(t, nil, true, "dump", log)
	if strings.Contains(term, "dumping") {
		t.Errorf("dump to the terminal: a bar mixed into it:\n%q", term)
	}

	term, _ = runOnPTY(t, []string{"NO_COLOR=1"}, false, "verify", dir)
	if !strings.Contains(term, "verifying") || strings.Contains(term, "\x1b[36m") {
		t.Errorf("with NO_COLOR: want a bar without colour:\n%q", term)
	}

	term, _ = runOnPTY(t, nil, false, "verify", "--no-progress", dir)
	if strings.Contains(term, "verifying") {
		t.Errorf("progress despite --no-progress:\n%q", term)
	}

	term, _ = runOnPTY(t, nil, true, "verify", "--json", dir)
	if strings.Contains(term, "verifying") {
		t.Errorf("progress mixed into --json on the terminal:\n%q", term)
	}
}

// TestNoProgressWhenPiped: with stderr not a terminal there is no progress
// (in-process, stderr is a buffer).
func TestNoProgressWhenPiped(t *testing.T) {
	code, _, errs := klog(t, "verify", segments(t, "kafka-written"))
	if code == ExitTrouble || errs != "" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
