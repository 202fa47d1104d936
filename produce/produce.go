// Package produce appends record batches to a partition directory the way a
// Kafka broker's log does (UnifiedLog/LogSegment): offsets assigned from the
// log end, the offset and time indexes maintained by index.interval.bytes,
// segments rolled by size, producer ids and sequences continued from the
// log, transactions with their markers, .txnindex entries for aborts and a
// producer snapshot at every roll. It never prints.
//
// Safety: an exclusive lock on the directory while the Appender is open,
// and the log directory's broker lock held shared (safeio.HoldBroker), so
// that neither a broker nor another klog writer appends at the same time;
// each Append goes to the end of the log in one write (a Feed's batches
// together, about 1 MiB a write, each acknowledged once it and its index
// entries are written), and a failed write is cut back to the previous
// size; existing bytes are never rewritten. A log
// whose tail is not a whole valid batch is refused unless
// Options.TruncateInvalid, which cuts it and says exactly what it cut.
package produce

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// SyncMode says when appended data is fsynced.
type SyncMode int

// Sync modes.
const (
	SyncAtClose SyncMode = iota // fsync when the Appender closes
	SyncBatch                   // fsync after every batch
	SyncNever                   // leave it to the kernel
)

// ParseSync reads batch, end (SyncAtClose) or never.
func ParseSync(s string) (SyncMode, error) {
	switch s {
	case "batch":
		return SyncBatch, nil
	case "end", "":
		return SyncAtClose, nil
	case "never":
		return SyncNever, nil
	}
	return 0, errors.New("sync must be batch, end or never, got " + strconv.Quote(s))
}

// Options configures an Appender; zero values take Kafka's defaults.
type Options struct {
	// SegmentBytes rolls a new segment when the next batch would make the
	// active one larger (segment.bytes, default 1 GiB).
	SegmentBytes int64
	// IndexIntervalBytes is index.interval.bytes (default 4096).
	IndexIntervalBytes int64
	// Sync is when to fsync.
	Sync SyncMode
	// TruncateInvalid cuts an invalid tail of the active segment instead
	// of refusing to append.
	TruncateInvalid bool
	// Wait blocks until the directory lock is free instead of failing
	// with ErrLocked.
	Wait bool
	// PartitionLeaderEpoch is written in every batch (default 0).
	// It is recorded in leader-epoch-checkpoint from the first batch that
	// carries it, as a broker's leader epoch cache does.
	PartitionLeaderEpoch int32
	// Now is the clock for LogAppendTime and default timestamps.
	Now func() time.Time
	// TopicID, when not zero, is the topic id the partition records in
	// partition.metadata: written if the file is missing, and Open fails
	// with a *partition.TopicIDMismatchError if it records another. Zero
	// gives a partition Open creates the id of its topic's other
	// partitions in the same log directory, or a fresh one
	// (partition.EnsureTopicID).
	TopicID [16]byte
}

const (
	defaultSegmentBytes  = 1 << 30
	defaultIndexInterval = 4096
)

// Truncation is what Open cut from an invalid active segment tail.
type Truncation struct {
	Segment string
	// Pos is where the cut was made; Bytes how many bytes were removed.
	Pos, Bytes int64
	// Reason says what was invalid there.
	Reason string
}

// Result is the broker's answer to one append (ProduceResponse fields).
type Result struct {
	BaseOffset int64 `json:"baseOffset"`
	LastOffset int64 `json:"lastOffset"`
	// LogAppendTime is the broker time for LogAppendTime batches, else -1.
	LogAppendTime  int64  `json:"logAppendTime"`
	LogStartOffset int64  `json:"logStartOffset"`
	Position       int64  `json:"position"`
	Segment        string `json:"segment"`
	Size           int64  `json:"size"`
}

