package partition

import (
	"encoding/binary"
	"os"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// The lookups package fetch's read rules are built on (UnifiedLog.read,
// LocalLog.read, LogSegment.read, LocalLog.collectAbortedTransactions).

// ReadStart is where a read from an offset begins.
type ReadStart struct {
	// Found is false when no batch at or below the bound reaches the
	// offset.
	Found bool
	// Segment is the .log the read takes its bytes from; SegmentBase its
	// base offset.
	Segment     string
	SegmentBase int64
	// Pos and FirstSize are the position and size of the first batch whose
	// last offset reaches the offset (LogSegment.translateOffset).
	Pos, FirstSize int64
	// MaxPos is where the read must stop in Segment: the position of the
	// bound (the start of the batch holding it, or the end of the active
	// segment for the log end offset), or the end of Segment.
	MaxPos int64
}

// ReadStart finds where a read of offset bounded by bound (an offset, as a
// read's isolation gives it: the high watermark, the last stable offset or
// the log end offset) begins, as LocalLog.read does: from the segment
// holding offset, the first batch whose last offset is >= offset; a
// segment holding none passes the read to the next.
func (l *Log) ReadStart(offset, bound int64) (ReadStart, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.readyLocked(); err != nil {
		return ReadStart{}, err
	}
	boundSeg, boundPos, err := l.position(bound)
	if err != nil {
		return ReadStart{}, err
	}
	for i := l.segmentIndex(offset); i < len(l.segs); i++ {
		s := l.segs[i]
		if s.BaseOffset > boundSeg.BaseOffset {
			break
		}
		start, firstSize, ok, err := l.translate(s, offset)
		if err != nil {
			return ReadStart{}, err
		}
		if !ok {
			continue
		}
		maxPos := s.end
		if s == boundSeg {
			maxPos = boundPos
		}
		return ReadStart{Found: true, Segment: s.Log, SegmentBase: s.BaseOffset, Pos: start, FirstSize: firstSize, MaxPos: maxPos}, nil
	}
	return ReadStart{}, nil
}

// NoteBatchBoundary records what a read saw: in the segment with base
// offset segmentBase, every batch before pos ends below offset, so a later
// read from offset may start scanning there.
func (l *Log) NoteBatchBoundary(segmentBase, offset, pos int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.segs {
		if s.BaseOffset == segmentBase && pos <= s.end {
			s.hintOffset, s.hintPos = offset, pos
		}
	}
}

// segmentIndex is the segment with the largest base offset <= offset.
func (l *Log) segmentIndex(offset int64) int {
	i := 0
	for j, s := range l.segs {
		if s.BaseOffset <= offset {
			i = j
		}
	}
	return i
}

// position is the (segment, byte position) of an offset, as
// convertToOffsetMetadata gives it: the start of the batch holding it, or
// the end of the active segment for the log end offset.
func (l *Log) position(offset int64) (*LogSegment, int64, error) {
	if offset >= l.leo {
		last := l.segs[len(l.segs)-1]
		return last, last.end, nil
	}
	s := l.segs[l.segmentIndex(offset)]
	pos, _, ok, err := l.translate(s, offset)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return s, s.end, nil
	}
	return s, pos, nil
}

// maxCachedIndexBytes bounds the offset index a read takes whole: a larger
// file, real or a sparse 2 GiB one, is probed in place or streamed.
const maxCachedIndexBytes = 16 << 20

// readIndex is the segment's offset index for a read, nil when the file is
// too large to take whole (or cannot be read: the read then scans from the
// segment start, as a broker would after rebuilding a damaged index).
func (l *Log) readIndex(s *LogSegment) *format.OffsetIndex {
	if s.idx != nil {
		return s.idx
	}
	if s.Index == "" {
		return nil
	}
	st, err := os.Stat(s.Index)
	if err != nil || st.Size() > maxCachedIndexBytes {
		return nil
	}
	idx, err := l.offsetIndex(s)
	if err != nil {
		return nil
	}
	return idx
}

