package partition

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// Linux inotify limits (inotify(7)): watches and instances per user.
const (
	sysctlMaxWatches   = "fs.inotify.max_user_watches"
	sysctlMaxInstances = "fs.inotify.max_user_instances"
)

// WatchLimitError is inotify refusing a watch (ENOSPC: the user's
// fs.inotify.max_user_watches is used up; the tail needs one watch per
// partition directory and log directory) or a new instance (EMFILE:
// fs.inotify.max_user_instances, or the process's open file limit).
type WatchLimitError struct {
	// Path is the directory that could not be watched ("" for an instance).
	Path string
	// Sysctl names the limit; Limit is its value, -1 if unreadable.
	Sysctl string
	Limit  int
	// Watches is how many watches this tail held when it was refused.
	Watches int
	Err     error
}

func (e *WatchLimitError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString("cannot watch " + e.Path + ": ")
	} else {
		b.WriteString("cannot start an inotify instance: ")
	}
	b.WriteString("the inotify limit " + e.Sysctl)
	if e.Limit >= 0 {
		b.WriteString(" = " + strconv.Itoa(e.Limit))
	}
	b.WriteString(" is reached")
	if e.Sysctl == sysctlMaxWatches {
		b.WriteString(" (this tail holds " + strconv.Itoa(e.Watches) +
			" watches, one per partition and log directory; other processes of the same user hold the rest)")
	} else {
		b.WriteString(" (or the process's open file limit)")
	}
	suggest := 524288
	if e.Sysctl == sysctlMaxInstances {
		suggest = 1024
	}
	if e.Limit >= suggest {
		suggest = e.Limit * 2
	}
	b.WriteString("; raise it with: sysctl -w " + e.Sysctl + "=" + strconv.Itoa(suggest))
	return b.String()
}

func (e *WatchLimitError) Unwrap() error { return e.Err }

// readLimit reads an inotify limit from /proc/sys/fs/inotify, or -1.
func readLimit(sysctl string) int {
	data, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(sysctl, ".", "/"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return -1
	}
	return n
}

// watchError classifies an error from fsnotify's NewWatcher (path "") or
// Add (path the directory).
func watchError(path string, err error, held int) error {
	switch {
	case path != "" && errors.Is(err, syscall.ENOSPC):
		return &WatchLimitError{Path: path, Sysctl: sysctlMaxWatches, Limit: readLimit(sysctlMaxWatches), Watches: held, Err: err}
	case path == "" && errors.Is(err, syscall.EMFILE):
		return &WatchLimitError{Sysctl: sysctlMaxInstances, Limit: readLimit(sysctlMaxInstances), Watches: held, Err: err}
	case path == "":
		return fmt.Errorf("inotify: %w", err)
	}
	return &os.PathError{Op: "watch", Path: path, Err: err}
}

// Watcher is klog's one file system watcher (fsnotify: inotify on Linux,
// kqueue on the BSDs and macOS, ReadDirectoryChangesW on Windows): tail and
// fetch's long polls watch partition and log directories through it. It
// counts the directories it watches, so that running out of inotify
// watches is reported as a WatchLimitError that says which limit to raise.
type Watcher struct {
	w     *fsnotify.Watcher
	paths map[string]bool
}

// NewWatcher starts a watcher whose event queue holds buffer events (0: the
// unbuffered default), so a burst of kernel events can queue while one is
// handled.
func NewWatcher(buffer int) (*Watcher, error) {
	var w *fsnotify.Watcher
	var err error
	if buffer > 0 {
		w, err = fsnotify.NewBufferedWatcher(uint(buffer))
	} else {
		w, err = fsnotify.NewWatcher()
	}
	if err != nil {
		return nil, watchError("", err, 0)
	}
	return &Watcher{w: w, paths: map[string]bool{}}, nil
}

// Add watches directory path (idempotent).
func (w *Watcher) Add(path string) error {
	if w.paths[path] {
		return nil
	}
	if err := w.w.Add(path); err != nil {
		return watchError(path, err, len(w.paths))
	}
	w.paths[path] = true
	return nil
}

// Remove forgets path; the kernel has already dropped the watch of a
// deleted directory, so errors are ignored.
func (w *Watcher) Remove(path string) {
	if w.paths[path] {
		delete(w.paths, path)
		w.w.Remove(path)
	}
}

// Len is how many directories are watched.
func (w *Watcher) Len() int { return len(w.paths) }

// Events are the file system events; closed by Close.
func (w *Watcher) Events() <-chan fsnotify.Event { return w.w.Events }

// Errors are the watcher's errors (fsnotify.ErrEventOverflow when the
// kernel queue overflowed); closed by Close.
func (w *Watcher) Errors() <-chan error { return w.w.Errors }

// Close stops the watcher.
func (w *Watcher) Close() error { return w.w.Close() }
