package partition

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// Log is one partition as a broker holds it: klog's one model of a
// partition (Kafka's UnifiedLog over its LocalLog). It is opened once and
// kept current: by the writer in this process (package produce's Appender
// tells it each batch it appends), or, when another process writes, by a
// Follower that watches the directory. It owns
//   - the segments and their offset and time index lookups (lookup.go),
//     the index files read through a bounded cache (IndexCache);
//   - the log start offset: the first segment's base offset, or the log
//     dir's log-start-offset-checkpoint entry when that is above it
//     (LogLoader);
//   - the log end offset;
//   - the high watermark: the log dir's replication-offset-checkpoint
//     entry, or the one the owner sets (SetHighWatermark);
//   - the last stable offset and the ongoing transactions, from the
//     producer state with its duplicate-batch cache (producers.go);
//   - the leader-epoch cache (leader-epoch-checkpoint);
//   - the waiters of long polls, woken only when this partition changes
//     (wait.go).
//
// Readers: fetch's read rules, klog serve, tail, replicate, offsets, find.
// Writer: produce's Appender, the only caller of the methods documented as
// the writer's.
//
// Concurrency: a Log is safe for concurrent use. One mutex guards all of its
// state and is held for the whole of each method, the file reads of a
// lookup included (an index probe and the headers of the batches after the
// entry; a fetch's record bytes are read or sent by the caller after the
// method returned). A Follower's goroutine takes the same mutex to bring the
// Log up to date. Waiters are woken after the mutex is released, so a woken
// reader never waits for the one that woke it.
type Log struct {
	path  string
	topic string
	part  int32
	opts  LogOptions
	cache *IndexCache
	// osFiles: the files are opened with os.Open (LogOptions.Open nil).
	osFiles bool

	mu   sync.Mutex
	segs []*LogSegment
	// snapshots are the producer snapshots of the last listing.
	snapshots []Snapshot
	logStart  int64
	// leo is the log end offset, known once endKnown: it is read on
	// first use (a lookup by timestamp does not need it).
	leo      int64
	endKnown bool
	// startCkpt and hwCkpt are the log dir's log-start-offset-checkpoint
	// and replication-offset-checkpoint entries, -1 when none.
	startCkpt, hwCkpt int64
	// hw, when hwSet, is the high watermark the owner set.
	hw    int64
	hwSet bool
	// epochs is the leader epoch cache; epochFile is whether
	// leader-epoch-checkpoint was there at the last listing.
	epochs    []format.EpochEntry
	epochFile bool
	// prod is the producer state, nil until first needed.
	prod *producers
	// stale says what a Follower saw change and the next read must read
	// again (staleData, staleList, ...).
	stale stale
	// writer is set once an in-process writer keeps the Log current: then
	// a Follower's events for it are its own appends and are ignored.
	writer   bool
	followed bool
	waiters  map[*Waiter]struct{}
	// last is a copy of the last batch the writer appended, when small
	// (lastCopyMax): the long poll its append wakes asks for exactly those
	// bytes and takes them from here instead of reading back the file
	// (CopyAppended).
	last lastBatch

	sc  *format.Scanner // full batches, for lookups that read records
	hsc *format.Scanner // headers only
	rr  format.RecordReader
	rec format.Record
}

// lastBatch is the copy of the last batch appended at pos of segment seg;
// it is the file's content there while seg is the active segment and its
// last batch is still the one at pos.
type lastBatch struct {
	seg  *LogSegment
	pos  int64
	data []byte
}

// lastCopyMax is the largest batch a Log keeps a copy of: a long poll woken
// by one small produce is where the latency is, and a server of many
// partitions keeps at most this much for each partition produced to.
const lastCopyMax = 4 << 10

// stale is a set of things to read again.
type stale uint8

const (
	staleData        stale = 1 << iota // the active segment grew
	staleList                          // segments came, went or were replaced
	staleEpochs                        // leader-epoch-checkpoint was rewritten
	staleCheckpoints                   // a log-dir checkpoint was rewritten
	staleAll         = staleData | staleList | staleEpochs | staleCheckpoints
)

// IndexMode says how a Log takes a segment's indexes.
type IndexMode int

