package partition

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/klog-dev/klog/format"
)

// This file is klog's one home of the broker's lookups over a partition
// directory: where an offset is (LogSegment.translateOffset) and which offset
// a timestamp names (UnifiedLog.fetchOffsetByTimestamp, the ListOffsets
// path). fetch, `klog offsets` and `klog find` all go through it.
//
// The rules, from Kafka 4.3.1 (storage/.../log/UnifiedLog.java,
// LogSegment.java, TimeIndex.java, FileRecords.java) and checked against its
// answers (spec §5.5):
//   - EARLIEST is the log start offset, with the first leader epoch entry's
//     epoch when that entry starts at or below it; LATEST is the log end
//     offset with the latest epoch.
//   - MAX_TIMESTAMP takes the segment with the largest "max timestamp so
//     far" (its last time index entry; the first segment on ties), looks up
//     that entry's offset in the offset index, and returns the first record
//     whose timestamp is the max timestamp in the first batch from there
//     whose max timestamp equals it. Modification times are never used; a
//     log whose time indexes are all empty (v0) answers nothing.
//   - A timestamp T: the first segment whose largest timestamp is >= T is
//     the only one searched. A segment's largest timestamp is its last time
//     index entry's timestamp, or, when that is negative (no entry), the
//     .log file's modification time. In it, the time index entry with the
//     largest timestamp <= T, the offset index entry for that entry's offset,
//     and from there the first record (control records included) with
//     timestamp >= T and offset >= the log start offset.
//   - The leader epoch of a timestamp answer is its batch's
//     partitionLeaderEpoch (none when negative).

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
	// epochs from the batches as recovery does.
	IndexesRebuilt
)

func (m IndexMode) String() string {
	if m == IndexesRebuilt {
		return "rebuilt"
	}
	return "as-found"
}

// LogOptions configures OpenLog.
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
	// Tests inject readers that count the bytes read.
	Open func(path string) (File, error)
}

// File is what a Log reads a partition file through; *os.File satisfies it.
type File interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

func osOpen(path string) (File, error) { return os.Open(path) }

// maxIndexBytes bounds an index file read into memory (Kafka's
// segment.index.bytes defaults to 10 MiB).
const maxIndexBytes = 256 << 20

// Log is a partition directory opened read-only for the broker's lookups.
// It is not safe for concurrent use.
type Log struct {
	Dir      *Dir
	Segments []*LogSegment
	// Epochs is the leader epoch cache: the leader-epoch-checkpoint's
	// entries, plus (IndexesRebuilt) the epochs recovery assigns from the
	// batches.
	Epochs []format.EpochEntry
	// LogStartOffset is the first segment's base offset.
	LogStartOffset int64

	leo    int64 // -1 until LogEndOffset reads it
	leoErr error

	opts LogOptions
	sc   *format.Scanner
	rr   format.RecordReader
	rec  format.Record
}

// LogSegment is one segment of a Log.
type LogSegment struct {
	Segment
	// Size is the .log's size (IndexesRebuilt: its valid prefix).
	Size int64
	// ModTime is the .log's modification time in epoch ms
	// (LogSegment.lastModified).
	ModTime int64
	// MaxTimestamp and MaxTimestampOffset are the segment's "max timestamp
	// so far" and the offset stored with it: the time index's last entry,
	// or (-1, base offset) when it has none (IndexesRebuilt: the largest
	// batch max timestamp and that batch's last offset).
	MaxTimestamp       int64
	MaxTimestampOffset int64
	// TimeIndexEntries is how many entries the time index holds.
	TimeIndexEntries int

	idx  *format.OffsetIndex
	tidx *format.TimeIndex
}

// LargestTimestamp is LogSegment.largestTimestamp: MaxTimestamp when it is
// not negative, else the .log's modification time (then byModTime is true).
func (s *LogSegment) LargestTimestamp() (ts int64, byModTime bool) {
	if s.MaxTimestamp >= 0 {
		return s.MaxTimestamp, false
	}
	return s.ModTime, true
}

