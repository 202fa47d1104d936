package recovery

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// txnSanity is TransactionIndex.sanityCheck as LogSegment.sanityCheck
// runs it while loading: an entry whose last offset is below the segment's
// base offset is a CorruptIndexException (the segment is recovered while
// loading), a version above 0 a KafkaException (the load fails). A partial
// entry at the end is not read.
func txnSanity(path string, base int64) (bool, *kafkaErr, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	var corrupt bool
	var ke *kafkaErr
	_, err = format.ScanAbortedTxns(f, func(_ int, t format.AbortedTxn) bool {
		if t.Version > 0 {
			ke = &kafkaErr{class: "KafkaException", msg: "Unexpected aborted transaction version " + strconv.Itoa(int(t.Version)) +
				" in transaction index " + path + ", current version is 0"}
			return false
		}
		if t.LastOffset < base {
			corrupt = true
			return false
		}
		return true
	})
	if err != nil {
		return false, nil, err
	}
	return corrupt, ke, nil
}

func sortLive(live []*vseg) {
	sort.SliceStable(live, func(i, j int) bool { return live[i].base < live[j].base })
}

// simulate runs LogLoader.load's segment passes: recovery while loading
// (segments without an offset index), then recoverLog over every segment,
// restarting after each split as retryOnOffsetOverflow does.
func (p *planner) simulate(rec *Plan, live, all *[]*vseg) error {
	for restarts := 0; ; restarts++ {
		if restarts > maxRestarts {
			return errors.New(p.dir + ": more than " + strconv.Itoa(maxRestarts) + " segment splits")
		}
		sortLive(*live)
		split := false
		// loadSegmentFiles: recoverSegment for a segment whose index is
		// missing; a truncation here does not delete later segments.
		for _, v := range *live {
			if !v.early {
				continue
			}
			r, err := p.recoverSeg(v)
			if err != nil {
				return err
			}
			v.recov = r
			switch {
			case r.refuse != nil:
				rec.refuse(r.refuse, v.src.seg.Log)
				return nil
			case r.invalidOffset != "":
				rec.refuse(&kafkaErr{class: "InvalidOffsetException", msg: r.invalidOffset}, v.src.seg.Log)
				return nil
			case r.overflow:
				if err := p.split(rec, v, live, all); err != nil {
					return err
				}
				if !rec.Loads {
					return nil
				}
				split = true
			}
			if split {
				break
			}
			if v.pos+r.valid < v.end {
				v.reason = r.reason + " (recovered while loading, because the segment has no offset index; later segments are kept)"
			}
			v.end = v.pos + r.valid
			v.early = false
			if r.pending != nil {
				rec.refuse(r.pending, v.src.seg.Log)
				return nil
			}
		}
		if split {
			continue
		}
		// recoverLog.
		for i, v := range *live {
			r, err := p.recoverSeg(v)
			if err != nil {
				return err
			}
			v.recov = r
			if r.refuse != nil {
				rec.refuse(r.refuse, v.src.seg.Log)
				return nil
			}
			if r.overflow {
				if err := p.split(rec, v, live, all); err != nil {
					return err
				}
				if !rec.Loads {
					return nil
				}
				split = true
				break
			}
			var truncated int64
			if r.invalidOffset != "" {
				// recoverLog catches InvalidOffsetException and truncates
				// the segment to its base offset.
				to, err := p.firstAtOrAbove(v)
				if err != nil {
					return err
				}
				truncated = v.end - to
				v.end = to
				v.reason = "InvalidOffsetException: " + r.invalidOffset + " (LogLoader empties the segment)"
				v.recov = segResult{lastOffset: -1}
			} else {
				truncated = v.end - (v.pos + r.valid)
				v.end = v.pos + r.valid
				if truncated > 0 {
					v.reason = r.reason
				}
			}
			if truncated > 0 {
				for _, w := range (*live)[i+1:] {
					w.deleted = true
				}
				*live = (*live)[:i+1]
			}
			if r.pending != nil {
				rec.refuse(r.pending, v.src.seg.Log)
				return nil
			}
			if truncated > 0 {
				break
			}
		}
		if !split {
			return nil
		}
	}
}