const (
	// IndexesAsFound uses the .index and .timeindex files as they are on
	// disk, as a broker does when it starts after a clean shutdown: every
	// entry the file holds counts, a zero tail included.
	IndexesAsFound IndexMode = iota
	// IndexesRebuilt rebuilds both indexes from the log, as
	// LogSegment.recover does after an unclean shutdown (an entry every
	// index.interval.bytes, the segment's largest timestamp appended at the
	// end), keeps only the valid prefix of each segment, and assigns leader
	// epochs from the batches as recovery does. Such a Log is read again
	// whole when it changes.
	IndexesRebuilt
)

func (m IndexMode) String() string {
	if m == IndexesRebuilt {
		return "rebuilt"
	}
	return "as-found"
}

// LogOptions configures OpenLog. The zero value opens the indexes as found.
type LogOptions struct {
	Mode IndexMode
	// IndexIntervalBytes is index.interval.bytes for rebuilt indexes
	// (0: Kafka's default, 4096).
	IndexIntervalBytes int64
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch
	// (0: the format defaults).
	MaxBatchBytes        int
	MaxDecompressedBytes int
	// Open opens a .log, .index or .timeindex file; nil means os.Open.
	// Tests and klog find inject readers that count the bytes read; such
	// a Log caches its index files for itself.
	Open func(path string) (File, error)
	// IndexCache holds the index files the lookups read; nil shares one
	// process-wide cache of DefaultIndexCacheBytes.
	IndexCache *IndexCache
	// Listing is the directory's listing when the caller has made it
	// (klog find, whose files come through Open); OpenLog then does not
	// list the directory itself. A later refresh does.
	Listing *Dir
}

// File is what a Log reads a partition file through; *os.File satisfies it.
type File interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

func osOpen(path string) (File, error) { return os.Open(path) }

// LogSegment is one segment of a Log, as Segments returns it.
type LogSegment struct {
	Segment
	// Size is the .log's size (IndexesRebuilt: its valid prefix).
	Size int64
	// ModTime is the .log's modification time in epoch ms
	// (LogSegment.lastModified).
	ModTime int64
	// MaxTimestamp and MaxTimestampOffset are the segment's "max timestamp
	// so far" and the offset stored with it: when the Log was opened, the
	// time index's last entry, or (-1, base offset) when it has none
	// (IndexesRebuilt: the largest batch max timestamp and that batch's
	// last offset); then raised by every batch appended since, as
	// LogSegment.append raises it.
	MaxTimestamp       int64
	MaxTimestampOffset int64
	// TimeIndexEntries is how many entries the time index held when the
	// Log read it.
	TimeIndexEntries int

	// end is where the whole batches end: for the active segment the
	// position after the last batch read; for the others the file size.
	end int64
	// next is the offset after the last batch read (active segment).
	next int64
	// hintOffset/hintPos: a batch boundary an earlier read saw (every
	// batch before hintPos ends below hintOffset), so a consumer's next
	// fetch need not scan from the index entry again.
	hintOffset, hintPos int64
	// tailPos, tailSize and tailLast are the position, size and last
	// offset of the last batch appended (appended), and tailBound, when
	// tailKnown, an offset every batch before tailPos ends below. A
	// consumer long-polling at the log end asks for the batch just
	// appended: translate answers from these without reading the index
	// or the log.
	tailPos, tailSize, tailLast, tailBound int64
	tailKnown                              bool
	// endBound, when endKnown, is an offset every batch before endAt
	// ends below: a read that found the last batch learns it, and each
	// batch appended at endAt (then the segment's end) carries it on
	// (into tailBound).
	endBound, endAt int64
	endKnown        bool
	// idx and tidx are the indexes IndexesRebuilt built in memory.
	idx  *format.OffsetIndex
	tidx *format.TimeIndex
}

// End is where the segment's whole batches end, as the Log last read
// them: for the active segment the position after its last whole batch
// (bytes after it are a batch still being written, or junk); for the
// others the file's size.
func (s *LogSegment) End() int64 { return s.end }

// LargestTimestamp is LogSegment.largestTimestamp: MaxTimestamp when it is
// not negative, else the .log's modification time (then byModTime is true).
func (s *LogSegment) LargestTimestamp() (ts int64, byModTime bool) {
	if s.MaxTimestamp >= 0 {
		return s.MaxTimestamp, false
	}
	return s.ModTime, true
}

