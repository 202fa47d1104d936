package dump

import (
	"errors"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/verify"
)

// Files kafka-dump-log does not print (it says "Ignoring unknown file"):
// klog prints them in the same style.
var offsetCheckpoints = map[string]bool{
	"replication-offset-checkpoint":    true,
	"recovery-point-offset-checkpoint": true,
	"log-start-offset-checkpoint":      true,
	"cleaner-offset-checkpoint":        true,
}

// suffixRank orders the files of one segment: the log, then its indexes,
// then the producer snapshot.
var suffixRank = map[string]int{".log": 0, ".index": 1, ".timeindex": 2, ".txnindex": 3, ".snapshot": 4, ".checkpoint": 5}

// expandDir lists what to dump for a directory argument: for a partition
// directory its files in offset order (segment by segment), then its
// metadata files; for a log directory its own files, then every partition
// directory in it, in name order.
func (d *dumper) expandDir(p string) ([]string, error) {
	des, err := os.ReadDir(d.openPath(p))
	if err != nil {
		return nil, &IOError{Path: p, Err: err}
	}
	type item struct {
		name   string
		offset int64
		rank   int
		isDir  bool
	}
	var files, dirs []item
	for _, de := range des {
		it := item{name: de.Name(), offset: 1<<63 - 1, rank: 9}
		if de.IsDir() {
			it.isDir = true
			dirs = append(dirs, it)
			continue
		}
		// Files a broker does not write are listed last and reported as
		// "Ignoring unknown file", never skipped silently.
		if v, ok := baseOffsetFromName(it.name); ok && strings.Contains(it.name, ".") {
			it.offset = v
			if r, ok := suffixRank[it.name[strings.IndexByte(it.name, '.'):]]; ok {
				it.rank = r
			}
		}
		files = append(files, it)
	}
	sort.Slice(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.offset != b.offset {
			return a.offset < b.offset
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.name < b.name
	})
	sort.Slice(dirs, func(i, j int) bool { return partitionLess(dirs[i].name, dirs[j].name) })
	var out []string
	for _, f := range files {
		out = append(out, joinJava(p, f.name))
	}
	for _, dir := range dirs {
		out = append(out, joinJava(p, dir.name)+"/")
	}
	return out, nil
}

// partitionLess orders "topic-N" directories by topic, then partition number.
func partitionLess(a, b string) bool {
	ta, pa := splitPartition(a)
	tb, pb := splitPartition(b)
	if ta != tb {
		return ta < tb
	}
	return pa < pb
}

func splitPartition(name string) (string, int64) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name, -1
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil {
		return name, -1
	}
	return name[:i], n
}

func joinJava(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// dumpLeaderEpochs prints a leader-epoch-checkpoint.
func (d *dumper) dumpLeaderEpochs(p string) error {
	data, err := d.readWhole(p, safeio.MaxCheckpointBytes, "checkpoint-invalid")
	if err != nil {
		return err
	}
	entries, perr := format.ParseLeaderEpochCheckpoint(data)
	if perr != nil {
		return d.checkpointInvalid(p, perr)
	}
	d.r.checkpointHeader(p, "leader-epoch-checkpoint", len(entries))
	for _, e := range entries {
		d.r.epochEntry(e)
	}
	return nil
}

// dumpOffsetCheckpoint prints one of the log directory's offset checkpoints.
func (d *dumper) dumpOffsetCheckpoint(p, name string) error {
	data, err := d.readWhole(p, safeio.MaxCheckpointBytes, "checkpoint-invalid")
	if err != nil {
		return err
	}
	entries, perr := format.ParseOffsetCheckpoint(data)
	if perr != nil {
		return d.checkpointInvalid(p, perr)
	}
	d.r.checkpointHeader(p, name, len(entries))
	for _, e := range entries {
		d.r.offsetEntry(e)
	}
	return nil
}

func (d *dumper) dumpPartitionMetadata(p string) error {
	data, err := d.readWhole(p, safeio.MaxCheckpointBytes, "checkpoint-invalid")
	if err != nil {
		return err
	}
	m, perr := format.ParsePartitionMetadata(data)
	if perr != nil {
		return d.checkpointInvalid(p, perr)
	}
	d.r.partitionMetadata(p, m)
	return nil
}

// checkpointInvalid reports a checkpoint Kafka would refuse to load; like a
// corrupt producer snapshot it is a finding, and the dump goes on.
func (d *dumper) checkpointInvalid(p string, err error) error {
	d.findings++
	line := 0
	var ce *format.CheckpointError
	if errors.As(err, &ce) {
		line = ce.Line
	}
	d.r.problem(verify.Problem{Kind: verify.KindCheckpointInvalid, Position: int64(line), Offset: -1, Message: err.Error()})
	if !d.opts.JSON {
		d.r.flush()
		io.WriteString(d.errw, "Invalid checkpoint file "+p+": "+err.Error()+"\n")
	}
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// isRealDir is isDir without following a symlink.
func isRealDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}
