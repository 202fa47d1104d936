package produce_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func open(t *testing.T, dir string, opts produce.Options) *produce.Appender {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	a, err := produce.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func closeA(t *testing.T, a *produce.Appender) {
	t.Helper()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// values makes n records whose values are the given prefix and a number.
func values(prefix string, n int) []format.Record {
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Key: []byte(prefix), Value: []byte(prefix + "-" + string(rune('a'+i%26))), Timestamp: 1_700_000_000_000 + int64(i)}
	}
	return recs
}

// idem appends n records as producer pid/epoch (pid -1: none) and returns
// the result.
func idem(t *testing.T, a *produce.Appender, pid int64, epoch int16, n int, txn bool) produce.Result {
	t.Helper()
	b := &produce.Batch{Records: values("p", n), Transactional: txn}
	if pid >= 0 {
		b.Producer = &produce.Producer{ID: pid, Epoch: epoch}
	}
	res, err := a.Append(b)
	if err != nil {
		t.Fatalf("append as producer %d epoch %d: %v", pid, epoch, err)
	}
	return res
}

// batchAt returns the batch whose base offset is off.
func batchAt(t *testing.T, batches []batchInfo, off int64) batchInfo {
	t.Helper()
	for _, b := range batches {
		if b.BaseOffset == off {
			return b
		}
	}
	t.Fatalf("no batch at offset %d", off)
	return batchInfo{}
}

// wantSeq checks the producer fields of the batch that res wrote.
func wantSeq(t *testing.T, batches []batchInfo, res produce.Result, pid int64, epoch int16, seq int32) {
	t.Helper()
	b := batchAt(t, batches, res.BaseOffset)
	if b.ProducerID != pid || b.ProducerEpoch != epoch || b.BaseSequence != seq {
		t.Errorf("batch at offset %d: producer %d epoch %d base sequence %d, want %d/%d/%d",
			b.BaseOffset, b.ProducerID, b.ProducerEpoch, b.BaseSequence, pid, epoch, seq)
	}
}

func wantFenced(t *testing.T, err error, pid int64, epoch, current int16) {
	t.Helper()
	var fe *produce.FencedError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want a FencedError", err)
	}
	if fe.ProducerID != pid || fe.Epoch != epoch || fe.Current != current {
		t.Errorf("FencedError %+v, want producer %d epoch %d current %d", *fe, pid, epoch, current)
	}
}

// TestSequences: an idempotent producer's sequence continues from its last
// batch, also after the Appender is reopened (state rebuilt from the log),
// a new epoch restarts at 0, an older epoch is fenced (before and after a
// reopen), other producers and plain batches do not disturb it, and the
// sequence wraps past MaxInt32 as Kafka's does.
func TestSequences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	r1 := idem(t, a, 7, 0, 3, false)
	r2 := idem(t, a, 7, 0, 2, false)
	r3 := idem(t, a, 8, 2, 1, false)
	if _, err := a.Append(&produce.Batch{Records: values("plain", 4)}); err != nil {
		t.Fatal(err)
	}
	closeA(t, a)

	a = open(t, dir, produce.Options{})
	r4 := idem(t, a, 7, 0, 4, false) // from the log: 5
	r5 := idem(t, a, 8, 2, 1, false)
	r6 := idem(t, a, 7, 1, 2, false) // new epoch
	r7 := idem(t, a, 7, 1, 1, false)
	_, err := a.Append(&produce.Batch{Records: values("old", 1), Producer: &produce.Producer{ID: 7, Epoch: 0}})
	wantFenced(t, err, 7, 0, 1)
	closeA(t, a)

	a = open(t, dir, produce.Options{})
	_, err = a.Append(&produce.Batch{Records: values("old", 1), Producer: &produce.Producer{ID: 7, Epoch: 0}})
	wantFenced(t, err, 7, 0, 1)
	r8 := idem(t, a, 7, 1, 1, false)
	closeA(t, a)

	batches, _ := readKlog(t, dir)
	wantSeq(t, batches, r1, 7, 0, 0)
	wantSeq(t, batches, r2, 7, 0, 3)
	wantSeq(t, batches, r3, 8, 2, 0)
	wantSeq(t, batches, r4, 7, 0, 5)
	wantSeq(t, batches, r5, 8, 2, 1)
	wantSeq(t, batches, r6, 7, 1, 0)
	wantSeq(t, batches, r7, 7, 1, 2)
	wantSeq(t, batches, r8, 7, 1, 3)
	if n := len(batches); n != 9 {
		t.Errorf("%d batches, want 9 (fenced appends must write nothing)", n)
	}
	verifyClean(t, dir)
}