// LookupError is a file a lookup cannot use; Pos is a byte position in it
// (-1 when not about one place).
type LookupError struct {
	Path string
	Pos  int64
	Err  error
}

func (e *LookupError) Error() string {
	s := e.Path
	if e.Pos >= 0 {
		s += " at position " + strconv.FormatInt(e.Pos, 10)
	}
	return s + ": " + e.Err.Error()
}

func (e *LookupError) Unwrap() error { return e.Err }

// ErrNoSegment is a partition directory holding no log segment; the error
// OpenLog returns says which ("<dir> holds no log segment").
var ErrNoSegment = errors.New("holds no log segment")

func noSegment(dir string) error { return fmt.Errorf("%s %w", dir, ErrNoSegment) }

// OpenLog opens the partition directory dir. Segments without a .log are
// ignored, as the broker deletes their index files. The producer state is
// read on first use (LastStableOffset, Offsets, Producer).
func OpenLog(dir string, opts LogOptions) (*Log, error) {
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = 4096
	}
	l := &Log{path: dir, part: -1, opts: opts, cache: opts.IndexCache}
	if l.cache == nil {
		if opts.Open == nil {
			l.cache = defaultIndexCache
		} else {
			l.cache = NewIndexCache(DefaultIndexCacheBytes)
		}
	}
	if l.opts.Open == nil {
		l.opts.Open, l.osFiles = osOpen, true
	}
	l.rr.Decompressor.MaxBytes = opts.MaxDecompressedBytes
	if err := l.load(); err != nil {
		return nil, err
	}
	return l, nil
}

// load reads the directory from scratch (OpenLog, and a change that is not
// an append: a truncation, a replaced segment).
func (l *Log) load() error {
	l.last = lastBatch{data: l.last.data[:0]}
	d := l.opts.Listing
	l.opts.Listing = nil
	if d == nil {
		var err error
		if d, err = Open(l.path); err != nil {
			return err
		}
	}
	var err error
	l.topic, l.part = d.Topic, d.Partition
	l.snapshots = d.Snapshots
	l.prod = nil
	l.epochs, l.epochFile = nil, d.LeaderEpochs != ""
	if err := l.readEpochs(d.LeaderEpochs); err != nil {
		return err
	}
	segs := make([]*LogSegment, 0, len(d.Segments))
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		ls := &LogSegment{Segment: s}
		if err := l.statSegment(ls); err != nil {
			return err
		}
		segs = append(segs, ls)
	}
	if len(segs) == 0 {
		return noSegment(l.path)
	}
	l.segs = segs
	for _, s := range segs {
		if l.opts.Mode == IndexesRebuilt {
			err = l.rebuild(s)
		} else {
			err = l.readLastTimeEntry(s)
		}
		if err != nil {
			return err
		}
		s.end = s.Size
	}
	l.leo, l.endKnown = -1, false
	l.readCheckpoints()
	return nil
}

// endLocked reads the active segment's end and the log end offset on first
// use.
func (l *Log) endLocked() error {
	if l.endKnown {
		return nil
	}
	active := l.segs[len(l.segs)-1]
	if err := l.findEnd(active); err != nil {
		return err
	}
	l.leo, l.endKnown = active.next, true
	return nil
}

// statSegment reads the .log's size and modification time.
func (l *Log) statSegment(s *LogSegment) error {
	f, err := l.opts.Open(s.Log)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		return err
	}
	s.Size, s.ModTime = st.Size(), st.ModTime().UnixMilli()
	return nil
}

// readEpochs reads leader-epoch-checkpoint (path "" when absent) into the
// cache; IndexesRebuilt then assigns the batches' epochs (rebuild).
func (l *Log) readEpochs(path string) error {
	l.epochs = nil
	if path == "" {
		return nil
	}
	data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		l.epochFile = false
		return nil
	}
	if err != nil {
		return err
	}
	if l.epochs, err = format.ParseLeaderEpochCheckpoint(data); err != nil {
		return &LookupError{Path: path, Pos: -1, Err: err}
	}
	return nil
}

