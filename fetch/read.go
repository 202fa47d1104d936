package fetch

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Isolation is the fetch isolation level.
type Isolation int8

// Isolation levels (IsolationLevel.java).
const (
	ReadUncommitted Isolation = 0
	ReadCommitted   Isolation = 1
)

func (i Isolation) String() string {
	if i == ReadCommitted {
		return "read_committed"
	}
	return "read_uncommitted"
}

// ParseIsolation reads an isolation level as Kafka's consumers spell it
// (isolation.level): read_uncommitted or read_committed.
func ParseIsolation(s string) (Isolation, error) {
	switch s {
	case "read_uncommitted":
		return ReadUncommitted, nil
	case "read_committed":
		return ReadCommitted, nil
	}
	return 0, errors.New("want read_uncommitted or read_committed, got " + strconv.Quote(s))
}

// Broker and client defaults (KafkaConfig, ConsumerConfig).
const (
	DefaultMaxBytes          = 52428800 // consumer fetch.max.bytes
	DefaultPartitionMaxBytes = 1048576  // max.partition.fetch.bytes
	BrokerFetchMaxBytes      = 57671680 // broker fetch.max.bytes (55 MiB)
)

// Request is one partition's fetch, in Kafka's terms.
type Request struct {
	// FetchOffset is the first offset wanted.
	FetchOffset int64
	// MaxBytes is the response limit; PartitionMaxBytes the partition's.
	// Zero (or negative) means the consumer defaults, unless ExactBytes.
	MaxBytes          int32
	PartitionMaxBytes int32
	// ExactBytes takes MaxBytes and PartitionMaxBytes as given, 0
	// included, as a request on the wire carries them: with a limit of 0,
	// KIP-74 returns the first batch whole and NoMinOneMessage nothing.
	ExactBytes bool
	// MinBytes and MaxWait make a long poll (Consumer.Poll, Log.LongPoll).
	MinBytes int32
	MaxWait  int64 // ms
	// Isolation applies to consumers.
	Isolation Isolation
	// Replica marks a follower's fetch (replica id >= 0), bounded by the
	// log end offset; the zero value is a consumer's fetch.
	Replica bool
	// NoMinOneMessage turns KIP-74 off: the first batch is no longer
	// returned whole when it exceeds the byte limit. The slice is cut
	// where the limit falls, as brokers before KIP-74 (0.10.0 and older)
	// did, which is the stall a client reports as RecordExceedsMaxBytesError.
	NoMinOneMessage bool
	// HighWatermark overrides the log's high watermark when > 0 (the
	// zero value, and -1, use the log's), or whatever its value (0 too)
	// when OverrideHighWatermark is set: the explicit way to ask for a
	// high watermark of 0.
	HighWatermark         int64
	OverrideHighWatermark bool
	// Locate leaves Frame nil and fills Fetched.Segment, Position and
	// Size: the file range a broker would send, for a caller that sends
	// it itself (klog serve's zero-copy path). Truncated is not computed.
	Locate bool
}

// AbortedTransaction is a response's aborted transaction (producer id and
// its first offset).
type AbortedTransaction struct {
	ProducerID  int64 `json:"producerId"`
	FirstOffset int64 `json:"firstOffset"`
}

// ErrOffsetOutOfRange is OFFSET_OUT_OF_RANGE: the fetch offset is below the
// log start offset or above the log end offset.
var ErrOffsetOutOfRange = errors.New("OFFSET_OUT_OF_RANGE")

// OutOfRangeError carries the offsets of an out-of-range fetch.
type OutOfRangeError struct {
	FetchOffset, LogStartOffset, LogEndOffset int64
}

func (e *OutOfRangeError) Error() string {
	return "fetch offset " + strconv.FormatInt(e.FetchOffset, 10) + " is out of range [" +
		strconv.FormatInt(e.LogStartOffset, 10) + ", " + strconv.FormatInt(e.LogEndOffset, 10) + "]"
}