// OpenLog opens the partition directory d for lookups. Segments without a
// .log are ignored, as the broker deletes their index files.
func OpenLog(d *Dir, opts LogOptions) (*Log, error) {
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = 4096
	}
	if opts.Open == nil {
		opts.Open = osOpen
	}
	l := &Log{Dir: d, opts: opts, leo: -1}
	l.rr.Decompressor.MaxBytes = opts.MaxDecompressedBytes
	if d.LeaderEpochs != "" {
		data, err := os.ReadFile(d.LeaderEpochs)
		if err != nil {
			return nil, err
		}
		if l.Epochs, err = format.ParseLeaderEpochCheckpoint(data); err != nil {
			return nil, &LookupError{Path: d.LeaderEpochs, Pos: -1, Err: err}
		}
	}
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		f, err := opts.Open(s.Log)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		f.Close()
		if err != nil {
			return nil, err
		}
		ls := &LogSegment{Segment: s, Size: st.Size(), ModTime: st.ModTime().UnixMilli()}
		l.Segments = append(l.Segments, ls)
	}
	if len(l.Segments) == 0 {
		return nil, errors.New("partition: " + d.Path + " holds no log segment")
	}
	l.LogStartOffset = l.Segments[0].BaseOffset
	for _, s := range l.Segments {
		var err error
		if opts.Mode == IndexesRebuilt {
			err = l.rebuild(s)
		} else {
			err = l.readLastTimeEntry(s)
		}
		if err != nil {
			return nil, err
		}
	}
	if opts.Mode == IndexesRebuilt {
		l.LogEndOffset() // the scan is done: keep it
	}
	return l, nil
}