// readCheckpoints reads the partition's entries of its log dir's
// replication-offset-checkpoint and log-start-offset-checkpoint. A
// checkpoint that cannot be read counts as having no entry, as fetch has
// always taken it (klog verify reports the file).
func (l *Log) readCheckpoints() {
	l.hwCkpt, l.startCkpt = -1, -1
	if hw, ok, err := CheckpointOffset(l.path, ReplicationCheckpoint); err == nil && ok {
		l.hwCkpt = hw
	}
	if ls, ok, err := CheckpointOffset(l.path, LogStartCheckpoint); err == nil && ok {
		l.startCkpt = ls
	}
	l.setLogStart()
}

// applyCheckpoints takes the partition's entries from its log dir's
// checkpoints, read once for all the partitions of a log dir.
func (l *Log) applyCheckpoints(hw, start map[TopicPartition]int64) {
	l.hwCkpt, l.startCkpt = -1, -1
	tp := TopicPartition{Topic: l.topic, Partition: l.part}
	if v, ok := hw[tp]; ok && l.part >= 0 {
		l.hwCkpt = v
	}
	if v, ok := start[tp]; ok && l.part >= 0 {
		l.startCkpt = v
	}
	l.setLogStart()
}

// setLogStart is LogLoader's log start offset: the checkpoint's, when above
// the first segment's base offset.
func (l *Log) setLogStart() {
	l.logStart = max(l.segs[0].BaseOffset, l.startCkpt)
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.path }

// Topic and Partition are the partition's name, from its directory's
// (Partition -1 when the directory is not named <topic>-<partition>).
func (l *Log) Topic() string { return l.topic }

// Partition is the partition number (see Topic).
func (l *Log) Partition() int32 { return l.part }

// Offsets are a partition's offsets at one moment, as a read captures them
// before it reads (Partition.readRecords).
type Offsets struct {
	LogStartOffset   int64
	LogEndOffset     int64
	HighWatermark    int64
	LastStableOffset int64
}

// Offsets captures all four offsets at once. It reads the producer state
// on first use.
func (l *Log) Offsets() (Offsets, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.readyLocked(); err != nil {
		return Offsets{}, err
	}
	hw := l.highWatermarkLocked()
	lso, err := l.lastStableLocked(hw)
	if err != nil {
		return Offsets{}, err
	}
	return Offsets{LogStartOffset: l.logStart, LogEndOffset: l.leo, HighWatermark: hw, LastStableOffset: lso}, nil
}

// LogStartOffset is the first offset a read may ask for.
func (l *Log) LogStartOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshLocked()
	return l.logStart
}

// LogEndOffset is the offset after the last whole batch: the offset the
// next batch gets; -1 when the active segment cannot be read (Offsets
// says why).
func (l *Log) LogEndOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readyLocked() != nil {
		return -1
	}
	return l.leo
}

// HighWatermark is the high watermark the owner set, else the log dir's
// checkpointed one when it is not above the log end, else the log end
// offset (a partition with no checkpoint entry is read to its end); -1 as
// LogEndOffset.
func (l *Log) HighWatermark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readyLocked() != nil {
		return -1
	}
	return l.highWatermarkLocked()
}

// readyLocked brings the Log up to date and reads its end.
func (l *Log) readyLocked() error {
	if err := l.refreshLocked(); err != nil {
		return err
	}
	return l.endLocked()
}

func (l *Log) highWatermarkLocked() int64 {
	if l.hwSet {
		return min(l.hw, l.leo)
	}
	if l.hwCkpt >= 0 && l.hwCkpt <= l.leo {
		return l.hwCkpt
	}
	return l.leo
}

// CheckpointHighWatermark is the partition's entry in the log dir's
// replication-offset-checkpoint, and whether it has one.
func (l *Log) CheckpointHighWatermark() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshLocked()
	return l.hwCkpt, l.hwCkpt >= 0
}

// SetHighWatermark makes hw the partition's high watermark from now on,
// whatever the checkpoint says (it is capped at the log end offset): the
// owner's, as a leader computes it (klog serve's writable partition, whose
// only replica it is; klog fetch --high-watermark). It wakes the waiters
// when it moves.
func (l *Log) SetHighWatermark(hw int64) {
	l.mu.Lock()
	l.readyLocked()
	old := l.highWatermarkLocked()
	l.hw, l.hwSet = max(hw, 0), true
	moved := l.highWatermarkLocked() != old
	l.mu.Unlock()
	if moved {
		l.notify()
	}
}

