package serve

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// errPartitionClosed: a marker for a partition whose appender is closed
// (the server is shutting down).
var errPartitionClosed = errors.New("serve: partition closed")

// txnLog is the __transaction_state-N partitions of the log dir, each
// opened on its first write; used by the coordinator's writer only.
type txnLog struct {
	dir  string
	opts produce.Options

	mu   sync.Mutex
	apps map[int32]*produce.Appender
}

// txnPartition is TransactionStateManager.partitionFor.
func txnPartition(id string) int32 { return internaltopic.CoordinatorPartition(id, txnPartitions) }

func (l *txnLog) partitionDir(n int32) string {
	return filepath.Join(l.dir, TransactionStateTopic+"-"+strconv.Itoa(int(n)))
}

// append writes one transaction's record as the coordinator does
// (appendTransactionToLog): one uncompressed record at time now, value
// version 1 (transaction.version 2 is finalized).
func (l *txnLog) append(id string, v *internaltopic.TransactionLogValue, now int64) error {
	key, val, err := internaltopic.AppendTransactionLog(nil, nil, id, internaltopic.TransactionLogValueVersion, v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := txnPartition(id)
	a := l.apps[n]
	if a == nil {
		if a, err = produce.Open(l.partitionDir(n), l.opts); err != nil {
			return err
		}
		l.apps[n] = a
	}
	_, err = a.Append(&produce.Batch{Records: []format.Record{{Key: key, Value: val, Timestamp: now}}})
	return err
}

// close closes (and syncs) the partitions written.
func (l *txnLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for n, a := range l.apps {
		errs = append(errs, a.Close())
		delete(l.apps, n)
	}
	return errors.Join(errs...)
}

// loadTxns reads every __transaction_state-N partition of dir into
// transaction metadata, as a coordinator loads its partitions: the last
// record of each transactional id wins, a tombstone removes it. A torn
// tail ends a partition; a record that does not decode is an error naming
// its file and offset.
func loadTxns(dir string) (map[string]*txnMeta, error) {
	out := map[string]*txnMeta{}
	ld, err := partition.OpenLogDir(dir)
	if err != nil {
		return out, nil // no log dir listing: nothing to load
	}
	for _, p := range ld.Partitions {
		if t, _, _ := partition.ParseDirName(filepath.Base(p)); t != TransactionStateTopic {
			continue
		}
		d, err := partition.Open(p)
		if err != nil {
			return nil, err
		}
		for _, s := range d.Segments {
			if s.Log == "" {
				continue
			}
			if err := loadTxnSegment(s.Log, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func loadTxnSegment(path string, out map[string]*txnMeta) error {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var rr format.RecordReader
	var rec format.Record
	for b, err := range format.NewScanner(f, size, format.ScanOptions{}).All() {
		if err != nil {
			var pe *format.PosError
			if errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if b.IsControl() {
			continue
		}
		if err := rr.Reset(b); err != nil {
			return fmt.Errorf("%s: batch at offset %d: %w", path, b.BaseOffset, err)
		}
		for {
			err := rr.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: batch at offset %d: %w", path, b.BaseOffset, err)
			}
			r, err := internaltopic.DecodeTransactionRecord(rec.Key, rec.Value)
			if err != nil {
				return fmt.Errorf("%s: offset %d: %w", filepath.Base(path), rec.Offset, err)
			}
			k, _ := r.Key.(*internaltopic.TransactionLogKey)
			if k == nil {
				continue
			}
			v, _ := r.Value.(*internaltopic.TransactionLogValue)
			if v == nil {
				delete(out, k.TransactionalID)
				continue
			}
			m := &txnMeta{id: k.TransactionalID, pid: v.ProducerID, prevPID: v.PreviousProducerID, nextPID: v.NextProducerID,
				epoch: v.ProducerEpoch, lastEpoch: -1, timeoutMs: v.TransactionTimeoutMs, state: txnStatus(v.TransactionStatus),
				parts: map[offsetstore.TopicPartition]struct{}{}, start: v.StartTimestampMs, lastUpdate: v.LastUpdateTimestampMs, tv: v.ClientTransactionVersion}
			if m.state != txnEmpty {
				for _, tps := range v.Partitions {
					for _, n := range tps.PartitionIDs {
						m.parts[offsetstore.TopicPartition{Topic: tps.Topic, Partition: n}] = struct{}{}
					}
				}
			}
			out[k.TransactionalID] = m
		}
	}
	return nil
}
