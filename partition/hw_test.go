package partition

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
)

func TestHighWatermark(t *testing.T) {
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "orders-3")
	if hw, ok, err := HighWatermark(dir); err != nil || ok || hw != -1 {
		t.Fatalf("no checkpoint: %d %v %v", hw, ok, err)
	}
	cp := format.AppendOffsetCheckpoint(nil, []format.OffsetEntry{{Topic: "orders", Partition: 3, Offset: 42}, {Topic: "other", Partition: 0, Offset: 7}})
	if err := os.WriteFile(filepath.Join(logDir, ReplicationCheckpoint), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir string
		hw  int64
		ok  bool
	}{
		{dir, 42, true},
		{filepath.Join(logDir, "orders-4"), -1, false},
		{filepath.Join(logDir, "not a partition"), -1, false},
	}
	for _, c := range cases {
		hw, ok, err := HighWatermark(c.dir)
		if err != nil || hw != c.hw || ok != c.ok {
			t.Errorf("%s: %d %v %v, want %d %v", c.dir, hw, ok, err, c.hw, c.ok)
		}
	}
	if m, err := HighWatermarks(logDir); err != nil || len(m) != 2 || m[TopicPartition{"other", 0}] != 7 {
		t.Errorf("HighWatermarks: %v %v", m, err)
	}
	os.WriteFile(filepath.Join(logDir, ReplicationCheckpoint), []byte("0\n1\norders 3\n"), 0o644)
	var pe *fs.PathError
	if _, _, err := HighWatermark(dir); !errors.As(err, &pe) {
		t.Errorf("malformed checkpoint: %v, want a *fs.PathError naming the file", err)
	}
}

func TestUpdateCheckpointOffsets(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	path := filepath.Join(logDir, ReplicationCheckpoint)
	set := func(es ...format.OffsetEntry) error {
		return UpdateCheckpointOffsets(logDir, ReplicationCheckpoint, es, WriteOptions{})
	}
	// A missing file is created.
	if err := set(format.OffsetEntry{Topic: "orders", Partition: 3, Offset: 42}); err != nil {
		t.Fatal(err)
	}
	// Entries keep their order; a new one follows; a set one changes.
	if err := os.WriteFile(path, []byte("0\n2\nb 0 1\na 1 2\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o640)
	if err := set(format.OffsetEntry{Topic: "c", Partition: 0, Offset: 9}, format.OffsetEntry{Topic: "a", Partition: 1, Offset: 5}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "0\n3\nb 0 1\na 1 5\nc 0 9\n"; string(got) != want {
		t.Errorf("file %q, want %q", got, want)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640 kept", st.Mode().Perm())
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
	// A damaged file is not rewritten.
	bad := []byte("0\n1\norders 3\n")
	os.WriteFile(path, bad, 0o644)
	var pe *fs.PathError
	if err := set(format.OffsetEntry{Topic: "a", Partition: 1, Offset: 6}); !errors.As(err, &pe) {
		t.Errorf("damaged file: %v, want a *fs.PathError", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(bad) {
		t.Errorf("damaged file rewritten: %q", got)
	}
}