// TestSequenceWraps: a follower-copied batch ending at MaxInt32 is
// continued from 0 after wrapping (DefaultRecordBatch.incrementSequence).
func TestSequenceWraps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	var c format.Compressor
	recs := values("w", 3)
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	h := &format.Batch{Magic: format.MagicV2, ProducerID: 9, ProducerEpoch: 4, BaseSequence: math.MaxInt32 - 1}
	format.PrepareBatch(h, recs)
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AppendRaw(raw); err != nil {
		t.Fatal(err)
	}
	r := idem(t, a, 9, 4, 2, false)
	closeA(t, a)
	a = open(t, dir, produce.Options{})
	r2 := idem(t, a, 9, 4, 1, false)
	closeA(t, a)
	batches, _ := readKlog(t, dir)
	wantSeq(t, batches, r, 9, 4, 1) // MaxInt32-1, MaxInt32, 0 -> 1
	wantSeq(t, batches, r2, 9, 4, 3)
}

// TestProducerStateFromSnapshot: with segment.bytes tiny every batch rolls
// a segment and takes a snapshot. After the old segments are deleted (as
// retention does), the producer state can only come from the snapshot: the
// sequence continues, the epoch still fences, and an open transaction is
// still known, with its first offset, so its abort indexes it correctly.
func TestProducerStateFromSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := produce.Options{SegmentBytes: 1}
	a := open(t, dir, opts)
	idem(t, a, 3, 5, 2, false)       // offsets 0-1, segment 0
	idem(t, a, 3, 5, 3, false)       // 2-4, segment 2
	txn := idem(t, a, 4, 1, 2, true) // 5-6, segment 5: an open transaction
	for range 3 {                    // plain batches: segments 7, 8, 9
		if _, err := a.Append(&produce.Batch{Records: values("x", 1)}); err != nil {
			t.Fatal(err)
		}
	}
	closeA(t, a)

	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Segments) != 6 || len(d.Snapshots) != 6 {
		t.Fatalf("%d segments and %d snapshots, want 6 and 6 (one per roll, one at close)", len(d.Segments), len(d.Snapshots))
	}
	for i, s := range d.Snapshots[:5] {
		if s.Offset != d.Segments[i+1].BaseOffset {
			t.Errorf("snapshot %d is at offset %d, the roll to segment %d", i, s.Offset, d.Segments[i+1].BaseOffset)
		}
	}
	if s := d.Snapshots[5]; s.Offset != d.Segments[5].BaseOffset+1 {
		t.Errorf("last snapshot at offset %d, want the log end offset %d (taken at close)", s.Offset, d.Segments[5].BaseOffset+1)
	}
	// The snapshot taken at close holds both producers.
	last := d.Snapshots[len(d.Snapshots)-1]
	data, err := os.ReadFile(last.Path)
	if err != nil {
		t.Fatal(err)
	}
	es, err := format.ParseProducerSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].ProducerID != 3 || es[0].Epoch != 5 || es[0].LastSequence != 4 || es[0].LastOffset != 4 ||
		es[0].OffsetDelta != 2 || es[0].CurrentTxnFirstOffset != -1 ||
		es[1].ProducerID != 4 || es[1].Epoch != 1 || es[1].LastSequence != 1 || es[1].CurrentTxnFirstOffset != txn.BaseOffset {
		t.Errorf("snapshot %s: %+v", last.Path, es)
	}
	// Retention: delete every segment and snapshot before the last segment.
	keep := d.Segments[len(d.Segments)-1].BaseOffset
	for _, s := range d.Segments[:len(d.Segments)-1] {
		for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if f != "" {
				os.Remove(f)
			}
		}
	}
	for _, s := range d.Snapshots[:len(d.Snapshots)-1] {
		os.Remove(s.Path)
	}

	a = open(t, dir, opts)
	if a.LogStartOffset() != keep || a.LogEndOffset() != keep+1 {
		t.Fatalf("log start %d end %d, want %d and %d", a.LogStartOffset(), a.LogEndOffset(), keep, keep+1)
	}
	r := idem(t, a, 3, 5, 1, false)
	_, err = a.Append(&produce.Batch{Records: values("old", 1), Producer: &produce.Producer{ID: 3, Epoch: 4}})
	wantFenced(t, err, 3, 4, 5)
	abort, err := a.EndTxn(4, 1, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	closeA(t, a)
	batches, _ := readKlog(t, dir)
	wantSeq(t, batches, r, 3, 5, 5)
	txns := txnIndex(t, dir, abort.Segment)
	if len(txns) != 1 || txns[0].ProducerID != 4 || txns[0].FirstOffset != txn.BaseOffset || txns[0].LastOffset != abort.BaseOffset ||
		txns[0].LastStableOffset != abort.BaseOffset+1 {
		t.Errorf("txnindex %+v, want producer 4 first %d last %d LSO %d", txns, txn.BaseOffset, abort.BaseOffset, abort.BaseOffset+1)
	}
	verifyClean(t, dir)
}

