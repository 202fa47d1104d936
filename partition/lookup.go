package partition

import (
	"errors"
	"io"
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

// offsetIndex is the segment's offset index (IndexesRebuilt: the one built
// in memory), read through the index cache; the caller holds l.mu.
func (l *Log) offsetIndex(s *LogSegment) (*format.OffsetIndex, error) {
	if s.idx != nil {
		return s.idx, nil
	}
	data, err := l.indexData(s.Index)
	if err != nil {
		return nil, err
	}
	return &format.OffsetIndex{BaseOffset: s.BaseOffset, Data: data}, nil
}

// timeIndex is the segment's time index, as offsetIndex.
func (l *Log) timeIndex(s *LogSegment) (*format.TimeIndex, error) {
	if s.tidx != nil {
		return s.tidx, nil
	}
	data, err := l.indexData(s.TimeIndex)
	if err != nil {
		return nil, err
	}
	return &format.TimeIndex{BaseOffset: s.BaseOffset, Data: data}, nil
}

// scanner returns the Log's scanner over a segment's .log, which must be
// closed by the caller.
func (l *Log) scanner(s *LogSegment, headersOnly bool) (File, *format.Scanner, error) {
	f, err := l.opts.Open(s.Log)
	if err != nil {
		return nil, nil, err
	}
	if headersOnly {
		return f, l.headerScanner(f, s.Size), nil
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
			if n := len(l.epochs); n == 0 || b.PartitionLeaderEpoch > l.epochs[n-1].Epoch {
				l.epochs = AssignEpoch(l.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshLocked(); err != nil {
		return TimestampAndOffset{Segment: -1, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}, err
	}
	return l.fetchOffsetByTimestamp(target)
}

func (l *Log) fetchOffsetByTimestamp(target int64) (TimestampAndOffset, error) {
	none := TimestampAndOffset{Segment: -1, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}
	switch target {
	case EarliestTimestamp, EarliestLocalTimestamp:
		r := TimestampAndOffset{Found: true, Offset: l.logStart, Timestamp: -1, LeaderEpoch: NoEpoch, Segment: -1}
		if len(l.epochs) > 0 && l.epochs[0].StartOffset <= l.logStart {
			r.LeaderEpoch = l.epochs[0].Epoch
		}
		return r, nil
	case LatestTimestamp:
		if err := l.endLocked(); err != nil {
			return none, err
		}
		return TimestampAndOffset{Found: true, Offset: l.leo, Timestamp: -1, LeaderEpoch: l.latestEpochLocked(), Segment: -1}, nil
	case MaxTimestamp:
		return l.maxTimestamp()
	}
	for i, s := range l.segs {
		ts, byMod := s.LargestTimestamp()
		if ts < target {
			continue
		}
		r, err := l.findOffsetByTimestamp(i, target, l.logStart)
		r.ByModTime = byMod
		return r, err
	}
	return none, nil
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

// LookupTime runs those two steps on segment i (of Segments).
func (l *Log) LookupTime(i int, target, startOffset int64) (TimeLookup, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.segs) {
		return TimeLookup{}, errors.New("partition: no segment " + strconv.Itoa(i) + " in " + l.path)
	}
	return l.lookupTime(i, target, startOffset)
}

func (l *Log) lookupTime(i int, target, startOffset int64) (TimeLookup, error) {
	s := l.segs[i]
	tx, err := l.timeIndex(s)
	if err != nil {
		return TimeLookup{}, err
	}
	idx, err := l.offsetIndex(s)
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
	lk, err := l.lookupTime(i, target, startOffset)
	if err != nil {
		return none, err
	}
	s := l.segs[i]
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
	for i, s := range l.segs {
		if s.MaxTimestamp > l.segs[best].MaxTimestamp {
			best = i
		}
	}
	s := l.segs[best]
	none := TimestampAndOffset{Segment: best, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}
	idx, err := l.offsetIndex(s)
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshLocked(); err != nil {
		return TimestampAndOffset{Segment: -1, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}, err
	}
	return l.listOffsets(target, bound)
}

func (l *Log) listOffsets(target, bound int64) (TimestampAndOffset, error) {
	if target == LatestTimestamp {
		return TimestampAndOffset{Found: true, Offset: bound, Timestamp: -1, LeaderEpoch: l.latestEpochLocked(), Segment: -1}, nil
	}
	r, err := l.fetchOffsetByTimestamp(target)
	if err != nil {
		return r, err
	}
	if !r.Found || (target != EarliestTimestamp && target != EarliestLocalTimestamp && r.Offset >= bound) {
		r.Found, r.Offset, r.Timestamp, r.LeaderEpoch = false, -1, -1, NoEpoch
	}
	return r, nil
}