// LogEndOffset is the offset after the last whole batch of the last
// segment (its base offset when it has none), read on first use.
func (l *Log) LogEndOffset() (int64, error) {
	if l.leo < 0 && l.leoErr == nil {
		l.leo, l.leoErr = l.nextOffset(l.Segments[len(l.Segments)-1])
		if l.leoErr != nil {
			l.leo = -1
		}
	}
	return l.leo, l.leoErr
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

// readLastTimeEntry reads only the last entry of a segment's time index:
// all a segment's largest timestamp needs (TimeIndex.lastEntryFromIndexFile).
func (l *Log) readLastTimeEntry(s *LogSegment) error {
	s.MaxTimestamp, s.MaxTimestampOffset = format.NoTimestamp, s.BaseOffset
	if s.TimeIndex == "" {
		return nil
	}
	f, err := l.opts.Open(s.TimeIndex)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	n := st.Size() / format.TimeIndexEntrySize
	s.TimeIndexEntries = int(min(n, 1<<40))
	if n == 0 {
		return nil
	}
	var buf [format.TimeIndexEntrySize]byte
	at := (n - 1) * format.TimeIndexEntrySize
	if _, err := f.ReadAt(buf[:], at); err != nil {
		return &LookupError{Path: s.TimeIndex, Pos: at, Err: err}
	}
	x := format.TimeIndex{BaseOffset: s.BaseOffset, Data: buf[:]}
	e := x.Entry(0)
	s.MaxTimestamp, s.MaxTimestampOffset = e.Timestamp, e.Offset
	return nil
}

// readIndexFile reads a whole index file; a missing file reads as empty, as
// the broker creates it empty.
func (l *Log) readIndexFile(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := l.opts.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxIndexBytes {
		return nil, &LookupError{Path: path, Pos: -1, Err: errors.New("index file of " + strconv.FormatInt(st.Size(), 10) + " bytes is over the 256 MiB limit")}
	}
	buf := make([]byte, st.Size())
	if n, err := f.ReadAt(buf, 0); int64(n) < st.Size() {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, &LookupError{Path: path, Pos: int64(n), Err: err}
	}
	return buf, nil
}

// OffsetIndex is the segment's offset index (loaded on first use).
func (l *Log) OffsetIndex(s *LogSegment) (*format.OffsetIndex, error) {
	if s.idx == nil {
		data, err := l.readIndexFile(s.Index)
		if err != nil {
			return nil, err
		}
		s.idx = &format.OffsetIndex{BaseOffset: s.BaseOffset, Data: data}
	}
	return s.idx, nil
}

// TimeIndex is the segment's time index (loaded on first use).
func (l *Log) TimeIndex(s *LogSegment) (*format.TimeIndex, error) {
	if s.tidx == nil {
		data, err := l.readIndexFile(s.TimeIndex)
		if err != nil {
			return nil, err
		}
		s.tidx = &format.TimeIndex{BaseOffset: s.BaseOffset, Data: data}
	}
	return s.tidx, nil
}

// scanner returns the Log's scanner over a segment's .log, which must be
// closed by the caller.
func (l *Log) scanner(s *LogSegment, headersOnly bool) (File, *format.Scanner, error) {
	f, err := l.opts.Open(s.Log)
	if err != nil {
		return nil, nil, err
	}
	if headersOnly {
		return f, format.NewScanner(f, s.Size, format.ScanOptions{HeadersOnly: true, MaxBatchBytes: l.opts.MaxBatchBytes}), nil
	}
	if l.sc == nil {
		l.sc = format.NewScanner(f, s.Size, format.ScanOptions{MaxBatchBytes: l.opts.MaxBatchBytes})
	} else {
		l.sc.Reset(f, s.Size)
	}
	return f, l.sc, nil
}

// rebuild is LogSegment.recover without writing: the valid prefix of the
// segment, its indexes rebuilt in memory, and leader epochs assigned.
func (l *Log) rebuild(s *LogSegment) error {
	f, sc, err := l.scanner(s, false)
	if err != nil {
		return err
	}
	defer f.Close()
	s.MaxTimestamp, s.MaxTimestampOffset = format.NoTimestamp, s.BaseOffset
	var idx, tidx []byte
	lastTS := int64(format.NoTimestamp)
	addTime := func() {
		if s.MaxTimestamp > lastTS { // TimeIndex.maybeAppend
			tidx = format.AppendTimeEntry(tidx, s.BaseOffset, format.TimeEntry{Timestamp: s.MaxTimestamp, Offset: s.MaxTimestampOffset})
			lastTS = s.MaxTimestamp
		}
	}
	valid, lastIndexed := int64(0), int64(0)
	for {
		b, err := sc.Next()
		if err != nil || !b.Valid() {
			break // the end of the valid prefix (a read error ends it too)
		}
		if b.MaxTimestamp > s.MaxTimestamp {
			s.MaxTimestamp, s.MaxTimestampOffset = b.MaxTimestamp, b.LastOffset()
		}
		if valid-lastIndexed > l.opts.IndexIntervalBytes {
			idx = format.AppendIndexEntry(idx, s.BaseOffset, format.IndexEntry{Offset: b.LastOffset(), Pos: valid})
			addTime()
			lastIndexed = valid
		}
		valid += b.Size()
		if b.IsV2() && b.PartitionLeaderEpoch >= 0 {
			if n := len(l.Epochs); n == 0 || b.PartitionLeaderEpoch > l.Epochs[n-1].Epoch {
				l.Epochs = AssignEpoch(l.Epochs, b.PartitionLeaderEpoch, b.BaseOffset)
			}
		}
	}
	addTime()
	s.Size = valid
	s.idx = &format.OffsetIndex{BaseOffset: s.BaseOffset, Data: idx}
	s.tidx = &format.TimeIndex{BaseOffset: s.BaseOffset, Data: tidx}
	s.TimeIndexEntries = s.tidx.Entries()
	return nil
}

// AssignEpoch is LeaderEpochFileCache.assign for an epoch above the latest:
// entries starting at or after startOffset give way, then the new entry is
// appended. An epoch not above the latest leaves the cache as it is.
func AssignEpoch(es []format.EpochEntry, epoch int32, startOffset int64) []format.EpochEntry {
	if n := len(es); n > 0 && epoch <= es[n-1].Epoch {
		return es
	}
	for len(es) > 0 && es[len(es)-1].StartOffset >= startOffset {
		es = es[:len(es)-1]
	}
	return append(es, format.EpochEntry{Epoch: epoch, StartOffset: startOffset})
}

// nextOffset is the offset after the segment's last whole batch, read from
// its last offset index entry on (LogSegment.readNextOffset), or from the
// segment start when that entry does not lead to batches.
func (l *Log) nextOffset(s *LogSegment) (int64, error) {
	idx, err := l.OffsetIndex(s)
	if err != nil {
		return 0, err
	}
	start := int64(0)
	if n := idx.Entries(); n > 0 {
		if e := idx.Entry(n - 1); e.Pos > 0 && e.Pos < s.Size {
			start = e.Pos
		}
	}
	f, sc, err := l.scanner(s, true)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for {
		next, ok := s.BaseOffset, false
		sc.SetPos(start)
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			next, ok = b.NextOffset(), true
		}
		if ok || start == 0 {
			return next, nil
		}
		start = 0
	}
}