type frameStatus int

const (
	frameOK frameStatus = iota
	frameEnd
	frameCorrupt
)

// readFrame is FileLogInputStream.nextBatch over [pos, end) of f
// (format's ReadFrame): it stops quietly when 17 bytes or fewer remain or
// the entry runs past the end, and throws CorruptRecordException for a size
// below 14.
func (p *planner) readFrame(f io.ReaderAt, path string, pos, end int64) (format.Frame, frameStatus, string, error) {
	fr, err := p.frames.ReadFrame(f, pos, end)
	if err == nil {
		return fr, frameOK, "", nil
	}
	if err == io.EOF {
		return fr, frameEnd, "", nil
	}
	var pe *format.PosError
	if errors.As(err, &pe) && errors.Is(err, format.ErrFrameSize) {
		return fr, frameCorrupt, "CorruptRecordException: " + pe.Msg + " in file " + path + ".", nil
	}
	return fr, frameEnd, "", err
}

// ensureValid is RecordBatch.ensureValid: the minimum size and the CRC
// (format's FrameCRC: CRC-32C from the attributes for v2, CRC-32 from the
// magic for v0/v1; LegacyRecord.ensureValid checks the size and the CRC
// only, and reads a negative magic as a legacy message like 0 and 1).
func (p *planner) ensureValid(f io.ReaderAt, fr *format.Frame) (string, error) {
	if fr.IsV2() && fr.Size < format.BatchHeaderSize {
		return "CorruptRecordException: Record batch is corrupt (the size " + itoa(fr.Size) +
			" is smaller than the minimum allowed overhead 61)", nil
	}
	c, err := p.frames.FrameCRC(f, fr)
	if err != nil {
		return "", err
	}
	if c != fr.CRC {
		return "CorruptRecordException: Record is corrupt (stored crc = " + strconv.FormatUint(uint64(fr.CRC), 10) +
			", computed crc = " + strconv.FormatUint(uint64(c), 10) + ")", nil
	}
	return "", nil
}