// Unwrap makes errors.Is(err, ErrOffsetOutOfRange) work.
func (e *OutOfRangeError) Unwrap() error { return ErrOffsetOutOfRange }

// Fetched is the partition part of a fetch response.
type Fetched struct {
	// Offsets captured before the read, as Partition.readRecords does.
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	LogEndOffset     int64
	// Frame is the raw file slice the broker sends: whole batches, possibly
	// ending inside one. It aliases the Log's buffer and is valid until the
	// next read: copy it to keep it.
	Frame []byte
	// Truncated is set when Frame ends inside a batch;
	// TruncatedRecordBytes is the size that batch declares.
	Truncated            bool
	TruncatedRecordBytes int64
	// AbortedTransactions: non-nil for read_committed.
	AbortedTransactions []AbortedTransaction
	// Isolation and FetchOffset echo the request.
	Isolation   Isolation
	FetchOffset int64
	// MaxBytes is the byte limit the read used.
	MaxBytes int32
	// Segment, Position and Size are the file range of the read (Size 0
	// when nothing was read). Frame holds exactly these bytes unless the
	// request had Locate set.
	Segment  string
	Position int64
	Size     int64
}

// Read serves one fetch as the broker does, step by step.
func (l *Log) Read(req Request) (*Fetched, error) {
	// Step 1: the response offsets are captured before reading.
	hw := l.HighWatermark()
	if (req.HighWatermark > 0 || req.OverrideHighWatermark) && !req.Replica {
		hw = max(0, min(req.HighWatermark, l.leo))
	}
	f := &Fetched{HighWatermark: hw, LastStableOffset: l.LastStableOffset(hw), LogStartOffset: l.logStart,
		LogEndOffset: l.leo, Isolation: req.Isolation, FetchOffset: req.FetchOffset}
	if req.Isolation == ReadCommitted && !req.Replica {
		f.AbortedTransactions = []AbortedTransaction{}
	}
	// Step 2: out of range (UnifiedLog.checkLogStartOffset, LocalLog.read).
	if req.FetchOffset < l.logStart || req.FetchOffset > l.leo {
		return f, &OutOfRangeError{FetchOffset: req.FetchOffset, LogStartOffset: l.logStart, LogEndOffset: l.leo}
	}
	// Step 3: the isolation bound (FetchIsolation): followers read to the
	// log end, consumers to the high watermark or the last stable offset.
	bound := l.leo
	if !req.Replica {
		bound = hw
		if req.Isolation == ReadCommitted {
			bound = f.LastStableOffset
		}
	}
	// Step 4: at or past the bound there is nothing to return.
	if req.FetchOffset >= bound {
		return f, nil
	}
	// Step 5: the byte limit: the partition's, within the response's and
	// the broker's fetch.max.bytes.
	maxBytes, partMax := req.MaxBytes, req.PartitionMaxBytes
	if maxBytes <= 0 && !req.ExactBytes {
		maxBytes = DefaultMaxBytes
	}
	if partMax <= 0 && !req.ExactBytes {
		partMax = DefaultPartitionMaxBytes
	}
	limit := max(0, int64(min(maxBytes, partMax, BrokerFetchMaxBytes)))
	f.MaxBytes = int32(limit)
	boundSeg, boundPos, err := l.position(bound)
	if err != nil {
		return f, err
	}
	// Step 6: from the segment holding the fetch offset, the first batch
	// whose last offset reaches it (LogSegment.translateOffset); a segment
	// with none passes the read to the next (LocalLog.read).
	for i := l.segmentIndex(req.FetchOffset); i < len(l.segs); i++ {
		s := l.segs[i]
		if s.base > boundSeg.base {
			return f, nil
		}
		start, firstSize, ok, err := l.translate(s, req.FetchOffset)
		if err != nil {
			return f, err
		}
		if !ok {
			continue
		}
		maxPos := s.size
		if s == boundSeg {
			maxPos = boundPos
		}
		// Step 7: KIP-74, the first batch whole even past the limit.
		size := limit
		if !req.NoMinOneMessage && firstSize > size {
			size = firstSize
		}
		fetchSize := min(maxPos-start, size)
		if fetchSize <= 0 {
			return f, nil
		}
		// Step 8: the raw file slice, not trimmed to batch boundaries.
		f.Segment, f.Position, f.Size = s.path, start, fetchSize
		if !req.Locate {
			if err := l.readFrame(f, s, start, fetchSize, firstSize); err != nil {
				return f, err
			}
		}
		// Step 9: aborted transactions for read_committed.
		if f.AbortedTransactions != nil {
			if err := l.abortedTxns(f, i, s, start, fetchSize); err != nil {
				return f, err
			}
		}
		return f, nil
	}
	return f, nil
}