// Batch is what to append: records (Key, Value, Headers, Timestamp; a zero
// Timestamp means now) and the batch's attributes. The zero value has no
// producer.
type Batch struct {
	Records       []format.Record
	Compression   format.Compression
	TimestampType format.TimestampType
	// Producer makes the batch idempotent: the sequence continues from
	// the producer's last batch in the log (restarting at 0 for a new
	// epoch). Nil for none.
	Producer *Producer
	// Transactional puts the batch in the producer's transaction (it
	// needs a Producer).
	Transactional bool
}

// Producer is an idempotent producer: its id (>= 0) and epoch (Kafka's
// ProducerIdAndEpoch).
type Producer struct {
	ID    int64
	Epoch int16
}

type segment struct {
	base            int64
	log             *os.File
	index           *os.File
	timeindex       *os.File
	txnindex        *os.File
	size            int64
	bytesSinceIndex int64
	maxTS           int64 // max timestamp so far and the last offset of its batch
	maxTSOffset     int64
	lastTimeIndexTS int64
	lastIndexOffset int64
	// indexSize and timeIndexSize are the indexes' sizes, what a failed
	// write cuts them back to.
	indexSize, timeIndexSize int64
}

// Appender appends to one partition directory. It is not safe for
// concurrent use; other processes are kept out by the directory lock.
type Appender struct {
	dir    string
	opts   Options
	lock   *os.File           // the partition directory's writer lock
	broker *safeio.BrokerLock // the log dir's .lock, held shared
	seg    *segment
	// abort is the aborted transaction whose marker is being written
	// (abortTxn), for the .txnindex.
	abort *format.AbortedTxn
	// log is the partition's model, which the Appender keeps current:
	// the log end offset, the producer state and the leader epoch cache
	// are its.
	log   *partition.Log
	comp  format.Compressor
	buf   []byte
	recs  []format.Record
	head  format.Batch // the header stage builds
	st    staging
	dirty bool
	// snapOffset is the offset of the latest producer snapshot, -1 if none.
	snapOffset int64
	// Truncated is set when Open cut an invalid tail.
	Truncated *Truncation
	// topicID is what partition.metadata records (zero: no file).
	topicID [16]byte
}

// Open locks dir (creating it and its first segment if needed), finds the
// log end offset from the last valid batch of the active segment, and
// rebuilds producer state from the latest snapshot and the log after it.
// It is OpenContext without a deadline.
func Open(dir string, opts Options) (*Appender, error) {
	return OpenContext(context.Background(), dir, opts)
}

// OpenContext is Open whose wait for the writer lock (Options.Wait) ends
// with ctx.
func OpenContext(ctx context.Context, dir string, opts Options) (*Appender, error) {
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = defaultSegmentBytes
	}
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = defaultIndexInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// A running broker holds its log directory's .lock: never write
	// under it, and keep one from starting while this appender is open.
	broker, err := safeio.HoldBroker(filepath.Dir(filepath.Clean(dir)))
	if err != nil {
		return nil, err
	}
	// A symlinked partition directory is read through, never written
	// through (README, "Writers stay inside their directory").
	if err := partition.CheckNotLink(dir); err != nil {
		broker.Release()
		return nil, err
	}
	_, err = os.Lstat(dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		broker.Release()
		return nil, err
	}
	lock, err := lockDir(ctx, dir, opts.Wait)
	if err != nil {
		broker.Release()
		return nil, err
	}
	// Under the lock: a writer that created the directory has written a
	// partition's files before it let go.
	if err := checkPartitionDir(dir, created); err != nil {
		lock.Close()
		broker.Release()
		return nil, err
	}
	a := &Appender{dir: dir, opts: opts, lock: lock, broker: broker}
	if err := a.load(created); err != nil {
		a.closeFiles()
		lock.Close()
		broker.Release()
		return nil, err
	}
	return a, nil
}

// ErrNotPartitionDir is a directory Open refuses to append to: it holds
// entries and none of a partition's files.
var ErrNotPartitionDir = errors.New("is not empty and holds none of a partition's files (no segment, index, snapshot, leader-epoch-checkpoint or partition.metadata): klog appends only to a partition directory, a new one or an empty one")

