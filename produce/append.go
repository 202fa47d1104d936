package produce

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Append encodes b as one v2 batch at the log end offset and appends it.
func (a *Appender) Append(b *Batch) (Result, error) {
	var res Result
	if err := a.stage(b, nil); err != nil {
		return Result{}, err
	}
	err := a.flush(func(r Result) { res = r })
	return res, err
}

// stage encodes b as one v2 batch after the log end offset and what is
// staged, into the staged bytes; sent gets the results of what a flush on
// the way writes (a roll, a full buffer, Options.Sync == SyncBatch). A
// batch of a producer needs the model's producer state, so nothing may be
// staged before it.
func (a *Appender) stage(b *Batch, sent func(Result)) error {
	if len(b.Records) == 0 {
		return errors.New("produce: a batch needs at least one record")
	}
	if b.Transactional && b.Producer == nil {
		return errors.New("produce: a transactional batch needs a producer")
	}
	if b.Producer != nil && b.Producer.ID < 0 {
		return errors.New("produce: producer id " + strconv.FormatInt(b.Producer.ID, 10) + " is negative (a batch without a producer has none)")
	}
	if b.Producer != nil && len(a.st.heads) > 0 {
		if err := a.flush(sent); err != nil {
			return err
		}
	}
	leo := a.nextOffset()
	now := a.opts.Now().UnixMilli()
	h := &a.head
	*h = format.Batch{
		Magic: format.MagicV2, BaseOffset: leo, PartitionLeaderEpoch: a.opts.PartitionLeaderEpoch,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}
	h.Attributes = int16(b.Compression) & 0x07
	if b.TimestampType == format.LogAppendTime {
		h.Attributes |= 0x08
		h.MaxTimestamp = now
	}
	if b.Transactional {
		h.Attributes |= 0x10
	}
	if pr := b.Producer; pr != nil {
		// The sequence continues from the producer's last batch in the
		// log, and restarts at 0 for a new epoch.
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = pr.ID, pr.Epoch, 0
		p, ok, err := a.log.Producer(pr.ID)
		if err != nil {
			return err
		}
		if ok {
			if pr.Epoch < p.Epoch {
				return &FencedError{ProducerID: pr.ID, Epoch: pr.Epoch, Current: p.Epoch}
			}
			if last := p.LastSeq(); pr.Epoch == p.Epoch && last >= 0 {
				h.BaseSequence = format.IncrementSequence(last, 1)
			}
		}
	}
	recs := append(a.recs[:0], b.Records...)
	for i := range recs {
		recs[i].Offset = leo + int64(i)
		if recs[i].Timestamp == 0 {
			recs[i].Timestamp = now
		}
		recs[i].Attributes = 0
	}
	a.recs = recs[:0]
	format.PrepareBatch(h, recs)
	n0 := len(a.st.log)
	buf, err := a.comp.AppendBatch(a.st.log, h, recs)
	if err != nil {
		a.st.log = a.st.log[:n0]
		return err
	}
	a.st.log = buf
	lat := int64(-1)
	if b.TimestampType == format.LogAppendTime {
		lat = now
	}
	return a.staged(h, n0, -1, lat, sent)
}

// FencedError: a producer epoch older than the log's (Kafka's
// INVALID_PRODUCER_EPOCH / ProducerFencedException).
type FencedError struct {
	ProducerID     int64
	Epoch, Current int16
}

func (e *FencedError) Error() string {
	return "produce: producer " + strconv.FormatInt(e.ProducerID, 10) + " epoch " + strconv.Itoa(int(e.Epoch)) +
		" is older than its epoch in the log, " + strconv.Itoa(int(e.Current)) + " (fenced)"
}