// recoverSeg is LogSegment.recover on one segment, without changing it.
func (p *planner) recoverSeg(v *vseg) (segResult, error) {
	r := segResult{lastOffset: -1, idxOff: v.base}
	f, path := v.src.f, v.src.seg.Log
	var valid, lastIndexEntry int64
	maxTs, maxTsOff := int64(-1), v.base
	nIdx, nTi := 0, 0
	tiLastTs, tiLastOff := int64(-1), v.base
	// timeEntry is TimeIndex.maybeAppend with its sanity check: it reports
	// false (r.invalidOffset set) when the entry's offset goes backwards.
	timeEntry := func(maxTs, maxTsOff int64) bool {
		if nTi > 0 && maxTsOff < tiLastOff {
			r.invalidOffset = "Attempt to append an offset (" + itoa(maxTsOff) + ") to slot " + strconv.Itoa(nTi) +
				" no larger than the last offset appended (" + itoa(tiLastOff) + ") to " + indexPath(p.dir, v.base, partition.TimeIndexSuffix) + "."
			return false
		}
		if maxTs > tiLastTs {
			r.timeIndex = format.AppendTimeEntry(r.timeIndex, v.base, format.TimeEntry{Timestamp: maxTs, Offset: maxTsOff})
			tiLastTs, tiLastOff = maxTs, maxTsOff
			nTi++
		}
		return true
	}
	pos := v.pos
	for {
		fr, st, msg, err := p.readFrame(f, path, pos, v.end)
		if err != nil {
			return r, err
		}
		if st == frameEnd {
			if pos < v.end {
				r.reason = "the batch at position " + itoa(pos) + " is incomplete (" + itoa(v.end-pos) + " bytes to the end)"
			}
			break
		}
		if st == frameCorrupt {
			r.reason = "at position " + itoa(pos) + ": " + msg
			break
		}
		bad, err := p.ensureValid(f, &fr)
		if err != nil {
			return r, err
		}
		if bad != "" {
			r.reason = "the batch at position " + itoa(pos) + " (offset " + itoa(fr.BaseOffset) + "): " + bad
			break
		}
		if !format.FitsSegment(fr.LastOffset, v.base) {
			r.overflow = true
			r.reason = "the batch at position " + itoa(pos) + " has last offset " + itoa(fr.LastOffset) +
				", which does not fit segment base offset " + itoa(v.base) + " (LogSegmentOffsetOverflowException)"
			r.valid = valid
			return r, nil
		}
		if fr.MaxTimestamp > maxTs {
			maxTs, maxTsOff = fr.MaxTimestamp, fr.LastOffset
		}
		if valid-lastIndexEntry > p.opts.IndexIntervalBytes {
			if nIdx > 0 && fr.LastOffset <= r.idxOff {
				r.invalidOffset = "Attempt to append an offset " + itoa(fr.LastOffset) + " to position " + strconv.Itoa(nIdx) +
					" no larger than the last offset appended (" + itoa(r.idxOff) + ") to " + indexPath(p.dir, v.base, partition.IndexSuffix) + "."
				return r, nil
			}
			r.index = format.AppendIndexEntry(r.index, v.base, format.IndexEntry{Offset: fr.LastOffset, Pos: valid})
			r.idxOff, r.idxPos = fr.LastOffset, valid
			nIdx++
			if !timeEntry(maxTs, maxTsOff) {
				return r, nil
			}
			lastIndexEntry = valid
		}
		valid += fr.Size
		r.lastOffset = fr.LastOffset
		pos += fr.Size
		if fr.IsV2() {
			if ke := p.assignEpoch(fr.PartitionLeaderEpoch, fr.BaseOffset); ke != nil {
				r.refuse = ke
				r.valid = valid
				return r, nil
			}
			if fr.ProducerID >= 0 && fr.IsControl() {
				ke, err := p.controlMarker(f, &fr)
				if err != nil {
					return r, err
				}
				if ke != nil && !ke.caught {
					r.refuse = ke
					r.valid = valid
					return r, nil
				}
				if ke != nil {
					// LogSegment.recover catches it after counting the batch
					// as valid; the load then fails rebuilding producer state.
					r.pending = ke
					if pos < v.end {
						r.reason = "producer state: " + ke.String()
					}
					break
				}
			}
		}
	}
	r.valid = valid
	// The final time index entry of a closed segment.
	timeEntry(maxTs, maxTsOff)
	return r, nil
}

func indexPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, partition.FileName(base, suffix))
}

// assignEpoch is LeaderEpochFileCache.assign as recovery calls it: a new
// epoch above the latest starts at the batch's base offset, and entries
// at or past that offset go.
func (p *planner) assignEpoch(epoch int32, start int64) *kafkaErr {
	if epoch < 0 {
		return nil
	}
	if n := len(p.epochs); n > 0 && epoch <= p.epochs[n-1].Epoch {
		return nil
	}
	if start < 0 {
		return &kafkaErr{class: "IllegalArgumentException", msg: "Received invalid partition leader epoch entry EpochEntry(epoch=" +
			strconv.Itoa(int(epoch)) + ", startOffset=" + itoa(start) + ")"}
	}
	keep := p.epochs[:0]
	for _, e := range p.epochs {
		if e.StartOffset < start && e.Epoch < epoch {
			keep = append(keep, e)
		}
	}
	p.epochs = append(keep, format.EpochEntry{Epoch: epoch, StartOffset: start})
	return nil
}

