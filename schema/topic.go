package schema

import (
	"fmt"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// TopicName is the registry's default kafkastore.topic.
const TopicName = "_schemas"

// Finding is a record that could not be used, with where it is.
type Finding struct {
	Path   string
	Pos    int64 // byte position of its batch
	Offset int64 // the record's offset, -1 when the batch could not be read
	Err    error
}

func (f Finding) Error() string {
	return fmt.Sprintf("%s: offset %d (batch at position %d): %v", f.Path, f.Offset, f.Pos, f.Err)
}

// Unwrap returns the reason.
func (f Finding) Unwrap() error { return f.Err }

// ReadTopic replays a `_schemas` partition directory (every segment in
// offset order, control batches skipped) into a Store. Records and batches
// that cannot be read are findings; the replay goes on past a bad record
// and stops a segment at a batch it cannot read. The error is for I/O.
func ReadTopic(dir string) (*Store, []Finding, error) {
	d, err := partition.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	s := &Store{}
	var findings []Finding
	var rr format.RecordReader
	for _, seg := range d.Segments {
		if seg.Log == "" {
			continue
		}
		fs, err := replaySegment(s, &rr, seg.Log)
		findings = append(findings, fs...)
		if err != nil {
			return nil, findings, err
		}
	}
	return s, findings, nil
}

func replaySegment(s *Store, rr *format.RecordReader, path string) ([]Finding, error) {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var findings []Finding
	sc := format.NewScanner(f, size, format.ScanOptions{})
	for b, err := range sc.All() {
		if err != nil {
			findings = append(findings, Finding{Path: path, Pos: sc.Pos(), Offset: -1, Err: err})
			break
		}
		if !b.Valid() {
			findings = append(findings, Finding{Path: path, Pos: b.Pos, Offset: b.BaseOffset, Err: fmt.Errorf("batch CRC mismatch")})
			continue
		}
		if b.IsControl() {
			continue
		}
		for r, err := range rr.Records(b) {
			if err != nil {
				findings = append(findings, Finding{Path: path, Pos: b.Pos, Offset: b.BaseOffset, Err: err})
				break
			}
			if r.Key == nil {
				continue // the registry writes no keyless records
			}
			if err := s.Apply(r.Key, r.Value); err != nil {
				findings = append(findings, Finding{Path: path, Pos: b.Pos, Offset: r.Offset, Err: err})
			}
		}
	}
	if t := sc.Tail(); t.Kind == format.TailPartial || t.Kind == format.TailCorrupt {
		findings = append(findings, Finding{Path: path, Pos: t.Pos, Offset: t.Offset, Err: fmt.Errorf("%d bytes after the last whole batch (%v)", t.Bytes, t.Kind)})
	}
	return findings, nil
}

// FindTopic returns the `_schemas` partition directory of the log directory
// holding dir (dir itself, when it is a log dir), or "" when there is none.
func FindTopic(dir string) string {
	for _, logDir := range []string{dir, filepath.Dir(filepath.Clean(dir))} {
		p := filepath.Join(logDir, TopicName+"-0")
		if partition.IsPartitionDir(p) {
			return p
		}
	}
	return ""
}
