package serve

// AddPartitionsToTxn, key 24: v0-v5.
//
// Version notes (AddPartitionsToTxnRequest.json):
//   - v0: one transaction's partitions, from its producer; v1: as v0.
//   - v2: PRODUCER_FENCED (KIP-588); older versions get
//     INVALID_PRODUCER_EPOCH for it.
//   - v3: flexible.
//   - v4: several transactions in one request, each with VerifyOnly, sent
//     by brokers (KIP-890 part 1); the response's errors per transaction.
//   - v5: TRANSACTION_ABORTABLE for a partition a verify-only request
//     finds outside its transaction (KIP-890).

import (
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(24, 0, 5, (*conn).handleAddPartitionsToTxn) }

// addPartitionsOne answers one transaction's partitions: unknown ones
// UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED
// (KafkaApis), else the coordinator's code for all (or, verify-only, per
// partition).
func (cn *conn) addPartitionsOne(key int16, id string, pid int64, epoch int16, verify bool, topics map[string][]int32, order []string) (map[offsetstore.TopicPartition]int16, error) {
	out := map[offsetstore.TopicPartition]int16{}
	var parts []offsetstore.TopicPartition
	unknown := false
	for _, t := range order {
		for _, n := range topics[t] {
			p := offsetstore.TopicPartition{Topic: t, Partition: n}
			parts = append(parts, p)
			if cn.s.lookup(t, n) == nil {
				out[p] = kerr.UnknownTopicOrPartition.Code
				unknown = true
			}
		}
	}
	if unknown {
		for _, p := range parts {
			if _, ok := out[p]; !ok {
				out[p] = kerr.OperationNotAttempted.Code
			}
		}
		return out, nil
	}
	c := cn.s.groups
	if verify {
		res, err := c.call(cn, key, map[offsetstore.TopicPartition]int16(nil), func(w *waiter) { w.answer(c.verifyPartitions(id, pid, epoch, parts)) })
		if err != nil {
			return nil, err
		}
		if m, _ := res.(map[offsetstore.TopicPartition]int16); m != nil {
			return m, nil
		}
		for _, p := range parts {
			out[p] = kerr.CoordinatorNotAvailable.Code
		}
		return out, nil
	}
	res, err := c.call(cn, key, kerr.CoordinatorNotAvailable.Code, func(w *waiter) {
		c.addPartitions(id, pid, epoch, parts, func(code int16) { w.answer(code) })
		c.park(w, id, "")
	})
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		out[p] = res.(int16)
	}
	return out, nil
}

// handleAddPartitionsToTxn adds partitions to transactions (txn.go),
// answered once the transaction's record is written.
func (cn *conn) handleAddPartitionsToTxn(r *kmsg.AddPartitionsToTxnRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if r.Version < 4 {
		topics, order := map[string][]int32{}, []string{}
		for _, t := range r.Topics {
			if _, ok := topics[t.Topic]; !ok {
				order = append(order, t.Topic)
			}
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		codes, err := cn.addPartitionsOne(r.Key(), r.TransactionalID, r.ProducerID, r.ProducerEpoch, false, topics, order)
		if err != nil {
			return nil, err
		}
		for _, t := range order {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t
			for _, n := range topics[t] {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = n, fencedFor(codes[offsetstore.TopicPartition{Topic: t, Partition: n}], r.Version, 2)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for _, tx := range r.Transactions {
		topics, order := map[string][]int32{}, []string{}
		for _, t := range tx.Topics {
			if _, ok := topics[t.Topic]; !ok {
				order = append(order, t.Topic)
			}
			topics[t.Topic] = append(topics[t.Topic], t.Partitions...)
		}
		codes, err := cn.addPartitionsOne(r.Key(), tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly, topics, order)
		if err != nil {
			return nil, err
		}
		rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rtx.TransactionalID = tx.TransactionalID
		for _, t := range order {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = t
			for _, n := range topics[t] {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = n, codes[offsetstore.TopicPartition{Topic: t, Partition: n}]
				rt.Partitions = append(rt.Partitions, rp)
			}
			rtx.Topics = append(rtx.Topics, rt)
		}
		resp.Transactions = append(resp.Transactions, rtx)
	}
	return resp, nil
}