// controlMarker is ProducerAppendInfo.append for a control batch with a
// producer id: the first record is decoded as an end transaction marker.
// Caught exceptions (InvalidRecordException) keep the batch and fail the
// load later; others fail it at once.
func (p *planner) controlMarker(f io.ReaderAt, fr *format.Frame) (*kafkaErr, error) {
	if fr.RecordCount == 0 {
		return nil, nil // an empty control batch: nothing to append
	}
	if fr.RecordCount < 0 {
		return &kafkaErr{class: "InvalidRecordException", msg: "Found invalid record count " + itoa(int64(fr.RecordCount)) + " in magic v" + strconv.Itoa(int(fr.Magic)) + " batch", caught: true}, nil
	}
	if fr.Size > int64(p.opts.MaxBatchBytes) {
		return nil, errors.New("a control batch of " + itoa(fr.Size) + " bytes at position " + itoa(fr.Pos) + " is larger than klog reads whole")
	}
	if cap(p.raw) < int(fr.Size) {
		p.raw = make([]byte, fr.Size)
	}
	raw := p.raw[:fr.Size]
	if _, err := f.ReadAt(raw, fr.Pos); err != nil {
		return nil, err
	}
	b, err := format.ParseBatch(raw, fr.Pos)
	if err != nil {
		return &kafkaErr{class: "InvalidRecordException", msg: err.Error(), caught: true}, nil
	}
	if err := p.rr.Reset(b); err != nil {
		switch {
		case errors.Is(err, format.ErrUnsupported):
			return &kafkaErr{class: "IllegalArgumentException", msg: "Unknown compression type id: " + strconv.Itoa(int(b.Compression()))}, nil
		case b.Compression() != format.CompressionNone && !strings.Contains(err.Error(), "record"):
			return &kafkaErr{class: "KafkaException", msg: err.Error()}, nil
		}
		return &kafkaErr{class: "InvalidRecordException", msg: err.Error(), caught: true}, nil
	}
	if err := p.rr.Next(&p.rec); err != nil {
		return &kafkaErr{class: "InvalidRecordException", msg: "Found invalid record structure: " + err.Error(), caught: true}, nil
	}
	key, value := p.rec.Key, p.rec.Value
	if key == nil {
		return &kafkaErr{class: "NullPointerException", msg: "the control record's key is null"}, nil
	}
	k, err := format.ParseControlKey(key)
	if err != nil {
		return &kafkaErr{class: "InvalidRecordException", msg: err.Error(), caught: true}, nil
	}
	if k.Type != 0 && k.Type != 1 {
		return &kafkaErr{class: "IllegalArgumentException", msg: "Invalid control record type for end transaction marker" + k.Type.String()}, nil
	}
	if value == nil {
		return &kafkaErr{class: "NullPointerException", msg: "the end transaction marker's value is null"}, nil
	}
	if len(value) < 6 {
		return &kafkaErr{class: "InvalidRecordException", msg: "Invalid value size found for end transaction marker. Must have at least 6 bytes, but found only " + strconv.Itoa(len(value)), caught: true}, nil
	}
	if m, _ := format.ParseEndTxnMarker(value); m.Version < 0 {
		return &kafkaErr{class: "InvalidRecordException", msg: "Invalid version found for end transaction marker: " + strconv.Itoa(int(m.Version)) + ". May indicate data corruption", caught: true}, nil
	}
	return nil, nil
}

// firstAtOrAbove is the position LogSegment.truncateTo(baseOffset) cuts
// at: the first batch whose last offset is at least the base.
func (p *planner) firstAtOrAbove(v *vseg) (int64, error) {
	for pos := v.pos; ; {
		fr, st, _, err := p.readFrame(v.src.f, v.src.seg.Log, pos, v.end)
		if err != nil {
			return 0, err
		}
		if st != frameOK {
			return v.end, nil
		}
		if fr.LastOffset >= v.base {
			return pos, nil
		}
		pos += fr.Size
	}
}

// readNextOffset is LogSegment.readNextOffset on a segment whose recovery
// threw: from the last offset index entry, the first batch whose last
// offset reaches it, then the last batch of the file.
func (p *planner) readNextOffset(v *vseg, idxOff, idxPos int64) (int64, *kafkaErr, error) {
	found := false
	var last int64
	for pos := v.pos + idxPos; ; {
		fr, st, msg, err := p.readFrame(v.src.f, v.src.seg.Log, pos, v.end)
		if err != nil {
			return 0, nil, err
		}
		if st == frameCorrupt {
			i := strings.IndexByte(msg, ':')
			return 0, &kafkaErr{class: msg[:i], msg: msg[i+2:]}, nil
		}
		if st == frameEnd {
			break
		}
		if found || fr.LastOffset >= idxOff {
			found = true
			last = fr.LastOffset
		}
		pos += fr.Size
	}
	if !found {
		return v.base, nil, nil
	}
	return last + 1, nil, nil
}

