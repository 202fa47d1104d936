package offsetstore

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/partition"
)

// TestCompact: many commits over a few keys compact to the latest of each
// (a deleted offset and a deleted group gone), the store loads back as
// before, it is smaller on disk and Bytes says so (and agrees with the
// disk before and after), and commits go on after it.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, clockAt(1000))
	for i := 0; i < 200; i++ {
		for _, g := range []string{"a", "b", "c"} {
			if err := s.Commit(g, []Commit{{TopicPartition{"t", int32(i % 3)}, Committed{Offset: int64(i), LeaderEpoch: -1, Metadata: "m" + strconv.Itoa(i), CommitTimestamp: int64(i)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.StoreGroup("a", &internaltopic.GroupMetadataValue{ProtocolType: "consumer", Generation: 3, CurrentStateTimestamp: 11}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOffsets("b", []TopicPartition{{"t", 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreGroup("gone", &internaltopic.GroupMetadataValue{ProtocolType: "consumer", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGroup("gone"); err != nil {
		t.Fatal(err)
	}
	before := NewState()
	if err := before.Load(dir); err != nil {
		t.Fatal(err)
	}
	counted, err := s.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if disk := treeBytes(t, dir); counted < disk {
		t.Errorf("Bytes says %d, the disk holds %d", counted, disk)
	}
	after, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if disk := treeBytes(t, dir); after != disk || after >= counted/4 {
		t.Errorf("after compaction: Bytes %d, disk %d, before %d (want a quarter at most)", after, disk, counted)
	}
	got := NewState()
	if err := got.Load(dir); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Offsets, before.Offsets) || !reflect.DeepEqual(got.Groups, before.Groups) {
		t.Errorf("compaction changed the state:\n%v %v\nwant\n%v %v", got.Offsets, got.Groups, before.Offsets, before.Groups)
	}
	if err := s.CommitOffset("a", "t", 0, 999); err != nil {
		t.Fatal(err)
	}
	if o, ok, err := s.CommittedOffset("a", "t", 0); err != nil || !ok || o != 999 {
		t.Errorf("a commit after compaction: %d %v %v", o, ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if _, _, ok := parseStoreDir(de.Name()); !ok {
			t.Errorf("left in the store: %s", de.Name())
		}
	}
}

// TestCompactRecovery: a swap a crash interrupted is finished by OpenFor:
// the old directory put back when the new one is not in place, removed
// when it is, and a half-written new one removed.
func TestCompactRecovery(t *testing.T) {
	state := t.TempDir()
	s := Open(state, clockAt(1000))
	for _, g := range []string{"a", "b"} {
		if err := s.CommitOffset(g, "t", 0, 7); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	pa, pb := filepath.Join(state, Topic+"-"+strconv.Itoa(int(Partition("a")))), filepath.Join(state, Topic+"-"+strconv.Itoa(int(Partition("b"))))
	// a: crashed between the two renames; b: after them, before the
	// removal (its old copy is still there), and a half-written one.
	if err := os.Rename(pa, pa+compactedSuffix); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(pa+compactingSuffix, 0o755)
	os.MkdirAll(pb+compactedSuffix, 0o755)
	s2, _, err := OpenFor(t.TempDir(), state, clockAt(2000))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, g := range []string{"a", "b"} {
		if o, ok, err := s2.CommittedOffset(g, "t", 0); err != nil || !ok || o != 7 {
			t.Errorf("%s after recovery: %d %v %v", g, o, ok, err)
		}
	}
	for _, p := range []string{pa + compactedSuffix, pa + compactingSuffix, pb + compactedSuffix} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", filepath.Base(p))
		}
	}
}

func parseStoreDir(name string) (string, int32, bool) {
	t, n, ok := partition.ParseDirName(name)
	return t, n, ok && t == Topic
}

func treeBytes(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