// segmentIndex is the segment with the largest base offset <= offset.
func (l *Log) segmentIndex(offset int64) int {
	i := 0
	for j, s := range l.segs {
		if s.base <= offset {
			i = j
		}
	}
	return i
}

// position is the (segment, byte position) of an offset, as
// convertToOffsetMetadata gives it: the start of the batch holding it, or
// the end of the active segment for the log end offset.
func (l *Log) position(offset int64) (*segment, int64, error) {
	if offset >= l.leo {
		last := l.segs[len(l.segs)-1]
		return last, last.size, nil
	}
	s := l.segs[l.segmentIndex(offset)]
	pos, _, ok, err := l.translate(s, offset)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return s, s.size, nil
	}
	return s, pos, nil
}

// translate finds the first batch whose last offset is >= offset with
// partition.TranslateOffset (LogSegment.translateOffset), starting past the
// batches an earlier read showed to end below offset. It returns the batch's
// position and size.
func (l *Log) translate(s *segment, offset int64) (pos, size int64, ok bool, err error) {
	idx := l.offsetIndex(s)
	if idx == nil && s.index != "" {
		// Too large to keep: probed in place (the index's size is not
		// trusted); the entry found stands for the index in
		// TranslateOffset.
		if xf, xsize, rerr := safeio.OpenSized(s.index); rerr == nil {
			if e, lerr := format.LookupOffsetIndexAt(xf, xsize, s.base, offset); lerr == nil && e.Pos > 0 {
				var one [format.OffsetIndexEntrySize]byte
				binary.BigEndian.PutUint32(one[:], uint32(e.Offset-s.base))
				binary.BigEndian.PutUint32(one[4:], uint32(e.Pos))
				idx = &format.OffsetIndex{BaseOffset: s.base, Data: one[:]}
			}
			xf.Close()
		}
	}
	// An earlier read showed every batch before hintPos ends below
	// hintOffset: a fetch at or past it can start there.
	hint := int64(0)
	if s.hintPos <= s.size && s.hintOffset <= offset {
		hint = s.hintPos
	}
	f, err := os.Open(s.path)
	if err != nil {
		return 0, 0, false, err
	}
	defer f.Close()
	bp, ok, err := partition.TranslateOffset(f, s.size, idx, offset, hint)
	if err != nil || !ok {
		return 0, 0, false, err
	}
	// Every batch before this one ends below offset.
	s.hintOffset, s.hintPos = offset, bp.Pos
	return bp.Pos, bp.Size, true, nil
}

// readFrame reads [start, start+size) of a segment into the Log's buffer and
// notes whether it ends inside a batch.
func (l *Log) readFrame(f *Fetched, s *segment, start, size, firstSize int64) error {
	buf := l.frameBuf(size)
	data, err := readAt(s.path, start, buf)
	if err != nil {
		return err
	}
	f.Frame = data
	var lastWhole, lastSize int64
	for p := int64(0); p < int64(len(data)); {
		if int64(len(data))-p < format.LogOverhead {
			f.Truncated, f.TruncatedRecordBytes = true, -1
			if p == 0 {
				f.TruncatedRecordBytes = firstSize
			}
			break
		}
		n := format.LogOverhead + int64(int32(binary.BigEndian.Uint32(data[p+8:])))
		if n <= format.LogOverhead || p+n > int64(len(data)) {
			f.Truncated, f.TruncatedRecordBytes = true, n
			break
		}
		lastWhole, lastSize = p, n
		p += n
	}
	if lastSize > 0 {
		// Every batch before the end of the last whole one ends below
		// its last offset + 1: a later fetch from there may start there.
		if b, err := format.ParseBatch(data[lastWhole:lastWhole+lastSize], start+lastWhole); err == nil {
			s.hintOffset, s.hintPos = b.LastOffset()+1, start+lastWhole+lastSize
		}
	}
	return nil
}