// checkPartitionDir refuses an existing directory that is not a partition
// directory and not empty: a log dir given for one of its partitions, or
// /etc, got a segment, indexes and checkpoints among its files.
func checkPartitionDir(dir string, created bool) error {
	if created || partition.IsPartitionDir(dir) {
		return nil
	}
	des, err := os.ReadDir(dir)
	if err != nil || len(des) == 0 {
		return nil // MkdirAll says what is wrong with a file or a bad path
	}
	return &fs.PathError{Op: "append to", Path: dir, Err: ErrNotPartitionDir}
}

// Log is the partition model the Appender keeps current: readers (fetch,
// klog serve) read it while the Appender writes.
func (a *Appender) Log() *partition.Log { return a.log }

// LogEndOffset is the offset the next batch gets.
func (a *Appender) LogEndOffset() int64 { return a.log.LogEndOffset() }

// LogStartOffset is the first offset of the log.
func (a *Appender) LogStartOffset() int64 { return a.log.LogStartOffset() }

// Dir is the partition directory.
func (a *Appender) Dir() string { return a.dir }

// TopicID is the topic id the partition's partition.metadata records, zero
// when it has none.
func (a *Appender) TopicID() [16]byte { return a.topicID }

// wopts are the write options of the checkpoints the Appender writes.
func (a *Appender) wopts() partition.WriteOptions {
	return partition.WriteOptions{NoSync: a.opts.Sync == SyncNever}
}

// load reads the partition; created says Open made its directory.
func (a *Appender) load(created bool) error {
	d, err := partition.Open(a.dir)
	if err != nil {
		return err
	}
	var segs []partition.Segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	// A partition without a segment is one klog creates now, as a
	// broker creates a log: it gets partition.metadata before any
	// segment, so a refused --topic-id leaves nothing behind.
	create := created || len(segs) == 0
	if a.topicID, err = partition.EnsureTopicID(a.dir, a.opts.TopicID, create, a.wopts()); err != nil {
		return err
	}
	a.snapOffset = -1
	if n := len(d.Snapshots); n > 0 {
		a.snapOffset = d.Snapshots[n-1].Offset
	}
	if len(segs) == 0 {
		if err := a.newSegment(0); err != nil {
			return err
		}
	}
	// The model is read before the active segment is validated, so that a
	// leader-epoch-checkpoint that does not parse stops the appender before
	// it changes anything, as it stops a broker's load.
	if a.log == nil {
		if a.log, err = partition.OpenLog(a.dir, partition.LogOptions{}); err != nil {
			return err
		}
	} else if err := a.log.Reload(); err != nil {
		return err
	}
	if len(segs) > 0 {
		leo, changed, err := a.openSegment(segs[len(segs)-1])
		if err != nil {
			return err
		}
		if a.Truncated != nil {
			if err := a.dropSnapshotsAbove(d, leo); err != nil {
				return err
			}
		}
		if changed {
			if err := a.log.Reload(); err != nil {
				return err
			}
		}
	}
	if err := a.log.AttachWriter(); err != nil {
		return err
	}
	// A partition written before klog kept leader-epoch-checkpoint gets
	// the one recovery would build.
	return a.log.EnsureEpochCheckpoint(a.wopts())
}