// txnIndex reads the .txnindex beside a segment (nil if it has none).
func txnIndex(t *testing.T, dir, segment string) []format.AbortedTxn {
	t.Helper()
	base, _, _ := partition.ParseFileName(filepath.Base(segment))
	data, err := os.ReadFile(filepath.Join(dir, partition.FileName(base, partition.TxnIndexSuffix)))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%format.AbortedTxnEntrySize != 0 {
		t.Errorf("txnindex of %d bytes", len(data))
	}
	return format.AbortedTxns(data)
}

// wantMarker checks the control batch res wrote.
func wantMarker(t *testing.T, batches []batchInfo, res produce.Result, pid int64, epoch int16, typ format.ControlType, coordinatorEpoch int32) {
	t.Helper()
	b := batchAt(t, batches, res.BaseOffset)
	if !b.IsControl() || !b.IsTransactional() || b.ProducerID != pid || b.ProducerEpoch != epoch || b.BaseSequence != -1 ||
		b.RecordCount != 1 || res.LastOffset != res.BaseOffset {
		t.Fatalf("marker batch at %d: control %v transactional %v producer %d/%d sequence %d count %d",
			b.BaseOffset, b.IsControl(), b.IsTransactional(), b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.RecordCount)
	}
	k, err := format.ParseControlKey(b.Records[0].Key)
	if err != nil || k.Type != typ {
		t.Errorf("marker at %d: key %x (%v), want %v", b.BaseOffset, b.Records[0].Key, err, typ)
	}
	m, err := format.ParseEndTxnMarker(b.Records[0].Value)
	if err != nil || m.CoordinatorEpoch != coordinatorEpoch {
		t.Errorf("marker at %d: value %x (%+v, %v), want coordinator epoch %d", b.BaseOffset, b.Records[0].Value, m, err, coordinatorEpoch)
	}
}

