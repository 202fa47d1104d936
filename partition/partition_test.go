package partition

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	if got := FileName(1234567, LogSuffix); got != "00000000000001234567.log" {
		t.Errorf("FileName = %s", got)
	}
	files := []struct {
		name   string
		off    int64
		suffix string
		ok     bool
	}{
		{"00000000000000000000.log", 0, ".log", true},
		{"00000000000000000016.snapshot", 16, ".snapshot", true},
		{"00000000000000000016.log.deleted", 16, ".log.deleted", true},
		{"leader-epoch-checkpoint", 0, "", false},
		{"partition.metadata", 0, "", false},
		{".log", 0, "", false},
	}
	for _, c := range files {
		off, suffix, ok := ParseFileName(c.name)
		if ok != c.ok || (ok && (off != c.off || suffix != c.suffix)) {
			t.Errorf("ParseFileName(%q) = %d %q %v", c.name, off, suffix, ok)
		}
	}
	dirs := []struct {
		name  string
		topic string
		part  int32
		ok    bool
	}{
		{"orders-0", "orders", 0, true},
		{"__consumer_offsets-49", "__consumer_offsets", 49, true},
		{"my-topic-12", "my-topic", 12, true},
		{"orders-0.5f2e0e4c3a2b4c7d8e9f0a1b2c3d4e5f-delete", "", 0, false},
		{"orders", "", 0, false},
		{"orders-x", "", 0, false},
	}
	for _, c := range dirs {
		topic, part, ok := ParseDirName(c.name)
		if ok != c.ok || (ok && (topic != c.topic || part != c.part)) {
			t.Errorf("ParseDirName(%q) = %q %d %v", c.name, topic, part, ok)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "orders-3")
	os.MkdirAll(dir, 0o755)
	for _, n := range []string{"00000000000000000016.log", "00000000000000000000.log", "00000000000000000000.index",
		"00000000000000000016.snapshot", "leader-epoch-checkpoint", "00000000000000000000.log.deleted", "junk"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Topic != "orders" || d.Partition != 3 || len(d.Segments) != 2 || d.Segments[0].BaseOffset != 0 ||
		d.Segments[0].Index == "" || d.Segments[1].BaseOffset != 16 || len(d.Snapshots) != 1 || d.LeaderEpochs == "" || len(d.Other) != 2 {
		t.Errorf("Open: %+v", d)
	}
	if !IsPartitionDir(dir) || IsPartitionDir(filepath.Dir(dir)) {
		t.Error("IsPartitionDir")
	}
	ld, err := OpenLogDir(filepath.Dir(dir))
	if err != nil || len(ld.Partitions) != 1 {
		t.Errorf("OpenLogDir: %+v %v", ld, err)
	}
	// A KRaft metadata partition holding only a snapshot is one too.
	meta := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	os.MkdirAll(meta, 0o755)
	os.WriteFile(filepath.Join(meta, "00000000000000007259-0000000001.checkpoint"), nil, 0o644)
	if !IsPartitionDir(meta) {
		t.Error("IsPartitionDir: a directory holding a KRaft snapshot")
	}
}
