package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Task kinds beyond the file kinds of FileReport.Kind.
const (
	kindIgnored   = "ignored"   // a file in a directory that is not a Kafka file: listed, not checked
	kindLink      = "link"      // a partition directory that is a symbolic link: read through it
	kindUnknown   = "unknown"   // a file named on the command line that klog cannot classify: an error
	kindDirectory = "directory" // a directory that could not be listed: an error
	kindError     = "error"     // a path that holds nothing to check: an error
)

// Suffixes Kafka appends to a segment's files while it deletes, cleans or
// swaps them (LogFileUtils: DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX,
// SWAP_FILE_SUFFIX). Named explicitly, such files are checked as what is
// under the marker.
var markerSuffixes = []string{".deleted", ".cleaned", ".swap"}

// explicitTask classifies a file named on the command line by its name and
// type: a segment (base offset from the name, or -1 when the name is not a
// number), an index, a snapshot, a checkpoint; anything else is an error.
func explicitTask(p string, st os.FileInfo) task {
	if !st.Mode().IsRegular() {
		return task{path: p, kind: kindUnknown, base: -1,
			err: errors.New("not a regular file or a pipe (use - to read a segment from stdin)")}
	}
	t := classify(p)
	if t.kind == "" && looksLikeSegment(p) {
		// No Kafka name, but the content starts like a segment: read it
		// as one, base offset unknown.
		t.kind = "log"
	}
	switch {
	case t.kind == "":
		t.kind = kindUnknown
		t.err = errors.New("not a Kafka file (expected a .log segment, .index, .timeindex, .txnindex, .snapshot, .checkpoint or a checkpoint file; the content does not start like a segment either)")
	case (t.kind == "index" || t.kind == "timeindex") && t.base < 0:
		t.kind = kindUnknown
		t.err = errors.New("cannot check an index whose file name does not give its segment's base offset (<20 digits>" + filepath.Ext(p) + ")")
	}
	return t
}

// looksLikeSegment reports whether a file starts with a plausible entry
// header: an offset, a size of at least the smallest entry, and a magic of
// 0, 1 or 2 (what a segment's first 17 bytes hold).
func looksLikeSegment(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [format.HeaderSizeUpToMagic]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return format.LooksLikeSegment(h[:])
}

// classify names the kind of a Kafka file from its name, "" when the name
// is not one a broker writes.
func classify(p string) task { return classifyBeside(p, "", "") }

// classifyBeside is classify for a file of a segment whose .log and .index
// paths the caller has (empty: not there): an index file's task names
// them instead of paths joined anew (at 100,000 segments, the joins were a
// tenth of a fleet run's allocations).
func classifyBeside(p, log, index string) task {
	name := filepath.Base(p)
	dir := filepath.Dir(p)
	t := task{path: p, base: -1}
	switch {
	case name == partition.LeaderEpochCheckpoint:
		t.kind = "leader-epoch-checkpoint"
		return t
	case name == partition.PartitionMetadata:
		t.kind = "partition-metadata"
		return t
	case isOffsetCheckpoint(name):
		t.kind = "offset-checkpoint"
		return t
	}
	marker := ""
	for _, m := range markerSuffixes {
		if strings.HasSuffix(name, m) && len(name) > len(m) {
			marker = m
			name = strings.TrimSuffix(name, m)
			break
		}
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if stem == "" {
		return t
	}
	if off, suffix, ok := partition.ParseFileName(name); ok && suffix == ext {
		t.base = off
	}
	sibling := func(have, suffix string) string {
		if have != "" && marker == "" {
			return have
		}
		return filepath.Join(dir, stem+suffix+marker)
	}
	switch ext {
	case partition.LogSuffix:
		t.kind = "log"
	case ".checkpoint":
		t.kind = "checkpoint"
	case partition.IndexSuffix:
		t.kind = "index"
		t.log = sibling(log, partition.LogSuffix)
	case partition.TimeIndexSuffix:
		t.kind = "timeindex"
		t.log = sibling(log, partition.LogSuffix)
		t.index = sibling(index, partition.IndexSuffix)
	case partition.TxnIndexSuffix:
		t.kind = "txnindex"
	case partition.SnapshotSuffix:
		t.kind = "snapshot"
	}
	return t
}

// stdinTask copies stdin to a temporary file (so that memory stays bounded
// whatever its size) and checks it as a segment of unknown base offset. A
// stream whose first bytes cannot start a segment (format.SegmentStart) is
// not read further: it is an error task, "not a Kafka file", as a named
// file klog cannot classify is. An empty stream is an empty segment.
func stdinTask(ctx context.Context, r io.Reader) (task, func(), error) {
	path, cleanup, err := safeio.SpoolStdin(ctx, r, format.HeaderSizeUpToMagic, format.SegmentStart)
	if errors.Is(err, format.ErrNotSegment) {
		return task{kind: kindUnknown, base: -1, err: fmt.Errorf("not a Kafka file: %w", err)}, func() {}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return task{}, nil, err
		}
		return task{}, nil, fmt.Errorf("reading stdin: %w", err)
	}
	return task{path: path, name: "-", kind: "log", base: -1}, cleanup, nil
}

