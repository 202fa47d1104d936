package produce

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Append encodes b as one v2 batch at the log end offset and appends it.
func (a *Appender) Append(b *Batch) (Result, error) {
	if len(b.Records) == 0 {
		return Result{}, errors.New("produce: a batch needs at least one record")
	}
	if b.Transactional && b.Producer == nil {
		return Result{}, errors.New("produce: a transactional batch needs a producer")
	}
	if b.Producer != nil && b.Producer.ID < 0 {
		return Result{}, errors.New("produce: producer id " + strconv.FormatInt(b.Producer.ID, 10) + " is negative (a batch without a producer has none)")
	}
	leo := a.log.LogEndOffset()
	now := a.opts.Now().UnixMilli()
	h := &format.Batch{
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
			return Result{}, err
		}
		if ok {
			if pr.Epoch < p.Epoch {
				return Result{}, &FencedError{ProducerID: pr.ID, Epoch: pr.Epoch, Current: p.Epoch}
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
	var err error
	a.buf, err = a.comp.AppendBatch(a.buf[:0], h, recs)
	if err != nil {
		return Result{}, err
	}
	res, err := a.write(a.buf, h, -1)
	if err != nil {
		return res, err
	}
	if b.TimestampType == format.LogAppendTime {
		res.LogAppendTime = now
	}
	return res, nil
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
	if epoch < p.Epoch {
		return Result{}, &FencedError{ProducerID: producerID, Epoch: epoch, Current: p.Epoch}
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
	res, err := a.write(a.buf, h, coordinatorEpoch)
	if err != nil {
		return res, err
	}
	if !commit {
		return res, a.abortedTxn(producerID, p.TxnFirstOffset, res.LastOffset)
	}
	return res, nil
}

// abortedTxn records an aborted transaction in the active segment's
// .txnindex, with the last stable offset after its marker at lastOffset.
func (a *Appender) abortedTxn(producerID, first, lastOffset int64) error {
	lso := lastOffset + 1
	if f := a.log.FirstUnstableOffset(); f >= 0 && f < lso {
		lso = f
	}
	return a.appendTxnIndex(format.AbortedTxn{ProducerID: producerID, FirstOffset: first, LastOffset: lastOffset, LastStableOffset: lso})
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
	res, err := a.write(raw, b, coordinatorEpoch)
	if err != nil {
		return res, err
	}
	if abort && first >= 0 {
		if err := a.abortedTxn(b.ProducerID, first, b.LastOffset()); err != nil {
			return res, err
		}
	}
	if b.TimestampType() == format.LogAppendTime {
		res.LogAppendTime = b.MaxTimestamp
	}
	return res, nil
}

// write appends one encoded batch: roll if needed, one write at the end of
// the log (cut back on failure), then the index entries by the broker's rule
// (LogSegment.append).
// The model takes the batch once it is in the log (coordinatorEpoch is a
// control batch's marker's).
func (a *Appender) write(batch []byte, h *format.Batch, coordinatorEpoch int32) (Result, error) {
	size := int64(len(batch))
	s := a.seg
	lastOffset := h.BaseOffset + int64(h.LastOffsetDelta)
	if s.size > 0 && (s.size+size > a.opts.SegmentBytes || lastOffset-s.base > 1<<31-1) {
		if err := a.roll(); err != nil {
			return Result{}, err
		}
		s = a.seg
	}
	pos := s.size
	n, err := s.log.WriteAt(batch, pos)
	if err != nil || n != len(batch) {
		if terr := s.log.Truncate(pos); terr != nil {
			return Result{}, errors.Join(err, terr)
		}
		if err == nil {
			err = errors.New("short write")
		}
		return Result{}, err
	}
	prev := *s
	s.size += size
	a.dirty = true
	// UnifiedLog.append: a batch with an epoch above the latest starts it.
	if h.IsV2() {
		if err := a.log.AssignEpoch(h.PartitionLeaderEpoch, h.BaseOffset, a.wopts()); err != nil {
			return Result{}, err
		}
	}
	if h.MaxTimestamp > s.maxTS {
		s.maxTS, s.maxTSOffset = h.MaxTimestamp, lastOffset
	}
	if s.bytesSinceIndex > a.opts.IndexIntervalBytes {
		if err := a.writeIndexes(lastOffset, pos); err != nil {
			// Not acknowledged, so not kept: a retry must not find it
			// in the log (LogSegment.append fails as a whole).
			*s = prev
			if terr := s.log.Truncate(pos); terr != nil {
				return Result{}, errors.Join(err, terr)
			}
			return Result{}, err
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += size
	h.Pos, h.BatchLength = pos, int32(size-format.LogOverhead)
	a.log.Appended(h, coordinatorEpoch)
	if a.opts.Sync == SyncBatch {
		if err := a.Sync(); err != nil {
			return Result{}, err
		}
	}
	return Result{BaseOffset: h.BaseOffset, LastOffset: lastOffset, LogAppendTime: -1, LogStartOffset: a.log.LogStartOffset(),
		Position: pos, Segment: s.log.Name(), Size: size}, nil
}

// writeIndexes appends the offset and time index entries for a batch at
// pos; on failure both indexes are cut back to their sizes before.
func (a *Appender) writeIndexes(lastOffset, pos int64) error {
	s := a.seg
	var isz, tsz int64 = -1, -1
	if st, err := s.index.Stat(); err == nil {
		isz = st.Size()
	}
	if st, err := s.timeindex.Stat(); err == nil {
		tsz = st.Size()
	}
	err := a.indexEntry(lastOffset, pos)
	if err == nil {
		err = a.timeIndexEntry(s.maxTS, s.maxTSOffset)
	}
	if err != nil {
		if isz >= 0 {
			s.index.Truncate(isz)
		}
		if tsz >= 0 {
			s.timeindex.Truncate(tsz)
		}
	}
	return err
}

func (a *Appender) indexEntry(offset, pos int64) error {
	s := a.seg
	if offset <= s.lastIndexOffset {
		return nil
	}
	var buf [format.OffsetIndexEntrySize]byte
	e := format.AppendIndexEntry(buf[:0], s.base, format.IndexEntry{Offset: offset, Pos: pos})
	if _, err := s.index.Write(e); err != nil {
		return err
	}
	s.lastIndexOffset = offset
	return nil
}

// timeIndexEntry is TimeIndex.maybeAppend: only a timestamp above the last.
func (a *Appender) timeIndexEntry(ts, offset int64) error {
	s := a.seg
	if ts <= s.lastTimeIndexTS {
		return nil
	}
	var buf [format.TimeIndexEntrySize]byte
	e := format.AppendTimeEntry(buf[:0], s.base, format.TimeEntry{Timestamp: ts, Offset: offset})
	if _, err := s.timeindex.Write(e); err != nil {
		return err
	}
	s.lastTimeIndexTS = ts
	return nil
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