// BatchPosition is where LogSegment.translateOffset found a batch.
type BatchPosition struct {
	Pos        int64
	Size       int64
	LastOffset int64
}

// TranslateOffset is LogSegment.translateOffset over a segment's .log of
// size bytes read through r: the offset index lookup for offset (or
// startPos, when larger: a position the caller knows every earlier batch
// ends below offset), then the first batch from there whose last offset is
// >= offset. ok is false when the segment holds none. An index entry that
// does not lead to a batch (a damaged index the broker would have rebuilt)
// makes the search start again at position 0.
func TranslateOffset(r io.ReaderAt, size int64, idx *format.OffsetIndex, offset, startPos int64) (BatchPosition, bool, error) {
	start := int64(0)
	if idx != nil {
		if e := idx.Lookup(offset); e.Pos > 0 && e.Pos < size {
			start = e.Pos
		}
	}
	start = max(start, min(startPos, size))
	sc := format.NewScanner(r, size, format.ScanOptions{HeadersOnly: true})
	sc.SetPos(start)
	for {
		b, err := sc.Next()
		if err != nil {
			var pe *format.PosError
			// Nothing readable from a position the index gave (a
			// damaged index): search from the segment start.
			noBatch := errors.Is(err, io.EOF) && sc.Pos() == start && start < size
			if start != 0 && (errors.As(err, &pe) || noBatch) {
				start = 0
				sc.Reset(r, size)
				continue
			}
			if errors.Is(err, io.EOF) || errors.As(err, &pe) {
				return BatchPosition{}, false, nil
			}
			return BatchPosition{}, false, err
		}
		if b.LastOffset() >= offset {
			return BatchPosition{Pos: b.Pos, Size: b.Size(), LastOffset: b.LastOffset()}, true, nil
		}
	}
}

// ListOffsets special timestamps (ListOffsetsRequest).
const (
	LatestTimestamp   int64 = -1
	EarliestTimestamp int64 = -2
	MaxTimestamp      int64 = -3
	// EarliestLocalTimestamp is EARLIEST_LOCAL_TIMESTAMP, which a log
	// without remote storage answers as EarliestTimestamp.
	EarliestLocalTimestamp int64 = -4
)

// NoEpoch is an answer without a leader epoch.
const NoEpoch int32 = -1

// TimestampAndOffset is the answer of FetchOffsetByTimestamp
// (FileRecords.TimestampAndOffset).
type TimestampAndOffset struct {
	// Found is false when the log has no answer (Kafka's empty Optional).
	Found     bool
	Offset    int64
	Timestamp int64 // -1 for EARLIEST and LATEST
	// LeaderEpoch is NoEpoch when the answer has none.
	LeaderEpoch int32
	// Segment is the index in Log.Segments of the segment searched, -1
	// when none was (EARLIEST, LATEST, or no segment's largest timestamp
	// reaches the target).
	Segment int
	// ByModTime: the segment was chosen by the .log's modification time
	// because its time index has no entry.
	ByModTime bool
	// Batch is the position of the batch holding the answer (timestamp
	// and MAX_TIMESTAMP answers).
	Batch BatchPosition
}

