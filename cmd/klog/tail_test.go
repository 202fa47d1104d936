package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/jsoncontract"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// tailWait bounds each wait for an output line.
const tailWait = 10 * time.Second

// liveKlog is a klog run in the background whose stdout is read line by
// line as it is written.
type liveKlog struct {
	t      *testing.T
	lines  chan string
	seen   []string
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned; code is then set
	code   int
	stderr bytes.Buffer
}

func startKlog(t *testing.T, args ...string) *liveKlog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	k := &liveKlog{t: t, lines: make(chan string, 4096), cancel: cancel, done: make(chan struct{})}
	go func() {
		k.code = run(ctx, append([]string{"klog"}, args...), strings.NewReader(""), pw, &k.stderr)
		pw.Close()
		close(k.done)
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			k.lines <- sc.Text()
		}
		close(k.lines)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-k.done:
		case <-time.After(tailWait):
			t.Error("klog tail did not stop")
		}
	})
	return k
}

// line waits for the next line containing all of subs and returns it.
func (k *liveKlog) line(subs ...string) string {
	k.t.Helper()
	deadline := time.After(tailWait)
	for {
		select {
		case l, ok := <-k.lines:
			if !ok {
				k.t.Fatalf("output ended before a line with %q; got:\n%s\nstderr: %s", subs, strings.Join(k.seen, "\n"), k.stderr.String())
			}
			k.seen = append(k.seen, l)
			match := true
			for _, s := range subs {
				if !strings.Contains(l, s) {
					match = false
					break
				}
			}
			if match {
				return l
			}
		case <-deadline:
			k.t.Fatalf("no line with %q; got:\n%s", subs, strings.Join(k.seen, "\n"))
		}
	}
}

// stop interrupts klog (as Ctrl-C does) and returns its exit code.
func (k *liveKlog) stop() int {
	k.cancel()
	select {
	case <-k.done:
		for l := range k.lines {
			k.seen = append(k.seen, l)
		}
		return k.code
	case <-time.After(tailWait):
		k.t.Fatal("klog tail did not stop")
	}
	return -1
}

func tailAppender(t *testing.T, dir string, opts produce.Options) *produce.Appender {
	t.Helper()
	a, err := produce.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func appendValues(t *testing.T, a *produce.Appender, values ...string) produce.Result {
	t.Helper()
	b := &produce.Batch{}
	for _, v := range values {
		b.Records = append(b.Records, format.Record{Value: []byte(v)})
	}
	res, err := a.Append(b)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func writeCheckpoint(t *testing.T, logDir string, entries ...format.OffsetEntry) {
	t.Helper()
	tmp := filepath.Join(logDir, partition.ReplicationCheckpoint+".tmp")
	if err := os.WriteFile(tmp, format.AppendOffsetCheckpoint(nil, entries), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(logDir, partition.ReplicationCheckpoint)); err != nil {
		t.Fatal(err)
	}
}

// TestTailText follows one partition: the state with its gap, a new batch
// as kafka-dump-log prints it with its records, the log end offset and
// high watermark lines, and exit 0 on interrupt.
func TestTailText(t *testing.T) {
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-0")
	a := tailAppender(t, dir, produce.Options{})
	appendValues(t, a, "a", "b", "c")
	writeCheckpoint(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 0, Offset: 1})

	k := startKlog(t, "tail", "--print-data-log", dir)
	k.line("orders-0: logStartOffset: 0 logEndOffset: 3 highWatermark: 1 (2 records not yet visible to consumers) segments: 1 activeSegment: 00000000000000000000.log")
	done := make(chan produce.Result, 1)
	go func() { done <- appendValues(t, a, "hello", "world") }()
	res := <-done
	batch := k.line("orders-0: baseOffset: 3 lastOffset: 4 count: 2 ")
	k.line("orders-0: | offset: 3 CreateTime: ", "payload: hello")
	k.line("orders-0: | offset: 4 CreateTime: ", "payload: world")
	k.line("orders-0: logEndOffset: 3 -> 5 highWatermark: 1 (4 records not yet visible to consumers)")
	writeCheckpoint(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 0, Offset: 5})
	k.line("orders-0: highWatermark: 1 -> 5 logEndOffset: 5 (0 records not yet visible to consumers)")
	if code := k.stop(); code != ExitOK {
		t.Fatalf("exit %d on interrupt, stderr: %s", code, k.stderr.String())
	}

	// The batch line is kafka-dump-log's, as klog dump prints it.
	code, out, _ := klog(t, "dump", res.Segment)
	if code != ExitOK || !strings.Contains(out, strings.TrimPrefix(batch, "orders-0: ")+"\n") {
		t.Fatalf("tail's batch line %q is not in dump's output:\n%s", batch, out)
	}
}

