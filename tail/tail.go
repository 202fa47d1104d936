// Package tail watches Kafka partition directories live and reports what
// happens to them as typed events: new batches, log end offset and high
// watermark changes (and the gap between them: records a consumer cannot
// see yet), segment rolls, deletions and truncations, partitions appearing
// and disappearing. It never prints; klog tail renders the events.
//
// Each partition is read through its partition.Log, klog's one model of a
// partition, which a partition.Follower keeps current while the broker (or
// klog produce) writes: the segments, the log end offset, the log start
// offset and the high watermark all come from the model, and the tail
// waits on the model's per-partition wait/notify (one partition.Waiter
// that says which partitions changed), so each change makes the tail look
// again at the one partition it concerns. There is no polling: an idle tail
// costs no CPU. The batches are read through partition.BatchReader from
// the last reported position up to where the model holds whole batches; a
// batch still being written (the file ends inside it) is waited for and
// reported once, when its last byte is there. A segment that shrank is
// reported and read again from the model's new end.
//
// The tail's own partition.Watcher watches the log directories, for
// partitions that appear and go and for rewrites of
// replication-offset-checkpoint (an unreadable one is reported), and the
// directories of partitions that hold no segment yet.
//
// The high watermark is the partition's entry in the log dir's
// replication-offset-checkpoint, which a broker rewrites atomically (a
// temporary file renamed over it) every replica.high.watermark.checkpoint.interval.ms;
// the model reads it again on every rewrite.
package tail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// Options configures a tail.
type Options struct {
	// FromBeginning reports the batches already in the partitions first
	// (as TypeBatch events, before each partition's TypeState). By default
	// the tail starts at the end.
	FromBeginning bool
	// FromOffset, when > 0, reports first the batches already there that
	// hold offsets at or after it (batches wholly below it are skipped);
	// offset 0 is FromBeginning.
	FromOffset int64
	// FromLast, when > 0, reports first the batches already there that
	// hold the last FromLast offsets before the log end offset.
	FromLast int64
	// MaxBatchBytes caps one batch (format.ScanOptions); 0 = default.
	MaxBatchBytes int
	// Now is the clock for event times; nil means time.Now.
	Now func() time.Time
}

// Run tails paths, each a partition directory or a log directory (every
// partition in it, including ones that appear later), sending events until
// ctx is done. It returns nil when ctx ends, or the error that stopped it
// (a path that cannot be read or watched; see partition.WatchLimitError). Events are
// sent in order, one goroutine; a slow receiver holds the tail back, it
// loses nothing. Run closes events when it returns.
func Run(ctx context.Context, paths []string, opts Options, events chan<- Event) error {
	defer close(events)
	if len(paths) == 0 {
		return errors.New("tail: no paths")
	}
	w, err := partition.NewWatcher(4096)
	if err != nil {
		return err
	}
	defer w.Close()
	fo, err := partition.NewFollower()
	if err != nil {
		return err
	}
	defer fo.Close()
	wait := partition.NewTrackingWaiter()
	defer wait.Stop()
	t := &tailer{
		ctx: ctx, opts: opts, out: events, w: w, fo: fo, wait: wait, now: opts.Now,
		rd:      partition.NewBatchReader(opts.MaxBatchBytes),
		parts:   map[string]*part{},
		byLog:   map[*partition.Log]*part{},
		logDirs: map[string]*logDir{},
		roots:   map[string]bool{},
	}
	if t.now == nil {
		t.now = time.Now
	}
	if err := t.start(paths); err != nil {
		return err
	}
	err = t.loop()
	if err == nil && t.unreadable > 0 {
		return ErrUnreadable
	}
	return err
}

// ErrUnreadable ends a Run, after it stopped as asked, in which some
// partition directory could not be read; each was reported by an error
// event and the others were followed.
var ErrUnreadable = errors.New("some partition directories could not be read")