// split is LocalLog.splitOverflowedSegment: it requires hasOverflow (the
// last batch's offset does not fit the segment), then copies the batches
// into new segments, each based at its first batch's base offset and
// holding the batches whose last offset fits it.
func (p *planner) split(rec *Plan, v *vseg, live, all *[]*vseg) error {
	next, ke, err := p.readNextOffset(v, v.recov.idxOff, v.recov.idxPos)
	if err != nil {
		return err
	}
	if ke != nil {
		rec.refuse(ke, v.src.seg.Log)
		return nil
	}
	if !(next > v.base && !format.FitsSegment(next-1, v.base)) {
		// Kafka names the file by its absolute path; klog by the path given.
		rec.refuse(&kafkaErr{class: "IllegalArgumentException",
			msg: "Split operation is only permitted for segments with overflow, and the problem path is " + v.src.seg.Log}, v.src.seg.Log)
		return nil
	}
	var parts []*vseg
	for pos := v.pos; pos < v.end; {
		fr, st, msg, err := p.readFrame(v.src.f, v.src.seg.Log, pos, v.end)
		if err != nil {
			return err
		}
		if st == frameCorrupt {
			i := strings.IndexByte(msg, ':')
			rec.refuse(&kafkaErr{class: msg[:i], msg: msg[i+2:]}, v.src.seg.Log)
			return nil
		}
		if st == frameEnd {
			// batchesFrom(position).iterator().next() on no batch.
			rec.refuse(&kafkaErr{class: "NoSuchElementException", msg: "no batch at position " + itoa(pos-v.pos) +
				" of " + v.src.seg.Log + " while splitting it"}, v.src.seg.Log)
			return nil
		}
		newBase, err := p.firstOffset(v, &fr)
		if err != nil {
			return err
		}
		end := pos
		for end < v.end {
			g, st, _, err := p.readFrame(v.src.f, v.src.seg.Log, end, v.end)
			if err != nil {
				return err
			}
			if st != frameOK || !format.FitsSegment(g.LastOffset, newBase) {
				break
			}
			end += g.Size
		}
		if end == pos {
			rec.refuse(&kafkaErr{class: "IllegalStateException", msg: "Failed to append records from position " + itoa(pos-v.pos) +
				" in LogSegment(baseOffset=" + itoa(v.base) + ", size=" + itoa(v.end-v.pos) + ")"}, v.src.seg.Log)
			return nil
		}
		parts = append(parts, &vseg{src: v.src, base: newBase, pos: pos, end: end, origEnd: end, moved: true})
		pos = end
	}
	v.split = true
	keep := (*live)[:0]
	for _, w := range *live {
		if w == v {
			continue
		}
		replaced := false
		for _, n := range parts {
			if n.base == w.base {
				replaced = true // LogSegments.add replaces the segment with the same base
			}
		}
		if replaced {
			w.deleted = true
			continue
		}
		keep = append(keep, w)
	}
	*live = append(keep, parts...)
	*all = append(*all, parts...)
	return nil
}

// firstOffset is FileChannelRecordBatch.baseOffset: the header's base
// offset for v2 and uncompressed v0/v1; for a compressed v0/v1 wrapper, its
// first inner message's offset.
func (p *planner) firstOffset(v *vseg, fr *format.Frame) (int64, error) {
	if fr.IsV2() || fr.Size > int64(p.opts.MaxBatchBytes) {
		return fr.BaseOffset, nil
	}
	raw := make([]byte, fr.Size)
	if _, err := v.src.f.ReadAt(raw, fr.Pos); err != nil {
		return 0, err
	}
	b, err := format.ParseBatch(raw, fr.Pos)
	if err != nil || b.Compression() == format.CompressionNone {
		return fr.BaseOffset, nil
	}
	if p.rr.Reset(b) == nil && p.rr.Next(&p.rec) == nil {
		return p.rec.Offset, nil
	}
	return fr.BaseOffset, nil
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