// SetHighWatermarkToEnd makes the log end offset the high watermark from
// now on: the owner is the partition's only replica, so every batch is
// committed once appended (klog serve --writable). It wakes the waiters
// when the high watermark moves.
func (l *Log) SetHighWatermarkToEnd() { l.SetHighWatermark(math.MaxInt64) }

// LastStableOffset is the first offset of the earliest ongoing transaction
// when it is below the high watermark, else the high watermark
// (UnifiedLog.lastStableOffset).
func (l *Log) LastStableOffset() (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.readyLocked(); err != nil {
		return 0, err
	}
	return l.lastStableLocked(l.highWatermarkLocked())
}

func (l *Log) lastStableLocked(hw int64) (int64, error) {
	ps, err := l.producersLocked()
	if err != nil {
		return 0, err
	}
	if first := ps.firstUnstable(); first >= 0 && first < hw {
		return first, nil
	}
	return hw, nil
}

// LeaderEpochs is a copy of the leader epoch cache.
func (l *Log) LeaderEpochs() []format.EpochEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshLocked()
	return append([]format.EpochEntry(nil), l.epochs...)
}

// LatestEpoch is the leader epoch cache's latest epoch, or NoEpoch.
func (l *Log) LatestEpoch() int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshLocked()
	return l.latestEpochLocked()
}

func (l *Log) latestEpochLocked() int32 {
	if n := len(l.epochs); n > 0 {
		return l.epochs[n-1].Epoch
	}
	return NoEpoch
}

// Segments is a copy of the segment list, by base offset.
func (l *Log) Segments() []LogSegment {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refreshLocked()
	out := make([]LogSegment, len(l.segs))
	for i, s := range l.segs {
		out[i] = *s
	}
	return out
}

// KeptCurrent reports whether something keeps l current without Refresh:
// a writer in this process, or a Follower.
func (l *Log) KeptCurrent() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writer || l.followed
}

// Refresh reads again what may have changed on disk: new segments and the
// bytes appended to the active one, the leader-epoch-checkpoint and the log
// dir's checkpoints. A Log a Follower keeps current, or one with a writer
// in this process, needs no call; a reader that opened a Log once and
// wants another process's appends calls it. It wakes the waiters when the
// offsets moved.
func (l *Log) Refresh() error {
	l.mu.Lock()
	if err := l.endLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	before := l.mark()
	l.stale = staleAll
	err := l.readyLocked()
	moved := l.mark() != before
	l.mu.Unlock()
	if moved || err != nil {
		l.notify()
	}
	return err
}

// mark is what a change a waiter cares about alters: the offsets, the
// checkpointed high watermark (klog tail reports it as it is), the segment
// list, and the active segment's whole batches and file size (bytes of a
// batch still being written wake klog tail, which reports them partial).
type mark struct {
	logStart, leo, hw, hwCkpt int64
	segs                      int
	first                     int64
	end, fileSize             int64
}

func (l *Log) mark() mark {
	m := mark{logStart: l.logStart, leo: l.leo, hw: l.highWatermarkLocked(), hwCkpt: l.hwCkpt, segs: len(l.segs)}
	if len(l.segs) > 0 {
		active := l.segs[len(l.segs)-1]
		m.first, m.end, m.fileSize = l.segs[0].BaseOffset, active.end, active.Size
	}
	return m
}

// View is a Log's segments and offsets at one moment, as one read of the
// Log gives them together (klog tail's state of a partition).
type View struct {
	// Segments are the segments by base offset; each one's End is where
	// its whole batches end.
	Segments []LogSegment
	// LogStartOffset and LogEndOffset are the Log's.
	LogStartOffset, LogEndOffset int64
	// CheckpointHighWatermark is the partition's entry in the log dir's
	// replication-offset-checkpoint, -1 when it has none.
	CheckpointHighWatermark int64
}