// FetchOffsetByTimestamp answers a ListOffsets target as
// UnifiedLog.fetchOffsetByTimestamp does (no remote storage): one of the
// special timestamps or a timestamp in epoch ms.
func (l *Log) FetchOffsetByTimestamp(target int64) (TimestampAndOffset, error) {
	none := TimestampAndOffset{Segment: -1, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}
	switch target {
	case EarliestTimestamp, EarliestLocalTimestamp:
		r := TimestampAndOffset{Found: true, Offset: l.LogStartOffset, Timestamp: -1, LeaderEpoch: NoEpoch, Segment: -1}
		if len(l.Epochs) > 0 && l.Epochs[0].StartOffset <= l.LogStartOffset {
			r.LeaderEpoch = l.Epochs[0].Epoch
		}
		return r, nil
	case LatestTimestamp:
		leo, err := l.LogEndOffset()
		if err != nil {
			return none, err
		}
		return TimestampAndOffset{Found: true, Offset: leo, Timestamp: -1, LeaderEpoch: l.LatestEpoch(), Segment: -1}, nil
	case MaxTimestamp:
		return l.maxTimestamp()
	}
	for i, s := range l.Segments {
		ts, byMod := s.LargestTimestamp()
		if ts < target {
			continue
		}
		r, err := l.findOffsetByTimestamp(i, target, l.LogStartOffset)
		r.ByModTime = byMod
		return r, err
	}
	return none, nil
}

// LatestEpoch is the leader epoch cache's latest epoch, or NoEpoch.
func (l *Log) LatestEpoch() int32 {
	if n := len(l.Epochs); n > 0 {
		return l.Epochs[n-1].Epoch
	}
	return NoEpoch
}

// TimeLookup is the first two steps of LogSegment.findOffsetByTimestamp:
// the time index entry for target (slot -1: none, the segment's base
// offset) and the offset index entry for max(its offset, startOffset).
type TimeLookup struct {
	TimeSlot  int
	TimeEntry format.TimeEntry
	IndexSlot int
	Entry     format.IndexEntry
}

// LookupTime runs those two steps on segment i.
func (l *Log) LookupTime(i int, target, startOffset int64) (TimeLookup, error) {
	s := l.Segments[i]
	tx, err := l.TimeIndex(s)
	if err != nil {
		return TimeLookup{}, err
	}
	idx, err := l.OffsetIndex(s)
	if err != nil {
		return TimeLookup{}, err
	}
	lk := TimeLookup{TimeSlot: tx.LookupSlot(target)}
	lk.TimeEntry = tx.Lookup(target)
	off := max(lk.TimeEntry.Offset, startOffset)
	lk.IndexSlot = idx.LookupSlot(off)
	lk.Entry = idx.Lookup(off)
	return lk, nil
}

// findOffsetByTimestamp is LogSegment.findOffsetByTimestamp on segment i
// with FileRecords.searchForTimestamp.
func (l *Log) findOffsetByTimestamp(i int, target, startOffset int64) (TimestampAndOffset, error) {
	none := TimestampAndOffset{Segment: i, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}
	lk, err := l.LookupTime(i, target, startOffset)
	if err != nil {
		return none, err
	}
	s := l.Segments[i]
	f, sc, err := l.scanner(s, false)
	if err != nil {
		return none, err
	}
	defer f.Close()
	if lk.Entry.Pos < 0 || lk.Entry.Pos >= s.Size {
		return none, nil // batchesFrom past the end: no batch
	}
	sc.SetPos(lk.Entry.Pos)
	for {
		b, err := sc.Next()
		if err != nil {
			return none, scanEnd(s.Log, err)
		}
		if b.MaxTimestamp < target {
			continue
		}
		if err := l.rr.Reset(b); err != nil {
			return none, &LookupError{Path: s.Log, Pos: b.Pos, Err: err}
		}
		for {
			err := l.rr.Next(&l.rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return none, &LookupError{Path: s.Log, Pos: b.Pos, Err: err}
			}
			if l.rec.Timestamp >= target && l.rec.Offset >= startOffset {
				return TimestampAndOffset{Found: true, Offset: l.rec.Offset, Timestamp: l.rec.Timestamp,
					LeaderEpoch: batchEpoch(b), Segment: i, Batch: BatchPosition{Pos: b.Pos, Size: b.Size(), LastOffset: b.LastOffset()}}, nil
			}
		}
	}
}

