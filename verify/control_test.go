package verify

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klog-dev/klog/format"
)

// Control record values, built by hand as raft's MemoryRecordsBuilder
// writes them (flexible messages: int16 version first, an empty tag
// section last).
var (
	snapshotHeaderValue = binary.BigEndian.AppendUint64([]byte{0, 0}, 1700000000000)
	kraftVersionValue   = []byte{0, 0, 0, 1, 0}
	votersValue         = []byte{0, 0, 1, 0} // no voters
	leaderChangeValue   = []byte{0, 0, 0, 0, 0, 1, 1, 1, 0}
	endTxnValue         = []byte{0, 0, 0, 0, 0, 5}
)

func controlRecord(off int64, t format.ControlType, value []byte) format.Record {
	return format.Record{Offset: off, Timestamp: 1700000000000, Key: format.AppendControlKey(nil, t), Value: value}
}

func controlBatch(t *testing.T, base int64, transactional bool, recs ...format.Record) []byte {
	t.Helper()
	h := &format.Batch{BaseOffset: base, Attributes: 0x20, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	if transactional {
		h.Attributes |= 0x10
		h.ProducerID, h.ProducerEpoch = 7, 0
	}
	format.PrepareBatch(h, recs)
	if len(recs) == 0 {
		h.LastOffsetDelta, h.BaseTimestamp, h.MaxTimestamp = 0, 1700000000000, 1700000000000
	}
	var c format.Compressor
	b, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestControlBatchRecordCount follows Kafka's readers: a transaction
// marker batch holds exactly one record; a KRaft control batch holds what
// raft writes (a snapshot's SnapshotHeader, KRaftVersion and Voters in one
// batch since 3.9; a new leader's LeaderChange, KRaftVersion and Voters)
// and nothing raft's reader cannot read; a batch the cleaner emptied holds
// none.
func TestControlBatchRecordCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		txn   bool
		recs  []format.Record
		kinds []string
	}{
		{name: "snapshot header batch of three records", recs: []format.Record{
			controlRecord(0, format.ControlSnapshotHeader, snapshotHeaderValue),
			controlRecord(1, format.ControlKRaftVersion, kraftVersionValue),
			controlRecord(2, format.ControlKRaftVoters, votersValue)}},
		{name: "a new leader's batch of three records", recs: []format.Record{
			controlRecord(0, format.ControlLeaderChange, leaderChangeValue),
			controlRecord(1, format.ControlKRaftVersion, kraftVersionValue),
			controlRecord(2, format.ControlKRaftVoters, votersValue)}},
		{name: "a KRaft batch with a transaction marker", recs: []format.Record{
			controlRecord(0, format.ControlLeaderChange, leaderChangeValue),
			controlRecord(1, format.ControlCommit, endTxnValue)},
			// and the marker is in a batch without the transactional bit
			kinds: []string{string(KindControlDecode), string(KindControlDecode)}},
		{name: "one commit marker", txn: true, recs: []format.Record{controlRecord(0, format.ControlCommit, endTxnValue)}},
		{name: "two markers in one batch", txn: true, recs: []format.Record{
			controlRecord(0, format.ControlAbort, endTxnValue),
			controlRecord(1, format.ControlAbort, endTxnValue)},
			kinds: []string{string(KindRecordCount)}},
		{name: "a marker with a KRaft record after it", txn: true, recs: []format.Record{
			controlRecord(0, format.ControlCommit, endTxnValue),
			controlRecord(1, format.ControlKRaftVersion, kraftVersionValue)},
			kinds: []string{string(KindRecordCount), string(KindControlDecode)}},
		{name: "a control batch the cleaner emptied", txn: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			seg := controlBatch(t, 0, tc.txn, tc.recs...)
			if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := collect(context.Background(), []string{filepath.Join(dir, "00000000000000000000.log")}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := kinds(&rep.Files[0])
			slices.Sort(got)
			want := slices.Clone(tc.kinds)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("kinds %v, want %v: %+v", got, want, rep.Files[0].Problems)
			}
		})
	}
}
