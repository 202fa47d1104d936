package partition

import (
	"errors"
	"github.com/klog-dev/klog/internal/safeio"
	"io/fs"
	"path/filepath"

	"github.com/klog-dev/klog/format"
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// HighWatermarks reads a log dir's replication-offset-checkpoint, where the
// broker keeps each partition's high watermark (ReplicaManager's
// checkpointHighWatermarks). A missing file is an empty map and no error;
// an unreadable or malformed one is an error with an empty map. It is the
// one high-watermark reader.
func HighWatermarks(logDir string) (map[TopicPartition]int64, error) {
	return CheckpointOffsets(logDir, ReplicationCheckpoint)
}

// CheckpointOffsets reads one of a log dir's offset checkpoints
// (replication-offset-checkpoint, recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, cleaner-offset-checkpoint) into a map. A
// missing file is an empty map and no error.
func CheckpointOffsets(logDir, name string) (map[TopicPartition]int64, error) {
	m := map[TopicPartition]int64{}
	path := filepath.Join(logDir, name)
	data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	entries, err := format.ParseOffsetCheckpoint(data)
	if err != nil {
		return m, &fs.PathError{Op: "parse", Path: path, Err: err}
	}
	for _, e := range entries {
		m[TopicPartition{Topic: e.Topic, Partition: e.Partition}] = e.Offset
	}
	return m, nil
}

// CheckpointOffset is the partition directory dir's entry in its log dir's
// checkpoint name; ok is false when there is none (or no file, or dir's
// name is not <topic>-<partition>).
func CheckpointOffset(dir, name string) (offset int64, ok bool, err error) {
	dir = filepath.Clean(dir)
	topic, part, named := ParseDirName(filepath.Base(dir))
	if !named {
		return -1, false, nil
	}
	m, err := CheckpointOffsets(filepath.Dir(dir), name)
	if err != nil {
		return -1, false, err
	}
	offset, ok = m[TopicPartition{Topic: topic, Partition: part}]
	if !ok {
		return -1, false, nil
	}
	return offset, true, nil
}

// HighWatermark is the high watermark of the partition directory dir, from
// its log dir's replication-offset-checkpoint; ok is false when the file
// has no entry for it (or no file, or dir's name is not
// <topic>-<partition>).
func HighWatermark(dir string) (hw int64, ok bool, err error) {
	return CheckpointOffset(dir, ReplicationCheckpoint)
}

// UpdateCheckpointOffsets sets the given entries of the log dir's offset
// checkpoint name (replication-offset-checkpoint, log-start-offset-checkpoint,
// ...) and replaces the file through WriteFileAtomic, as a broker's
// checkpoint thread rewrites it (OffsetCheckpointFile.write): the entries
// already there keep their order and the new ones follow in the order given.
// A missing file is created; one that does not parse is left as it is and
// its error returned, so that nothing of a damaged file is lost.
func UpdateCheckpointOffsets(logDir, name string, set []format.OffsetEntry, opts WriteOptions) error {
	path := filepath.Join(logDir, name)
	var entries []format.OffsetEntry
	data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	default:
		if entries, err = format.ParseOffsetCheckpoint(data); err != nil {
			return &fs.PathError{Op: "parse", Path: path, Err: err}
		}
		if opts.Perm == 0 {
			opts.Perm = safeio.OutputPerm(path)
		}
	}
	for _, s := range set {
		found := false
		for i := range entries {
			if entries[i].Topic == s.Topic && entries[i].Partition == s.Partition {
				entries[i].Offset, found = s.Offset, true
			}
		}
		if !found {
			entries = append(entries, s)
		}
	}
	return WriteFileAtomic(path, format.AppendOffsetCheckpoint(nil, entries), opts)
}
