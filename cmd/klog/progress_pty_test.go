package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/klog-dev/klog/internal/klogtest"
)

// TestProgressClearedBeforeOutput runs klog segments with stdout and
// stderr on one pseudo-terminal, as a person at a terminal has them: the
// progress bar is drawn while the partitions are read, and it is cleared
// ("\r", blanks, "\r") before each partition's lines, so that no title is
// glued to a bar and no bar is left on the screen.
func TestProgressClearedBeforeOutput(t *testing.T) {
	src := segments(t, "kafka-written", "unifiedlog-producer", "topic-0")
	logDir := t.TempDir()
	for _, p := range []string{"orders-0", "orders-1", "orders-2"} {
		klogtest.CopyPartition(t, src, filepath.Join(logDir, p))
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&screen, ptmx) // ends with EIO once the terminal closes
		close(done)
	}()
	t.Setenv("KLOG_PROGRESS_DELAY", "0s")
	t.Setenv("NO_COLOR", "1")
	code := run(context.Background(), []string{"klog", "segments", logDir}, strings.NewReader(""), tty, tty)
	tty.Close()
	<-done
	if code != ExitOK {
		t.Fatalf("exit %d:\n%q", code, screen.String())
	}
	out := screen.String()
	if !strings.Contains(out, "reading") {
		t.Fatalf("no progress bar was drawn:\n%q", out)
	}
	titles := regexp.MustCompile(`/\S*orders-\d \(topic orders, partition \d\): 3 segments`).FindAllStringIndex(out, -1)
	if len(titles) != 3 {
		t.Fatalf("%d titles:\n%q", len(titles), out)
	}
	cleared := regexp.MustCompile(`(\r {10,}\r|\x1b\[2K\r)(\r?\n)?$`)
	for _, at := range titles {
		before := out[:at[0]]
		// The last thing on the line before a title is a clear, or the
		// title starts a line no bar was drawn on.
		line := before[strings.LastIndex(before, "\n")+1:]
		if strings.Contains(line, "reading") && !cleared.MatchString(before) {
			t.Errorf("a title follows the bar without a clear:\n%q", before[max(0, len(before)-200):])
		}
		if !cleared.MatchString(before) && !strings.HasSuffix(before, "\n") {
			t.Errorf("a title glued to what came before:\n%q", before[max(0, len(before)-200):])
		}
	}
	// Nothing of the bar is left after the last line of output.
	tail := out[strings.LastIndex(out, "└"):]
	if i := strings.LastIndex(tail, "reading"); i >= 0 && !cleared.MatchString(tail[i:]) {
		t.Errorf("the bar is left on the screen:\n%q", tail)
	}
}
