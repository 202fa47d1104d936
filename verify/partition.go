package verify

import (
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// checkPartition runs the checks that span files: segments in offset order
// without overlap (gaps are info), each segment's first offset not below its
// name, and checkpoints pointing inside the log.
func checkPartition(pc *piece, g group, rd *reads) {
	if g.dir != nil {
		checkSegments(pc, g, rd)
		return
	}
	if g.logDir != nil {
		checkLogDirCheckpoints(pc, g, rd)
	}
}

func checkSegments(pc *piece, g group, rd *reads) {
	prevLast := int64(-1)
	var prevPath string
	leo := int64(0)
	for _, s := range g.dir.Segments {
		i, ok := g.logTask[s.BaseOffset]
		if !ok {
			continue
		}
		f := &pc.files[i]
		if f.FirstOffset >= 0 {
			if prevPath != "" && f.FirstOffset <= prevLast {
				f.add(Problem{Kind: KindSegmentOverlap, Position: 0, Offset: f.FirstOffset,
					Message: "segment starts at offset " + itoa(f.FirstOffset) + " but " + filepath.Base(prevPath) + " ends at " + itoa(prevLast)})
			} else if prevPath != "" && f.FirstOffset > prevLast+1 {
				f.add(Problem{Kind: KindOffsetGap, Info: true, Offset: prevLast + 1,
					Message: "offsets " + itoa(prevLast+1) + ".." + itoa(f.FirstOffset-1) + " are absent between segments (normal after compaction)"})
			}
			if s.BaseOffset <= prevLast && prevPath != "" {
				f.add(Problem{Kind: KindSegmentName, Offset: s.BaseOffset,
					Message: "segment base offset " + itoa(s.BaseOffset) + " is not above the previous segment's last offset " + itoa(prevLast)})
			}
			prevLast = f.LastOffset
			prevPath = f.Path
			leo = f.LastOffset + 1
		} else if leo < s.BaseOffset {
			leo = s.BaseOffset // an empty segment still moves the log end
		}
	}
	// Producer snapshots above the log end offset are deleted when the
	// broker loads the partition (ProducerStateManager.truncateAndReload).
	for i := g.first; i < g.first+g.n; i++ {
		f := &pc.files[i]
		if f.Kind != "snapshot" {
			continue
		}
		if off, _, ok := partition.ParseFileName(filepath.Base(f.Path)); ok && off > leo {
			f.add(Problem{Kind: KindSnapshotRange, Offset: off,
				Message: "producer snapshot at offset " + itoa(off) + " is above the log end offset " + itoa(leo) + ": the broker deletes it"})
		}
	}
	// leader-epoch-checkpoint start offsets cannot be past the log end.
	for i := g.first; i < g.first+g.n; i++ {
		f := &pc.files[i]
		if f.Kind != "leader-epoch-checkpoint" || f.Findings() > 0 {
			continue
		}
		es, ok := f.epochs, f.epochsParsed
		if !ok {
			// Not read by this run (--state found it unchanged).
			data, err := rd.readFile(f.Path, safeio.MaxCheckpointBytes, nil, nil)
			f.BytesRead += int64(len(data))
			if err != nil {
				continue
			}
			if es, err = format.ParseLeaderEpochCheckpoint(data); err != nil {
				continue
			}
		}
		for j, e := range es {
			if e.StartOffset > leo {
				f.add(Problem{Kind: KindCheckpointRange, Position: int64(j + 3), Offset: e.StartOffset,
					Message: "epoch " + itoa(int64(e.Epoch)) + " starts at offset " + itoa(e.StartOffset) + ", past the log end offset " + itoa(leo)})
			}
		}
	}
}

// checkLogDirCheckpoints checks that offsets in the log dir's checkpoints
// lie inside the logs they name: high watermark, recovery point and log
// start offset at most the log end offset.
func checkLogDirCheckpoints(pc *piece, g group, rd *reads) {
	// Log end offset per partition directory, from the verified logs.
	leo := map[string]int64{}
	addLogEnds(leo, pc.files[g.first:g.first+g.n], false)
	for i := g.first; i < g.first+g.n; i++ {
		checkCheckpointRange(&pc.files[i], g.logDir.Path, leo, rd)
	}
}

// addLogEnds records in leo the log end offset of each partition directory
// (by name, or by path when byPath) whose logs are among files.
func addLogEnds(leo map[string]int64, files []FileReport, byPath bool) {
	for i := range files {
		f := &files[i]
		if f.Kind != "log" {
			continue
		}
		dir := filepath.Dir(f.Path)
		if !byPath {
			dir = filepath.Base(dir)
		}
		end := int64(0)
		if off, _, ok := partition.ParseFileName(filepath.Base(f.Path)); ok {
			end = off
		}
		if f.LastOffset >= 0 {
			end = f.LastOffset + 1
		}
		leo[dir] = max(leo[dir], end)
	}
}

// checkCheckpointRange checks a log dir's offset checkpoint f against the
// log end offsets leo of the partitions in logDir.
func checkCheckpointRange(f *FileReport, logDir string, leo map[string]int64, rd *reads) {
	if f.Kind != "offset-checkpoint" || f.Findings() > 0 || filepath.Dir(f.Path) != filepath.Clean(logDir) {
		return
	}
	if filepath.Base(f.Path) == partition.CleanerCheckpoint {
		return // cleaner offsets may lag or lead after truncation
	}
	data, err := rd.readFile(f.Path, safeio.MaxCheckpointBytes, nil, nil)
	f.BytesRead += int64(len(data))
	if err != nil {
		return
	}
	es, err := format.ParseOffsetCheckpoint(data)
	if err != nil {
		return
	}
	for j, e := range es {
		dir := e.Topic + "-" + itoa(int64(e.Partition))
		end, ok := leo[dir]
		if !ok {
			continue
		}
		if e.Offset > end {
			f.add(Problem{Kind: KindCheckpointRange, Position: int64(j + 3), Offset: e.Offset,
				Message: dir + ": offset " + itoa(e.Offset) + " is past the log end offset " + itoa(end)})
		}
	}
}