// tailer is the state of one Run; only Run's goroutine touches it.
type tailer struct {
	// unreadable counts partition directories that could not be read.
	unreadable int
	ctx        context.Context
	opts       Options
	out        chan<- Event
	// w watches the log directories and the partition directories that
	// hold no segment yet; fo keeps the partitions' models current, and
	// wait is woken by the models that changed.
	w       *partition.Watcher
	fo      *partition.Follower
	wait    *partition.Waiter
	rd      *partition.BatchReader
	now     func() time.Time
	stopped bool

	parts   map[string]*part // by directory path
	byLog   map[*partition.Log]*part
	logDirs map[string]*logDir // parents of the partitions, by path
	roots   map[string]bool    // partition directories named as PATH

	// Work gathered from a burst of events.
	dirtyList map[*part]bool   // a directory awaiting its first segment changed
	dirtyHW   map[*logDir]bool // replication-offset-checkpoint rewritten
	overflow  bool
	woken     []*partition.Log
}

// logDir is a directory holding partitions, and whether every partition in
// it is tailed.
type logDir struct {
	path string
	all  bool
}

func (t *tailer) start(paths []string) error {
	type pending struct {
		dir string
		ld  *logDir
	}
	var todo []pending
	seen := map[string]bool{}
	for _, arg := range paths {
		p := filepath.Clean(arg)
		args, err := partition.Expand([]string{p})
		if err != nil {
			return err
		}
		switch args[0].Kind {
		case partition.ArgFile:
			return &os.PathError{Op: "open", Path: arg, Err: errors.New("not a directory (give a partition directory or a log directory)")}
		case partition.ArgPartition:
			ld := t.logDir(filepath.Dir(p))
			if err := t.w.Add(ld.path); err != nil {
				return err
			}
			t.roots[p] = true
			if !seen[p] {
				seen[p] = true
				todo = append(todo, pending{p, ld})
			}
			continue
		}
		ld := t.logDir(p)
		ld.all = true
		if err := t.w.Add(p); err != nil {
			return err
		}
		// List again now that the directory is watched: a partition
		// created in between is in the listing or raises an event.
		l, err := partition.OpenLogDir(p)
		if err != nil {
			return err
		}
		parts := l.Partitions[:0:0]
		for _, d := range l.Partitions {
			// /etc/dbus-1 is named like a partition: only a directory
			// holding Kafka files (or none) is one.
			if partition.IsPartitionDir(d) || !readable(d) {
				parts = append(parts, d)
			}
		}
		if len(parts) == 0 && !isLogDir(l) {
			return &os.PathError{Op: "tail", Path: arg, Err: errNotLogDir}
		}
		for _, d := range parts {
			if !seen[d] {
				seen[d] = true
				todo = append(todo, pending{d, ld})
			}
		}
	}
	// Follow every partition before reading any (the Follower watches a
	// directory before it reads it again), so no write falls between the
	// read and the watch.
	var kept []*part
	for _, pd := range todo {
		p := t.newPart(pd.dir, pd.ld)
		if err := t.openLog(p); err != nil {
			if !errors.Is(err, fs.ErrPermission) {
				return err
			}
			// Unreadable: report it, follow the rest.
			delete(t.parts, p.dir)
			t.unreadable++
			t.trouble(p, err)
			continue
		}
		kept = append(kept, p)
	}
	for _, p := range kept {
		if err := t.initPart(p, t.opts.FromBeginning || t.opts.FromOffset > 0 || t.opts.FromLast > 0, TypeState); err != nil {
			return err
		}
	}
	return nil
}

// errNotLogDir: a directory given to tail holds no partition and is not
// a broker's log directory, where waiting for partitions makes sense.
var errNotLogDir = errors.New("holds no partition directory (topic-N holding Kafka files) and is not a Kafka log directory (no meta.properties, .lock or offset checkpoint)")

// readable reports whether dir can be listed: an unreadable one is tailed
// to report it (it may be a partition).
func readable(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == nil || errors.Is(err, io.EOF)
}

// isLogDir reports whether l is a broker's log directory: one with the
// files a broker keeps there, so partitions may yet appear in it.
func isLogDir(l *partition.LogDir) bool {
	if len(l.Checkpoints) > 0 {
		return true
	}
	for _, name := range []string{"meta.properties", safeio.BrokerLockFile} {
		if _, err := os.Lstat(filepath.Join(l.Path, name)); err == nil {
			return true
		}
	}
	return false
}

func (t *tailer) logDir(path string) *logDir {
	ld := t.logDirs[path]
	if ld == nil {
		ld = &logDir{path: path}
		t.logDirs[path] = ld
	}
	return ld
}

