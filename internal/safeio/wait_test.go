//go:build linux || darwin

package safeio

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestInterruptiblePipe: a read waiting on a pipe whose writer stays open
// returns the context's cause as soon as the context ends, data and EOF
// pass through unchanged, and release leaves no goroutine behind.
func TestInterruptiblePipe(t *testing.T) {
	before := runtime.NumGoroutine()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	cause := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	r, release := Interruptible(ctx, pr)
	if _, ok := r.(*waitReader); !ok {
		t.Fatalf("a pipe got %T, want the select-based reader", r)
	}
	pw.Write([]byte("abc"))
	buf := make([]byte, 8)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("Read = %q, %v", buf[:n], err)
	}
	got := make(chan error, 1)
	go func() { _, err := r.Read(buf); got <- err }()
	select {
	case err := <-got:
		t.Fatalf("Read returned %v with the writer open and no data", err)
	case <-time.After(50 * time.Millisecond):
	}
	sent := time.Now()
	cancel(cause)
	select {
	case err := <-got:
		if !errors.Is(err, cause) {
			t.Errorf("Read after cancel = %v, want the cause", err)
		}
		if took := time.Since(sent); took > 100*time.Millisecond {
			t.Errorf("Read returned %v after the cancel", took)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Read still waiting 2s after the cancel")
	}
	release()
	release() // twice is harmless
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after release, %d before", runtime.NumGoroutine(), before)
		}
		runtime.Gosched()
	}

	// Not cancelled: the reader reads to EOF as a plain read does.
	pr2, pw2, _ := os.Pipe()
	defer pr2.Close()
	r2, release2 := Interruptible(context.Background(), pr2)
	defer release2()
	go func() { pw2.Write([]byte("xyz")); pw2.Close() }()
	if data, err := io.ReadAll(r2); err != nil || string(data) != "xyz" {
		t.Errorf("ReadAll = %q, %v", data, err)
	}
}

// TestSpoolStdinSniff: the check sees the head and its error stops the
// spool before a file is made; a stream shorter than the head is judged on
// what it has; what passes is spooled whole.
func TestSpoolStdinSniff(t *testing.T) {
	bad := errors.New("not mine")
	var seen []byte
	check := func(h []byte) error {
		seen = append(seen[:0], h...)
		if len(h) > 0 && h[0] == 'x' {
			return bad
		}
		return nil
	}
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	defer pw.Close()
	// The writer stays open: the sniff must not wait for the whole stream.
	pw.Write([]byte("xxxxxxxx"))
	done := make(chan error, 1)
	go func() { _, _, err := SpoolStdin(context.Background(), pr, 4, check); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, bad) || string(seen) != "xxxx" {
			t.Errorf("SpoolStdin = %v after seeing %q, want the check's error after 4 bytes", err, seen)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SpoolStdin waited for the rest of a stream its check refused")
	}
	for _, in := range []string{"", "ab", "abcdefgh"} {
		r, w, _ := os.Pipe()
		go func() { w.Write([]byte(in)); w.Close() }()
		path, cleanup, err := SpoolStdin(context.Background(), r, 4, check)
		r.Close()
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		data, _ := os.ReadFile(path)
		cleanup()
		if string(data) != in || string(seen) != in[:min(4, len(in))] {
			t.Errorf("%q: spooled %q, check saw %q", in, data, seen)
		}
	}
}