// maxAbortedTxns bounds the aborted transactions one fetch response lists:
// a real read spans a handful; a hostile .txnindex could name millions.
const maxAbortedTxns = 1 << 16

// abortedTxns collects the aborted transactions overlapping the read
// (LocalLog.collectAbortedTransactions): up to the first index entry past the
// bytes read (OffsetIndex.fetchUpperBoundOffset), else the next segment's
// base, else the log end.
func (l *Log) abortedTxns(f *Fetched, i int, s *segment, start, fetchSize int64) error {
	upper := int64(-1)
	if idx := l.offsetIndex(s); idx != nil {
		n := idx.Used()
		for j := 0; j < n; j++ {
			if e := idx.Entry(j); e.Pos >= start+fetchSize {
				upper = e.Offset
				break
			}
		}
	} else if s.index != "" {
		// Too large to keep: streamed.
		if xf, err := os.Open(s.index); err == nil {
			format.ScanOffsetIndex(xf, s.base, func(_ int, e format.IndexEntry) bool {
				if e.Pos >= start+fetchSize {
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
			upper = l.segs[i+1].base
		} else {
			upper = l.leo
		}
	}
	for ; i < len(l.segs); i++ {
		seg := l.segs[i]
		if seg.txnIndex == "" {
			continue
		}
		tf, err := os.Open(seg.txnIndex)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		done := false
		_, err = format.ScanAbortedTxns(tf, func(_ int, t format.AbortedTxn) bool {
			if t.LastOffset >= f.FetchOffset && t.FirstOffset < upper {
				if len(f.AbortedTransactions) >= maxAbortedTxns {
					done = true
					return false
				}
				f.AbortedTransactions = append(f.AbortedTransactions, AbortedTransaction{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset})
			}
			if t.LastStableOffset >= upper {
				done = true
				return false
			}
			return true
		})
		tf.Close()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
	return nil
}

// offsetIndex reads a segment's offset index, reusing the last one read
// while its file is unchanged: a consumer's fetches mostly hit one segment,
// and a 1 GiB segment's index is megabytes (klog serve reads per fetch).
// maxCachedIndexBytes bounds the offset index a Log keeps in memory
// (segment.index.bytes defaults to 10 MiB); a larger file, real or a
// sparse 2 GiB one, is probed in place or streamed.
const maxCachedIndexBytes = 16 << 20

func (l *Log) offsetIndex(s *segment) *format.OffsetIndex {
	if s.index == "" {
		return nil
	}
	st, err := os.Stat(s.index)
	if err != nil {
		return nil
	}
	if st.Size() > maxCachedIndexBytes {
		return nil // the callers probe or stream it instead
	}
	c := &l.idxCache
	if c.path != s.index || c.size != st.Size() || !c.mod.Equal(st.ModTime()) {
		data, err := safeio.ReadFile(s.index, maxCachedIndexBytes)
		if err != nil {
			return nil
		}
		c.path, c.size, c.mod, c.data = s.index, st.Size(), st.ModTime(), data
	}
	return &format.OffsetIndex{BaseOffset: s.base, Data: c.data}
}

func (l *Log) frameBuf(n int64) []byte {
	if int64(cap(l.frame)) < n {
		l.frame = make([]byte, n)
	}
	return l.frame[:n]
}
