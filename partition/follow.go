package partition

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Follower keeps Logs current while another process (a broker, klog
// produce) changes their directories: one Watcher over each Log's partition
// directory and its log directory, and one goroutine that, for each burst
// of events, reads again what they say changed (the bytes appended to the
// active segment; the segment list after a roll, a deletion or a
// truncation; leader-epoch-checkpoint; the log dir's
// replication-offset-checkpoint and log-start-offset-checkpoint, read once
// for all its partitions) and wakes the waiters of the Logs whose offsets
// moved, and only those. When the kernel drops events, every Log is read
// again.
//
// Errors the goroutine meets (the watcher's, a Log that cannot be read
// again) are sent on Errors, which must be drained; a Log that failed to
// refresh stays stale, so that its next read tries again and returns the
// error.
type Follower struct {
	w *Watcher

	mu      sync.Mutex
	byDir   map[string]*Log
	byLog   map[string][]*Log // log dir -> its followed partitions
	closed  bool
	errs    chan error
	done    chan struct{}
	pending map[*Log]stale
}

// NewFollower starts a Follower with nothing to follow yet.
func NewFollower() (*Follower, error) {
	w, err := NewWatcher(4096)
	if err != nil {
		return nil, err
	}
	f := &Follower{w: w, byDir: map[string]*Log{}, byLog: map[string][]*Log{}, errs: make(chan error, 16),
		done: make(chan struct{}), pending: map[*Log]stale{}}
	go f.run()
	return f, nil
}

// Add follows l: its directory and its log directory are watched, then l is
// read again, so that nothing written before the watch started is missed.
func (f *Follower) Add(l *Log) error {
	dir := filepath.Clean(l.path)
	logDir := filepath.Dir(dir)
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return errors.New("partition: follower closed")
	}
	if f.byDir[dir] != nil {
		f.mu.Unlock()
		return nil
	}
	for _, d := range []string{logDir, dir} {
		if err := f.w.Add(d); err != nil {
			f.mu.Unlock()
			return err
		}
	}
	f.byDir[dir] = l
	f.byLog[logDir] = append(f.byLog[logDir], l)
	f.mu.Unlock()
	l.mu.Lock()
	l.followed = true
	l.mu.Unlock()
	return l.Refresh()
}

// Remove stops following l.
func (f *Follower) Remove(l *Log) {
	dir := filepath.Clean(l.path)
	logDir := filepath.Dir(dir)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byDir[dir] != l {
		return
	}
	delete(f.byDir, dir)
	f.w.Remove(dir)
	ls := f.byLog[logDir]
	for i, x := range ls {
		if x == l {
			ls = append(ls[:i], ls[i+1:]...)
			break
		}
	}
	if len(ls) == 0 {
		delete(f.byLog, logDir)
		f.w.Remove(logDir)
	} else {
		f.byLog[logDir] = ls
	}
	l.mu.Lock()
	l.followed = false
	l.mu.Unlock()
}

// Errors receives what the Follower could not do; it is closed by Close.
func (f *Follower) Errors() <-chan error { return f.errs }

// Close stops the Follower and its watcher.
func (f *Follower) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	err := f.w.Close()
	<-f.done
	return err
}

func (f *Follower) run() {
	defer close(f.done)
	defer close(f.errs)
	events, errs := f.w.Events(), f.w.Errors()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			f.note(ev)
		case err, ok := <-errs:
			if !ok {
				return
			}
			f.noteErr(err)
		}
		// Take what else is queued, so that a burst costs one read per
		// partition.
	drain:
		for range 4096 {
			select {
			case ev, ok := <-events:
				if !ok {
					break drain
				}
				f.note(ev)
			case err, ok := <-errs:
				if !ok {
					break drain
				}
				f.noteErr(err)
			default:
				break drain
			}
		}
		f.flush()
	}
}

func (f *Follower) report(err error) {
	select {
	case f.errs <- err:
	default: // a reader that does not drain loses errors, not events
	}
}

func (f *Follower) noteErr(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		f.report(err)
	}
	// Events were lost, or may have been: read everything again.
	f.mu.Lock()
	for _, l := range f.byDir {
		f.pending[l] |= staleAll
	}
	f.mu.Unlock()
}

// note records what one event says changed.
func (f *Follower) note(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod || ev.Op == 0 {
		return
	}
	name := filepath.Clean(ev.Name)
	dir, base := filepath.Dir(name), filepath.Base(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if l := f.byDir[name]; l != nil {
		// The partition directory itself went or was renamed.
		f.pending[l] |= staleList
		return
	}
	if l := f.byDir[dir]; l != nil {
		switch _, suffix, ok := ParseFileName(base); {
		case base == LeaderEpochCheckpoint:
			f.pending[l] |= staleEpochs
		case !ok || !strings.HasPrefix(suffix, LogSuffix):
			// indexes, snapshots, partition.metadata, temporary files
		case suffix == LogSuffix && ev.Op == fsnotify.Write:
			f.pending[l] |= staleData
		default:
			f.pending[l] |= staleList
		}
		return
	}
	if base == ReplicationCheckpoint || base == LogStartCheckpoint {
		for _, l := range f.byLog[dir] {
			f.pending[l] |= staleCheckpoints
		}
	}
}

// flush reads again what the events said, and wakes the waiters of the
// Logs whose offsets moved.
func (f *Follower) flush() {
	f.mu.Lock()
	work := f.pending
	f.pending = map[*Log]stale{}
	f.mu.Unlock()
	// A log dir's checkpoints are read once for all its partitions.
	type checkpoints struct{ hw, start map[TopicPartition]int64 }
	byLogDir := map[string]*checkpoints{}
	for l, st := range work {
		var c *checkpoints
		if st&staleCheckpoints != 0 {
			logDir := filepath.Dir(filepath.Clean(l.path))
			if c = byLogDir[logDir]; c == nil {
				c = &checkpoints{}
				c.hw, _ = HighWatermarks(logDir)
				c.start, _ = CheckpointOffsets(logDir, LogStartCheckpoint)
				byLogDir[logDir] = c
			}
		}
		l.mu.Lock()
		if l.writer {
			l.mu.Unlock()
			continue
		}
		before := l.mark()
		l.stale |= st &^ staleCheckpoints
		if c != nil {
			l.applyCheckpoints(c.hw, c.start)
		}
		err := l.readyLocked()
		moved := l.mark() != before
		l.mu.Unlock()
		if err != nil {
			f.report(err)
		}
		if moved || err != nil {
			l.notify()
		}
	}
}