// TestTailTextLifecycle: rolls, deletions, truncations and partitions
// appearing and disappearing each get their line.
func TestTailTextLifecycle(t *testing.T) {
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-0")
	a := tailAppender(t, dir, produce.Options{SegmentBytes: 200})
	appendValues(t, a, "first")
	k := startKlog(t, "tail", logDir)
	k.line("orders-0: logStartOffset: 0 logEndOffset: 1 highWatermark: unknown")

	var res []produce.Result
	for i := range 4 {
		res = append(res, appendValues(t, a, fmt.Sprintf("value-%d", i), "x"))
	}
	k.line("orders-0: segment rolled: ")
	a.Close()
	k.line("orders-0: logEndOffset: ", " -> 9 ")

	first := filepath.Join(dir, partition.FileName(0, partition.LogSuffix))
	if err := os.Rename(first, first+".deleted"); err != nil {
		t.Fatal(err)
	}
	k.line("orders-0: segment deleted: 00000000000000000000.log (renamed to 00000000000000000000.log.deleted) logStartOffset: ")

	last := res[len(res)-1]
	if err := os.Truncate(last.Segment, last.Position); err != nil {
		t.Fatal(err)
	}
	k.line("orders-0: truncated: "+filepath.Base(last.Segment)+" shrank from ", fmt.Sprintf(" to %d bytes, logEndOffset: 9 -> %d", last.Position, last.BaseOffset))

	other := filepath.Join(logDir, "orders-1")
	b := tailAppender(t, other, produce.Options{})
	appendValues(t, b, "new")
	b.Close()
	k.line("orders-1: partition appeared: ")
	k.line("orders-1: baseOffset: 0 lastOffset: 0 ")
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	k.line("orders-1: partition disappeared (last logEndOffset: 1)")
	if code := k.stop(); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
}

// TestTailJSON: one event object per line with the documented fields.
func TestTailJSON(t *testing.T) {
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-2")
	a := tailAppender(t, dir, produce.Options{})
	appendValues(t, a, "old")
	writeCheckpoint(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 2, Offset: 1})
	k := startKlog(t, "tail", "--json", "--from-beginning", "--print-data-log", dir)
	type ev struct {
		Type          string    `json:"type"`
		Time          time.Time `json:"time"`
		Topic         string    `json:"topic"`
		Partition     int32     `json:"partition"`
		LogEndOffset  int64     `json:"logEndOffset"`
		HighWatermark int64     `json:"highWatermark"`
		Gap           int64     `json:"gap"`
		BaseOffset    *int64    `json:"baseOffset"`
		Change        *struct{ From, To int64 }
		Offset        int64  `json:"offset"`
		Value         string `json:"value"`
	}
	parse := func(l string) ev {
		t.Helper()
		var e ev
		if err := jsoncontract.Line([]byte(l)); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if (e.Type != "record" && (e.Time.IsZero() || !strings.Contains(l, `Z"`))) || e.Topic != "orders" || e.Partition != 2 {
			t.Fatalf("line lacks a UTC time, topic or partition: %s", l)
		}
		return e
	}
	if e := parse(k.line(`"type":"batch"`)); e.BaseOffset == nil || *e.BaseOffset != 0 || e.LogEndOffset != 1 {
		t.Fatalf("replayed batch %+v", e)
	}
	if e := parse(k.line(`"type":"record"`)); e.Offset != 0 || string(e.Value) != "old" {
		t.Fatalf("record %+v", e)
	}
	if e := parse(k.line(`"type":"state"`)); e.LogEndOffset != 1 || e.HighWatermark != 1 || e.Gap != 0 {
		t.Fatalf("state %+v", e)
	}
	appendValues(t, a, "new")
	parse(k.line(`"type":"batch"`))
	if e := parse(k.line(`"type":"record"`)); e.Offset != 1 || string(e.Value) != "new" {
		t.Fatalf("record %+v", e)
	}
	if e := parse(k.line(`"type":"logEndOffset"`)); e.Change == nil || e.Change.From != 1 || e.Change.To != 2 || e.Gap != 1 {
		t.Fatalf("log end offset %+v", e)
	}
	writeCheckpoint(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 2, Offset: 2})
	if e := parse(k.line(`"type":"highWatermark"`)); e.HighWatermark != 2 || e.Gap != 0 {
		t.Fatalf("high watermark %+v", e)
	}
	if code := k.stop(); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
}

// TestTailTable: not a terminal, so plain snapshots (no ANSI codes), one
// row per partition; --timeout ends it with status 0.
func TestTailTable(t *testing.T) {
	logDir := t.TempDir()
	for p, n := range []int{3, 1} {
		a := tailAppender(t, filepath.Join(logDir, fmt.Sprintf("orders-%d", p)), produce.Options{})
		for range n {
			appendValues(t, a, "v")
		}
		a.Close()
	}
	writeCheckpoint(t, logDir, format.OffsetEntry{Topic: "orders", Partition: 0, Offset: 2})
	code, out, errs := klog(t, "tail", "--table", "--timeout", "300ms", logDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("ANSI codes in a snapshot:\n%s", out)
	}
	for _, want := range []string{"PARTITION", "LEO − HW", "BATCHES PER SEC"} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
	row := func(label string) []string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " "+label+" ") {
				return strings.Fields(strings.NewReplacer("│", " ", "|", " ").Replace(l))
			}
		}
		t.Fatalf("no row for %s in:\n%s", label, out)
		return nil
	}
	if r := row("orders-0"); len(r) < 4 || r[1] != "3" || r[2] != "2" || r[3] != "1" {
		t.Fatalf("orders-0 row %q", r)
	}
	if r := row("orders-1"); len(r) < 4 || r[1] != "1" || r[2] != "-" {
		t.Fatalf("orders-1 row %q", r)
	}
}

func TestTailUsage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		err  string
	}{
		{"no path", []string{"tail"}, "no PATH"},
		{"json and table", []string{"tail", "--json", "--table", dir}, "exclude each other"},
		{"flag after path", []string{"tail", dir, "--table", "--json"}, "exclude each other"},
		{"missing path", []string{"tail", filepath.Join(dir, "missing")}, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := klog(t, c.args...)
			if code != ExitTrouble || !strings.Contains(errs, c.err) || out != "" {
				t.Fatalf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errs, out, c.err)
			}
		})
	}
}
