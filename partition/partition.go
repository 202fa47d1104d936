// Package partition knows the layout of a Kafka partition directory
// (<topic>-<partition>/) and of a log directory holding many: which files
// belong to which segment, and the log-dir-level checkpoint files. verify,
// produce, fetch and tail all start from here.
//
// Naming follows storage/.../log/LogFileUtils.java: a segment's files are
// named by its base offset as 20 zero-padded digits plus a suffix.
package partition

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// File suffixes (LogFileUtils.java).
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	TxnIndexSuffix  = ".txnindex"
	SnapshotSuffix  = ".snapshot"
)

// Names of checkpoint files.
const (
	LeaderEpochCheckpoint   = "leader-epoch-checkpoint"
	PartitionMetadata       = "partition.metadata"
	ReplicationCheckpoint   = "replication-offset-checkpoint"
	RecoveryPointCheckpoint = "recovery-point-offset-checkpoint"
	LogStartCheckpoint      = "log-start-offset-checkpoint"
	CleanerCheckpoint       = "cleaner-offset-checkpoint"
)

// LogDirCheckpoints are the offset checkpoints a broker keeps per log dir.
var LogDirCheckpoints = []string{ReplicationCheckpoint, RecoveryPointCheckpoint, LogStartCheckpoint, CleanerCheckpoint}

// FileName is the name of a segment file: the offset as 20 digits + suffix.
func FileName(offset int64, suffix string) string {
	s := strconv.FormatInt(offset, 10)
	if len(s) < 20 {
		s = strings.Repeat("0", 20-len(s)) + s
	}
	return s + suffix
}

// IsSegmentFile reports whether the broker's log loading reads name as a
// segment file (LogFileUtils.isLogFile, isIndexFile): a .log, .index,
// .timeindex or .txnindex file, whose stem must then be an offset.
func IsSegmentFile(name string) bool {
	for _, s := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// ParseFileName splits "<20 digits><suffix>" into offset and suffix. The
// suffix is everything from the first dot ("….log.deleted" has suffix
// ".log.deleted").
func ParseFileName(name string) (int64, string, bool) {
	i := strings.IndexByte(name, '.')
	if i <= 0 {
		return 0, "", false
	}
	v, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil || v < 0 {
		return 0, "", false
	}
	return v, name[i:], true
}

// KRaftSnapshotSuffix ends the name of a KRaft snapshot in a
// __cluster_metadata partition directory.
const KRaftSnapshotSuffix = ".checkpoint"

// ParseKRaftSnapshotName reads a KRaft snapshot's name,
// <20-digit end offset>-<10-digit epoch>.checkpoint (Snapshots.parse:
// fixed-width fields). The end offset is exclusive: the snapshot holds the
// state of every offset below it.
func ParseKRaftSnapshotName(name string) (endOffset int64, epoch int32, ok bool) {
	base, found := strings.CutSuffix(name, KRaftSnapshotSuffix)
	if !found || len(base) != 31 || base[20] != '-' {
		return 0, 0, false
	}
	end, err1 := strconv.ParseInt(base[:20], 10, 64)
	ep, err2 := strconv.ParseInt(base[21:], 10, 32)
	if err1 != nil || err2 != nil || end < 0 || ep < 0 {
		return 0, 0, false
	}
	return end, int32(ep), true
}

// NameOf is what the partition directory at path is named: ParseDirName
// of its base name, or, for a symlink whose own name is not a partition's,
// of its target's (an operator's link to a partition directory, as
// /data/current -> /data/kafka-logs/orders-3, is orders-3).
func NameOf(path string) (topic string, part int32, ok bool) {
	base := filepath.Base(filepath.Clean(path))
	if topic, part, ok = ParseDirName(base); ok {
		return topic, part, true
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			if t, p, ok := ParseDirName(filepath.Base(real)); ok {
				return t, p, true
			}
		}
	}
	return topic, part, false
}

// ParseDirName splits "<topic>-<partition>" (the partition is the text after
// the last dash). Directories marked -delete, -stray or -future are not
// partitions being served and return ok=false.
func ParseDirName(name string) (topic string, part int32, ok bool) {
	if strings.HasSuffix(name, "-delete") || strings.HasSuffix(name, "-stray") || strings.HasSuffix(name, "-future") {
		return "", 0, false
	}
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, false
	}
	return name[:i], int32(p), true
}

// Segment is one segment's files; absent files have empty paths.
type Segment struct {
	BaseOffset int64
	Log        string
	Index      string
	TimeIndex  string
	TxnIndex   string
}

// Snapshot is a producer state snapshot file.
type Snapshot struct {
	Offset int64
	Path   string
}

// Dir is a partition directory's contents, segments in base offset order.
type Dir struct {
	Path      string
	Topic     string
	Partition int32
	Segments  []Segment
	Snapshots []Snapshot
	// LeaderEpochs and Metadata are the checkpoint paths, "" if absent.
	LeaderEpochs string
	Metadata     string
	// Other lists files a broker does not read in a live partition
	// (.deleted, .cleaned, .swap, anything unknown).
	Other []string
}

