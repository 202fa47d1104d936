package produce

import (
	"github.com/klog-dev/klog/internal/safeio"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// The leader epoch cache, kept in leader-epoch-checkpoint as a broker keeps
// it (storage/.../epoch/LeaderEpochFileCache.java): an entry (epoch, start
// offset) is assigned when a batch carries an epoch above the latest one, or
// when the broker becomes leader; the file is rewritten whenever the cache
// changes.

// readEpochs reads leader-epoch-checkpoint. Without one (a partition written
// before klog kept it, or by a broker that lost it) the cache is rebuilt
// from the batches' epochs, as recovery does, so that a clean open and a
// recovering open of the directory agree.
// readEpochs comes first, before anything is written; rebuildEpochs once
// the active segment is open.
func (a *Appender) readEpochs(d *partition.Dir) error {
	a.epochs = nil
	if d.LeaderEpochs == "" {
		return nil
	}
	data, err := safeio.ReadFile(d.LeaderEpochs, safeio.MaxCheckpointBytes)
	if err != nil {
		return err
	}
	es, err := format.ParseLeaderEpochCheckpoint(data)
	if err != nil {
		return &CheckpointError{Path: d.LeaderEpochs, Err: err}
	}
	a.epochs = es
	return nil
}

func (a *Appender) rebuildEpochs(d *partition.Dir, segs []partition.Segment) error {
	if d.LeaderEpochs != "" {
		return nil
	}
	for _, s := range segs {
		f, size, err := a.openForScan(s)
		if err != nil {
			return err
		}
		sc := format.NewScanner(f, size, format.ScanOptions{HeadersOnly: true})
		for {
			b, err := sc.Next()
			if err != nil {
				if !format.EndOfData(err) {
					f.Close()
					return err // an I/O error is not the end of the log
				}
				break
			}
			if b.IsV2() && b.PartitionLeaderEpoch >= 0 {
				a.epochs = partition.AssignEpoch(a.epochs, b.PartitionLeaderEpoch, b.BaseOffset)
			}
		}
		f.Close()
	}
	return a.writeEpochs()
}

// CheckpointError is a leader-epoch-checkpoint the appender cannot read.
type CheckpointError struct {
	Path string
	Err  error
}

func (e *CheckpointError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *CheckpointError) Unwrap() error { return e.Err }

// assignEpoch records epoch from startOffset when it is above the latest
// epoch (LeaderEpochFileCache.assign) and writes the checkpoint.
func (a *Appender) assignEpoch(epoch int32, startOffset int64) error {
	if epoch < 0 {
		return nil
	}
	if n := len(a.epochs); n > 0 && epoch <= a.epochs[n-1].Epoch {
		return nil
	}
	a.epochs = partition.AssignEpoch(a.epochs, epoch, startOffset)
	return a.writeEpochs()
}

// truncateEpochs drops the entries starting at or after offset
// (LeaderEpochFileCache.truncateFromEnd) and writes the checkpoint.
func (a *Appender) truncateEpochs(offset int64) error {
	n := len(a.epochs)
	for n > 0 && a.epochs[n-1].StartOffset >= offset {
		n--
	}
	if n == len(a.epochs) {
		return nil
	}
	a.epochs = a.epochs[:n]
	return a.writeEpochs()
}

// LatestLeaderEpoch is the cache's latest epoch, or -1 when it is empty.
func (a *Appender) LatestLeaderEpoch() int32 {
	if n := len(a.epochs); n > 0 {
		return a.epochs[n-1].Epoch
	}
	return -1
}

// LeaderEpochs is the leader epoch cache.
func (a *Appender) LeaderEpochs() []format.EpochEntry {
	return append([]format.EpochEntry(nil), a.epochs...)
}

// writeEpochs replaces leader-epoch-checkpoint atomically: a synced
// temporary file renamed over it (CheckpointFile.write).
func (a *Appender) writeEpochs() error {
	return partition.WriteFileAtomic(filepath.Join(a.dir, partition.LeaderEpochCheckpoint),
		format.AppendLeaderEpochCheckpoint(nil, a.epochs), partition.WriteOptions{NoSync: a.opts.Sync == SyncNever})
}
