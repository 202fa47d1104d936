package internaltopic

import (
	"encoding/binary"
	"sort"
)

// The __transaction_state records klog serve's transaction coordinator
// writes: TransactionLog.keyToBytes and valueToBytes, by the same schema
// tables and writer as EncodeCoordinatorJSON, so that what serve writes is
// what --transaction-log-decoder reads.

// TransactionLogValueVersion is the value version a broker writes once
// transaction.version 1 or later is finalized (TransactionVersion's
// transactionLogValueVersion): 1, the first flexible version.
const TransactionLogValueVersion int16 = 1

// AppendTransactionLog appends a transaction log record's key and value
// (version v, 0 or 1). As valueToBytes, an Empty transaction's partitions
// are written null and the others' topics in topic order (a broker's order
// is its hash set's; klog's is sorted); previousProducerId and
// nextProducerId are not written (valueToBytes leaves them at their
// defaults), and clientTransactionVersion only in v1 and when not 0.
func AppendTransactionLog(key, val []byte, id string, v int16, t *TransactionLogValue) ([]byte, []byte, error) {
	s := schemas()
	rec := s.transaction[0]
	key, err := writeMessage(binary.BigEndian.AppendUint16(key, 0), s, rec.key, 0, map[string]any{"transactionalId": id})
	if err != nil {
		return nil, nil, err
	}
	var parts any
	if t.TransactionStatus != 0 {
		ps := append([]TransactionPartitions(nil), t.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i].Topic < ps[j].Topic })
		list := make([]any, len(ps))
		for i, p := range ps {
			ids := make([]any, len(p.PartitionIDs))
			for j, n := range p.PartitionIDs {
				ids[j] = num(int64(n))
			}
			list[i] = map[string]any{"topic": p.Topic, "partitionIds": ids}
		}
		parts = list
	}
	obj := map[string]any{"producerId": num(t.ProducerID), "producerEpoch": num(int64(t.ProducerEpoch)),
		"transactionTimeoutMs": num(int64(t.TransactionTimeoutMs)), "transactionStatus": num(int64(t.TransactionStatus)),
		"transactionPartitions": parts, "transactionLastUpdateTimestampMs": num(t.LastUpdateTimestampMs),
		"transactionStartTimestampMs": num(t.StartTimestampMs)}
	if v >= 1 && t.ClientTransactionVersion != 0 {
		obj["clientTransactionVersion"] = num(int64(t.ClientTransactionVersion))
	}
	val, err = writeMessage(binary.BigEndian.AppendUint16(val, uint16(v)), s, rec.value, v, obj)
	return key, val, err
}