// TestTransactions: EndTxn abort writes an ABORT control batch and a
// .txnindex entry (first offset of the transaction, the marker's offset and
// the last stable offset: the first offset of another still open
// transaction, or the offset after the marker); commit writes COMMIT and no
// entry; EndTxn with no open transaction fails; a transaction open when the
// Appender closes is closed correctly after a reopen. franz-go, given the
// .txnindex as the fetch response's aborted transactions, drops exactly the
// aborted records in read_committed.
func TestTransactions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := open(t, dir, produce.Options{})
	t5a := idem(t, a, 5, 0, 3, true)                                    // 0-2
	plain, err := a.Append(&produce.Batch{Records: values("plain", 1)}) // 3
	if err != nil {
		t.Fatal(err)
	}
	t6 := idem(t, a, 6, 0, 2, true)         // 4-5
	t5b := idem(t, a, 5, 0, 1, true)        // 6
	abort1, err := a.EndTxn(5, 0, false, 3) // 7
	if err != nil {
		t.Fatal(err)
	}
	if txns := txnIndex(t, dir, abort1.Segment); len(txns) != 1 ||
		txns[0] != (format.AbortedTxn{ProducerID: 5, FirstOffset: t5a.BaseOffset, LastOffset: abort1.BaseOffset, LastStableOffset: t6.BaseOffset}) {
		t.Errorf("after abort: txnindex %+v, want producer 5 first %d last %d LSO %d (producer 6's open transaction)", txns, t5a.BaseOffset, abort1.BaseOffset, t6.BaseOffset)
	}
	commit, err := a.EndTxn(6, 0, true, 3) // 8
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.EndTxn(6, 0, true, 3); err == nil {
		t.Error("a second commit of producer 6 succeeded; it has no open transaction")
	}
	if _, err := a.EndTxn(99, 0, false, 3); err == nil {
		t.Error("EndTxn of an unknown producer succeeded")
	}
	idem(t, a, 5, 0, 1, false) // idempotent, not transactional: 9
	if _, err := a.EndTxn(5, 0, false, 3); err == nil {
		t.Error("EndTxn after a non-transactional batch succeeded")
	}
	t5c := idem(t, a, 5, 0, 2, true) // 10-11, open at close
	t6b := idem(t, a, 6, 0, 1, true) // 12, open at close
	closeA(t, a)

	a = open(t, dir, produce.Options{})
	if _, err := a.EndTxn(5, -1, false, 4); err == nil {
		t.Error("EndTxn with an older epoch succeeded")
	} else {
		wantFenced(t, err, 5, -1, 0)
	}
	abort2, err := a.EndTxn(5, 0, false, 4) // 13
	if err != nil {
		t.Fatal(err)
	}
	commit2, err := a.EndTxn(6, 0, true, 4) // 14
	if err != nil {
		t.Fatal(err)
	}
	leo := a.LogEndOffset()
	closeA(t, a)

	batches, _ := readKlog(t, dir)
	wantMarker(t, batches, abort1, 5, 0, format.ControlAbort, 3)
	wantMarker(t, batches, commit, 6, 0, format.ControlCommit, 3)
	wantMarker(t, batches, abort2, 5, 0, format.ControlAbort, 4)
	wantMarker(t, batches, commit2, 6, 0, format.ControlCommit, 4)
	wantSeq(t, batches, t5a, 5, 0, 0)
	wantSeq(t, batches, t5b, 5, 0, 3)
	wantSeq(t, batches, t5c, 5, 0, 5)
	txns := txnIndex(t, dir, abort2.Segment)
	wantTxns := []format.AbortedTxn{
		{ProducerID: 5, FirstOffset: t5a.BaseOffset, LastOffset: abort1.BaseOffset, LastStableOffset: t6.BaseOffset},
		// Producer 6's transaction, open across the reopen, holds the LSO.
		{ProducerID: 5, FirstOffset: t5c.BaseOffset, LastOffset: abort2.BaseOffset, LastStableOffset: t6b.BaseOffset},
	}
	if len(txns) != 2 || txns[0] != wantTxns[0] || txns[1] != wantTxns[1] {
		t.Errorf("txnindex %+v, want %+v (no entry for the commit)", txns, wantTxns)
	}
	verifyClean(t, dir)

	// read_committed: franz-go drops the aborted batches of producer 5.
	var aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
	for _, x := range txns {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = x.ProducerID, x.FirstOffset
		aborted = append(aborted, at)
	}
	var got []int64
	for _, r := range readFranzOpts(t, dir, leo, kgo.ProcessFetchPartitionOpts{IsolationLevel: kgo.ReadCommitted()}, aborted) {
		got = append(got, r.Offset)
	}
	wantOffsets := []int64{plain.BaseOffset, t6.BaseOffset, t6.BaseOffset + 1, 9, t6b.BaseOffset}
	if len(got) != len(wantOffsets) {
		t.Fatalf("read_committed offsets %v, want %v", got, wantOffsets)
	}
	for i := range got {
		if got[i] != wantOffsets[i] {
			t.Fatalf("read_committed offsets %v, want %v", got, wantOffsets)
		}
	}
	// read_uncommitted sees every data record.
	if n := len(readFranz(t, dir, leo)); n != 11 {
		t.Errorf("read_uncommitted: %d records, want 11", n)
	}
}

