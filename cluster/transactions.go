package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	it "github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/kraft"
	"github.com/klog-dev/klog/partition"
)

// The transactions of a cluster from its disks: every transactional id's
// metadata as the transaction coordinator loads __transaction_state
// (TransactionStateManager: the last record of each id, a tombstone
// removing it), the transactions open in the data partitions (their
// producers' state, as ProducerStateManager loads it), and the hanging ones
// as kafka-transactions.sh find-hanging defines them.

// TransactionStateTopic is the transaction coordinator's topic.
const TransactionStateTopic = "__transaction_state"

// DefaultTransactionStatePartitions is
// transaction.state.log.num.partitions' default.
const DefaultTransactionStatePartitions = 50

// DefaultMaxTransactionTimeout is kafka-transactions.sh find-hanging's
// --max-transaction-timeout default (15 minutes).
const DefaultMaxTransactionTimeout = 15 * time.Minute

// Transaction is one transactional id's metadata.
type Transaction struct {
	TransactionalID string `json:"transactionalId"`
	// State is the TransactionState name (Empty, Ongoing, PrepareCommit,
	// PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence).
	State                    string                     `json:"state"`
	ProducerID               int64                      `json:"producerId"`
	PreviousProducerID       int64                      `json:"previousProducerId"`
	NextProducerID           int64                      `json:"nextProducerId"`
	ProducerEpoch            int16                      `json:"producerEpoch"`
	TimeoutMs                int32                      `json:"transactionTimeoutMs"`
	Partitions               []it.TransactionPartitions `json:"-"`
	TopicPartitions          []TopicAssignment          `json:"topicPartitions"`
	StartTimestamp           int64                      `json:"transactionStartTimestampMs"`
	LastUpdateTimestamp      int64                      `json:"transactionLastUpdateTimestampMs"`
	ClientTransactionVersion int16                      `json:"clientTransactionVersion"`
	// CoordinatorPartition is the __transaction_state partition that owns
	// the id, Partition the one it was read from, RecordOffset its record.
	CoordinatorPartition int32 `json:"coordinatorPartition"`
	Partition            int32 `json:"partition"`
	RecordOffset         int64 `json:"recordOffset"`
}

// OpenTransaction is a transaction open in a data partition: a producer
// whose transactional batches have no marker yet.
type OpenTransaction struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	Dir              string `json:"dir"`
	ProducerID       int64  `json:"producerId"`
	ProducerEpoch    int16  `json:"producerEpoch"`
	CoordinatorEpoch int32  `json:"coordinatorEpoch"`
	// StartOffset is the transaction's first offset; StartTimestamp its
	// first batch's timestamp (-1: it began before the batches on disk,
	// known from a producer snapshot).
	StartOffset    int64 `json:"startOffset"`
	StartTimestamp int64 `json:"startTimestamp"`
	LastTimestamp  int64 `json:"lastTimestamp"`
	// DurationMs is the time since LastTimestamp (as find-hanging
	// measures it).
	DurationMs int64 `json:"durationMs"`
	// PinsLSO says this transaction is the partition's earliest open one:
	// its start offset is the last stable offset read_committed consumers
	// cannot pass.
	PinsLSO          bool  `json:"pinsLastStableOffset"`
	LastStableOffset int64 `json:"lastStableOffset"`
	HighWatermark    int64 `json:"highWatermark"`
	// TransactionalID is the id whose current producer id this is ("":
	// none read), CoordinatorState its transaction's state.
	TransactionalID  string `json:"transactionalId"`
	CoordinatorState string `json:"coordinatorState"`
	// Hanging is find-hanging's verdict: open longer than the maximum
	// transaction timeout and not a transaction the coordinator will end
	// (no transactional id has this producer id, or its transaction does
	// not include this partition). Unknown says the coordinator's state for
	// this producer could not be read (not every __transaction_state
	// partition is on these disks).
	Hanging bool   `json:"hanging"`
	Unknown bool   `json:"hangingUnknown"`
	Reason  string `json:"reason"`
}

