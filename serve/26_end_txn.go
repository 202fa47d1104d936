package serve

// EndTxn, key 26: v0-v5.
//
// Version notes (EndTxnRequest.json):
//   - v0: commit or abort; v1: as v0.
//   - v2: PRODUCER_FENCED (KIP-588); older versions get
//     INVALID_PRODUCER_EPOCH for it.
//   - v3: flexible.
//   - v4: TRANSACTION_ABORTABLE (KIP-890).
//   - v5: transactions v2 (KIP-890): the coordinator bumps the epoch at
//     every end, and the response carries the producer id and epoch to
//     use next.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(26, 0, 5, (*conn).handleEndTxn) }

// handleEndTxn ends a transaction (txn.go): answered once its
// PrepareCommit or PrepareAbort record is written; the markers follow.
func (cn *conn) handleEndTxn(r *kmsg.EndTxnRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.EndTxnResponse)
	tv := int16(0)
	if r.Version > 4 {
		tv = 2
	}
	c := cn.s.groups
	out, err := c.call(cn, r.Key(), txnError(kerr.CoordinatorNotAvailable.Code), func(w *waiter) {
		c.endTxn(r.TransactionalID, r.ProducerID, r.ProducerEpoch, r.Commit, true, tv, func(res txnResult) { w.answer(res) })
		c.park(w, r.TransactionalID, "")
	})
	if err != nil {
		return nil, err
	}
	res := out.(txnResult)
	resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = fencedFor(res.code, r.Version, 2), res.pid, res.epoch
	return resp, nil
}