func (t *tailer) newPart(dir string, ld *logDir) *part {
	p := &part{dir: dir, ld: ld, cur: -1, partialAt: -1, badAt: -1, partition: -1, hw: -1}
	if topic, n, ok := partition.NameOf(dir); ok {
		p.topic, p.partition = topic, n
	}
	t.parts[dir] = p
	return p
}

// emit sends ev unless the tail is stopping.
func (t *tailer) emit(ev Event) {
	if t.stopped {
		return
	}
	select {
	case t.out <- ev:
	case <-t.ctx.Done():
		t.stopped = true
	}
}

// event is an event of type typ carrying p's current state.
func (t *tailer) event(p *part, typ Type) Event {
	now := t.now().UTC()
	ev := Event{Type: typ, Time: now, Timestamp: now.UnixMilli(), Dir: p.dir, Topic: p.topic, Partition: p.partition,
		LogStartOffset: p.leo, LogEndOffset: p.leo, HighWatermark: p.hw, Segments: len(p.segs)}
	if len(p.segs) > 0 {
		ev.LogStartOffset = p.logStart
	}
	if p.hw >= 0 {
		ev.Gap = p.leo - p.hw
	}
	return ev
}

func (t *tailer) loop() error {
	fw := t.w
	for {
		select {
		case <-t.ctx.Done():
			return nil
		case ev, ok := <-fw.Events():
			if !ok {
				return errors.New("tail: the inotify watcher closed")
			}
			t.note(ev)
		case err, ok := <-fw.Errors():
			if !ok {
				return errors.New("tail: the inotify watcher closed")
			}
			if err := t.noteErr(err); err != nil {
				return err
			}
		case <-t.wait.C():
			// Woken says which models changed.
		case _, ok := <-t.fo.Errors():
			// A model that could not be read again stays stale and woke
			// its waiters: its next view returns the error.
			if !ok {
				return errors.New("tail: the partition follower closed")
			}
		}
		// Take whatever else is already queued, so a burst costs one
		// rescan per partition.
	drain:
		for range 4096 {
			select {
			case ev, ok := <-fw.Events():
				if !ok {
					break drain
				}
				t.note(ev)
			case err, ok := <-fw.Errors():
				if !ok {
					break drain
				}
				if err := t.noteErr(err); err != nil {
					return err
				}
			default:
				break drain
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
		if t.stopped {
			return nil
		}
	}
}

func (t *tailer) noteErr(err error) error {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// The kernel dropped events: look at everything again.
		t.overflow = true
		return nil
	}
	return fmt.Errorf("tail: inotify: %w", err)
}

// note records the work one fsnotify event asks for. Partitions appearing
// and disappearing are handled at once; reads wait for flush.
func (t *tailer) note(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod || ev.Op == 0 {
		return
	}
	name := filepath.Clean(ev.Name)
	if p := t.parts[name]; p != nil {
		// The partition directory itself was removed or moved.
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			t.checkGone(p)
		}
		return
	}
	dir, base := filepath.Dir(name), filepath.Base(name)
	if p := t.parts[dir]; p != nil {
		// A directory awaiting its first segment (the model follows the
		// others).
		if p.log == nil && strings.HasSuffix(base, partition.LogSuffix) {
			mark(&t.dirtyList, p)
		}
		return
	}
	ld := t.logDirs[dir]
	if ld == nil {
		return
	}
	if base == partition.ReplicationCheckpoint {
		if t.dirtyHW == nil {
			t.dirtyHW = map[*logDir]bool{}
		}
		t.dirtyHW[ld] = true
		return
	}
	if !t.roots[name] {
		if _, _, ok := partition.ParseDirName(base); !ok || !ld.all {
			return
		}
	}
	if ev.Has(fsnotify.Create) {
		if st, err := os.Stat(name); err == nil && st.IsDir() {
			t.appeared(name, ld)
		}
	}
}

func mark(m *map[*part]bool, p *part) {
	if *m == nil {
		*m = map[*part]bool{}
	}
	(*m)[p] = true
}

// appeared starts tailing a partition directory created while tailing: its
// batches are all new, so they are all reported.
func (t *tailer) appeared(dir string, ld *logDir) {
	if t.parts[dir] != nil {
		return
	}
	p := t.newPart(dir, ld)
	if err := t.openLog(p); err != nil {
		delete(t.parts, dir)
		t.dropLog(p)
		t.w.Remove(dir)
		t.trouble(p, err)
		return
	}
	if err := t.initPart(p, true, TypePartitionAdded); err != nil {
		if _, serr := os.Stat(dir); serr != nil {
			t.checkGone(p) // it went as fast as it came
			return
		}
		t.trouble(p, err)
	}
}