// TransactionsReport is what Transactions found.
type TransactionsReport struct {
	TransactionStatePartitions int32 `json:"transactionStateTopicPartitions"`
	// StatePartitionsRead are the __transaction_state partitions read.
	StatePartitionsRead []OffsetsPartitionRead `json:"partitionsRead"`
	Transactions        []*Transaction         `json:"-"`
	Open                []*OpenTransaction     `json:"-"`
	// States counts the transactional ids by state.
	States map[string]int `json:"states"`
	// CoordinatorCommits and CoordinatorAborts count the transactions
	// __transaction_state records as completed, CoordinatorDurations
	// their durations (start to last update).
	CoordinatorCommits   int64     `json:"coordinatorCommitted"`
	CoordinatorAborts    int64     `json:"coordinatorAborted"`
	CoordinatorDurations Durations `json:"coordinatorDurationMs"`
	// Data is what the data partitions' markers say: transactions
	// committed and aborted, their bytes, records and durations.
	Data           TxnStats `json:"data"`
	PartitionsRead int      `json:"dataPartitionsRead"`
	OpenCount      int      `json:"open"`
	HangingCount   int      `json:"hanging"`
	NowMs          int64    `json:"nowMs"`
	MaxTimeoutMs   int64    `json:"maxTransactionTimeoutMs"`
	ProblemList
	completeReadAll bool
}

// TransactionsOptions say what to read.
type TransactionsOptions struct {
	// TransactionalIDs limits the metadata listed (all when empty).
	TransactionalIDs []string
	// Topic and Partition (-1: all) limit the data partitions searched.
	Topic     string
	Partition int32
	// Now is the time durations are measured to (epoch ms; 0: the clock).
	Now int64
	// MaxTimeout is find-hanging's --max-transaction-timeout (0: 15 min).
	MaxTimeout time.Duration
	// StatePartitions is transaction.state.log.num.partitions (0: the
	// metadata image's, or 50).
	StatePartitions int32
	MaxBatchBytes   int
}

// Transactions reads __transaction_state and every data partition in the
// log dirs.
func Transactions(ctx context.Context, dirs []*LogDir, opts TransactionsOptions) (*TransactionsReport, error) {
	rep := &TransactionsReport{StatePartitionsRead: []OffsetsPartitionRead{}, Transactions: []*Transaction{}, Open: []*OpenTransaction{},
		States: map[string]int{}, ProblemList: ProblemList{Problems: []Problem{}}}
	rep.NowMs = opts.Now
	if rep.NowMs == 0 {
		rep.NowMs = time.Now().UnixMilli()
	}
	rep.MaxTimeoutMs = opts.MaxTimeout.Milliseconds()
	if opts.MaxTimeout <= 0 {
		rep.MaxTimeoutMs = DefaultMaxTransactionTimeout.Milliseconds()
	}
	im := metadataImage(ctx, dirs)
	parts := replicasOf(dirs, TransactionStateTopic)
	rep.TransactionStatePartitions = opts.StatePartitions
	if rep.TransactionStatePartitions <= 0 {
		rep.TransactionStatePartitions = DefaultTransactionStatePartitions
		if im != nil && im.Topic(TransactionStateTopic) != nil && len(im.Topic(TransactionStateTopic).Partitions) > 0 {
			rep.TransactionStatePartitions = int32(len(im.Topic(TransactionStateTopic).Partitions))
		} else {
			for n := range parts {
				rep.TransactionStatePartitions = max(rep.TransactionStatePartitions, n+1)
			}
		}
	}
	rep.completeReadAll = int32(len(parts)) >= rep.TransactionStatePartitions
	byProducer, err := rep.readStatePartitions(ctx, parts, opts)
	if err != nil {
		return nil, err
	}
	if err := rep.readOpen(ctx, dirs, opts, byProducer); err != nil {
		return nil, err
	}
	return rep, nil
}

