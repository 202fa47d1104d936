package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFiles adds every fixture file whose name ends in one of suffixes.
func seedFiles(f *testing.F, suffixes ...string) {
	filepath.WalkDir(filepath.Join("..", "testdata", "segments"), func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		for _, s := range suffixes {
			if strings.HasSuffix(p, s) {
				if b, err := os.ReadFile(p); err == nil && len(b) <= 1<<20 {
					f.Add(b)
				}
			}
		}
		return nil
	})
}

// FuzzIndex: the offset and time index readers never panic, Lookup returns
// an entry of the file or the base, and Used never exceeds Entries.
func FuzzIndex(f *testing.F) {
	seedFiles(f, ".index", ".timeindex")
	f.Fuzz(func(t *testing.T, data []byte) {
		x := OffsetIndex{BaseOffset: 100, Data: data}
		if x.Used() > x.Entries() {
			t.Fatal("used > entries")
		}
		_ = x.SanityCheck("f")
		for _, target := range []int64{-1, 0, 100, 101, 1 << 40} {
			e := x.Lookup(target)
			if e.Offset != 100 || e.Pos != 0 {
				found := false
				for i := 0; i < x.Entries(); i++ {
					if x.Entry(i) == e {
						found = true
						break
					}
				}
				if !found {
					t.Fatalf("Lookup(%d) = %+v, not an entry", target, e)
				}
			}
		}
		ti := TimeIndex{BaseOffset: 100, Data: data}
		if ti.Used() > ti.Entries() {
			t.Fatal("used > entries")
		}
		_ = ti.SanityCheck("f")
	})
}

// FuzzSnapshot: producer snapshots and aborted-transaction indexes never
// panic; a snapshot that parses re-encodes to the same bytes.
func FuzzSnapshot(f *testing.F) {
	seedFiles(f, ".snapshot", ".txnindex")
	f.Fuzz(func(t *testing.T, data []byte) {
		if es, err := ParseProducerSnapshot(data); err == nil {
			if got := AppendProducerSnapshot(nil, es); string(got) != string(data) {
				t.Fatalf("re-encoding differs:\n%x\n%x", got, data)
			}
		}
		ts := AbortedTxns(data)
		if len(ts) != len(data)/AbortedTxnEntrySize {
			t.Fatalf("%d entries from %d bytes", len(ts), len(data))
		}
	})
}

// FuzzCheckpoint: text checkpoints and partition.metadata never panic; an
// offset checkpoint or a leader-epoch-checkpoint that parses re-encodes to
// something that parses to the same entries, and so does partition.metadata.
func FuzzCheckpoint(f *testing.F) {
	seedFiles(f, "checkpoint", "partition.metadata")
	f.Add([]byte("0\n2\norders 0 5\npayments 3 17\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if es, err := ParseLeaderEpochCheckpoint(data); err == nil {
			again, err := ParseLeaderEpochCheckpoint(AppendLeaderEpochCheckpoint(nil, es))
			if err != nil || len(again) != len(es) {
				t.Fatalf("re-encoded leader-epoch-checkpoint: %v, %d vs %d entries", err, len(again), len(es))
			}
			for i := range es {
				if es[i] != again[i] {
					t.Fatalf("epoch entry %d: %+v vs %+v", i, es[i], again[i])
				}
			}
		}
		if m, err := ParsePartitionMetadata(data); err == nil {
			again, err := ParsePartitionMetadata(AppendPartitionMetadata(nil, m))
			if err != nil || again != m {
				t.Fatalf("re-encoded partition.metadata: %+v, %v; want %+v", again, err, m)
			}
		}
		es, err := ParseOffsetCheckpoint(data)
		if err != nil {
			return
		}
		again, err := ParseOffsetCheckpoint(AppendOffsetCheckpoint(nil, es))
		if err != nil || len(again) != len(es) {
			t.Fatalf("re-encoded checkpoint: %v, %d vs %d entries", err, len(again), len(es))
		}
		for i := range es {
			if es[i] != again[i] {
				t.Fatalf("entry %d: %+v vs %+v", i, es[i], again[i])
			}
		}
	})
}

// TestLeaderEpochCheckpointAsKafkaWritesIt: the leader-epoch-checkpoint
// files Kafka 4.3.1's UnifiedLog wrote (testdata/segments/kafka-written)
// re-encode byte for byte. Empty files are skipped: CheckpointFile creates
// the file empty and writes it only when the cache first changes.
func TestLeaderEpochCheckpointAsKafkaWritesIt(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "segments", "kafka-written", "*", "*", "leader-epoch-checkpoint"))
	if len(paths) == 0 {
		t.Fatal("no Kafka-written leader-epoch-checkpoint")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			continue
		}
		es, err := ParseLeaderEpochCheckpoint(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := AppendLeaderEpochCheckpoint(nil, es); string(got) != string(data) {
			t.Errorf("%s: re-encoded %q, Kafka wrote %q", p, got, data)
		}
	}
}