// scanEnd turns the end of a scan into nil and keeps read errors: data the
// reader rejects ends the batches as it ends Kafka's iteration.
func scanEnd(path string, err error) error {
	var pe *format.PosError
	if errors.Is(err, io.EOF) || errors.As(err, &pe) {
		return nil
	}
	return &LookupError{Path: path, Pos: -1, Err: err}
}

func batchEpoch(b *format.Batch) int32 {
	if b.IsV2() && b.PartitionLeaderEpoch >= 0 {
		return b.PartitionLeaderEpoch
	}
	return NoEpoch
}

// maxTimestamp is the MAX_TIMESTAMP branch of fetchOffsetByTimestamp.
func (l *Log) maxTimestamp() (TimestampAndOffset, error) {
	best := 0
	for i, s := range l.Segments {
		if s.MaxTimestamp > l.Segments[best].MaxTimestamp {
			best = i
		}
	}
	s := l.Segments[best]
	none := TimestampAndOffset{Segment: best, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}
	idx, err := l.OffsetIndex(s)
	if err != nil {
		return none, err
	}
	pos := idx.Lookup(s.MaxTimestampOffset).Pos
	if pos < 0 || pos >= s.Size {
		return none, nil
	}
	f, sc, err := l.scanner(s, false)
	if err != nil {
		return none, err
	}
	defer f.Close()
	sc.SetPos(pos)
	for {
		b, err := sc.Next()
		if err != nil {
			return none, scanEnd(s.Log, err)
		}
		if b.MaxTimestamp != s.MaxTimestamp {
			continue
		}
		// RecordBatch.offsetOfMaxTimestamp: none for v0, else the first
		// record whose timestamp is the batch's max timestamp.
		if b.Magic == format.MagicV0 {
			return none, nil
		}
		if err := l.rr.Reset(b); err != nil {
			return none, &LookupError{Path: s.Log, Pos: b.Pos, Err: err}
		}
		for {
			err := l.rr.Next(&l.rec)
			if errors.Is(err, io.EOF) {
				return none, nil
			}
			if err != nil {
				return none, &LookupError{Path: s.Log, Pos: b.Pos, Err: err}
			}
			if l.rec.Timestamp == b.MaxTimestamp {
				return TimestampAndOffset{Found: true, Offset: l.rec.Offset, Timestamp: b.MaxTimestamp, LeaderEpoch: batchEpoch(b),
					Segment: best, Batch: BatchPosition{Pos: b.Pos, Size: b.Size(), LastOffset: b.LastOffset()}}, nil
			}
		}
	}
}

// ListOffsets is the answer a consumer gets (Partition.fetchOffsetForTimestamp
// with an isolation level): LATEST is bound itself (the high watermark, or
// the last stable offset for read_committed) with the latest epoch; any other
// answer at or past bound, or no answer, is offset -1, timestamp -1 and no
// epoch.
func (l *Log) ListOffsets(target, bound int64) (TimestampAndOffset, error) {
	if target == LatestTimestamp {
		return TimestampAndOffset{Found: true, Offset: bound, Timestamp: -1, LeaderEpoch: l.LatestEpoch(), Segment: -1}, nil
	}
	r, err := l.FetchOffsetByTimestamp(target)
	if err != nil {
		return r, err
	}
	if !r.Found || (target != EarliestTimestamp && target != EarliestLocalTimestamp && r.Offset >= bound) {
		r.Found, r.Offset, r.Timestamp, r.LeaderEpoch = false, -1, -1, NoEpoch
	}
	return r, nil
}