// readStatePartitions loads every __transaction_state partition; it
// returns the transactions by current producer id (for find-hanging).
func (rep *TransactionsReport) readStatePartitions(ctx context.Context, parts map[int32][]*PartitionDir, opts TransactionsOptions) (map[int64]*Transaction, error) {
	want := map[string]bool{}
	for _, id := range opts.TransactionalIDs {
		want[id] = true
	}
	all := map[string]*Transaction{}
	var keys []int32
	for n := range parts {
		keys = append(keys, n)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, n := range keys {
		pd, skipped := mostComplete(parts[n])
		read := OffsetsPartitionRead{Path: pd.Path, Partition: n, Skipped: skipped}
		err := eachRecord(ctx, pd.Path, opts.MaxBatchBytes, rep.problem, &read, func(b *format.Batch, r *format.Record) {
			if b.IsControl() {
				return
			}
			rec, err := it.DecodeTransactionRecord(r.Key, r.Value)
			if errors.Is(err, it.ErrUnknownRecordType) {
				return
			}
			if err != nil {
				rep.problem(Problem{File: pd.Path, Position: b.Pos, Offset: r.Offset, Message: err.Error()})
				return
			}
			id := rec.Key.(*it.TransactionLogKey).TransactionalID
			if rec.Value == nil {
				delete(all, id)
				return
			}
			v := rec.Value.(*it.TransactionLogValue)
			switch v.TransactionStatus {
			case 4:
				rep.CoordinatorCommits++
				rep.CoordinatorDurations.add(v.LastUpdateTimestampMs - v.StartTimestampMs)
			case 5:
				rep.CoordinatorAborts++
				rep.CoordinatorDurations.add(v.LastUpdateTimestampMs - v.StartTimestampMs)
			}
			t := &Transaction{TransactionalID: id, State: it.TransactionStateName(v.TransactionStatus), ProducerID: v.ProducerID,
				PreviousProducerID: v.PreviousProducerID, NextProducerID: v.NextProducerID, ProducerEpoch: v.ProducerEpoch,
				TimeoutMs: v.TransactionTimeoutMs, Partitions: v.Partitions, StartTimestamp: v.StartTimestampMs,
				LastUpdateTimestamp: v.LastUpdateTimestampMs, ClientTransactionVersion: v.ClientTransactionVersion,
				CoordinatorPartition: it.CoordinatorPartition(id, rep.TransactionStatePartitions), Partition: n, RecordOffset: r.Offset,
				TopicPartitions: []TopicAssignment{}}
			for _, p := range v.Partitions {
				t.TopicPartitions = append(t.TopicPartitions, TopicAssignment{Topic: p.Topic, Partitions: p.PartitionIDs})
			}
			all[id] = t
		})
		if err != nil {
			return nil, err
		}
		rep.StatePartitionsRead = append(rep.StatePartitionsRead, read)
	}
	byProducer := map[int64]*Transaction{}
	for id, t := range all {
		byProducer[t.ProducerID] = t
		if len(want) > 0 && !want[id] {
			continue
		}
		rep.Transactions = append(rep.Transactions, t)
		rep.States[t.State]++
	}
	sort.Slice(rep.Transactions, func(i, j int) bool { return rep.Transactions[i].TransactionalID < rep.Transactions[j].TransactionalID })
	return byProducer, nil
}

// readOpen reads the producers of every data partition (the most complete
// replica of each) and judges each open transaction.
func (rep *TransactionsReport) readOpen(ctx context.Context, dirs []*LogDir, opts TransactionsOptions, byProducer map[int64]*Transaction) error {
	seen := map[tp]bool{}
	for _, ld := range dirs {
		for _, pd := range ld.Partitions {
			k := tp{pd.Topic, pd.Partition}
			if seen[k] || pd.Topic == kraft.MetadataTopic || (opts.Topic != "" && pd.Topic != opts.Topic) ||
				(opts.Partition >= 0 && pd.Partition != opts.Partition) {
				continue
			}
			seen[k] = true
			if err := ctx.Err(); err != nil {
				return err
			}
			best, _ := mostComplete(replicasOf(dirs, pd.Topic)[pd.Partition])
			st, err := readState(best, stateOptions{producers: true, txnStats: true, maxBatchBytes: opts.MaxBatchBytes})
			if err != nil {
				return err
			}
			rep.PartitionsRead++
			rep.Data.merge(st.Txn)
			for _, msg := range st.Problems {
				rep.problem(Problem{File: best.Path, Position: -1, Offset: -1, Message: msg})
			}
			rep.judge(best, st, byProducer)
		}
	}
	sort.Slice(rep.Open, func(i, j int) bool {
		a, b := rep.Open[i], rep.Open[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	return nil
}

// judge adds the partition's open transactions, each with find-hanging's
// verdict (FindHangingTransactionsCommand: a candidate is an active
// producer with a transaction start offset whose last timestamp is older
// than the maximum timeout; it hangs unless the coordinator's transaction
// for that producer id is one that still includes the partition).
func (rep *TransactionsReport) judge(pd *PartitionDir, st *PartState, byProducer map[int64]*Transaction) {
	for _, p := range st.Producers {
		if p.TxnFirstOffset < 0 {
			continue
		}
		o := &OpenTransaction{Topic: pd.Topic, Partition: pd.Partition, Dir: pd.Path, ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch,
			CoordinatorEpoch: p.CoordinatorEpoch, StartOffset: p.TxnFirstOffset, StartTimestamp: p.TxnFirstTimestamp, LastTimestamp: p.LastTimestamp,
			DurationMs: rep.NowMs - p.LastTimestamp, PinsLSO: p.TxnFirstOffset == st.LastStableOffset, LastStableOffset: st.LastStableOffset,
			HighWatermark: st.HighWatermark}
		rep.OpenCount++
		t := byProducer[p.ProducerID]
		if t != nil {
			o.TransactionalID, o.CoordinatorState = t.TransactionalID, t.State
		}
		switch {
		case o.DurationMs <= rep.MaxTimeoutMs:
			o.Reason = fmt.Sprintf("open for %s, not longer than the maximum transaction timeout", time.Duration(o.DurationMs)*time.Millisecond)
		case t == nil && !rep.completeReadAll:
			o.Unknown = true
			o.Reason = "no transactional id read has this producer id, and not every __transaction_state partition is on these disks"
		case t == nil:
			o.Hanging = true
			o.Reason = "no transactional id has this producer id"
		case (t.State == "Ongoing" || t.State == "PrepareCommit" || t.State == "PrepareAbort") && t.includes(pd.Topic, pd.Partition):
			o.Reason = "the coordinator's " + t.State + " transaction of " + t.TransactionalID + " includes this partition: it will write the marker"
		default:
			o.Hanging = true
			o.Reason = "the coordinator's transaction of " + t.TransactionalID + " is " + t.State + " and does not include this partition"
		}
		if o.Hanging {
			rep.HangingCount++
		}
		rep.Open = append(rep.Open, o)
	}
}

func (t *Transaction) includes(topic string, part int32) bool {
	for _, p := range t.Partitions {
		if p.Topic != topic {
			continue
		}
		for _, n := range p.PartitionIDs {
			if n == part {
				return true
			}
		}
	}
	return false
}

// eachRecord calls fn with every record of a partition directory's
// segments, reporting unreadable data through problem.
func eachRecord(ctx context.Context, dir string, maxBatchBytes int, problem func(Problem), read *OffsetsPartitionRead, fn func(b *format.Batch, r *format.Record)) error {
	d, err := partition.Open(dir)
	if err != nil {
		return err
	}
	var rr format.RecordReader
	for _, seg := range d.Segments {
		if seg.Log == "" {
			continue
		}
		if err := eachSegmentRecord(ctx, seg.Log, maxBatchBytes, &rr, problem, read, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachSegmentRecord(ctx context.Context, path string, maxBatchBytes int, rr *format.RecordReader, problem func(Problem), read *OffsetsPartitionRead, fn func(b *format.Batch, r *format.Record)) error {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: maxBatchBytes})
	for b, err := range sc.All() {
		if err != nil {
			problem(Problem{File: path, Position: sc.Pos(), Offset: -1, Message: err.Error() + "; the rest of the segment is not read"})
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		read.Batches++
		if !b.Valid() {
			problem(Problem{File: path, Position: b.Pos, Offset: b.BaseOffset, Message: fmt.Sprintf("CRC mismatch (stored %d, computed %d); the batch is not replayed", b.CRC, b.ComputedCRC())})
			continue
		}
		for r, err := range rr.Records(b) {
			if err != nil {
				problem(Problem{File: path, Position: b.Pos, Offset: b.BaseOffset, Message: err.Error()})
				break
			}
			read.Records++
			fn(b, r)
		}
	}
	if t := sc.Tail(); t.Kind != format.TailNone && t.Kind != format.TailZeros && t.Kind != format.TailShort {
		problem(Problem{File: path, Position: t.Pos, Offset: t.Offset, Message: fmt.Sprintf("%d bytes that are not a whole batch (%s)", t.Bytes, t.Kind)})
	}
	return nil
}