// translate finds the first batch whose last offset is >= offset with
// TranslateOffset (LogSegment.translateOffset), starting past the batches
// an earlier read showed to end below offset. It returns the batch's
// position and size.
func (l *Log) translate(s *LogSegment, offset int64) (pos, size int64, ok bool, err error) {
	if s.tailKnown && s.tailBound <= offset && offset <= s.tailLast && s.tailPos+s.tailSize == s.end {
		// Every batch before the last appended one ends below offset,
		// and that one reaches it: it is the batch, and the index and
		// the log need not be read to find it.
		s.hintOffset, s.hintPos = offset, s.tailPos
		return s.tailPos, s.tailSize, true, nil
	}
	idx := l.readIndex(s)
	if idx == nil && s.Index != "" && s.idx == nil {
		// Too large to take whole: probed in place (the index's size is
		// not trusted); the entry found stands for the index.
		if xf, xsize, rerr := safeio.OpenSized(s.Index); rerr == nil {
			if e, lerr := format.LookupOffsetIndexAt(xf, xsize, s.BaseOffset, offset); lerr == nil && e.Pos > 0 {
				var one [format.OffsetIndexEntrySize]byte
				binary.BigEndian.PutUint32(one[:], uint32(e.Offset-s.BaseOffset))
				binary.BigEndian.PutUint32(one[4:], uint32(e.Pos))
				idx = &format.OffsetIndex{BaseOffset: s.BaseOffset, Data: one[:]}
			}
			xf.Close()
		}
	}
	hint := int64(0)
	if s.hintPos <= s.end && s.hintOffset <= offset {
		hint = s.hintPos
	}
	f, err := l.opts.Open(s.Log)
	if err != nil {
		return 0, 0, false, err
	}
	defer f.Close()
	bp, ok, err := TranslateOffset(f, s.end, idx, offset, hint)
	if err != nil || !ok {
		return 0, 0, false, err
	}
	s.hintOffset, s.hintPos = offset, bp.Pos
	if bp.Pos+bp.Size == s.end {
		// The last batch: every batch before it ends below offset, and
		// it ends at its last offset.
		s.endBound, s.endAt, s.endKnown = max(offset, bp.LastOffset+1), s.end, true
	}
	return bp.Pos, bp.Size, true, nil
}

// AbortedTxn is an aborted transaction a read_committed fetch reports: its
// producer and first offset.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// MaxAbortedTxns bounds the aborted transactions one read lists: a real
// read spans a handful; a hostile .txnindex could name millions.
const MaxAbortedTxns = 1 << 16

// AbortedTxns appends to dst the aborted transactions overlapping a read
// from fetchOffset that took size bytes at pos of the segment with base
// offset segmentBase (LocalLog.collectAbortedTransactions): up to the first
// offset index entry past the bytes read (OffsetIndex.fetchUpperBoundOffset),
// else the next segment's base, else the log end; at most MaxAbortedTxns.
func (l *Log) AbortedTxns(dst []AbortedTxn, segmentBase, fetchOffset, pos, size int64) ([]AbortedTxn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.readyLocked(); err != nil {
		return dst, err
	}
	i := -1
	for j, s := range l.segs {
		if s.BaseOffset == segmentBase {
			i = j
		}
	}
	if i < 0 {
		return dst, nil
	}
	s := l.segs[i]
	upper := int64(-1)
	if idx := l.readIndex(s); idx != nil {
		n := idx.Used()
		for j := 0; j < n; j++ {
			if e := idx.Entry(j); e.Pos >= pos+size {
				upper = e.Offset
				break
			}
		}
	} else if s.Index != "" {
		// Too large to take whole: streamed.
		if xf, err := os.Open(s.Index); err == nil {
			format.ScanOffsetIndex(xf, s.BaseOffset, func(_ int, e format.IndexEntry) bool {
				if e.Pos >= pos+size {
					upper = e.Offset
					return false
				}
				return true
			})
			xf.Close()
		}
	}
	if upper < 0 {
		if i+1 < len(l.segs) {
			upper = l.segs[i+1].BaseOffset
		} else {
			upper = l.leo
		}
	}
	for ; i < len(l.segs); i++ {
		seg := l.segs[i]
		if seg.TxnIndex == "" {
			continue
		}
		tf, err := os.Open(seg.TxnIndex)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return dst, err
		}
		done := false
		_, err = format.ScanAbortedTxns(tf, func(_ int, t format.AbortedTxn) bool {
			if t.LastOffset >= fetchOffset && t.FirstOffset < upper {
				if len(dst) >= MaxAbortedTxns {
					done = true
					return false
				}
				dst = append(dst, AbortedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset})
			}
			if t.LastStableOffset >= upper {
				done = true
				return false
			}
			return true
		})
		tf.Close()
		if err != nil {
			return dst, err
		}
		if done {
			return dst, nil
		}
	}
	return dst, nil
}

// FetchOffsetForTimestamp answers a consumer's ListOffsets query
// (Partition.fetchOffsetForTimestamp): ListOffsets bounded by the high
// watermark, or for readCommitted the last stable offset, both taken at
// the same moment as the answer.
func (l *Log) FetchOffsetForTimestamp(target int64, readCommitted bool) (TimestampAndOffset, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	none := TimestampAndOffset{Segment: -1, LeaderEpoch: NoEpoch, Offset: -1, Timestamp: -1}
	if err := l.readyLocked(); err != nil {
		return none, err
	}
	bound := l.highWatermarkLocked()
	if readCommitted {
		var err error
		if bound, err = l.lastStableLocked(bound); err != nil {
			return none, err
		}
	}
	return l.listOffsets(target, bound)
}
