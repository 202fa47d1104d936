// Package cluster answers cluster questions from the brokers' disks, with
// the cluster down: the consumer groups of __consumer_offsets with their
// lag (kafka-consumer-groups.sh --describe), the transactions of
// __transaction_state and the open and hanging ones in the data
// (kafka-transactions.sh), and the inventory of log dirs, topics and
// partitions of one or several brokers (kafka-log-dirs.sh --describe,
// kcat -L), checked against the KRaft metadata image (package kraft).
// Records come typed from internaltopic, the decoders behind
// kafka-dump-log's --offsets-decoder and --transaction-log-decoder.
package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// LogDir is one log directory of a broker, as found on disk.
type LogDir struct {
	Path string `json:"logDir"`
	// BrokerID is node.id (KRaft) or broker.id from meta.properties, -1
	// when the log dir has none.
	BrokerID    int32           `json:"broker"`
	ClusterID   string          `json:"clusterId,omitempty"`
	DirectoryID string          `json:"directoryId,omitempty"`
	Partitions  []*PartitionDir `json:"-"`
	// Future, Deleting and Stray are the directories a broker keeps while
	// it moves a replica between its log dirs (-future), deletes one
	// (-delete), or finds one the metadata no longer assigns it (-stray).
	Future   []string `json:"future"`
	Deleting []string `json:"deleting"`
	Stray    []string `json:"stray"`
	// Unknown are the files and directories a broker does not keep in a
	// log dir.
	Unknown []string `json:"unknown"`
	// HighWatermarks is the replication-offset-checkpoint (nil when the
	// file is missing or does not parse; HWError says why).
	HighWatermarks map[partition.TopicPartition]int64 `json:"-"`
	HWError        string                             `json:"hwError,omitempty"`
}

// PartitionDir is one partition directory in a log dir.
type PartitionDir struct {
	Path      string
	Topic     string
	Partition int32
	// TopicID is partition.metadata's topic id (zero: none).
	TopicID [16]byte
	LogDir  *LogDir
}

// Files a broker keeps in a log dir besides partition directories
// (LogManager, LogDirFailureChannel, CleanShutdownFileHandler, KRaft).
var logDirFiles = map[string]bool{
	"meta.properties": true, safeio.BrokerLockFile: true, ".kafka_cleanshutdown": true, "bootstrap.checkpoint": true,
	partition.ReplicationCheckpoint: true, partition.RecoveryPointCheckpoint: true,
	partition.LogStartCheckpoint: true, partition.CleanerCheckpoint: true,
}

// Discover lists the log dirs the paths name. A path is a log dir, or a
// partition directory (read as a log dir holding only that partition,
// with its parent's checkpoints and meta.properties). Paths naming the
// same log dir are listed once. A path that cannot be read is an error.
func Discover(paths []string) ([]*LogDir, error) {
	var out []*LogDir
	byPath := map[string]*LogDir{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("not a directory (give a log dir or a partition directory)")}
		}
		if partition.IsPartitionDir(p) {
			parent := filepath.Dir(filepath.Clean(p))
			ld := byPath[parent]
			if ld == nil {
				ld = newLogDir(parent)
				byPath[parent] = ld
				out = append(out, ld)
			}
			if err := ld.addPartition(p); err != nil {
				return nil, err
			}
			continue
		}
		if byPath[filepath.Clean(p)] != nil {
			continue
		}
		ld, err := readLogDir(p)
		if err != nil {
			return nil, err
		}
		byPath[filepath.Clean(p)] = ld
		out = append(out, ld)
	}
	for _, ld := range out {
		sort.Slice(ld.Partitions, func(i, j int) bool {
			a, b := ld.Partitions[i], ld.Partitions[j]
			if a.Topic != b.Topic {
				return a.Topic < b.Topic
			}
			return a.Partition < b.Partition
		})
	}
	return out, nil
}

func newLogDir(path string) *LogDir {
	ld := &LogDir{Path: filepath.Clean(path), BrokerID: -1, Future: []string{}, Deleting: []string{}, Stray: []string{}, Unknown: []string{}}
	ld.readMeta()
	hw, err := partition.HighWatermarks(ld.Path)
	if err != nil {
		ld.HWError = err.Error()
	} else {
		ld.HighWatermarks = hw
	}
	return ld
}

func (ld *LogDir) addPartition(p string) error {
	topic, n, ok := partition.NameOf(p)
	if !ok {
		topic, n = filepath.Base(filepath.Clean(p)), -1
	}
	pd := &PartitionDir{Path: filepath.Clean(p), Topic: topic, Partition: n, LogDir: ld}
	id, found, err := partition.ReadTopicID(p)
	if err != nil {
		// A partition.metadata that does not parse: verify says so; here
		// the partition simply has no known id.
		found = false
	}
	if found {
		pd.TopicID = id
	}
	ld.Partitions = append(ld.Partitions, pd)
	return nil
}

// readLogDir lists a log dir: partition directories, the directories a
// broker moves or deletes, and what does not belong.
func readLogDir(path string) (*LogDir, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	ld := newLogDir(path)
	for _, de := range des {
		name := de.Name()
		p := filepath.Join(path, name)
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			// Readers read through a link, as verify, find and dump do: a
			// symlinked partition directory is a partition (a dangling
			// link is unknown).
			if st, err := os.Stat(p); err == nil {
				isDir = st.IsDir()
			}
		}
		if !isDir {
			if !logDirFiles[name] && !strings.HasSuffix(name, ".tmp") {
				ld.Unknown = append(ld.Unknown, p)
			}
			continue
		}
		switch {
		case strings.HasSuffix(name, "-future"):
			ld.Future = append(ld.Future, p)
		case strings.HasSuffix(name, "-delete"):
			ld.Deleting = append(ld.Deleting, p)
		case strings.HasSuffix(name, "-stray"):
			ld.Stray = append(ld.Stray, p)
		default:
			if _, _, ok := partition.ParseDirName(name); ok {
				if err := ld.addPartition(p); err != nil {
					return nil, err
				}
			} else {
				ld.Unknown = append(ld.Unknown, p)
			}
		}
	}
	return ld, nil
}

// readMeta reads meta.properties (MetaProperties): version, cluster.id,
// node.id (broker.id before KRaft) and directory.id, Java properties.
func (ld *LogDir) readMeta() {
	data, err := safeio.ReadFile(filepath.Join(ld.Path, "meta.properties"), safeio.MaxCheckpointBytes)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "cluster.id":
			ld.ClusterID = v
		case "directory.id":
			ld.DirectoryID = v
		case "node.id", "broker.id":
			if n, err := strconv.ParseInt(v, 10, 32); err == nil {
				ld.BrokerID = int32(n)
			}
		}
	}
}
