package produce

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// Append encodes b as one v2 batch at the log end offset and appends it.
func (a *Appender) Append(b *Batch) (Result, error) {
	if len(b.Records) == 0 {
		return Result{}, errors.New("produce: a batch needs at least one record")
	}
	if b.Transactional && b.ProducerID < 0 {
		return Result{}, errors.New("produce: a transactional batch needs a producer id")
	}
	now := a.opts.Now().UnixMilli()
	h := &format.Batch{
		Magic: format.MagicV2, BaseOffset: a.leo, PartitionLeaderEpoch: a.opts.PartitionLeaderEpoch,
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
	var p *producerState
	if b.ProducerID >= 0 {
		p = a.producers[b.ProducerID]
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = b.ProducerID, b.ProducerEpoch, 0
		if p != nil {
			if b.ProducerEpoch < p.epoch {
				return Result{}, &FencedError{ProducerID: b.ProducerID, Epoch: b.ProducerEpoch, Current: p.epoch}
			}
			if b.ProducerEpoch == p.epoch && p.lastSeq >= 0 {
				h.BaseSequence = format.IncrementSequence(p.lastSeq, 1)
			}
		}
	}
	recs := append(a.recs[:0], b.Records...)
	for i := range recs {
		recs[i].Offset = a.leo + int64(i)
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
	res, err := a.write(a.buf, h)
	if err != nil {
		return res, err
	}
	if b.ProducerID >= 0 {
		if p == nil || p.epoch != b.ProducerEpoch {
			p = &producerState{txnFirst: -1, coordinatorEpoch: -1}
			if old := a.producers[b.ProducerID]; old != nil {
				p.coordinatorEpoch = old.coordinatorEpoch
				p.txnFirst = old.txnFirst
			}
			a.producers[b.ProducerID] = p
		}
		p.epoch = b.ProducerEpoch
		p.lastSeq = h.LastSequence()
		p.lastOffset = res.LastOffset
		p.offsetDelta = h.LastOffsetDelta
		p.lastTimestamp = h.MaxTimestamp
		if b.Transactional && p.txnFirst < 0 {
			p.txnFirst = res.BaseOffset
		}
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
	p := a.producers[producerID]
	if p == nil || p.txnFirst < 0 {
		return Result{}, errors.New("produce: producer " + strconv.FormatInt(producerID, 10) + " has no open transaction in this partition")
	}
	if epoch < p.epoch {
		return Result{}, &FencedError{ProducerID: producerID, Epoch: epoch, Current: p.epoch}
	}
	typ := format.ControlAbort
	if commit {
		typ = format.ControlCommit
	}
	now := a.opts.Now().UnixMilli()
	rec := []format.Record{{
		Offset: a.leo, Timestamp: now,
		Key:   format.AppendControlKey(nil, typ),
		Value: format.AppendEndTxnMarker(nil, coordinatorEpoch),
	}}
	h := &format.Batch{Magic: format.MagicV2, BaseOffset: a.leo, PartitionLeaderEpoch: a.opts.PartitionLeaderEpoch,
		Attributes: 0x10 | 0x20, ProducerID: producerID, ProducerEpoch: epoch, BaseSequence: -1}
	format.PrepareBatch(h, rec)
	var err error
	a.buf, err = a.comp.AppendBatch(a.buf[:0], h, rec)
	if err != nil {
		return Result{}, err
	}
	first := p.txnFirst
	res, err := a.write(a.buf, h)
	if err != nil {
		return res, err
	}
	p.txnFirst = -1
	if epoch != p.epoch {
		// A marker with a bumped epoch clears the producer's batch
		// metadata (ProducerStateEntry.maybeUpdateProducerEpoch): its
		// next batch starts at sequence 0, as observe does on reload.
		p.lastSeq = -1
	}
	p.epoch = epoch
	p.coordinatorEpoch = coordinatorEpoch
	p.lastTimestamp = now
	if !commit {
		lso := res.LastOffset + 1
		for _, o := range a.producers {
			if o.txnFirst >= 0 && o.txnFirst < lso {
				lso = o.txnFirst
			}
		}
		if err := a.appendTxnIndex(format.AbortedTxn{ProducerID: producerID, FirstOffset: first,
			LastOffset: res.LastOffset, LastStableOffset: lso}); err != nil {
			return res, err
		}
	}
	return res, nil
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
	if b.BaseOffset != a.leo {
		return Result{}, errors.New("produce: batch base offset " + strconv.FormatInt(b.BaseOffset, 10) +
			" is not the log end offset " + strconv.FormatInt(a.leo, 10))
	}
	res, err := a.write(raw, b)
	if err != nil {
		return res, err
	}
	var rr format.RecordReader
	var rec format.Record
	if b.ProducerID >= 0 {
		p := a.producers[b.ProducerID]
		first := int64(-1)
		if p != nil {
			first = p.txnFirst
		}
		a.observe(b, &rr, &rec)
		if b.IsControl() && first >= 0 {
			if rr.Reset(b) == nil && rr.Next(&rec) == nil {
				if k, err := format.ParseControlKey(rec.Key); err == nil && k.Type == format.ControlAbort {
					lso := b.LastOffset() + 1
					for _, o := range a.producers {
						if o.txnFirst >= 0 && o.txnFirst < lso {
							lso = o.txnFirst
						}
					}
					if err := a.appendTxnIndex(format.AbortedTxn{ProducerID: b.ProducerID, FirstOffset: first,
						LastOffset: b.LastOffset(), LastStableOffset: lso}); err != nil {
						return res, err
					}
				}
			}
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
func (a *Appender) write(batch []byte, h *format.Batch) (Result, error) {
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
	s.size += size
	a.leo = lastOffset + 1
	a.dirty = true
	// UnifiedLog.append: a batch with an epoch above the latest starts it.
	if h.IsV2() {
		if err := a.assignEpoch(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
			return Result{}, err
		}
	}
	if h.MaxTimestamp > s.maxTS {
		s.maxTS, s.maxTSOffset = h.MaxTimestamp, lastOffset
	}
	if s.bytesSinceIndex > a.opts.IndexIntervalBytes {
		if err := a.indexEntry(lastOffset, pos); err != nil {
			return Result{}, err
		}
		if err := a.timeIndexEntry(s.maxTS, s.maxTSOffset); err != nil {
			return Result{}, err
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += size
	if a.opts.Sync == SyncBatch {
		if err := a.Sync(); err != nil {
			return Result{}, err
		}
	}
	return Result{BaseOffset: h.BaseOffset, LastOffset: lastOffset, LogAppendTime: -1, LogStartOffset: a.logStart,
		Position: pos, Segment: s.log.Name(), Size: size}, nil
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
		f, err := os.OpenFile(filepath.Join(a.dir, partition.FileName(s.base, partition.TxnIndexSuffix)),
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
	return a.newSegment(a.leo)
}