// openSegment opens the active segment for appending after validating it:
// leo is the offset after its last valid batch, changed says an invalid
// tail or index entries past it were cut.
func (a *Appender) openSegment(s partition.Segment) (leo int64, changed bool, err error) {
	f, err := safeio.OpenFile(s.Log, os.O_RDWR, 0)
	if err != nil {
		return 0, false, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, false, err
	}
	seg := &segment{base: s.BaseOffset, log: f, maxTS: -1, maxTSOffset: -1, lastTimeIndexTS: -1, lastIndexOffset: -1}
	a.seg = seg
	size := st.Size()
	// The valid prefix: every batch complete and its CRC intact.
	sc := format.NewScanner(f, size, format.ScanOptions{})
	leo = s.BaseOffset
	valid := int64(0)
	reason := ""
	for {
		b, err := sc.Next()
		if err == io.EOF {
			if t := sc.Tail(); t.Bytes > 0 {
				reason = strconv.FormatInt(t.Bytes, 10) + " bytes of an incomplete batch"
			}
			break
		}
		if err != nil {
			if pe := (*format.PosError)(nil); !errors.As(err, &pe) {
				// An I/O error is not the end of the log: never cut on it.
				f.Close()
				return 0, false, err
			}
			reason = err.Error()
			// The scanner reports a zero tail (preallocation, an
			// unclean shutdown) with the size-0 error; say what it is.
			if t := sc.Tail(); sc.Done() && t.Kind == format.TailZeros {
				reason = strconv.FormatInt(t.Bytes, 10) + " zero bytes"
			}
			break
		}
		if !b.Valid() {
			reason = "batch at offset " + strconv.FormatInt(b.BaseOffset, 10) + " fails its CRC check"
			break
		}
		valid = b.Pos + b.Size()
		leo = b.NextOffset()
		if b.MaxTimestamp > seg.maxTS {
			seg.maxTS, seg.maxTSOffset = b.MaxTimestamp, b.LastOffset()
		}
	}
	if reason != "" && valid < size {
		t := &Truncation{Segment: s.Log, Pos: valid, Bytes: size - valid, Reason: reason}
		if !a.opts.TruncateInvalid {
			return 0, false, &InvalidTailError{T: *t}
		}
		if err := f.Truncate(valid); err != nil {
			return 0, false, err
		}
		a.Truncated = t
		size, changed = valid, true
	}
	seg.size = size
	cut := false
	if seg.index, cut, err = openIndex(s.Index, filepath.Join(a.dir, partition.FileName(s.BaseOffset, partition.IndexSuffix)),
		format.OffsetIndexEntrySize, func(e []byte) bool {
			return entryPos(e) < valid && s.BaseOffset+int64(int32(be32(e))) < leo
		}, &seg.lastIndexOffset, &seg.indexSize, s.BaseOffset, 0); err != nil {
		return 0, false, err
	}
	changed = changed || cut
	if seg.timeindex, cut, err = openIndex(s.TimeIndex, filepath.Join(a.dir, partition.FileName(s.BaseOffset, partition.TimeIndexSuffix)),
		format.TimeIndexEntrySize, func(e []byte) bool {
			return s.BaseOffset+int64(int32(be32(e[8:]))) < leo
		}, &seg.lastTimeIndexTS, &seg.timeIndexSize, s.BaseOffset, 1); err != nil {
		return 0, false, err
	}
	return leo, changed || cut, nil
}

// dropSnapshotsAbove deletes the producer snapshots above the log end offset
// after Open cut an invalid tail, as the broker does when it truncates
// (ProducerStateManager.truncateAndReload): a snapshot of offsets the log no
// longer holds would describe producers that never wrote what is left.
func (a *Appender) dropSnapshotsAbove(d *partition.Dir, leo int64) error {
	keep := d.Snapshots[:0]
	for _, sn := range d.Snapshots {
		if sn.Offset <= leo {
			keep = append(keep, sn)
			continue
		}
		if err := os.Remove(sn.Path); err != nil {
			return err
		}
	}
	d.Snapshots = keep
	a.snapOffset = -1
	if n := len(keep); n > 0 {
		a.snapOffset = keep[n-1].Offset
	}
	return syncDir(a.dir)
}

// InvalidTailError: the active segment does not end with a whole valid batch.
type InvalidTailError struct{ T Truncation }

