package produce

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// TestOpenWritesPartitionMetadata: a partition Open creates gets
// partition.metadata as a broker's new log does: its topic's id when a
// partition beside it has one, else a fresh one, or Options.TopicID; an
// existing partition's file is never rewritten, and one without a file
// gets none unless asked.
func TestOpenWritesPartitionMetadata(t *testing.T) {
	t.Parallel()
	logDir := t.TempDir()
	open := func(name string, id [16]byte) (*Appender, error) {
		return Open(filepath.Join(logDir, name), Options{Sync: SyncNever, TopicID: id})
	}
	fileID := func(name string) ([16]byte, bool) {
		t.Helper()
		id, ok, err := partition.ReadTopicID(filepath.Join(logDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return id, ok
	}

	a, err := open("orders-0", [16]byte{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(&Batch{Records: []format.Record{{Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	first, ok := fileID("orders-0")
	if !ok || first == ([16]byte{}) || a.TopicID() != first {
		t.Fatalf("orders-0: file id %x (ok %v), Appender says %x", first, ok, a.TopicID())
	}

	// Another partition of the topic: the same id; another topic: a new one.
	for name, same := range map[string]bool{"orders-3": true, "payments-0": false} {
		b, err := open(name, [16]byte{})
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if id, _ := fileID(name); (id == first) != same {
			t.Errorf("%s: id %x, orders-0 has %x; want same %v", name, id, first, same)
		}
	}

	// Reopening keeps the file byte for byte; a different id is refused
	// and changes nothing.
	path := filepath.Join(logDir, "orders-0", partition.PartitionMetadata)
	before, _ := os.ReadFile(path)
	for _, id := range [][16]byte{{}, first} {
		b, err := open("orders-0", id)
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	other := [16]byte{0: 7, 15: 7}
	var me *partition.TopicIDMismatchError
	if _, err := open("orders-0", other); !errors.As(err, &me) || me.Have != first || me.Want != other {
		t.Fatalf("open with another id: %v, want a TopicIDMismatchError", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("partition.metadata changed: %q -> %q", before, after)
	}

	// A partition written before klog wrote partition.metadata: left
	// without one, unless an id is given.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	b, err := open("orders-0", [16]byte{})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, ok := fileID("orders-0"); ok || b.TopicID() != ([16]byte{}) {
		t.Fatal("an existing partition got a partition.metadata nobody asked for")
	}
	if b, err = open("orders-0", other); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if id, _ := fileID("orders-0"); id != other {
		t.Fatalf("given id not written: %x", id)
	}

	// A refused id on a directory holding only partition.metadata
	// leaves no segment behind.
	if err := os.MkdirAll(filepath.Join(logDir, "bare-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "bare-0", partition.PartitionMetadata), format.AppendPartitionMetadata(nil,
		format.PartitionMetadata{TopicID: format.FormatTopicID(first)}), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := open("bare-0", other); !errors.As(err, &me) {
		t.Fatalf("bare-0: %v, want a TopicIDMismatchError", err)
	}
	if _, err := os.Stat(filepath.Join(logDir, "bare-0", partition.FileName(0, partition.LogSuffix))); err == nil {
		t.Fatal("a refused open created a segment")
	}
}
