package offsetstore

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/produce"
)

// TestPartition: Utils.abs(groupId.hashCode()) % 50, checked against
// values Java's String.hashCode gives.
func TestPartition(t *testing.T) {
	// Java's String.hashCode: "a" 97, "abc" 96354, "group-1" 293427299,
	// "polygenelubricants" Integer.MIN_VALUE, which Utils.abs maps to 0;
	// "é" is one UTF-16 unit (233), "😀" two (55357, 56832).
	for g, want := range map[string]int32{"": 0, "a": 47, "abc": 4, "polygenelubricants": 0, "group-1": 49, "é": 33, "😀": 49} {
		if got := Partition(g); got != want {
			t.Errorf("Partition(%q) = %d, want %d", g, got, want)
		}
	}
}

func clockAt(ms int64) produce.Options {
	return produce.Options{Now: func() time.Time { return time.UnixMilli(ms) }}
}

// TestCommitLoad: commits, a later commit, tombstones and a deleted
// group's metadata load back as a coordinator would see them.
func TestCommitLoad(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, clockAt(1000))
	tp0, tp1 := TopicPartition{"t", 0}, TopicPartition{"t", 1}
	if err := s.Commit("g", []Commit{{tp0, Committed{Offset: 5, LeaderEpoch: 2, Metadata: "m", CommitTimestamp: 10}},
		{tp1, Committed{Offset: 6, LeaderEpoch: -1, CommitTimestamp: 10}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitOffset("g", "t", 0, 9); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreGroup("g", &internaltopic.GroupMetadataValue{ProtocolType: "consumer", Generation: 3, CurrentStateTimestamp: 11}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOffsets("g", []TopicPartition{tp1}); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreGroup("gone", &internaltopic.GroupMetadataValue{ProtocolType: "consumer", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGroup("gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := NewState()
	if err := st.Load(dir); err != nil {
		t.Fatal(err)
	}
	if got := st.Offsets["g"]; len(got) != 1 || got[tp0] != (Committed{Offset: 9, LeaderEpoch: -1, CommitTimestamp: 1000}) {
		t.Errorf("offsets of g: %+v", got)
	}
	if g := st.Groups["g"]; g == nil || g.Generation != 3 {
		t.Errorf("group g: %+v", g)
	}
	if st.Groups["gone"] != nil {
		t.Errorf("a deleted group loaded")
	}
	if off, ok, err := s.CommittedOffset("g", "t", 0); err != nil || !ok || off != 9 {
		t.Errorf("CommittedOffset: %d %v %v", off, ok, err)
	}
	if _, ok, err := s.CommittedOffset("g", "t", 1); err != nil || ok {
		t.Errorf("CommittedOffset of a deleted offset: %v %v", ok, err)
	}
	// Every record went to the group's partition.
	if ps, _ := filepath.Glob(filepath.Join(dir, Topic+"-*")); len(ps) != 2 {
		t.Errorf("partitions %v, want those of g and gone", ps)
	}
}

// TestTransactionalOffsets: offsets written in a transaction count once
// its COMMIT marker is read and never after an ABORT (TxnOffsetCommit as
// the coordinator replays it).
func TestTransactionalOffsets(t *testing.T) {
	dir := t.TempDir()
	pdir := filepath.Join(dir, Topic+"-"+itoa(Partition("tg")))
	a, err := produce.Open(pdir, produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	txn := func(pid int64, offset int64, commit bool) {
		key, val, _ := internaltopic.AppendOffsetCommit(nil, nil, internaltopic.OffsetCommitKey{Group: "tg", Topic: "t"}, internaltopic.OffsetCommitValue{Offset: offset, LeaderEpoch: -1})
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Key: key, Value: val}}, Producer: &produce.Producer{ID: pid}, Transactional: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.EndTxn(pid, 0, commit, 0); err != nil {
			t.Fatal(err)
		}
	}
	txn(7, 100, true)
	txn(8, 200, false)
	// An open transaction at the end is not committed either.
	key, val, _ := internaltopic.AppendOffsetCommit(nil, nil, internaltopic.OffsetCommitKey{Group: "tg", Topic: "t"}, internaltopic.OffsetCommitValue{Offset: 300, LeaderEpoch: -1})
	if _, err := a.Append(&produce.Batch{Records: []format.Record{{Key: key, Value: val}}, Producer: &produce.Producer{ID: 9}, Transactional: true}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	st := NewState()
	if err := st.Load(dir); err != nil {
		t.Fatal(err)
	}
	if got := st.Offsets["tg"][TopicPartition{"t", 0}].Offset; got != 100 {
		t.Errorf("transactional offset %d, want 100 (the committed transaction's)", got)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestTornTail: a record batch cut short (a writer killed mid-append) ends
// the partition; what came before loads.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, clockAt(1))
	if err := s.CommitOffset("g", "t", 0, 4); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitOffset("g", "t", 0, 5); err != nil {
		t.Fatal(err)
	}
	s.Close()
	log := filepath.Join(dir, Topic+"-"+itoa(Partition("g")), "00000000000000000000.log")
	st, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(log, st.Size()-3); err != nil {
		t.Fatal(err)
	}
	state := NewState()
	if err := state.Load(dir); err != nil {
		t.Fatal(err)
	}
	if got := state.Offsets["g"][TopicPartition{"t", 0}].Offset; got != 4 {
		t.Errorf("after a torn tail: %d, want 4", got)
	}
}

// TestMigrate: fetch's old text file is read once: its entries the store
// lacks are committed (the store's own are newer and kept), the file is
// renamed, and a second open commits nothing; without rename (another
// directory's store) it stays and is read again, committing nothing new.
func TestMigrate(t *testing.T) {
	logDir := t.TempDir()
	legacy := filepath.Join(logDir, LegacyFile)
	if err := os.WriteFile(legacy, []byte("0\n3\ng t 0 17\ng t 1 3\nh u 2 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Open(logDir, clockAt(50))
	if err := s.CommitOffset("g", "t", 1, 30); err != nil { // newer than the file's
		t.Fatal(err)
	}
	s.Close()
	state := t.TempDir()
	other, n, err := OpenFor(logDir, state, clockAt(60))
	if err != nil || n != 2 {
		t.Fatalf("migrating into a state dir: %d, %v; want 2 (g t 0 and h u 2)", n, err)
	}
	other.Close()
	if _, err := os.Stat(legacy); err != nil {
		t.Fatalf("the log dir's file went although the store is elsewhere: %v", err)
	}
	if _, n, _ := OpenFor(logDir, state, clockAt(61)); n != 0 {
		t.Errorf("a second migration into the state dir committed %d", n)
	}
	s, n, err = OpenFor(logDir, "", clockAt(70))
	if err != nil || n != 2 {
		t.Fatalf("migrating into the log dir: %d, %v", n, err)
	}
	s.Close()
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the legacy file is still there: %v", err)
	}
	if _, err := os.Stat(legacy + MigratedSuffix); err != nil {
		t.Errorf("no %s: %v", LegacyFile+MigratedSuffix, err)
	}
	st := NewState()
	if err := st.Load(logDir); err != nil {
		t.Fatal(err)
	}
	want := map[TopicPartition]int64{{"t", 0}: 17, {"t", 1}: 30}
	for tp, o := range want {
		if got := st.Offsets["g"][tp].Offset; got != o {
			t.Errorf("g %v: %d, want %d", tp, got, o)
		}
	}
	if got := st.Offsets["h"][TopicPartition{"u", 2}].Offset; got != 8 {
		t.Errorf("h u 2: %d, want 8", got)
	}
	if _, n, _ := OpenFor(logDir, "", clockAt(80)); n != 0 {
		t.Errorf("the renamed file was migrated again (%d)", n)
	}
	// A file that is not the old format is an error naming it.
	if err := os.WriteFile(legacy, []byte("0\n1\ng t x 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenFor(logDir, "", clockAt(90)); err == nil || !strings.Contains(err.Error(), LegacyFile) {
		t.Errorf("a malformed legacy file: %v", err)
	}
}
