package produce

import (
	"errors"
	"io"
	"os"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// TruncateTo removes every batch whose last offset is at or above offset, as
// a follower does when its log diverges from a new leader's
// (UnifiedLog.truncateTo): later segments and snapshots are deleted, the
// segment holding offset is cut at the start of the batch holding it, and
// its indexes are trimmed. It returns the new log end offset.
func (a *Appender) TruncateTo(offset int64) (int64, error) {
	if leo := a.log.LogEndOffset(); offset >= leo {
		return leo, nil
	}
	a.closeFiles()
	a.seg = nil
	d, err := partition.Open(a.dir)
	if err != nil {
		return 0, err
	}
	for i := len(d.Segments) - 1; i >= 0; i-- {
		s := d.Segments[i]
		if s.BaseOffset >= offset && i > 0 {
			for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" {
					if err := os.Remove(f); err != nil {
						return 0, err
					}
				}
			}
			continue
		}
		if err := cutSegment(s, offset); err != nil {
			return 0, err
		}
		break
	}
	for _, sn := range d.Snapshots {
		if sn.Offset > offset {
			if err := os.Remove(sn.Path); err != nil {
				return 0, err
			}
		}
	}
	if err := syncDir(a.dir); err != nil {
		return 0, err
	}
	if err := a.log.TruncateEpochs(offset, a.wopts()); err != nil {
		return 0, err
	}
	if err := a.load(false); err != nil {
		return 0, err
	}
	return a.log.LogEndOffset(), nil
}

// cutSegment truncates a segment's log at the first batch whose last offset
// reaches offset, and its .txnindex before the first abort at or above it.
func cutSegment(s partition.Segment, offset int64) error {
	if s.Log == "" {
		return nil
	}
	f, err := safeio.OpenFile(s.Log, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sc := format.NewScanner(f, st.Size(), format.ScanOptions{})
	cut := int64(-1)
	for {
		b, err := sc.Next()
		if err != nil {
			if pe := (*format.PosError)(nil); err != io.EOF && !errors.As(err, &pe) {
				return err // an I/O error: never cut on it
			}
			break
		}
		if b.LastOffset() >= offset {
			cut = b.Pos
			break
		}
	}
	if cut < 0 {
		cut = sc.Pos()
	}
	if err := f.Truncate(cut); err != nil {
		return err
	}
	if s.TxnIndex != "" {
		tf, err := safeio.OpenFile(s.TxnIndex, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		keep := 0
		_, err = format.ScanAbortedTxns(tf, func(i int, t format.AbortedTxn) bool {
			if t.LastOffset >= offset {
				return false
			}
			keep = (i + 1) * format.AbortedTxnEntrySize
			return true
		})
		if err == nil {
			err = tf.Truncate(int64(keep))
		}
		tf.Close()
		if err != nil {
			return err
		}
	}
	return f.Sync()
}

// SetLeaderEpoch sets the partition leader epoch written in later batches
// and starts it at the log end offset in the leader epoch cache, as a broker
// does when it becomes leader (Partition.makeLeader,
// UnifiedLog.maybeAssignEpochStartOffset).
func (a *Appender) SetLeaderEpoch(epoch int32) error {
	a.opts.PartitionLeaderEpoch = epoch
	return a.log.AssignEpoch(epoch, a.log.LogEndOffset(), a.wopts())
}