// expander turns directory arguments into tasks and partition groups.
type expander struct {
	tasks  []task
	groups []group
	// counted tasks have been looked at by real, nreal of them real.
	counted, nreal int
}

// real counts the tasks that check a Kafka file.
func (ex *expander) real() int {
	// Counted on from where the last call stopped: tasks are only added,
	// and a piece asks after every partition it lists.
	for _, t := range ex.tasks[ex.counted:] {
		if t.err == nil && t.kind != kindIgnored {
			ex.nreal++
		}
	}
	ex.counted = len(ex.tasks)
	return ex.nreal
}

func (ex *expander) fail(p string, err error) {
	ex.tasks = append(ex.tasks, task{path: p, kind: kindDirectory, base: -1, err: err})
}

func (ex *expander) ignore(p, why string) {
	ex.tasks = append(ex.tasks, task{path: p, kind: kindIgnored, base: -1, why: why})
}

// expand adds the files of a partition directory, or of every partition of
// a log directory (recursing into directories that are neither). A
// directory that cannot be read is reported and the rest goes on.
func (ex *expander) expand(p string) {
	if partition.IsPartitionDir(p) {
		ex.expandPartition(p)
		return
	}
	ld, err := partition.OpenLogDir(p)
	if err != nil {
		ex.fail(p, err)
		return
	}
	ex.expandLogDir(p, ld)
}

// expandLogDir adds the partitions, subdirectories and checkpoints of the
// log directory ld (listed at p).
func (ex *expander) expandLogDir(p string, ld *partition.LogDir) {
	first := len(ex.tasks)
	// Partition directories first, then other subdirectories (a root
	// holding several log dirs, say), then the log dir's checkpoints: they
	// are checked against every partition, so a streamed report can give
	// each partition's verdicts before them.
	for _, pd := range ld.Partitions {
		if target, ok := ld.Links[pd]; ok {
			// Read through, and said (README, "What a file is").
			ex.tasks = append(ex.tasks, task{path: pd, kind: kindLink, base: -1, why: target})
		}
		ex.expand(pd)
	}
	own, subs, err := logDirEntries(p, ld.Links)
	if err != nil {
		ex.fail(p, err)
		return
	}
	for _, e := range own {
		if e.ignored {
			ex.ignore(e.path, "not a Kafka file")
		} else {
			ex.tasks = append(ex.tasks, task{path: e.path, kind: "checkpoint", base: -1})
		}
	}
	for _, s := range subs {
		ex.expand(s)
	}
	for _, c := range ld.Checkpoints {
		ex.tasks = append(ex.tasks, classify(c))
	}
	if len(ld.Checkpoints) > 0 {
		ex.groups = append(ex.groups, group{logDir: ld, first: first, n: len(ex.tasks) - first})
	}
}

