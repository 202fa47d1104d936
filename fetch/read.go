package fetch

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/klog-dev/klog/format"
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

// Request is one partition's fetch, in Kafka's terms. Its values are taken
// as a request on the wire carries them; the zero value is a fetch of offset
// 0 with no byte limit to spare (KIP-74 still returns the first batch whole).
type Request struct {
	// FetchOffset is the first offset wanted.
	FetchOffset int64
	// MaxBytes is the response limit and PartitionMaxBytes the
	// partition's, as given, 0 included (the consumer's defaults are
	// DefaultMaxBytes and DefaultPartitionMaxBytes); the broker's
	// fetch.max.bytes caps both.
	MaxBytes          int32
	PartitionMaxBytes int32
	// MinBytes and MaxWait make a long poll (LongPoll, Consumer.Poll).
	MinBytes int32
	MaxWait  time.Duration
	// Isolation applies to consumers.
	Isolation Isolation
	// Replica marks a follower's fetch (replica id >= 0), bounded by the
	// log end offset; the zero value is a consumer's fetch, bounded by
	// the high watermark (partition.Log.SetHighWatermark sets one).
	Replica bool
	// NoMinOneMessage turns KIP-74 off: the first batch is no longer
	// returned whole when it exceeds the byte limit. The slice is cut
	// where the limit falls, as brokers before KIP-74 (0.10.0 and older)
	// did, which is the stall a client reports as RecordExceedsMaxBytesError.
	NoMinOneMessage bool
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

// Read serves one fetch from the partition l as the broker does, step by
// step. The frame (unless req.Locate) is read into buf when it is large
// enough, into a new buffer otherwise: Fetched.Frame aliases it (pass it
// back as buf to reuse it).
func Read(l *partition.Log, req Request, buf []byte) (*Fetched, error) {
	return read(l, req, buf, nil)
}

// read is Read, reading the frame through seg when it is not nil (a
// consumer's segment file, kept open across its fetches).
func read(l *partition.Log, req Request, buf []byte, seg *segFile) (*Fetched, error) {
	// Step 1: the response offsets are captured before reading.
	o, err := l.Offsets()
	if err != nil {
		return nil, err
	}
	f := &Fetched{HighWatermark: o.HighWatermark, LastStableOffset: o.LastStableOffset, LogStartOffset: o.LogStartOffset,
		LogEndOffset: o.LogEndOffset, Isolation: req.Isolation, FetchOffset: req.FetchOffset}
	if req.Isolation == ReadCommitted && !req.Replica {
		f.AbortedTransactions = []AbortedTransaction{}
	}
	// Step 2: out of range (UnifiedLog.checkLogStartOffset, LocalLog.read).
	if req.FetchOffset < o.LogStartOffset || req.FetchOffset > o.LogEndOffset {
		return f, &OutOfRangeError{FetchOffset: req.FetchOffset, LogStartOffset: o.LogStartOffset, LogEndOffset: o.LogEndOffset}
	}
	// Step 3: the isolation bound (FetchIsolation): followers read to the
	// log end, consumers to the high watermark or the last stable offset.
	bound := o.LogEndOffset
	if !req.Replica {
		bound = o.HighWatermark
		if req.Isolation == ReadCommitted {
			bound = o.LastStableOffset
		}
	}
	// Step 4: at or past the bound there is nothing to return.
	if req.FetchOffset >= bound {
		return f, nil
	}
	// Step 5: the byte limit: the partition's, within the response's and
	// the broker's fetch.max.bytes.
	limit := max(0, int64(min(req.MaxBytes, req.PartitionMaxBytes, BrokerFetchMaxBytes)))
	f.MaxBytes = int32(limit)
	// Step 6: from the segment holding the fetch offset, the first batch
	// whose last offset reaches it (LogSegment.translateOffset); a segment
	// with none passes the read to the next (LocalLog.read).
	rs, err := l.ReadStart(req.FetchOffset, bound)
	if err != nil || !rs.Found {
		return f, err
	}
	// Step 7: KIP-74, the first batch whole even past the limit.
	size := limit
	if !req.NoMinOneMessage && rs.FirstSize > size {
		size = rs.FirstSize
	}
	fetchSize := min(rs.MaxPos-rs.Pos, size)
	if fetchSize <= 0 {
		return f, nil
	}
	// Step 8: the raw file slice, not trimmed to batch boundaries.
	f.Segment, f.Position, f.Size = rs.Segment, rs.Pos, fetchSize
	if !req.Locate {
		if err := readFrame(l, f, rs, fetchSize, buf, seg); err != nil {
			return f, err
		}
	}
	// Step 9: aborted transactions for read_committed.
	if f.AbortedTransactions != nil {
		txns, err := l.AbortedTxns(nil, rs.SegmentBase, req.FetchOffset, rs.Pos, fetchSize)
		if err != nil {
			return f, err
		}
		for _, t := range txns {
			f.AbortedTransactions = append(f.AbortedTransactions, AbortedTransaction{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset})
		}
	}
	return f, nil
}

// readFrame reads [rs.Pos, rs.Pos+size) of the segment into buf (or a new
// buffer) and notes whether it ends inside a batch.
func readFrame(l *partition.Log, f *Fetched, rs partition.ReadStart, size int64, buf []byte, seg *segFile) error {
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	var data []byte
	var err error
	if seg != nil {
		data, err = seg.readAt(rs.Segment, rs.Pos, buf[:size])
	} else {
		data, err = readAt(rs.Segment, rs.Pos, buf[:size])
	}
	if err != nil {
		return err
	}
	f.Frame = data
	var lastWhole, lastSize int64
	for p := int64(0); p < int64(len(data)); {
		if int64(len(data))-p < format.LogOverhead {
			f.Truncated, f.TruncatedRecordBytes = true, -1
			if p == 0 {
				f.TruncatedRecordBytes = rs.FirstSize
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
		if b, err := format.ParseBatch(data[lastWhole:lastWhole+lastSize], rs.Pos+lastWhole); err == nil {
			l.NoteBatchBoundary(rs.SegmentBase, b.LastOffset()+1, rs.Pos+lastWhole+lastSize)
		}
	}
	return nil
}

// readAt reads len(buf) bytes of a segment at pos (fewer at its end).
func readAt(path string, pos int64, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.ReadAt(buf, pos)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// segFile is a consumer's segment file, kept open from one fetch to the
// next: opening and closing the file for each 1 MiB fetch was 5% of a
// drain (the path looked up, a File allocated). A file the open one no
// longer is, because its name was removed (retention, or a log truncated
// and written again under the same name), is opened again, so that a fetch
// reads what the path holds now, as it did when it opened the file each
// time; one only renamed (to .deleted, as Kafka's
// LogSegment.changeFileSuffixes does before the delayed deletion) is still
// read until the model moves on, as Kafka's readers read a segment
// scheduled for deletion.
type segFile struct {
	path string
	f    *os.File
}

// readAt reads len(buf) bytes of the segment at path from pos (fewer at
// its end), through the open file when it is that path's.
func (s *segFile) readAt(path string, pos int64, buf []byte) ([]byte, error) {
	if s.f != nil && (s.path != path || unlinked(s.f)) {
		s.close()
	}
	if s.f == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		s.path, s.f = path, f
	}
	n, err := s.f.ReadAt(buf, pos)
	if err != nil && err != io.EOF {
		s.close()
		return nil, err
	}
	if !keepOpen {
		s.close()
	}
	return buf[:n], nil
}

// close closes the open file, if any.
func (s *segFile) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.path, s.f = "", nil
	return err
}