// TestMarkerWithNewEpoch: the coordinator may write a marker with a bumped
// epoch (an abort on timeout, KIP-360). The producer's batch metadata is
// cleared then (ProducerStateEntry.maybeUpdateProducerEpoch), so its next
// batch in that epoch starts at sequence 0, whether the state is the
// Appender's own or rebuilt from the log after a reopen.
func TestMarkerWithNewEpoch(t *testing.T) {
	t.Parallel()
	for _, reopen := range []bool{false, true} {
		dir := t.TempDir()
		a := open(t, dir, produce.Options{})
		idem(t, a, 5, 0, 3, true)
		if _, err := a.EndTxn(5, 1, false, 0); err != nil {
			t.Fatal(err)
		}
		if reopen {
			closeA(t, a)
			a = open(t, dir, produce.Options{})
		}
		_, err := a.Append(&produce.Batch{Records: values("old", 1), Producer: &produce.Producer{ID: 5, Epoch: 0}})
		wantFenced(t, err, 5, 0, 1)
		r := idem(t, a, 5, 1, 2, false)
		closeA(t, a)
		batches, _ := readKlog(t, dir)
		wantSeq(t, batches, r, 5, 1, 0)
	}
}

// TestAbortSeenByTheModel: the .txnindex entry of an abort is in the model
// (partition.Log, what serve's read_committed fetches read) as soon as the
// marker is, in a segment that had no .txnindex, also when the marker
// rolls the segment; a partition added to a transaction that got no batch
// gets its marker (WriteTxnMarker) and no entry.
func TestAbortSeenByTheModel(t *testing.T) {
	t.Parallel()
	for _, segBytes := range []int64{0, 150} {
		dir := t.TempDir()
		a := open(t, dir, produce.Options{SegmentBytes: segBytes})
		first := idem(t, a, 7, 0, 2, true)
		abort, err := a.EndTxn(7, 0, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		var base int64
		for _, s := range a.Log().Segments() {
			if s.BaseOffset <= abort.BaseOffset {
				base = s.BaseOffset
			}
		}
		got, err := a.Log().AbortedTxns(nil, base, first.BaseOffset, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ProducerID != 7 || got[0].FirstOffset != first.BaseOffset {
			t.Errorf("segment bytes %d: the model's aborted transactions %+v, want producer 7 from %d", segBytes, got, first.BaseOffset)
		}
		if _, err := a.WriteTxnMarker(8, 0, true, 0); err != nil {
			t.Errorf("a marker for a producer with no batch here: %v", err)
		}
		if _, err := a.WriteTxnMarker(7, -1, false, 0); err == nil {
			t.Error("a marker with an epoch older than the producer's was written")
		}
		closeA(t, a)
	}
}
