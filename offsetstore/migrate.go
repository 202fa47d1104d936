package offsetstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// LegacyFile is the text file `klog fetch --follow --group` kept committed
// offsets in before this store, in the log dir: "0", a count, then
// "group topic partition offset" lines.
const LegacyFile = "klog-consumer-offsets"

// MigratedSuffix is appended to LegacyFile's name once it is migrated.
const MigratedSuffix = ".migrated"

// Migrate commits the entries of logDir's LegacyFile that neither the
// store nor logDir's own __consumer_offsets hold (their commits are the
// newer ones; a read-only serve reads both), and returns
// how many it committed. With rename (the store is the log dir's own) the
// commits are synced and the file is renamed LegacyFile+MigratedSuffix,
// so it is read once; without (a read-only serve keeping its offsets
// elsewhere, which must not change the log dir) it is read on every start
// and commits nothing the second time. No file is no error.
func (s *Store) Migrate(logDir string, rename bool) (int, error) {
	path := filepath.Join(logDir, LegacyFile)
	data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	cp, err := format.ParseCheckpoint(data, 0, 4)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	have := NewState()
	byGroup := map[string][]Commit{}
	now := s.now().UnixMilli()
	for i, e := range cp.Entries {
		part, err1 := strconv.ParseInt(e[2], 10, 32)
		off, err2 := strconv.ParseInt(e[3], 10, 64)
		if err1 != nil || err2 != nil || part < 0 || off < 0 {
			return 0, fmt.Errorf("%s: line %d: %q is not \"group topic partition offset\"", path, i+3, e)
		}
		group, tp := e[0], TopicPartition{e[1], int32(part)}
		if _, loaded := have.Offsets[group]; !loaded {
			own := filepath.Join(logDir, Topic+"-"+strconv.Itoa(int(Partition(group))))
			if filepath.Clean(own) != filepath.Clean(s.partitionDir(Partition(group))) {
				if err := have.LoadPartition(own); err != nil {
					return 0, err
				}
			}
			if err := have.LoadPartition(s.partitionDir(Partition(group))); err != nil {
				return 0, err
			}
			if have.Offsets[group] == nil {
				have.Offsets[group] = map[TopicPartition]Committed{}
			}
		}
		if _, ok := have.Offsets[group][tp]; ok {
			continue
		}
		byGroup[group] = append(byGroup[group], Commit{tp, Committed{Offset: off, LeaderEpoch: -1, CommitTimestamp: now}})
	}
	n := 0
	for group, cs := range byGroup {
		if err := s.Commit(group, cs); err != nil {
			return n, err
		}
		n += len(cs)
	}
	if !rename {
		return n, nil
	}
	// Sync what was committed before the file that held it goes.
	if err := s.Close(); err != nil {
		return n, err
	}
	broker, err := safeio.HoldBroker(logDir)
	if err != nil {
		return n, err
	}
	defer broker.Release()
	if err := os.Rename(path, path+MigratedSuffix); err != nil {
		return n, err
	}
	return n, partition.SyncDir(logDir)
}