// Open lists a partition directory.
func Open(path string) (*Dir, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: path, Partition: -1}
	d.Topic, d.Partition, _ = NameOf(path)
	segs := map[int64]*Segment{}
	seg := func(off int64) *Segment {
		s := segs[off]
		if s == nil {
			s = &Segment{BaseOffset: off}
			segs[off] = s
		}
		return s
	}
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		name := de.Name()
		p := filepath.Join(path, name)
		switch name {
		case LeaderEpochCheckpoint:
			d.LeaderEpochs = p
			continue
		case PartitionMetadata:
			d.Metadata = p
			continue
		}
		off, suffix, ok := ParseFileName(name)
		if !ok {
			d.Other = append(d.Other, p)
			continue
		}
		switch suffix {
		case LogSuffix:
			seg(off).Log = p
		case IndexSuffix:
			seg(off).Index = p
		case TimeIndexSuffix:
			seg(off).TimeIndex = p
		case TxnIndexSuffix:
			seg(off).TxnIndex = p
		case SnapshotSuffix:
			d.Snapshots = append(d.Snapshots, Snapshot{Offset: off, Path: p})
		default:
			d.Other = append(d.Other, p)
		}
	}
	for _, s := range segs {
		d.Segments = append(d.Segments, *s)
	}
	sort.Slice(d.Segments, func(i, j int) bool { return d.Segments[i].BaseOffset < d.Segments[j].BaseOffset })
	sort.Slice(d.Snapshots, func(i, j int) bool { return d.Snapshots[i].Offset < d.Snapshots[j].Offset })
	sort.Strings(d.Other)
	return d, nil
}

// IsPartitionDir reports whether path holds segment, index, snapshot, KRaft
// snapshot or partition checkpoint files (or is named like a partition and
// is empty).
func IsPartitionDir(path string) bool {
	des, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		if _, suffix, ok := ParseFileName(de.Name()); ok {
			// A segment, index or snapshot file, or one a broker is
			// deleting, cleaning or swapping (.log.deleted, .index.swap).
			for _, k := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, SnapshotSuffix} {
				if strings.HasPrefix(suffix, k) {
					return true
				}
			}
		}
		if de.Name() == LeaderEpochCheckpoint || de.Name() == PartitionMetadata {
			return true
		}
		if _, _, ok := ParseKRaftSnapshotName(de.Name()); ok {
			// __cluster_metadata-0 holding only a snapshot.
			return true
		}
	}
	_, _, ok := ParseDirName(filepath.Base(filepath.Clean(path)))
	return ok && len(des) == 0
}

// LogDir is a directory of partition directories.
type LogDir struct {
	Path       string
	Partitions []string // partition directory paths, by topic then partition
	// Checkpoints are the log-dir-level checkpoint files present.
	Checkpoints []string
	// Links maps each partition path in Partitions that is a symbolic
	// link (an operator's way to move a partition to another disk) to
	// its target. Readers read through it; writers refuse it
	// (CheckNotLink).
	Links map[string]string
}

// OpenLogDir lists a log directory.
func OpenLogDir(path string) (*LogDir, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	ld := &LogDir{Path: path}
	type part struct {
		topic string
		n     int32
		path  string
	}
	var parts []part
	for _, de := range des {
		p := filepath.Join(path, de.Name())
		isDir := de.IsDir()
		var target string
		if de.Type()&fs.ModeSymlink != 0 {
			// A symlinked partition directory is read through.
			if _, _, ok := ParseDirName(de.Name()); ok {
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					isDir = true
					target, _ = os.Readlink(p)
				}
			}
		}
		if isDir {
			if t, n, ok := ParseDirName(de.Name()); ok {
				parts = append(parts, part{t, n, p})
				if target != "" {
					if ld.Links == nil {
						ld.Links = map[string]string{}
					}
					ld.Links[p] = target
				}
			}
			continue
		}
		for _, c := range LogDirCheckpoints {
			if de.Name() == c {
				ld.Checkpoints = append(ld.Checkpoints, p)
			}
		}
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].topic != parts[j].topic {
			return parts[i].topic < parts[j].topic
		}
		return parts[i].n < parts[j].n
	})
	for _, p := range parts {
		ld.Partitions = append(ld.Partitions, p.path)
	}
	return ld, nil
}

// IncompleteMarker is the file a klog writer of a whole partition copy
// (recover --output, redact) creates first in its new directory and
// removes last: a directory holding it is a copy that was cut short (a
// signal, a crash, an error). verify reports it (incomplete-copy) and
// recover refuses to plan from it.
const IncompleteMarker = ".klog-incomplete"

// MarkIncomplete creates dir's IncompleteMarker, durably.
func MarkIncomplete(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, IncompleteMarker), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString("klog was writing this copy and did not finish it: it is incomplete\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return SyncDir(dir)
}

// MarkComplete removes dir's IncompleteMarker, durably: the copy is whole.
func MarkComplete(dir string) error {
	if err := os.Remove(filepath.Join(dir, IncompleteMarker)); err != nil {
		return err
	}
	return SyncDir(dir)
}

// IsIncomplete reports whether dir holds IncompleteMarker.
func IsIncomplete(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, IncompleteMarker))
	return err == nil
}

// ErrLinkedDir is CheckNotLink's error: a writer never writes through a
// symbolic link.
var ErrLinkedDir = errors.New("is a symbolic link: klog reads through it but never writes through it (give the link's target to write there)")

// CheckNotLink returns an error naming dir when dir is a symbolic link.
// Writers into a partition directory (produce, serve --writable, recover
// and redact into an existing directory) call it first: a symlinked
// partition directory of a log dir is read through, never written through.
func CheckNotLink(dir string) error {
	st, err := os.Lstat(filepath.Clean(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "write", Path: dir, Err: ErrLinkedDir}
	}
	return nil
}
