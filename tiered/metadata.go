package tiered

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// MetadataTopic is Kafka's topic of remote log metadata
// (TopicBasedRemoteLogMetadataManagerConfig.REMOTE_LOG_METADATA_TOPIC_NAME).
const MetadataTopic = "__remote_log_metadata"

// MetadataDirs finds the __remote_log_metadata partition directories in
// paths: each path is such a directory, or a log directory holding some.
func MetadataDirs(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		base := filepath.Base(filepath.Clean(p))
		if topic, _, ok := partition.ParseDirName(base); ok && topic == MetadataTopic {
			out = append(out, p)
			continue
		}
		ld, err := partition.OpenLogDir(p)
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, d := range ld.Partitions {
			if topic, _, _ := partition.ParseDirName(filepath.Base(d)); topic == MetadataTopic {
				out = append(out, d)
			}
		}
		if len(out) == n && !hasPartitions(ld) {
			return nil, errors.New(p + ": neither a " + MetadataTopic + "-N partition directory nor a log directory holding one")
		}
	}
	return out, nil
}

func hasPartitions(ld *partition.LogDir) bool { return len(ld.Partitions) > 0 }

// ReadMetadata folds the records of the metadata partition directories
// dirs into l, each partition's segments in offset order (the order the
// broker's consumer applies them). Records that do not decode are
// problems in l; a segment that cannot be read is an error.
func ReadMetadata(ctx context.Context, dirs []string, l *Lineage) error {
	var rr format.RecordReader
	for _, dir := range dirs {
		d, err := partition.Open(dir)
		if err != nil {
			return err
		}
		name := filepath.Base(filepath.Clean(dir))
		for _, s := range d.Segments {
			if s.Log == "" {
				continue
			}
			if err := readMetadataLog(ctx, s.Log, name, &rr, l); err != nil {
				return err
			}
		}
	}
	return nil
}

func readMetadataLog(ctx context.Context, path, name string, rr *format.RecordReader, l *Lineage) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sc := format.NewScanner(f, st.Size(), format.ScanOptions{})
	for b, err := range sc.All() {
		if err != nil {
			var pe *format.PosError
			if errors.As(err, &pe) {
				l.Problems = append(l.Problems, MetadataProblem{Pos: MetadataPos{Partition: name, Offset: pe.Offset},
					Message: path + ": the metadata stops at byte " + itoa(pe.Pos) + ": " + pe.Reason()})
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !b.Valid() {
			l.Problems = append(l.Problems, MetadataProblem{Pos: MetadataPos{Partition: name, Offset: b.BaseOffset},
				Message: path + ": the batch at byte " + itoa(b.Pos) + " fails its CRC; its records are folded all the same"})
		}
		if b.IsControl() {
			continue
		}
		for r, err := range rr.Records(b) {
			if err != nil {
				l.Problems = append(l.Problems, MetadataProblem{Pos: MetadataPos{Partition: name, Offset: b.BaseOffset},
					Message: path + ": the batch at byte " + itoa(b.Pos) + ": " + err.Error()})
				break
			}
			pos := MetadataPos{Partition: name, Offset: r.Offset}
			ev, err := decodeEvent(r.Value, pos)
			if err != nil {
				l.Records++
				l.Problems = append(l.Problems, MetadataProblem{Pos: pos, Message: "the record does not decode: " + err.Error()})
				continue
			}
			if ev != nil {
				l.Apply(ev)
			}
		}
	}
	// Bytes after the last whole batch that do not start one (a cut write,
	// or a file that is not a log) hold records no broker reads: said, not
	// passed over as the end of the metadata.
	if t := sc.Tail(); t.Kind == format.TailPartial || t.Kind == format.TailCorrupt {
		off := t.Offset
		if t.Kind == format.TailCorrupt {
			off = -1 // the offset field of bytes that are no batch means nothing
		}
		l.Problems = append(l.Problems, MetadataProblem{Pos: MetadataPos{Partition: name, Offset: off},
			Message: path + ": the metadata stops at byte " + itoa(t.Pos) + ": " + itoa(t.Bytes) + " bytes after the last whole batch (" + t.Kind.String() + ")"})
	}
	return nil
}

// MetadataSummary counts what a fold found, for the partitions it has.
func (l *Lineage) MetadataSummary() (partitions, segments int) {
	for _, p := range l.Partitions {
		partitions++
		segments += len(p.Segments)
	}
	return
}
