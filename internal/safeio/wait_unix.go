//go:build linux || darwin

package safeio

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// waitable returns a reader that waits for f with select(2) on f's
// descriptor and on the read end of a pipe whose write end is closed when
// ctx ends: the wait wakes at once then, with no goroutine left blocked in
// a read (the function context.AfterFunc runs only if ctx ends, and
// returns). ok is false for a regular file (its reads never wait) and for
// descriptors select cannot hold.
func waitable(ctx context.Context, f *os.File) (_ io.Reader, release func(), ok bool) {
	st, err := f.Stat()
	if err != nil || st.Mode().IsRegular() {
		return nil, nil, false
	}
	fd, ok := rawFd(f)
	if !ok {
		return nil, nil, false
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, false
	}
	wake, ok := rawFd(pr)
	if !ok || fd >= unix.FD_SETSIZE || wake >= unix.FD_SETSIZE {
		pr.Close()
		pw.Close()
		return nil, nil, false
	}
	stop := context.AfterFunc(ctx, func() { pw.Close() })
	w := &waitReader{ctx: ctx, f: f, fd: fd, wake: wake}
	return w, func() {
		stop()
		pw.Close()
		pr.Close()
	}, true
}

// rawFd is f's descriptor, read without f.Fd (which would switch f to
// blocking mode).
func rawFd(f *os.File) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if err := rc.Control(func(p uintptr) { fd = int(p) }); err != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

// waitReader reads f once select says it has input (or its end).
type waitReader struct {
	ctx      context.Context
	f        *os.File
	fd, wake int
}

func (w *waitReader) Read(p []byte) (int, error) {
	for {
		if w.ctx.Err() != nil {
			return 0, context.Cause(w.ctx)
		}
		var set unix.FdSet
		set.Set(w.fd)
		set.Set(w.wake)
		_, err := unix.Select(max(w.fd, w.wake)+1, &set, nil, nil, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue // the runtime's own signals
		case err != nil:
			return w.f.Read(p) // cannot wait: read as a plain read does
		case set.IsSet(w.wake):
			return 0, context.Cause(w.ctx)
		case set.IsSet(w.fd):
			return w.f.Read(p)
		}
	}
}

// Ready says a Read has input (or the end of it) to return without
// waiting: a writer that batches its output writes it before a read that
// would wait (package produce's Feed).
func (w *waitReader) Ready() bool {
	var set unix.FdSet
	set.Set(w.fd)
	var tv unix.Timeval
	n, err := unix.Select(w.fd+1, &set, nil, nil, &tv)
	return err == nil && n > 0 && set.IsSet(w.fd)
}