func (e *InvalidTailError) Error() string {
	return e.T.Segment + ": invalid data at position " + strconv.FormatInt(e.T.Pos, 10) + " (" + e.T.Reason +
		", " + strconv.FormatInt(e.T.Bytes, 10) + " bytes to the end); refusing to append (use --truncate-invalid to cut them)"
}

// newSegment creates the files of a segment starting at base.
func (a *Appender) newSegment(base int64) error {
	// The indexes are appended to (O_APPEND), so that a cut back after a
	// failed write leaves the next write at the end; the log is written
	// at its size.
	mk := func(suffix string) (*os.File, error) {
		flag := os.O_RDWR | os.O_CREATE | os.O_EXCL
		if suffix != partition.LogSuffix {
			flag |= os.O_APPEND
		}
		return safeio.OpenFile(filepath.Join(a.dir, partition.FileName(base, suffix)), flag, 0o644)
	}
	seg := &segment{base: base, maxTS: -1, maxTSOffset: -1, lastTimeIndexTS: -1, lastIndexOffset: -1}
	var err error
	if seg.log, err = mk(partition.LogSuffix); err != nil {
		return err
	}
	if seg.index, err = mk(partition.IndexSuffix); err != nil {
		return err
	}
	if seg.timeindex, err = mk(partition.TimeIndexSuffix); err != nil {
		return err
	}
	a.seg = seg
	if err := syncDir(a.dir); err != nil {
		return err
	}
	if a.log != nil {
		return a.log.Rolled()
	}
	return nil
}

func syncDir(dir string) error { return partition.SyncDir(dir) }

func (a *Appender) closeFiles() {
	if s := a.seg; s != nil {
		for _, f := range []*os.File{s.log, s.index, s.timeindex, s.txnindex} {
			if f != nil {
				f.Close()
			}
		}
	}
}

// Sync flushes the active segment's files to disk.
func (a *Appender) Sync() error {
	if err := a.flush(nil); err != nil {
		return err
	}
	return a.syncFiles()
}

func (a *Appender) syncFiles() error {
	s := a.seg
	for _, f := range []*os.File{s.log, s.index, s.timeindex, s.txnindex} {
		if f != nil {
			if err := f.Sync(); err != nil {
				return err
			}
		}
	}
	a.dirty = false
	return nil
}

// Close leaves the partition as a broker's clean shutdown does
// (UnifiedLog.close, LogSegment.close): the active segment's time index gets
// the segment's largest timestamp and its offset when its last entry differs
// (TimeIndex.maybeAppend), a producer snapshot is written at the log end
// offset when none is there yet (ProducerStateManager.takeSnapshot), the files
// are synced (unless SyncNever) and closed, and the lock is released. The
// indexes are never preallocated, so there is nothing to trim. Then a broker
// starting without recovery answers timestamp queries as one that rebuilt
// the indexes.
func (a *Appender) Close() error {
	err := a.closeSegment()
	a.closeFiles()
	if cerr := a.lock.Close(); err == nil {
		err = cerr
	}
	if cerr := a.broker.Release(); err == nil {
		err = cerr
	}
	return err
}

// closeSegment is what a segment close and a roll share: the max timestamp
// entry, the sync and the producer snapshot at the log end offset.
func (a *Appender) closeSegment() error {
	s := a.seg
	if s == nil {
		return nil
	}
	if err := a.flush(nil); err != nil {
		return err
	}
	if s.maxTS >= 0 && s.maxTS > s.lastTimeIndexTS {
		a.timeIndexEntry(s.maxTS, s.maxTSOffset)
		if err := a.flush(nil); err != nil {
			return err
		}
	}
	if a.dirty && a.opts.Sync != SyncNever {
		if err := a.Sync(); err != nil {
			return err
		}
	}
	if leo := a.log.LogEndOffset(); leo > a.snapOffset {
		if err := a.writeSnapshot(leo); err != nil {
			return err
		}
		a.snapOffset = leo
	}
	return nil
}
