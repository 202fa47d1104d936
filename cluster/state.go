package cluster

import (
	"errors"
	"io"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// The state of one partition as the views need it: its offsets, leader
// epoch and producers come from the partition model (partition.Log); the
// transaction statistics of the data (what the markers end, in bytes,
// records and time) are this package's own count over the batch headers.

// PartState is a partition's offsets and producers.
type PartState struct {
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	// HighWatermark is the partition model's: the log dir's
	// replication-offset-checkpoint entry when it is not above the log
	// end offset, else the log end offset (HighWatermarkCheckpointed
	// false: no entry), what klog serve and klog fetch answer.
	HighWatermark             int64 `json:"highWatermark"`
	HighWatermarkCheckpointed bool  `json:"highWatermarkCheckpointed"`
	// LastStableOffset is the first offset of the earliest open
	// transaction below the high watermark, else the high watermark (only
	// with producers read).
	LastStableOffset int64 `json:"lastStableOffset"`
	// LeaderEpoch is the leader-epoch-checkpoint's latest epoch, -1 when
	// it has none.
	LeaderEpoch int32 `json:"leaderEpoch"`
	Segments    int   `json:"segments"`
	SizeBytes   int64 `json:"size"`
	// Producers are the producers' states (the partition model's, loaded
	// as ProducerStateManager loads them: the latest producer snapshot at
	// or below the log end, then the batches after it), by producer id;
	// nil unless asked for.
	Producers []*Producer `json:"-"`
	// Txn are the transaction statistics of the batches present.
	Txn TxnStats `json:"-"`
	// Problems are what kept a value from being read (a file that does
	// not parse, a torn batch); the rest is still filled in.
	Problems []string `json:"problems,omitempty"`
}

// Producer is one producer's state in a partition.
type Producer struct {
	ProducerID       int64 `json:"producerId"`
	ProducerEpoch    int16 `json:"producerEpoch"`
	LastTimestamp    int64 `json:"lastTimestamp"`
	LastOffset       int64 `json:"lastOffset"`
	CoordinatorEpoch int32 `json:"coordinatorEpoch"`
	// TxnFirstOffset is the first offset of its open transaction
	// (currentTxnFirstOffset), -1 when none is open.
	TxnFirstOffset int64 `json:"currentTransactionStartOffset"`
	// TxnFirstTimestamp is the first batch timestamp of the open
	// transaction (-1 when unknown: it began before the batches read).
	TxnFirstTimestamp int64 `json:"currentTransactionStartTimestamp"`
}

// TxnStats counts the transactions the batches of a partition end.
type TxnStats struct {
	Committed        int64 `json:"committed"`
	Aborted          int64 `json:"aborted"`
	CommittedBytes   int64 `json:"committedBytes"`
	AbortedBytes     int64 `json:"abortedBytes"`
	CommittedRecords int64 `json:"committedRecords"`
	AbortedRecords   int64 `json:"abortedRecords"`
	// Durations are from a transaction's first batch timestamp to its
	// marker's, in ms, over the transactions whose first batch is present.
	Durations Durations `json:"durationMs"`
}

// Durations summarises durations in ms.
type Durations struct {
	Count int64 `json:"count"`
	Min   int64 `json:"min"`
	Max   int64 `json:"max"`
	Sum   int64 `json:"sum"`
}

func (d *Durations) add(ms int64) {
	if d.Count == 0 || ms < d.Min {
		d.Min = ms
	}
	if d.Count == 0 || ms > d.Max {
		d.Max = ms
	}
	d.Count++
	d.Sum += ms
}

func (d *Durations) merge(o Durations) {
	if o.Count == 0 {
		return
	}
	if d.Count == 0 || o.Min < d.Min {
		d.Min = o.Min
	}
	if d.Count == 0 || o.Max > d.Max {
		d.Max = o.Max
	}
	d.Count += o.Count
	d.Sum += o.Sum
}

func (s *TxnStats) merge(o TxnStats) {
	s.Committed += o.Committed
	s.Aborted += o.Aborted
	s.CommittedBytes += o.CommittedBytes
	s.AbortedBytes += o.AbortedBytes
	s.CommittedRecords += o.CommittedRecords
	s.AbortedRecords += o.AbortedRecords
	s.Durations.merge(o.Durations)
}

// stateOptions says how much to read.
type stateOptions struct {
	// producers reads the producer state (the model's) and the last
	// stable offset.
	producers bool
	// txnStats counts the transactions the markers end (a scan of every
	// batch header from the log start) and dates the open ones.
	txnStats      bool
	maxBatchBytes int
}

// readState reads the state of the partition directory pd.
func readState(pd *PartitionDir, opts stateOptions) (*PartState, error) {
	st := &PartState{LogStartOffset: -1, LogEndOffset: -1, HighWatermark: -1, LastStableOffset: -1, LeaderEpoch: -1}
	l, err := partition.OpenLog(pd.Path, partition.LogOptions{MaxBatchBytes: opts.maxBatchBytes})
	if errors.Is(err, partition.ErrNoSegment) {
		return st, nil
	}
	if err != nil {
		var le *partition.LookupError
		if errors.As(err, &le) {
			st.Problems = append(st.Problems, err.Error())
			return st, nil
		}
		return nil, err
	}
	for _, s := range l.Segments() {
		st.Segments++
		st.SizeBytes += s.Size
	}
	st.LeaderEpoch = l.LatestEpoch()
	_, st.HighWatermarkCheckpointed = l.CheckpointHighWatermark()
	st.LogStartOffset = l.LogStartOffset()
	if !opts.producers && !opts.txnStats {
		st.LogEndOffset, st.HighWatermark = l.LogEndOffset(), l.HighWatermark()
		st.LastStableOffset = st.HighWatermark
		return st, nil
	}
	offs, err := l.Offsets()
	if err != nil {
		st.Problems = append(st.Problems, err.Error())
		st.LogEndOffset, st.HighWatermark = l.LogEndOffset(), l.HighWatermark()
		return st, nil
	}
	st.LogStartOffset, st.LogEndOffset, st.HighWatermark, st.LastStableOffset = offs.LogStartOffset, offs.LogEndOffset, offs.HighWatermark, offs.LastStableOffset
	entries, err := l.ProducerEntries()
	if err != nil {
		st.Problems = append(st.Problems, err.Error())
	}
	for _, e := range entries {
		st.Producers = append(st.Producers, &Producer{ProducerID: e.ProducerID, ProducerEpoch: e.Epoch, LastTimestamp: e.Timestamp,
			LastOffset: e.LastOffset, CoordinatorEpoch: e.CoordinatorEpoch, TxnFirstOffset: e.CurrentTxnFirstOffset, TxnFirstTimestamp: -1})
	}
	if opts.txnStats {
		st.countTransactions(l.Segments(), opts.maxBatchBytes)
	}
	return st, nil
}

// countTransactions counts what the markers of the batches present end:
// each producer's transactional batches from its first one to its COMMIT
// or ABORT marker, and dates the open transactions whose first batch is
// present.
func (st *PartState) countTransactions(segs []partition.LogSegment, maxBatchBytes int) {
	type open struct {
		first, ts, bytes, records int64
	}
	opens := map[int64]*open{}
	for _, seg := range segs {
		err := scanSegment(seg.Log, maxBatchBytes, func(b *format.Batch, marker *controlRecord) {
			if !b.IsV2() || b.ProducerID < 0 {
				return
			}
			if marker != nil && (marker.Type == format.ControlCommit || marker.Type == format.ControlAbort) {
				o := opens[b.ProducerID]
				if o == nil {
					o = &open{}
				} else {
					st.Txn.Durations.add(b.MaxTimestamp - o.ts)
				}
				if marker.Type == format.ControlCommit {
					st.Txn.Committed++
					st.Txn.CommittedBytes += o.bytes
					st.Txn.CommittedRecords += o.records
				} else {
					st.Txn.Aborted++
					st.Txn.AbortedBytes += o.bytes
					st.Txn.AbortedRecords += o.records
				}
				delete(opens, b.ProducerID)
				return
			}
			if b.IsTransactional() && !b.IsControl() {
				o := opens[b.ProducerID]
				if o == nil {
					o = &open{first: b.BaseOffset, ts: b.BaseTimestamp}
					opens[b.ProducerID] = o
				}
				o.bytes += b.Size()
				o.records += int64(b.RecordCount)
			}
		})
		if err != nil {
			st.Problems = append(st.Problems, err.Error())
		}
	}
	for _, p := range st.Producers {
		if o := opens[p.ProducerID]; o != nil && p.TxnFirstOffset == o.first {
			p.TxnFirstTimestamp = o.ts
		}
	}
}

// scanSegment calls fn for every batch of a segment (headers only), with
// the control record's key and coordinator epoch for a control batch.
// A torn or corrupt tail ends the scan quietly (verify reports it); an
// I/O error is returned.
func scanSegment(path string, maxBatchBytes int, fn func(b *format.Batch, marker *controlRecord)) error {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := format.NewScanner(f, size, format.ScanOptions{HeadersOnly: true, MaxBatchBytes: maxBatchBytes})
	var buf []byte
	var rr format.RecordReader
	for {
		b, err := sc.Next()
		if err != nil {
			if format.EndOfData(err) {
				return nil
			}
			return err
		}
		if !b.IsControl() {
			fn(b, nil)
			continue
		}
		cr, err := readControl(f, b, &buf, &rr)
		if err != nil {
			// An unreadable control batch is not a marker.
			fn(b, nil)
			continue
		}
		fn(b, cr)
	}
}

// controlRecord is a control batch's first record.
type controlRecord struct {
	format.ControlKey
	coordinatorEpoch int32
}

// readControl reads the whole control batch b (one small batch) and its
// first record.
func readControl(r io.ReaderAt, b *format.Batch, buf *[]byte, rr *format.RecordReader) (*controlRecord, error) {
	n := b.Size()
	if n > 1<<20 {
		return nil, errors.New("control batch larger than 1 MiB")
	}
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	raw := (*buf)[:n]
	if _, err := r.ReadAt(raw, b.Pos); err != nil {
		return nil, err
	}
	full, err := format.ParseBatch(raw, b.Pos)
	if err != nil {
		return nil, err
	}
	for rec, err := range rr.Records(full) {
		if err != nil {
			return nil, err
		}
		k, err := format.ParseControlKey(rec.Key)
		if err != nil {
			return nil, err
		}
		cr := &controlRecord{ControlKey: k, coordinatorEpoch: -1}
		if k.Type == format.ControlCommit || k.Type == format.ControlAbort {
			if m, err := format.ParseEndTxnMarker(rec.Value); err == nil {
				cr.coordinatorEpoch = m.CoordinatorEpoch
			}
		}
		return cr, nil
	}
	return nil, errors.New("empty control batch")
}