// View brings the Log up to date (a Follower's or writer's Log already
// is) and returns its segments and offsets at once.
func (l *Log) View() (View, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.readyLocked(); err != nil {
		return View{}, err
	}
	v := View{Segments: make([]LogSegment, len(l.segs)), LogStartOffset: l.logStart, LogEndOffset: l.leo, CheckpointHighWatermark: l.hwCkpt}
	for i, s := range l.segs {
		v.Segments[i] = *s
	}
	return v, nil
}

// refreshLocked brings the Log up to date with what is stale.
func (l *Log) refreshLocked() error {
	if l.stale == 0 {
		return nil
	}
	st := l.stale
	if err := l.endLocked(); err != nil {
		return err
	}
	var err error
	switch {
	case l.opts.Mode == IndexesRebuilt:
		err = l.load()
	case st&staleList != 0:
		err = l.relist()
	case st&staleData != 0:
		err = l.scanActive()
	}
	if err == nil && st&staleEpochs != 0 && st&staleList == 0 {
		err = l.readEpochs(filepath.Join(l.path, LeaderEpochCheckpoint))
	}
	if err == nil && st&staleCheckpoints != 0 {
		l.readCheckpoints()
	}
	if err != nil {
		return err // still stale: the next read tries again
	}
	l.stale = 0
	return nil
}

// scanSegment reads the batch headers of s in [from, to), calling fn with
// each and the open file.
func (l *Log) scanSegment(s *LogSegment, from, to int64, fn func(*format.Batch, File) error) error {
	if from >= to {
		return nil
	}
	f, err := l.opts.Open(s.Log)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := l.headerScanner(f, to)
	sc.SetPos(from)
	for {
		b, err := sc.Next()
		if err != nil {
			if !format.EndOfData(err) {
				return &LookupError{Path: s.Log, Pos: sc.Pos(), Err: err}
			}
			return nil
		}
		if err := fn(b, f); err != nil {
			return err
		}
	}
}

func (l *Log) headerScanner(f File, size int64) *format.Scanner {
	if l.hsc == nil {
		l.hsc = format.NewScanner(f, size, format.ScanOptions{HeadersOnly: true, MaxBatchBytes: l.opts.MaxBatchBytes})
	} else {
		l.hsc.Reset(f, size)
	}
	return l.hsc
}

// findEnd finds the active segment's end (LogSegment.readNextOffset): from
// its last offset index entry, or from the segment start when that entry
// does not lead to a batch, the batches up to the last whole one.
func (l *Log) findEnd(s *LogSegment) error {
	last, ok, err := l.lastIndexEntry(s)
	if err != nil {
		return err
	}
	start := int64(0)
	if ok && last.Pos > 0 && last.Pos < s.Size {
		start = last.Pos
	}
	for {
		s.end, s.next = start, s.BaseOffset
		found := false
		if err := l.scanSegment(s, start, s.Size, func(b *format.Batch, _ File) error {
			s.end, s.next, found = b.Pos+b.Size(), b.NextOffset(), true
			return nil
		}); err != nil {
			return err
		}
		if found || start == 0 {
			if !found {
				s.end = 0
			}
			return nil
		}
		start = 0
	}
}

// lastIndexEntry is the offset index's last entry, every entry the file
// holds counting (a zero tail included), read alone.
func (l *Log) lastIndexEntry(s *LogSegment) (format.IndexEntry, bool, error) {
	if s.idx != nil {
		if n := s.idx.Entries(); n > 0 {
			return s.idx.Entry(n - 1), true, nil
		}
		return format.IndexEntry{}, false, nil
	}
	if s.Index == "" {
		return format.IndexEntry{}, false, nil
	}
	f, err := l.opts.Open(s.Index)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return format.IndexEntry{}, false, nil
		}
		return format.IndexEntry{}, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return format.IndexEntry{}, false, err
	}
	n := st.Size() / format.OffsetIndexEntrySize
	if n == 0 {
		return format.IndexEntry{}, false, nil
	}
	var buf [format.OffsetIndexEntrySize]byte
	at := (n - 1) * format.OffsetIndexEntrySize
	if _, err := f.ReadAt(buf[:], at); err != nil {
		return format.IndexEntry{}, false, &LookupError{Path: s.Index, Pos: at, Err: err}
	}
	return format.ParseIndexEntry(buf[:], s.BaseOffset), true, nil
}

