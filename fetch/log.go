// Package fetch simulates the broker's fetch path over a partition directory
// and provides the consumer of the reference texts: bounded fetches (max
// bytes, the high watermark, the last stable offset), KIP-74, aborted
// transactions for read_committed, long polls, positions, lag and
// committed offsets.
//
// The rules follow Kafka 4.3.1's UnifiedLog.read, LocalLog.read,
// LogSegment.read and ReplicaManager.readFromLog; each is a named step in
// read.go.
package fetch

import (
	"errors"
	"io"
	"os"
	"sort"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// segment is one segment as the reader sees it.
type segment struct {
	base      int64
	path      string
	size      int64 // valid bytes (whole batches)
	index     string
	txnIndex  string
	lastOff   int64 // last offset in the segment, or base-1 when empty
	scannedTo int64 // bytes scanned for producer state
	// hintOffset/hintPos: a batch boundary seen by an earlier read (the
	// batch at hintPos starts at or below hintOffset), so a consumer's next
	// fetch need not scan from the index entry again.
	hintOffset, hintPos int64
}

// Log is a read-only view of a partition directory: its segments, log end
// offset, open transactions and high watermark. Refresh picks up appends.
type Log struct {
	dir      string
	topic    string
	part     int32
	segs     []*segment
	leo      int64
	logStart int64
	// open transactions: producer id -> first offset
	openTxn map[int64]int64
	// hw is the high watermark from the log dir's
	// replication-offset-checkpoint, or -1 when it has none.
	hw    int64
	frame []byte
	// idxCache is the last offset index read (offsetIndex).
	idxCache struct {
		path string
		size int64
		mod  time.Time
		data []byte
	}
}

// Open reads a partition directory.
func Open(dir string) (*Log, error) {
	l := &Log{dir: dir, openTxn: map[int64]int64{}, hw: -1}
	if err := l.Refresh(); err != nil {
		return nil, err
	}
	return l, nil
}

// Dir is the partition directory.
func (l *Log) Dir() string { return l.dir }

// LogEndOffset is the offset after the last whole batch.
func (l *Log) LogEndOffset() int64 { return l.leo }

// LogStartOffset is the first offset of the first segment.
func (l *Log) LogStartOffset() int64 { return l.logStart }

// CheckpointHighWatermark is the partition's entry in the log dir's
// replication-offset-checkpoint, and whether there was one.
func (l *Log) CheckpointHighWatermark() (int64, bool) { return l.hw, l.hw >= 0 }

// HighWatermark is the checkpointed high watermark (capped at the log end),
// or the log end offset when the log dir has none.
func (l *Log) HighWatermark() int64 {
	if l.hw >= 0 && l.hw <= l.leo {
		return l.hw
	}
	return l.leo
}

// LastStableOffset is the first offset of the earliest open transaction if
// that is below hw, else hw (UnifiedLog.lastStableOffset).
func (l *Log) LastStableOffset(hw int64) int64 {
	lso := hw
	for _, first := range l.openTxn {
		if first < lso {
			lso = first
		}
	}
	return lso
}

// Refresh re-lists the directory and scans what was appended since the last
// call (producer state, sizes, log end offset) and re-reads the high
// watermark checkpoint.
func (l *Log) Refresh() error {
	d, err := partition.Open(l.dir)
	if err != nil {
		return err
	}
	l.topic, l.part = d.Topic, d.Partition
	old := map[int64]*segment{}
	for _, s := range l.segs {
		old[s.base] = s
	}
	var segs []*segment
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		seg := old[s.BaseOffset]
		if seg == nil {
			seg = &segment{base: s.BaseOffset, path: s.Log, lastOff: s.BaseOffset - 1}
		}
		seg.index, seg.txnIndex = s.Index, s.TxnIndex
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return errors.New("fetch: " + l.dir + " holds no log segment")
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].base < segs[j].base })
	l.segs = segs
	for _, s := range segs {
		if err := l.scan(s); err != nil {
			return err
		}
	}
	last := segs[len(segs)-1]
	l.leo = last.lastOff + 1
	if last.lastOff < last.base {
		l.leo = last.base
	}
	l.logStart = segs[0].base
	l.hw = l.readHW()
	return nil
}

// scan reads the batches appended to a segment since the last scan.
func (l *Log) scan(s *segment) error {
	f, size, err := safeio.OpenSized(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if size < s.scannedTo {
		// Truncated under us: scan again from the start.
		s.scannedTo, s.size, s.lastOff = 0, 0, s.base-1
		s.hintOffset, s.hintPos = 0, 0
	}
	// Offsets and producer fields only: one small read per batch.
	sc := format.NewScanner(f, size, format.ScanOptions{HeadersOnly: true})
	sc.SetPos(s.scannedTo)
	for {
		b, err := sc.Next()
		if err != nil {
			if !format.EndOfData(err) {
				return err // an I/O error is not the end of the log
			}
			break
		}
		s.lastOff = b.LastOffset()
		s.size = b.Pos + b.Size()
		if b.IsV2() && b.ProducerID >= 0 {
			if b.IsControl() {
				delete(l.openTxn, b.ProducerID)
			} else if b.IsTransactional() {
				if _, open := l.openTxn[b.ProducerID]; !open {
					l.openTxn[b.ProducerID] = b.BaseOffset
				}
			}
		}
	}
	s.scannedTo = s.size
	return nil
}

// readHW finds this partition in the parent log dir's
// replication-offset-checkpoint.
func (l *Log) readHW() int64 {
	hw, ok, err := partition.HighWatermark(l.dir)
	if err != nil || !ok {
		return -1
	}
	return hw
}

// readAt reads n bytes of a segment at pos.
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
