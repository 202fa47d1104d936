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
