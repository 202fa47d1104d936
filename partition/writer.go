package partition

import (
	"path/filepath"

	"github.com/klog-dev/klog/format"
)

// The writer's side of a Log: package produce's Appender, which holds the
// partition's lock, appends the bytes and tells the Log what it wrote. No
// reader calls these.

// AttachWriter marks the Log as kept current by a writer in this process
// and reads its producer state: from now on the writer's calls are the only
// source of change (a Follower's events for its directory are the writer's
// own appends).
func (l *Log) AttachWriter() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writer = true
	if err := l.refreshLocked(); err != nil {
		return err
	}
	_, err := l.producersLocked()
	return err
}

// Appended records that the writer appended the batch whose header is b at
// b.Pos of the active segment, raw its bytes as written: the log end offset
// moves past it, the segment's max timestamp and the producer state take it
// (coordinatorEpoch is a control batch's marker's, -1 otherwise), a small
// batch's bytes are kept for the read its waiters make next
// (CopyAppended), and the waiters wake. The Log does not keep raw.
func (l *Log) Appended(b *format.Batch, raw []byte, coordinatorEpoch int32) {
	l.mu.Lock()
	s := l.segs[len(l.segs)-1]
	l.appended(s, b)
	if n := len(raw); n > 0 && n <= lastCopyMax && int64(n) == b.Size() {
		l.last.seg, l.last.pos, l.last.data = s, b.Pos, append(l.last.data[:0], raw...)
	} else {
		l.last.seg, l.last.data = nil, l.last.data[:0]
	}
	if l.prod != nil {
		var m *format.EndTxnMarker
		if b.IsControl() {
			m = &format.EndTxnMarker{CoordinatorEpoch: coordinatorEpoch}
		}
		l.prod.observe(b, m)
	}
	l.mu.Unlock()
	l.notify()
}

// CopyAppended fills dst with the bytes at pos of the segment file path
// when they are the last batch the writer appended and the Log kept
// (Appended), and reports whether it did: a long poll woken by an append
// reads what was just written without opening the file. The bytes are the
// file's: they were written before Appended was called, and the copy is
// dropped when the active segment or its last batch changes.
func (l *Log) CopyAppended(path string, pos int64, dst []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &l.last
	if c.seg == nil || len(l.segs) == 0 || c.seg != l.segs[len(l.segs)-1] || c.seg.Log != path ||
		c.pos != pos || c.seg.tailPos != pos || len(dst) != len(c.data) {
		return false
	}
	copy(dst, c.data)
	return true
}

// TxnIndexCreated records that the writer created the .txnindex (path)
// of the segment with base offset base, so that reads of aborted
// transactions look in it.
func (l *Log) TxnIndexCreated(base int64, path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.segs {
		if l.segs[i].BaseOffset == base {
			l.segs[i].TxnIndex = path
		}
	}
}

// Rolled reads the segments again after the writer rolled a new one (or
// created the first).
func (l *Log) Rolled() error {
	l.mu.Lock()
	l.stale |= staleList
	err := l.refreshLocked()
	l.mu.Unlock()
	l.notify()
	return err
}

// Reload reads the whole directory again after the writer changed it other
// than by appending (a truncation, UnifiedLog.truncateTo). The waiters
// wake.
func (l *Log) Reload() error {
	l.mu.Lock()
	err := l.load()
	if err == nil && l.writer {
		_, err = l.producersLocked()
	}
	l.mu.Unlock()
	l.notify()
	return err
}

// AssignEpoch records epoch from startOffset when it is above the latest
// epoch (LeaderEpochFileCache.assign) and, when it did, writes
// leader-epoch-checkpoint with opts. A negative epoch is none.
func (l *Log) AssignEpoch(epoch int32, startOffset int64, opts WriteOptions) error {
	if epoch < 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.epochs); n > 0 && epoch <= l.epochs[n-1].Epoch {
		return nil
	}
	l.epochs = AssignEpoch(l.epochs, epoch, startOffset)
	return l.writeEpochsLocked(opts)
}

// TruncateEpochs drops the entries starting at or after offset
// (LeaderEpochFileCache.truncateFromEnd) and writes the checkpoint when
// that changed it.
func (l *Log) TruncateEpochs(offset int64, opts WriteOptions) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.epochs)
	for n > 0 && l.epochs[n-1].StartOffset >= offset {
		n--
	}
	if n == len(l.epochs) {
		return nil
	}
	l.epochs = l.epochs[:n]
	return l.writeEpochsLocked(opts)
}

// EnsureEpochCheckpoint gives a partition without leader-epoch-checkpoint
// (written before klog kept it, or by a broker that lost it) the cache
// recovery would build from its batches' epochs, and writes it, so that a
// clean open and a recovering open of the directory agree.
func (l *Log) EnsureEpochCheckpoint(opts WriteOptions) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.epochFile {
		return nil
	}
	if err := l.endLocked(); err != nil {
		return err
	}
	for _, s := range l.segs {
		if err := l.scanSegment(s, 0, s.end, func(b *format.Batch, _ File) error {
			if b.IsV2() && b.PartitionLeaderEpoch >= 0 {
				l.epochs = AssignEpoch(l.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return l.writeEpochsLocked(opts)
}

func (l *Log) writeEpochsLocked(opts WriteOptions) error {
	err := WriteFileAtomic(filepath.Join(l.path, LeaderEpochCheckpoint), format.AppendLeaderEpochCheckpoint(nil, l.epochs), opts)
	if err == nil {
		l.epochFile = true
	}
	return err
}
