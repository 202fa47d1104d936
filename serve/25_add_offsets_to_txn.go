package serve

// AddOffsetsToTxn, key 25: v0-v4.
//
// Version notes (AddOffsetsToTxnRequest.json):
//   - v0: the group whose offsets the transaction will commit; v1: as v0.
//   - v2: PRODUCER_FENCED (KIP-588); older versions get
//     INVALID_PRODUCER_EPOCH for it.
//   - v3: flexible.
//   - v4: TRANSACTION_ABORTABLE (KIP-890); transactions v2 clients send
//     TxnOffsetCommit v5 instead.

import (
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(25, 0, 4, (*conn).handleAddOffsetsToTxn) }

// handleAddOffsetsToTxn adds the group's __consumer_offsets partition to
// the transaction (handleAddOffsetsToTxnRequest), so that its marker ends
// the transaction's offset commits too.
func (cn *conn) handleAddOffsetsToTxn(r *kmsg.AddOffsetsToTxnRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp, nil
	}
	off := offsetstore.TopicPartition{Topic: offsetstore.Topic, Partition: offsetstore.Partition(r.Group)}
	c := cn.s.groups
	res, err := c.call(cn, r.Key(), kerr.CoordinatorNotAvailable.Code, func(w *waiter) {
		c.addPartitions(r.TransactionalID, r.ProducerID, r.ProducerEpoch, []offsetstore.TopicPartition{off}, func(code int16) { w.answer(code) })
		c.park(w, r.TransactionalID, "")
	})
	if err != nil {
		return nil, err
	}
	resp.ErrorCode = fencedFor(res.(int16), r.Version, 2)
	return resp, nil
}
