package fetch

import (
	"testing"

	"github.com/klog-dev/klog/format"
)

func ruleBatch(base int64, n int, pid int64, attrs int16, ctl format.ControlType) *format.Batch {
	b := &format.Batch{Magic: format.MagicV2, BaseOffset: base, LastOffsetDelta: int32(n - 1), ProducerID: pid, Attributes: attrs}
	if attrs&0x20 != 0 {
		var c format.Compressor
		recs := []format.Record{{Offset: base, Key: format.AppendControlKey(nil, ctl), Value: format.AppendEndTxnMarker(nil, 0)}}
		format.PrepareBatch(b, recs)
		raw, _ := c.AppendBatch(nil, b, recs)
		pb, err := format.ParseBatch(raw, 0)
		if err != nil {
			panic(err)
		}
		return pb
	}
	return b
}

// TestConsumerRules follows CompletedFetch.nextFetchedRecord for each kind
// of batch a read_committed response can hold.
func TestConsumerRules(t *testing.T) {
	t.Parallel()
	const txn, ctl = 0x10, 0x20
	type step struct {
		b       *format.Batch
		offsets []int64
		want    []Drop
	}
	tests := []struct {
		name    string
		iso     Isolation
		fetch   int64
		aborted []AbortedTransaction
		steps   []step
	}{
		{name: "records before the fetch offset in the first batch", iso: ReadUncommitted, fetch: 2, steps: []step{
			{ruleBatch(0, 4, -1, 0, 0), []int64{0, 1, 2, 3}, []Drop{DropBelowFetchOffset, DropBelowFetchOffset, Kept, Kept}}}},
		{name: "read_uncommitted keeps aborted records, drops markers", iso: ReadUncommitted,
			aborted: []AbortedTransaction{{ProducerID: 7, FirstOffset: 0}}, steps: []step{
				{ruleBatch(0, 1, 7, txn, 0), []int64{0}, []Drop{Kept}},
				{ruleBatch(1, 1, 7, txn|ctl, format.ControlAbort), []int64{1}, []Drop{DropControl}}}},
		{name: "an aborted transaction until its ABORT marker", iso: ReadCommitted,
			aborted: []AbortedTransaction{{ProducerID: 7, FirstOffset: 1}}, steps: []step{
				{ruleBatch(0, 1, 7, txn, 0), []int64{0}, []Drop{Kept}}, // before the abort's first offset
				{ruleBatch(1, 2, 7, txn, 0), []int64{1, 2}, []Drop{DropAborted, DropAborted}},
				{ruleBatch(3, 1, 8, txn, 0), []int64{3}, []Drop{Kept}}, // another producer
				{ruleBatch(4, 1, 7, 0, 0), []int64{4}, []Drop{Kept}},   // not transactional
				{ruleBatch(5, 1, 7, txn|ctl, format.ControlAbort), []int64{5}, []Drop{DropControl}},
				{ruleBatch(6, 1, 7, txn, 0), []int64{6}, []Drop{Kept}}}}, // the next transaction
		{name: "a COMMIT marker does not end an abort (its batch is skipped as aborted)", iso: ReadCommitted,
			aborted: []AbortedTransaction{{ProducerID: 7, FirstOffset: 0}}, steps: []step{
				{ruleBatch(0, 1, 7, txn|ctl, format.ControlCommit), []int64{0}, []Drop{DropAborted}},
				{ruleBatch(1, 1, 7, txn, 0), []int64{1}, []Drop{DropAborted}}}},
		{name: "an aborted batch before the fetch offset", iso: ReadCommitted, fetch: 1,
			aborted: []AbortedTransaction{{ProducerID: 7, FirstOffset: 0}}, steps: []step{
				{ruleBatch(0, 3, 7, txn, 0), []int64{0, 1, 2}, []Drop{DropAborted, DropAborted, DropAborted}},
				{ruleBatch(3, 1, 9, 0, 0), []int64{3}, []Drop{Kept}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rules := NewConsumerRules(tc.iso, tc.fetch, tc.aborted)
			for _, s := range tc.steps {
				bd := rules.Batch(s.b)
				for i, off := range s.offsets {
					d := bd
					if d == Kept {
						d = rules.Record(&format.Record{Offset: off})
					}
					if d != s.want[i] {
						t.Errorf("offset %d: %v, want %v", off, d, s.want[i])
					}
				}
			}
		})
	}
}
