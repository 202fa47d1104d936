package fetch

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/partition"
)

// TestListOffsetsMatchesKafka asks fetch.ListOffsets, over the partition
// model opened as Kafka was (cleanly, or recovering), with the high
// watermark and last stable offset the model computes, every question Kafka
// 4.3.1 answered for its own partitions per isolation level
// (partition/testdata/kafka-listoffsets, see its PROVENANCE.md). No
// replication-offset-checkpoint: the high watermark is the log end offset,
// as it was for Kafka.
func TestListOffsetsMatchesKafka(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "partition", "testdata", "kafka-listoffsets")
	var files []string
	filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err == nil && de.Name() == "kafka-listoffsets.json" {
			files = append(files, p)
		}
		return err
	})
	if len(files) != 21 {
		t.Fatalf("%d oracle files, want 21", len(files))
	}
	type answer struct {
		Offset      int64           `json:"offset"`
		Timestamp   int64           `json:"timestamp"`
		LeaderEpoch json.RawMessage `json:"leader_epoch"`
	}
	type oracleFile struct {
		Mtimes map[string]int64 `json:"mtimes_applied"`
		Modes  map[string]struct {
			HighWatermark    int64 `json:"high_watermark"`
			LastStableOffset int64 `json:"last_stable_offset"`
			Queries          []struct {
				Target int64  `json:"target"`
				RU     answer `json:"list_offsets_read_uncommitted"`
				RC     answer `json:"list_offsets_read_committed"`
			} `json:"queries"`
		} `json:"modes"`
	}
	for _, file := range files {
		var oracle oracleFile
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &oracle); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Dir(file), root+string(filepath.Separator))
		dir := copyOracleDir(t, filepath.Dir(file), oracle.Mtimes["all_files"])
		for modeName, mode := range map[string]partition.IndexMode{"clean_open": partition.IndexesAsFound, "unclean_open": partition.IndexesRebuilt} {
			m := oracle.Modes[modeName]
			l, err := partition.OpenLog(dir, partition.LogOptions{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			o, err := l.Offsets()
			if err != nil {
				t.Fatal(err)
			}
			if o.HighWatermark != m.HighWatermark || o.LastStableOffset != m.LastStableOffset {
				t.Errorf("%s %s: high watermark %d, last stable offset %d; Kafka %d, %d", name, modeName, o.HighWatermark, o.LastStableOffset, m.HighWatermark, m.LastStableOffset)
			}
			for _, q := range m.Queries {
				if q.Target == -5 || q.Target == -6 {
					continue
				}
				for _, c := range []struct {
					iso  Isolation
					want answer
				}{{ReadUncommitted, q.RU}, {ReadCommitted, q.RC}} {
					r, err := ListOffsets(l, q.Target, c.iso)
					if err != nil {
						t.Fatal(err)
					}
					off, ts, epoch := int64(-1), int64(-1), "none"
					if r.Found {
						off, ts = r.Offset, r.Timestamp
						if r.LeaderEpoch >= 0 {
							epoch = strconv.Itoa(int(r.LeaderEpoch))
						}
					}
					if off != c.want.Offset || ts != c.want.Timestamp || epoch != strings.Trim(string(c.want.LeaderEpoch), `"`) {
						t.Errorf("%s %s %v target %d: offset %d ts %d epoch %s; Kafka %d %d %s", name, modeName, c.iso, q.Target,
							off, ts, epoch, c.want.Offset, c.want.Timestamp, c.want.LeaderEpoch)
					}
				}
			}
		}
	}
}

// copyOracleDir copies a partition's files and gives them the oracle's
// modification time.
func copyOracleDir(t *testing.T, src string, ms int64) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "p-0")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(ms)
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, de.Name())
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
