package recovery

import (
	"path/filepath"
	"strings"

	"github.com/klog-dev/klog/partition"
)

// KRaftSnapshot is a KRaft snapshot (<end offset>-<epoch>.checkpoint) of a
// __cluster_metadata partition that loading keeps.
type KRaftSnapshot struct {
	Path      string `json:"path"`
	EndOffset int64  `json:"endOffset"`
	Epoch     int32  `json:"epoch"`
}

// DeleteKRaftSnapshot: a partial (.checkpoint.part) or deleted
// (.checkpoint.deleted) KRaft snapshot, or one below the log start offset,
// which KafkaMetadataLog.recoverSnapshots deletes.
const DeleteKRaftSnapshot = "kraft-snapshot"

// kraftStep is what the metadata log (KafkaMetadataLog.apply, after
// UnifiedLog has loaded the directory) does with a __cluster_metadata
// partition's snapshots: recoverSnapshots deletes partial and deleted
// snapshots and those below the log start offset, and refuses to start
// (IllegalStateException) when the log starts above 0 with no snapshot at or
// above its start; truncateToLatestSnapshot then empties the log and starts
// it at the latest snapshot's end offset when that snapshot is of a later
// epoch than the log's last, or of the same epoch and past its end (a
// follower that stopped after fetching a snapshot, or a directory holding
// only the snapshot). names are the directory's file names.
func (r *Plan) kraftStep(dir string, names []string, d *partition.Dir) {
	topic, _, ok := partition.ParseDirName(filepath.Base(filepath.Clean(dir)))
	if !ok || topic != "__cluster_metadata" || !r.Loads {
		return
	}
	var latest *KRaftSnapshot
	for _, name := range names {
		path := filepath.Join(dir, name)
		if stem, ok := strings.CutSuffix(name, partition.KRaftSnapshotSuffix+".part"); ok && isSnapshotStem(stem) {
			r.deleted(path, DeleteKRaftSnapshot, "a partial KRaft snapshot (KafkaMetadataLog.recoverSnapshots deletes it)")
			continue
		}
		if stem, ok := strings.CutSuffix(name, partition.KRaftSnapshotSuffix+".deleted"); ok && isSnapshotStem(stem) {
			r.deleted(path, DeleteKRaftSnapshot, "a KRaft snapshot marked deleted (KafkaMetadataLog.recoverSnapshots deletes it)")
			continue
		}
		end, epoch, ok := partition.ParseKRaftSnapshotName(name)
		if !ok {
			continue
		}
		if end < r.LogStartOffset {
			r.deleted(path, DeleteKRaftSnapshot, "a KRaft snapshot below the log start offset "+itoa(r.LogStartOffset)+" (KafkaMetadataLog.recoverSnapshots deletes it)")
			continue
		}
		s := KRaftSnapshot{Path: path, EndOffset: end, Epoch: epoch}
		r.KRaftSnapshots = append(r.KRaftSnapshots, s)
		if latest == nil || end > latest.EndOffset || end == latest.EndOffset && epoch > latest.Epoch {
			latest = &r.KRaftSnapshots[len(r.KRaftSnapshots)-1]
		}
	}
	if r.LogStartOffset > 0 && latest == nil {
		r.refuse(&kafkaErr{class: "IllegalStateException", msg: "Inconsistent snapshot state: there must be a snapshot at an offset larger then the current log start offset " +
			itoa(r.LogStartOffset) + ", but the latest snapshot is Optional.empty"}, dir)
		r.finishRefused()
		return
	}
	if latest == nil {
		return
	}
	lastEpoch := int32(0)
	if len(r.epochs) > 0 {
		lastEpoch = r.epochs[len(r.epochs)-1].Epoch
	}
	if latest.Epoch < lastEpoch || latest.Epoch == lastEpoch && latest.EndOffset <= r.LogEndOffset {
		return
	}
	// UnifiedLog.truncateFullyAndStartAt(snapshot end offset).
	at := latest.EndOffset
	why := "the metadata log starts again at its latest snapshot's end offset " + itoa(at) + " (KafkaMetadataLog.truncateToLatestSnapshot)"
	for i := range r.Segments {
		s := &r.Segments[i]
		if s.Action == ActionDelete {
			continue
		}
		s.Action, s.Reason, s.TruncateBytes, s.NewSegments, s.NewBaseOffset = ActionDelete, why, s.Bytes, nil, nil
	}
	for _, v := range r.live {
		for _, f := range []string{v.src.seg.Index, v.src.seg.TimeIndex, v.src.seg.TxnIndex} {
			if f != "" && !r.deletes(f) {
				r.deleted(f, DeleteSegmentIndex, "the deleted segment's index")
			}
		}
	}
	for _, sn := range d.Snapshots {
		if !r.deletes(sn.Path) {
			r.deleted(sn.Path, DeleteSnapshotAbove, "a producer snapshot of the log the metadata log empties (UnifiedLog.truncateFullyAndStartAt)")
		}
	}
	r.live, r.epochs = nil, nil
	r.NewEmptySegment = true
	r.LogStartOffset, r.LogEndOffset = at, at
	r.TruncatedToSnapshot = latest.Path
}

// isSnapshotStem: <20-digit end offset>-<10-digit epoch>.
func isSnapshotStem(stem string) bool {
	_, _, ok := partition.ParseKRaftSnapshotName(stem + partition.KRaftSnapshotSuffix)
	return ok
}

// deletes reports whether path is already among the deleted files.
func (r *Plan) deletes(path string) bool {
	for i := range r.DeletedFiles {
		if r.DeletedFiles[i].Path == path {
			return true
		}
	}
	return false
}