// logDirEntry is one file of a log directory's own (not in a partition):
// a KRaft bootstrap checkpoint to check, or a file a broker does not write,
// listed as ignored.
type logDirEntry struct {
	path    string
	ignored bool
}

// logDirEntries lists a log directory's own files in directory order (the
// offset checkpoints, which LogDir already holds, and the broker's own
// files are left out) and its subdirectories that are not partitions,
// sorted. Run and RunEach walk a log dir through it.
func logDirEntries(p string, links map[string]string) (own []logDirEntry, subs []string, err error) {
	des, err := os.ReadDir(p)
	if err != nil {
		return nil, nil, err
	}
	for _, de := range des {
		name := de.Name()
		if _, ok := links[filepath.Join(p, name)]; ok {
			continue // a symlinked partition, expanded with the others
		}
		if de.IsDir() {
			if _, _, ok := partition.ParseDirName(name); !ok {
				subs = append(subs, filepath.Join(p, name))
			}
			continue
		}
		switch {
		case isOffsetCheckpoint(name), brokerFile(name):
		case name == "bootstrap.checkpoint":
			own = append(own, logDirEntry{path: filepath.Join(p, name)})
		default:
			own = append(own, logDirEntry{path: filepath.Join(p, name), ignored: true})
		}
	}
	sort.Strings(subs)
	return own, subs, nil
}

// brokerFile reports files a broker keeps in a log directory that hold no
// log data: nothing to check, nothing to report.
func brokerFile(name string) bool {
	switch name {
	case "meta.properties", safeio.BrokerLockFile, ".kafka_cleanshutdown", "directory.id":
		return true
	}
	return false
}

func (ex *expander) expandPartition(p string) {
	d, err := partition.Open(p)
	if err != nil {
		ex.fail(p, err)
		return
	}
	g := group{dir: d, first: len(ex.tasks), logTask: map[int64]int{}}
	for _, s := range d.Segments {
		for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if f == "" {
				continue
			}
			// The segment's path strings are shared: at 100,000
			// segments, copies of them are megabytes.
			t := classifyBeside(f, s.Log, s.Index)
			if t.kind == "log" {
				g.logTask[s.BaseOffset] = len(ex.tasks)
			}
			t.logMissing = s.Log == "" && t.log != ""
			ex.tasks = append(ex.tasks, t)
		}
		if s.Log == "" {
			ex.tasks = append(ex.tasks, task{path: filepath.Join(p, partition.FileName(s.BaseOffset, partition.LogSuffix)), kind: "missing-log", base: s.BaseOffset})
		}
	}
	for _, s := range d.Snapshots {
		ex.tasks = append(ex.tasks, classify(s.Path))
	}
	for _, o := range d.Other {
		name := filepath.Base(o)
		t := classify(o)
		switch {
		case name == partition.IncompleteMarker:
			ex.tasks = append(ex.tasks, task{path: o, kind: "incomplete", base: -1})
		case t.kind == "checkpoint" && !strings.HasSuffix(name, ".checkpoint.part"):
			ex.tasks = append(ex.tasks, t)
		case partition.IsSegmentFile(name):
			// LogLoader parses every *.log and index file name as an
			// offset: one that is not a number fails the load.
			ex.tasks = append(ex.tasks, task{path: o, kind: "misnamed", base: -1})
		case t.kind != "":
			// .deleted, .cleaned and .swap files: the broker deletes or
			// swaps them at startup; they are not part of the live log.
			ex.ignore(o, "not part of the live log (the broker deletes or swaps it at startup)")
		default:
			ex.ignore(o, "not a Kafka file")
		}
	}
	for _, f := range []string{d.LeaderEpochs, d.Metadata} {
		if f != "" {
			ex.tasks = append(ex.tasks, classify(f))
		}
	}
	g.n = len(ex.tasks) - g.first
	ex.groups = append(ex.groups, g)
}
