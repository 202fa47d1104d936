package partition

import (
	"errors"
	"io"
	"sort"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// Producer state, as Kafka's ProducerStateManager keeps it
// (storage/.../log/ProducerStateManager.java, ProducerStateEntry.java,
// ProducerAppendInfo.java): for every producer id in the log, its epoch, its
// coordinator epoch, its ongoing transaction and the metadata of its last
// batches, which answer a retried batch with its original offsets. It is
// loaded from the latest producer snapshot at or below the log end offset
// and the batches after it, as the broker loads it (UnifiedLog's
// rebuildProducerState), and kept current by every batch appended.

// MaxProducerBatches is how many of a producer's last batches the state
// keeps for duplicate detection (ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
const MaxProducerBatches = 5

// NoProducerEpoch is RecordBatch.NO_PRODUCER_EPOCH: the epoch of a producer
// the state knows nothing about.
const NoProducerEpoch int16 = -1

// BatchMetadata is one of a producer's recent batches (BatchMetadata.java).
type BatchMetadata struct {
	// LastSeq is the batch's last sequence; FirstSeq its base sequence.
	FirstSeq, LastSeq int32
	// FirstOffset and LastOffset are the batch's offsets in the log.
	FirstOffset, LastOffset int64
	// Timestamp is the batch's max timestamp (epoch ms): for a
	// LogAppendTime batch, the time the broker appended it.
	Timestamp int64
}

// ProducerState is one producer's entry (ProducerStateEntry).
type ProducerState struct {
	ProducerID       int64
	Epoch            int16
	CoordinatorEpoch int32
	// LastTimestamp is the max timestamp of its last batch or marker.
	LastTimestamp int64
	// TxnFirstOffset is the first offset of its ongoing transaction, -1
	// when it has none (currentTxnFirstOffset).
	TxnFirstOffset int64
	// Batches are its last batches in the log, oldest first, at most
	// MaxProducerBatches: the duplicate-batch cache. Empty after an epoch
	// change.
	Batches []BatchMetadata
}

// LastSeq is the last sequence of the producer's last batch, or
// format.NoSequence when the state holds none.
func (p *ProducerState) LastSeq() int32 {
	if n := len(p.Batches); n > 0 {
		return p.Batches[n-1].LastSeq
	}
	return format.NoSequence
}

// setEpoch is ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch
// forgets the batches of the old one.
func (p *ProducerState) setEpoch(epoch int16) {
	if p.Epoch != epoch {
		p.Batches = p.Batches[:0]
		p.Epoch = epoch
	}
}

func (p *ProducerState) addBatch(m BatchMetadata) {
	if len(p.Batches) == MaxProducerBatches {
		copy(p.Batches, p.Batches[1:])
		p.Batches = p.Batches[:MaxProducerBatches-1]
	}
	p.Batches = append(p.Batches, m)
}

// producers is a Log's producer state.
type producers struct {
	m map[int64]*ProducerState
	// ongoing counts the producers with an ongoing transaction.
	ongoing int
}

func newProducers() *producers { return &producers{m: map[int64]*ProducerState{}} }

func (ps *producers) get(pid int64) *ProducerState {
	p := ps.m[pid]
	if p == nil {
		p = &ProducerState{ProducerID: pid, Epoch: NoProducerEpoch, CoordinatorEpoch: -1, LastTimestamp: format.NoTimestamp, TxnFirstOffset: -1}
		ps.m[pid] = p
	}
	return p
}

func (ps *producers) setTxn(p *ProducerState, first int64) {
	switch {
	case p.TxnFirstOffset < 0 && first >= 0:
		ps.ongoing++
	case p.TxnFirstOffset >= 0 && first < 0:
		ps.ongoing--
	}
	p.TxnFirstOffset = first
}

// observe updates the state with a batch of the log, as loading the log
// does (ProducerAppendInfo.append without the client checks). marker is
// the control batch's end-transaction marker, nil when it has none (an
// empty control batch, whose transaction the cleaner removed).
func (ps *producers) observe(b *format.Batch, marker *format.EndTxnMarker) {
	if !b.IsV2() || b.ProducerID < 0 {
		return
	}
	if b.IsControl() {
		if marker == nil {
			return
		}
		p := ps.get(b.ProducerID)
		p.setEpoch(b.ProducerEpoch)
		p.CoordinatorEpoch = marker.CoordinatorEpoch
		p.LastTimestamp = b.MaxTimestamp
		ps.setTxn(p, -1)
		return
	}
	p := ps.get(b.ProducerID)
	p.setEpoch(b.ProducerEpoch)
	if b.BaseSequence >= 0 {
		p.addBatch(BatchMetadata{FirstSeq: b.BaseSequence, LastSeq: b.LastSequence(), FirstOffset: b.BaseOffset,
			LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp})
	}
	p.LastTimestamp = b.MaxTimestamp
	if b.IsTransactional() && p.TxnFirstOffset < 0 {
		ps.setTxn(p, b.BaseOffset)
	}
}

// firstUnstable is the first offset of the earliest ongoing transaction, or
// -1 (ProducerStateManager.firstUnstableOffset).
func (ps *producers) firstUnstable() int64 {
	if ps.ongoing == 0 {
		return -1
	}
	first := int64(-1)
	for _, p := range ps.m {
		if p.TxnFirstOffset >= 0 && (first < 0 || p.TxnFirstOffset < first) {
			first = p.TxnFirstOffset
		}
	}
	return first
}

// load reads the latest snapshot at or below leo that parses, then applies
// every batch from its offset on. A damaged or oversized snapshot is passed
// over for an older one, as the broker deletes a snapshot it cannot read
// and rebuilds from the log.
func (l *Log) loadProducers() error {
	ps := newProducers()
	from := int64(-1)
	for i := len(l.snapshots) - 1; i >= 0; i-- {
		sn := l.snapshots[i]
		if sn.Offset > l.leo {
			continue
		}
		data, err := safeio.ReadFile(sn.Path, safeio.MaxSnapshotBytes)
		var tl *safeio.TooLargeError
		if errors.As(err, &tl) {
			continue
		}
		if err != nil {
			return err
		}
		entries, err := format.ParseProducerSnapshot(data)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := ps.get(e.ProducerID)
			p.Epoch, p.CoordinatorEpoch, p.LastTimestamp = e.Epoch, e.CoordinatorEpoch, e.Timestamp
			ps.setTxn(p, e.CurrentTxnFirstOffset)
			if e.LastOffset >= 0 {
				p.Batches = append(p.Batches, BatchMetadata{FirstSeq: e.FirstSequence(), LastSeq: e.LastSequence,
					FirstOffset: e.LastOffset - int64(e.OffsetDelta), LastOffset: e.LastOffset, Timestamp: e.Timestamp})
			}
		}
		from = sn.Offset
		break
	}
	for i, s := range l.segs {
		if from >= 0 && i+1 < len(l.segs) && l.segs[i+1].BaseOffset <= from {
			continue // wholly before the snapshot
		}
		if err := l.scanSegment(s, 0, s.end, func(b *format.Batch, f File) error {
			if b.LastOffset() >= from {
				return l.observeBatch(ps, s.Log, b, f)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	l.prod = ps
	return nil
}

// observeBatch applies a batch read from the log (a header, when the scan
// reads headers only) to ps; a control batch's marker is read from f.
func (l *Log) observeBatch(ps *producers, path string, b *format.Batch, f File) error {
	if !b.IsV2() || b.ProducerID < 0 {
		return nil
	}
	var marker *format.EndTxnMarker
	if b.IsControl() {
		m, ok, err := l.readMarker(path, b, f)
		if err != nil {
			return err
		}
		if ok {
			marker = &m
		}
	}
	ps.observe(b, marker)
	return nil
}

// readMarker reads the end-transaction marker of the control batch whose
// header b is, from f. ok is false for an empty control batch or one whose
// record does not decode (its transaction still ends: Kafka's reader would
// have failed the load, a copy is read as far as it goes).
func (l *Log) readMarker(path string, b *format.Batch, f File) (format.EndTxnMarker, bool, error) {
	if b.RecordCount <= 0 {
		return format.EndTxnMarker{}, false, nil
	}
	maxBytes := int64(l.opts.MaxBatchBytes)
	if maxBytes <= 0 {
		maxBytes = format.DefaultMaxBatchBytes
	}
	if b.Size() > maxBytes {
		return format.EndTxnMarker{}, false, nil
	}
	raw := make([]byte, b.Size())
	if n, err := f.ReadAt(raw, b.Pos); n < len(raw) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return format.EndTxnMarker{}, false, &LookupError{Path: path, Pos: b.Pos, Err: err}
	}
	full, err := format.ParseBatch(raw, b.Pos)
	if err != nil {
		return format.EndTxnMarker{}, false, nil
	}
	var rr format.RecordReader
	var rec format.Record
	if rr.Reset(full) != nil || rr.Next(&rec) != nil {
		return format.EndTxnMarker{}, false, nil
	}
	m, err := format.ParseEndTxnMarker(rec.Value)
	if err != nil {
		// The transaction ends all the same; the coordinator epoch is
		// unknown.
		return format.EndTxnMarker{CoordinatorEpoch: -1}, true, nil
	}
	return m, true, nil
}

// producersLocked loads the producer state on first use.
func (l *Log) producersLocked() (*producers, error) {
	if err := l.endLocked(); err != nil {
		return nil, err
	}
	if l.prod == nil {
		if err := l.loadProducers(); err != nil {
			return nil, err
		}
	}
	return l.prod, nil
}

// Producer returns a copy of producer pid's state; ok is false when the
// log holds nothing of it.
func (l *Log) Producer(pid int64) (ProducerState, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshLocked(); err != nil {
		return ProducerState{}, false, err
	}
	ps, err := l.producersLocked()
	if err != nil {
		return ProducerState{}, false, err
	}
	p := ps.m[pid]
	if p == nil {
		return ProducerState{}, false, nil
	}
	c := *p
	c.Batches = append([]BatchMetadata(nil), p.Batches...)
	return c, true, nil
}

// FirstUnstableOffset is the first offset of the earliest ongoing
// transaction, -1 when none is (ProducerStateManager.firstUnstableOffset).
func (l *Log) FirstUnstableOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps, err := l.producersLocked()
	if err != nil {
		return -1
	}
	return ps.firstUnstable()
}

// ProducerEntries is the producer state as a snapshot records it
// (ProducerStateManager.writeSnapshot), by producer id.
func (l *Log) ProducerEntries() ([]format.ProducerEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps, err := l.producersLocked()
	if err != nil {
		return nil, err
	}
	out := make([]format.ProducerEntry, 0, len(ps.m))
	for pid, p := range ps.m {
		e := format.ProducerEntry{ProducerID: pid, Epoch: p.Epoch, LastSequence: format.NoSequence, LastOffset: -1,
			Timestamp: p.LastTimestamp, CoordinatorEpoch: p.CoordinatorEpoch, CurrentTxnFirstOffset: p.TxnFirstOffset}
		if n := len(p.Batches); n > 0 {
			last := p.Batches[n-1]
			e.LastSequence, e.LastOffset, e.OffsetDelta = last.LastSeq, last.LastOffset, int32(last.LastOffset-last.FirstOffset)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out, nil
}

// Errors of CheckProducerBatch, as the broker answers a client's batch
// (ProducerAppendInfo's checks, UnifiedLog.analyzeAndValidateProducerState).
var (
	// ErrInvalidProducerEpoch is INVALID_PRODUCER_EPOCH: the batch's epoch
	// is older than the producer's.
	ErrInvalidProducerEpoch = errors.New("INVALID_PRODUCER_EPOCH")
	// ErrOutOfOrderSequence is OUT_OF_ORDER_SEQUENCE_NUMBER: the batch's
	// sequence does not follow the producer's last one (a batch older
	// than the last five is one of these too: the broker can no longer
	// tell it is a duplicate).
	ErrOutOfOrderSequence = errors.New("OUT_OF_ORDER_SEQUENCE_NUMBER")
	// ErrInvalidTxnState is INVALID_TXN_STATE: a non-transactional batch
	// from a producer with an ongoing transaction.
	ErrInvalidTxnState = errors.New("INVALID_TXN_STATE")
)

// ProducerBatchError is a client batch CheckProducerBatch refuses; Err is
// one of its sentinels.
type ProducerBatchError struct {
	ProducerID int64
	Err        error
	Msg        string
}

func (e *ProducerBatchError) Error() string {
	return "producer " + strconv.FormatInt(e.ProducerID, 10) + ": " + e.Msg
}

func (e *ProducerBatchError) Unwrap() error { return e.Err }

// CheckProducerBatch applies the broker's checks to a client's batch b from
// an idempotent producer before it is appended: a duplicate of one of the
// producer's last five batches (same epoch and sequence range) is returned
// as dup, to be answered with its original offsets and not appended
// (ProducerStateEntry.findDuplicateBatch); then the epoch must not be older
// than the producer's, the sequence must follow its last one (a new epoch,
// or a producer the log knows nothing of, starts anywhere Kafka lets it:
// at 0 for a new epoch, anywhere for an unknown producer), and a producer
// with an ongoing transaction may not write outside it. A batch without a
// producer id passes.
func (l *Log) CheckProducerBatch(b *format.Batch) (dup *BatchMetadata, err error) {
	if b.ProducerID < 0 {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshLocked(); err != nil {
		return nil, err
	}
	ps, err := l.producersLocked()
	if err != nil {
		return nil, err
	}
	p := ps.m[b.ProducerID]
	if p == nil {
		p = &ProducerState{ProducerID: b.ProducerID, Epoch: NoProducerEpoch, TxnFirstOffset: -1}
	}
	fail := func(err error, msg string) (*BatchMetadata, error) {
		return nil, &ProducerBatchError{ProducerID: b.ProducerID, Err: err, Msg: msg}
	}
	if b.ProducerEpoch == p.Epoch {
		for i := range p.Batches {
			if d := p.Batches[i]; d.FirstSeq == b.BaseSequence && d.LastSeq == b.LastSequence() {
				return &d, nil
			}
		}
	}
	if b.ProducerEpoch < p.Epoch {
		return fail(ErrInvalidProducerEpoch, "epoch "+strconv.Itoa(int(b.ProducerEpoch))+" is older than the last seen epoch "+strconv.Itoa(int(p.Epoch)))
	}
	if b.ProducerEpoch != p.Epoch {
		if b.BaseSequence != 0 && p.Epoch != NoProducerEpoch {
			return fail(ErrOutOfOrderSequence, "a new epoch "+strconv.Itoa(int(b.ProducerEpoch))+" must start at sequence 0, not "+strconv.Itoa(int(b.BaseSequence)))
		}
	} else if last := p.LastSeq(); p.Epoch != NoProducerEpoch && b.BaseSequence != format.IncrementSequence(last, 1) {
		return fail(ErrOutOfOrderSequence, "sequence "+strconv.Itoa(int(b.BaseSequence))+" does not follow the last sequence "+strconv.Itoa(int(last)))
	}
	if p.TxnFirstOffset >= 0 && !b.IsTransactional() {
		return fail(ErrInvalidTxnState, "a non-transactional batch while its transaction from offset "+strconv.FormatInt(p.TxnFirstOffset, 10)+" is ongoing")
	}
	return nil, nil
}