// trouble reports a partition the tail cannot follow.
func (t *tailer) trouble(p *part, err error) {
	ev := t.event(p, TypeError)
	ev.Problem = &verify.Problem{Position: -1, Offset: -1, Message: err.Error()}
	t.emit(ev)
}

// checkGone reports p removed if its directory is gone.
func (t *tailer) checkGone(p *part) {
	if t.parts[p.dir] != p {
		return
	}
	if _, err := os.Stat(p.dir); err == nil {
		return
	}
	t.dropLog(p)
	t.w.Remove(p.dir)
	delete(t.parts, p.dir)
	t.emit(t.event(p, TypePartitionRemoved))
}

// flush does the work gathered: the partitions whose models changed and
// the directories that got their first segment, in directory order (each
// one's data first, then its high watermark, so an HW event shows an
// up-to-date gap), then the checkpoints rewritten.
func (t *tailer) flush() error {
	if t.overflow {
		t.overflow = false
		t.rescanAll()
	}
	t.woken = t.wait.Woken(t.woken[:0])
	if len(t.woken)+len(t.dirtyList) > 0 {
		var ps []*part
		for _, l := range t.woken {
			if p := t.byLog[l]; p != nil && !t.dirtyList[p] {
				ps = append(ps, p)
			}
		}
		for p := range t.dirtyList {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].dir < ps[j].dir })
		for _, p := range ps {
			if t.parts[p.dir] != p {
				continue // removed meanwhile
			}
			if err := t.update(p); err != nil {
				return err
			}
		}
		clear(t.dirtyList)
	}
	if len(t.dirtyHW) > 0 {
		var lds []*logDir
		for ld := range t.dirtyHW {
			lds = append(lds, ld)
		}
		sort.Slice(lds, func(i, j int) bool { return lds[i].path < lds[j].path })
		for _, ld := range lds {
			t.reloadHW(ld)
		}
		clear(t.dirtyHW)
	}
	return nil
}

// rescanAll is the answer to a lost event: every log dir relisted, every
// partition and checkpoint read again.
func (t *tailer) rescanAll() {
	for _, ld := range t.logDirs {
		if ld.all {
			if l, err := partition.OpenLogDir(ld.path); err == nil {
				for _, d := range l.Partitions {
					t.appeared(d, ld)
				}
			}
		}
		for d := range t.roots {
			if filepath.Dir(d) == ld.path {
				if st, err := os.Stat(d); err == nil && st.IsDir() {
					t.appeared(d, ld)
				}
			}
		}
		markDir(&t.dirtyHW, ld)
	}
	for _, p := range t.parts {
		mark(&t.dirtyList, p)
		t.checkGone(p)
	}
}

// update brings p up to date: a partition awaiting its first segment opens
// its model when it has one, and its segments are reported as rolls.
func (t *tailer) update(p *part) error {
	if p.log != nil {
		return t.refresh(p)
	}
	if err := t.openLog(p); err != nil {
		if _, serr := os.Stat(p.dir); serr != nil {
			t.checkGone(p)
			return nil
		}
		return err
	}
	if p.log == nil {
		return nil // still no segment
	}
	return t.refresh(p)
}

func markDir(m *map[*logDir]bool, ld *logDir) {
	if *m == nil {
		*m = map[*logDir]bool{}
	}
	(*m)[ld] = true
}

// reloadHW checks a log dir's rewritten checkpoint: one that cannot be
// read is reported (the models take it as no entry). The partitions whose
// high watermark changed are reported as their models change.
func (t *tailer) reloadHW(ld *logDir) {
	if _, err := partition.HighWatermarks(ld.path); err != nil {
		now := t.now().UTC()
		ev := Event{Type: TypeCorrupt, Time: now, Timestamp: now.UnixMilli(), Dir: ld.path, Partition: -1, HighWatermark: -1,
			Problem: &verify.Problem{Position: -1, Offset: -1, Message: filepath.Join(ld.path, partition.ReplicationCheckpoint) + ": " + err.Error()}}
		t.emit(ev)
	}
}
