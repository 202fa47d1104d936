package partition

import (
	"errors"
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

// TestLogDirReadsThroughLinks: a symlinked partition directory (a partition
// moved to another disk) is a partition of the log dir, recorded as a link;
// CheckNotLink refuses it for writers.
func TestLogDirReadsThroughLinks(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "disk2", "pay-0")
	logDir := filepath.Join(root, "logs")
	os.MkdirAll(target, 0o755)
	os.MkdirAll(filepath.Join(logDir, "orders-0"), 0o755)
	os.WriteFile(filepath.Join(target, "00000000000000000000.log"), nil, 0o644)
	link := filepath.Join(logDir, "pay-0")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	// A link to a file named like a partition is not one.
	os.WriteFile(filepath.Join(root, "f"), nil, 0o644)
	os.Symlink(filepath.Join(root, "f"), filepath.Join(logDir, "x-1"))
	ld, err := OpenLogDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions) != 2 || ld.Partitions[1] != link || ld.Links[link] != target || len(ld.Links) != 1 {
		t.Fatalf("partitions %v links %v", ld.Partitions, ld.Links)
	}
	if err := CheckNotLink(link); !errors.Is(err, ErrLinkedDir) {
		t.Errorf("CheckNotLink(link) = %v", err)
	}
	if err := CheckNotLink(filepath.Join(logDir, "orders-0")); err != nil {
		t.Errorf("CheckNotLink(dir) = %v", err)
	}
	// Named like a partition but holding no Kafka file: not a partition
	// directory (/etc/dbus-1); a broker's .log.deleted keeps one.
	etc := filepath.Join(root, "dbus-1")
	os.MkdirAll(filepath.Join(etc, "system.d"), 0o755)
	os.WriteFile(filepath.Join(etc, "README"), nil, 0o644)
	if IsPartitionDir(etc) {
		t.Error("dbus-1 is a partition directory")
	}
	del := filepath.Join(root, "t-3")
	os.MkdirAll(del, 0o755)
	os.WriteFile(filepath.Join(del, "00000000000000000007.log.deleted"), nil, 0o644)
	if !IsPartitionDir(del) {
		t.Error("a directory holding only a .log.deleted is not a partition directory")
	}
}

// TestNameOf: a partition directory is named by its base name; a symlink
// whose own name is not a partition's by its target's; anything else not.
func TestNameOf(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "orders-3")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ name, target string }{{"current", real}, {"events-7", real}, {"dangling", filepath.Join(root, "gone-1")}, {"plain", filepath.Join(root, "plaindir")}} {
		if err := os.Symlink(l.target, filepath.Join(root, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "plaindir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		topic string
		part  int32
		ok    bool
	}{
		{real, "orders", 3, true},
		{real + "/", "orders", 3, true},
		{filepath.Join(root, "current"), "orders", 3, true},  // named by its target
		{filepath.Join(root, "events-7"), "events", 7, true}, // its own name is a partition's: that one
		{filepath.Join(root, "dangling"), "", 0, false},
		{filepath.Join(root, "plain"), "", 0, false},
		{filepath.Join(root, "plaindir"), "", 0, false},
	} {
		topic, part, ok := NameOf(c.path)
		if topic != c.topic || part != c.part || ok != c.ok {
			t.Errorf("NameOf(%s) = %q, %d, %v; want %q, %d, %v", c.path, topic, part, ok, c.topic, c.part, c.ok)
		}
	}
}