// EndTxn writes the COMMIT or ABORT marker of the producer's open
// transaction: a control batch with one record, as the transaction
// coordinator's WriteTxnMarkers does. An abort is recorded in the active
// segment's .txnindex.
func (a *Appender) EndTxn(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (Result, error) {
	p, ok, err := a.log.Producer(producerID)
	if err != nil {
		return Result{}, err
	}
	if !ok || p.TxnFirstOffset < 0 {
		return Result{}, errors.New("produce: producer " + strconv.FormatInt(producerID, 10) + " has no open transaction in this partition")
	}
	return a.marker(producerID, epoch, commit, coordinatorEpoch)
}

// WriteTxnMarker writes a transaction's COMMIT or ABORT marker as a
// broker answers a coordinator's WriteTxnMarkers: whether or not the
// producer has a transaction open in this partition (a partition added to
// a transaction that got no batch still gets its marker, and nothing goes
// to the .txnindex for it), and with an epoch that may be above the
// producer's (the coordinator's bump, KIP-890). An older epoch is refused
// (FencedError).
func (a *Appender) WriteTxnMarker(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (Result, error) {
	return a.marker(producerID, epoch, commit, coordinatorEpoch)
}

func (a *Appender) marker(producerID int64, epoch int16, commit bool, coordinatorEpoch int32) (Result, error) {
	p, ok, err := a.log.Producer(producerID)
	if err != nil {
		return Result{}, err
	}
	first := int64(-1)
	if ok {
		if epoch < p.Epoch {
			return Result{}, &FencedError{ProducerID: producerID, Epoch: epoch, Current: p.Epoch}
		}
		first = p.TxnFirstOffset
	}
	typ := format.ControlAbort
	if commit {
		typ = format.ControlCommit
	}
	leo := a.log.LogEndOffset()
	now := a.opts.Now().UnixMilli()
	rec := []format.Record{{
		Offset: leo, Timestamp: now,
		Key:   format.AppendControlKey(nil, typ),
		Value: format.AppendEndTxnMarker(nil, coordinatorEpoch),
	}}
	h := &format.Batch{Magic: format.MagicV2, BaseOffset: leo, PartitionLeaderEpoch: a.opts.PartitionLeaderEpoch,
		Attributes: 0x10 | 0x20, ProducerID: producerID, ProducerEpoch: epoch, BaseSequence: -1}
	format.PrepareBatch(h, rec)
	a.buf, err = a.comp.AppendBatch(a.buf[:0], h, rec)
	if err != nil {
		return Result{}, err
	}
	// The marker ends the transaction in the model's producer state; a
	// marker with a bumped epoch also clears the producer's batches
	// (ProducerStateEntry.maybeUpdateProducerEpoch), so its next batch
	// starts at sequence 0.
	if !commit && first >= 0 {
		a.abortTxn(producerID, first, leo)
	}
	return a.write(a.buf, h, coordinatorEpoch)
}

// abortTxn notes the aborted transaction the marker being written at
// lastOffset ends, for the active segment's .txnindex: its entry is
// written with the marker, before the model takes the marker (flush), so
// that no read_committed reader sees the last stable offset pass the
// marker without the transaction in the index. Its last stable offset is
// the one after the marker (ProducerStateManager.lastStableOffset of the
// completed transaction): the first offset of another producer's open
// transaction, else the offset after the marker.
func (a *Appender) abortTxn(producerID, first, lastOffset int64) {
	lso := lastOffset + 1
	if entries, err := a.log.ProducerEntries(); err == nil {
		for _, e := range entries {
			if e.ProducerID != producerID && e.CurrentTxnFirstOffset >= 0 && e.CurrentTxnFirstOffset < lso {
				lso = e.CurrentTxnFirstOffset
			}
		}
	}
	a.abort = &format.AbortedTxn{ProducerID: producerID, FirstOffset: first, LastOffset: lastOffset, LastStableOffset: lso}
}

// AppendRaw appends an already encoded v2 batch byte for byte, as a
// follower does with what it fetched. Its base offset must be the log end
// offset and its CRC valid.
func (a *Appender) AppendRaw(raw []byte) (Result, error) {
	b, err := format.ParseBatch(raw, 0)
	if err != nil {
		return Result{}, err
	}
	if int(b.Size()) != len(raw) {
		return Result{}, errors.New("produce: AppendRaw takes exactly one batch")
	}
	if !b.IsV2() {
		return Result{}, errors.New("produce: AppendRaw takes v2 batches")
	}
	if err := b.CheckCRC(); err != nil {
		return Result{}, err
	}
	if leo := a.log.LogEndOffset(); b.BaseOffset != leo {
		return Result{}, errors.New("produce: batch base offset " + strconv.FormatInt(b.BaseOffset, 10) +
			" is not the log end offset " + strconv.FormatInt(leo, 10))
	}
	// A control batch's marker: the coordinator epoch it records, and
	// whether it aborts the producer's open transaction.
	coordinatorEpoch, abort, first := int32(-1), false, int64(-1)
	if b.IsControl() && b.ProducerID >= 0 {
		var rr format.RecordReader
		var rec format.Record
		if rr.Reset(b) == nil && rr.Next(&rec) == nil {
			if k, err := format.ParseControlKey(rec.Key); err == nil {
				abort = k.Type == format.ControlAbort
			}
			if m, err := format.ParseEndTxnMarker(rec.Value); err == nil {
				coordinatorEpoch = m.CoordinatorEpoch
			}
		}
		if p, ok, err := a.log.Producer(b.ProducerID); err != nil {
			return Result{}, err
		} else if ok {
			first = p.TxnFirstOffset
		}
	}
	if abort && first >= 0 {
		a.abortTxn(b.ProducerID, first, b.LastOffset())
	}
	res, err := a.write(raw, b, coordinatorEpoch)
	if err != nil {
		return res, err
	}
	if b.TimestampType() == format.LogAppendTime {
		res.LogAppendTime = b.MaxTimestamp
	}
	return res, nil
}

// write appends one encoded batch now: it is staged after what is staged
// and everything is flushed; the result is the batch's.
// coordinatorEpoch is a control batch's marker's.
func (a *Appender) write(batch []byte, h *format.Batch, coordinatorEpoch int32) (Result, error) {
	var res Result
	n0 := len(a.st.log)
	a.st.log = append(a.st.log, batch...)
	if err := a.staged(h, n0, coordinatorEpoch, -1, nil); err != nil {
		return Result{}, err
	}
	err := a.flush(func(r Result) { res = r })
	return res, err
}

// flushBytes is how much a Feed's batches are written in one write: about
// the 1 MiB a streaming writer uses, large enough that the system call
// costs little next to the copy.
const flushBytes = 1 << 20

// staging is what the Appender has encoded but not yet written: batches
// for the end of the active segment's log and the index entries for them,
// written together by flush (the log first, then the indexes, so that no
// entry ever points past the log, then the model takes the batches and
// their results are given). Nothing staged is in the model or
// acknowledged, so a kill loses only what nobody was told is written.
type staging struct {
	log, index, timeindex []byte
	heads                 []stagedBatch
	// prev is the active segment's state before the first staged batch
	// or entry (open says it is taken), restored when a flush fails.
	prev segment
	open bool
}

type stagedBatch struct {
	h format.Batch
	// at is where the batch's bytes start in the staged log bytes.
	at               int
	coordinatorEpoch int32
	res              Result
	// abort is the aborted transaction an ABORT marker ends (abortTxn),
	// written to the .txnindex with the batch, before the model takes it.
	abort *format.AbortedTxn
}

// nextOffset is the offset the next staged batch gets.
func (a *Appender) nextOffset() int64 {
	if n := len(a.st.heads); n > 0 {
		return a.st.heads[n-1].h.NextOffset()
	}
	return a.log.LogEndOffset()
}

// begin notes the active segment's state before the first thing staged.
func (a *Appender) begin() {
	if !a.st.open {
		a.st.prev, a.st.open = *a.seg, true
	}
}

// staged takes the batch encoded at a.st.log[n0:]: roll if it does not fit
// the active segment (flushing what is before it first), then the index
// entries by the broker's rule (LogSegment.append), then a flush if the
// staged bytes reached flushBytes or every batch is synced. lat is the
// result's LogAppendTime.
func (a *Appender) staged(h *format.Batch, n0 int, coordinatorEpoch int32, lat int64, sent func(Result)) error {
	st := &a.st
	size := int64(len(st.log) - n0)
	lastOffset := h.BaseOffset + int64(h.LastOffsetDelta)
	s := a.seg
	if end := s.size + int64(n0); end > 0 && (end+size > a.opts.SegmentBytes || lastOffset-s.base > 1<<31-1) {
		// Out of the buffer while what is before it is written; moved
		// to its front after (the bytes stay in the array).
		batch := st.log[n0:]
		st.log = st.log[:n0]
		if err := a.flush(sent); err != nil {
			return err
		}
		if err := a.roll(); err != nil {
			return err
		}
		st.log = append(st.log[:0], batch...)
		n0, s = 0, a.seg
	}
	a.begin()
	pos := s.size + int64(n0)
	if h.MaxTimestamp > s.maxTS {
		s.maxTS, s.maxTSOffset = h.MaxTimestamp, lastOffset
	}
	if s.bytesSinceIndex > a.opts.IndexIntervalBytes {
		a.indexEntry(lastOffset, pos)
		a.timeIndexEntry(s.maxTS, s.maxTSOffset)
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += size
	h.Pos, h.BatchLength = pos, int32(size-format.LogOverhead)
	abort := a.abort
	a.abort = nil
	st.heads = append(st.heads, stagedBatch{h: *h, at: n0, coordinatorEpoch: coordinatorEpoch, abort: abort,
		res: Result{BaseOffset: h.BaseOffset, LastOffset: lastOffset, LogAppendTime: lat, Position: pos, Segment: s.log.Name(), Size: size}})
	if len(st.log) >= flushBytes || a.opts.Sync == SyncBatch {
		return a.flush(sent)
	}
	return nil
}

// flush writes what is staged: the batches in one write at the end of the
// log, then each index's entries in one write; on a failure the log and
// the indexes are cut back to their sizes before and nothing staged is
// kept (LogSegment.append fails as a whole: a retry must not find it in
// the log). Then the model takes the batches (a batch with an epoch above
// the latest starts it, UnifiedLog.append), the files are synced with
// SyncBatch, and sent (when set) gets every result in order.
func (a *Appender) flush(sent func(Result)) error {
	st := &a.st
	if !st.open {
		return nil
	}
	s := a.seg
	defer a.unstage()
	err := a.writeStaged()
	for i := range st.heads {
		if t := st.heads[i].abort; t != nil && err == nil {
			err = a.appendTxnIndex(*t)
		}
	}
	if err != nil {
		*s = st.prev
		return errors.Join(err, s.log.Truncate(s.size), s.index.Truncate(s.indexSize), s.timeindex.Truncate(s.timeIndexSize))
	}
	a.dirty = true
	for i := range st.heads {
		b := &st.heads[i]
		if b.h.IsV2() {
			if err := a.log.AssignEpoch(b.h.PartitionLeaderEpoch, b.h.BaseOffset, a.wopts()); err != nil {
				return err
			}
		}
		a.log.Appended(&b.h, st.log[b.at:b.at+int(b.res.Size)], b.coordinatorEpoch)
	}
	if a.opts.Sync == SyncBatch {
		if err := a.syncFiles(); err != nil {
			return err
		}
	}
	if sent != nil && len(st.heads) > 0 {
		lso := a.log.LogStartOffset()
		for i := range st.heads {
			r := st.heads[i].res
			r.LogStartOffset = lso
			sent(r)
		}
	}
	return nil
}

// writeStaged writes the staged log bytes and index entries, each with
// one system call, and moves the segment's sizes past them.
func (a *Appender) writeStaged() error {
	st, s := &a.st, a.seg
	for _, w := range []struct {
		f    *os.File
		b    []byte
		size *int64
	}{{s.log, st.log, &s.size}, {s.index, st.index, &s.indexSize}, {s.timeindex, st.timeindex, &s.timeIndexSize}} {
		if len(w.b) == 0 {
			continue
		}
		var n int
		var err error
		if w.f == s.log {
			n, err = w.f.WriteAt(w.b, *w.size)
		} else {
			n, err = w.f.Write(w.b) // the indexes are opened O_APPEND
		}
		if err == nil && n != len(w.b) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return err
		}
		*w.size += int64(n)
	}
	return nil
}

// unstage drops what is staged, keeping the buffers.
func (a *Appender) unstage() {
	st := &a.st
	st.log, st.index, st.timeindex = st.log[:0], st.index[:0], st.timeindex[:0]
	clear(st.heads)
	st.heads = st.heads[:0]
	st.open = false
}

// indexEntry stages an offset index entry (one above the last only).
func (a *Appender) indexEntry(offset, pos int64) {
	s := a.seg
	if offset <= s.lastIndexOffset {
		return
	}
	a.begin()
	a.st.index = format.AppendIndexEntry(a.st.index, s.base, format.IndexEntry{Offset: offset, Pos: pos})
	s.lastIndexOffset = offset
}

// timeIndexEntry stages a time index entry: TimeIndex.maybeAppend, only a
// timestamp above the last.
func (a *Appender) timeIndexEntry(ts, offset int64) {
	s := a.seg
	if ts <= s.lastTimeIndexTS {
		return
	}
	a.begin()
	a.st.timeindex = format.AppendTimeEntry(a.st.timeindex, s.base, format.TimeEntry{Timestamp: ts, Offset: offset})
	s.lastTimeIndexTS = ts
}

func (a *Appender) appendTxnIndex(t format.AbortedTxn) error {
	s := a.seg
	if s.txnindex == nil {
		f, err := safeio.OpenFile(filepath.Join(a.dir, partition.FileName(s.base, partition.TxnIndexSuffix)),
			os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		s.txnindex = f
		// The model lists the segment's files: a read_committed read
		// looks for aborted transactions in this one from now on.
		a.log.TxnIndexCreated(s.base, f.Name())
	}
	_, err := s.txnindex.Write(format.AppendAbortedTxn(nil, t))
	return err
}

// roll closes the active segment as the broker does (the time index gets
// its max-timestamp entry, files are synced) and starts a new one at the
// log end offset, writing a producer snapshot named by that offset.
func (a *Appender) roll() error {
	if err := a.closeSegment(); err != nil {
		return err
	}
	a.closeFiles()
	return a.newSegment(a.log.LogEndOffset())
}
