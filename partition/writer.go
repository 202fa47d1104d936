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
// b.Pos of the active segment: the log end offset moves past it, the
// segment's max timestamp and the producer state take it (coordinatorEpoch
// is a control batch's marker's, -1 otherwise), and the waiters wake.
func (l *Log) Appended(b *format.Batch, coordinatorEpoch int32) {
	l.mu.Lock()
	s := l.segs[len(l.segs)-1]
	l.appended(s, b)
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