// grow reads the batches appended to segment s from its end to size: they
// move the end and the log end offset, raise the max timestamp, and update
// the producer state when it is loaded.
func (l *Log) grow(s *LogSegment, size int64) error {
	return l.scanSegment(s, s.end, size, func(b *format.Batch, f File) error {
		l.appended(s, b)
		if l.prod != nil {
			return l.observeBatch(l.prod, s.Log, b, f)
		}
		return nil
	})
}

// appended records batch b as the last of segment s.
func (l *Log) appended(s *LogSegment, b *format.Batch) {
	s.tailPos, s.tailSize, s.tailLast = b.Pos, b.Size(), b.LastOffset()
	s.tailBound, s.tailKnown = s.endBound, s.endKnown && b.Pos == s.endAt && b.Pos == s.end
	s.end, s.next = b.Pos+b.Size(), b.NextOffset()
	s.endBound, s.endAt, s.endKnown = max(s.endBound, b.LastOffset()+1), s.end, s.tailKnown
	s.Size = max(s.Size, s.end)
	if b.MaxTimestamp > s.MaxTimestamp {
		s.MaxTimestamp, s.MaxTimestampOffset = b.MaxTimestamp, b.LastOffset()
	}
	if s == l.segs[len(l.segs)-1] {
		l.leo = s.next
	}
}

// scanActive reads what was appended to the active segment. A segment that
// shrank was truncated: the whole Log is read again.
func (l *Log) scanActive() error {
	s := l.segs[len(l.segs)-1]
	old := s.Size
	if err := l.statSegment(s); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return l.relist()
		}
		return err
	}
	if s.Size < old || s.Size < s.end {
		return l.load()
	}
	return l.grow(s, s.Size)
}

// relist compares the directory with the segments held: segments deleted
// below the first kept one (retention) are dropped, new ones after the
// active one (rolls) are read; anything else (a segment gone from the
// middle or the end, one that shrank) reads the whole Log again.
func (l *Log) relist() error {
	d, err := Open(l.path)
	if err != nil {
		return err
	}
	var segs []Segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		return noSegment(l.path)
	}
	held := l.segs
	first := 0
	for first < len(held) && held[first].BaseOffset < segs[0].BaseOffset {
		first++
	}
	kept := held[first:]
	if len(kept) == 0 || len(segs) < len(kept) {
		return l.load()
	}
	for i, s := range kept {
		if segs[i].BaseOffset != s.BaseOffset || segs[i].Log != s.Log {
			return l.load()
		}
	}
	// The held segments are a prefix of the listing: the last held one
	// may have grown, the others must be as they were.
	for _, s := range kept[:len(kept)-1] {
		size := s.Size
		if err := l.statSegment(s); err != nil {
			return l.load()
		}
		if s.Size != size {
			return l.load()
		}
	}
	last := kept[len(kept)-1]
	old := last.Size
	if err := l.statSegment(last); err != nil {
		return l.load()
	}
	if last.Size < old || last.Size < last.end {
		return l.load()
	}
	if err := l.grow(last, last.Size); err != nil {
		return err
	}
	out := append(make([]*LogSegment, 0, len(segs)), kept...)
	for _, s := range segs[len(kept):] {
		prev := out[len(out)-1]
		prev.end = prev.Size // sealed now
		ls := &LogSegment{Segment: s}
		if err := l.statSegment(ls); err != nil {
			return err
		}
		if err := l.readLastTimeEntry(ls); err != nil {
			return err
		}
		ls.end, ls.next = 0, ls.BaseOffset
		out = append(out, ls)
		l.segs = out
		l.leo = ls.BaseOffset
		if err := l.grow(ls, ls.Size); err != nil {
			return err
		}
	}
	for i, s := range kept {
		s.Index, s.TimeIndex, s.TxnIndex = segs[i].Index, segs[i].TimeIndex, segs[i].TxnIndex
	}
	l.segs = out
	l.leo = out[len(out)-1].next
	l.snapshots = d.Snapshots
	l.epochFile = d.LeaderEpochs != ""
	if l.opts.Mode == IndexesAsFound {
		if err := l.readEpochs(d.LeaderEpochs); err != nil {
			return err
		}
	}
	l.setLogStart()
	return nil
}
