package serve

// InitProducerId, key 22: v0-v5.
//
// Version notes (InitProducerIdRequest.json):
//   - v0: TransactionalID (null for an idempotent producer) and the
//     transaction timeout; v1: as v0.
//   - v2: flexible.
//   - v3: ProducerID and ProducerEpoch, to bump the epoch after an error
//     (KIP-360).
//   - v4: PRODUCER_FENCED (KIP-588); older versions get
//     INVALID_PRODUCER_EPOCH for it.
//   - v5: TRANSACTION_ABORTABLE (KIP-890).
//   - v6 (two-phase commit, KIP-939) is not served.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(22, 0, 5, (*conn).handleInitProducerID) }

// handleInitProducerID gives idempotent producers an id and epoch 0, and
// transactional ones theirs from the transaction coordinator (txn.go),
// which bumps the epoch of a known transactional id and so fences its
// previous producer, aborting its open transaction first. A read-only
// server refuses every producer.
func (cn *conn) handleInitProducerID(r *kmsg.InitProducerIDRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	switch {
	case !cn.s.cfg.Writable:
		// A read-only server: as a broker answers a principal
		// without IDEMPOTENT_WRITE (a read user is refused before,
		// authz.go).
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
	case r.TransactionalID != nil:
		var expected *txnResult
		if r.Version >= 3 && r.ProducerID >= 0 {
			expected = &txnResult{pid: r.ProducerID, epoch: r.ProducerEpoch}
		}
		c := cn.s.groups
		out, err := c.call(cn, r.Key(), txnError(kerr.CoordinatorNotAvailable.Code), func(w *waiter) {
			c.initProducerID(*r.TransactionalID, r.TransactionTimeoutMillis, expected, w)
		})
		if err != nil {
			return nil, err
		}
		res := out.(txnResult)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = fencedFor(res.code, r.Version, 4), res.pid, res.epoch
	case r.Version >= 3 && r.ProducerID >= 0:
		// KIP-360: a producer asking to bump its epoch after an error
		// gets epoch+1 on the same id.
		if r.ProducerEpoch == 32766 || r.ProducerEpoch < 0 {
			resp.ProducerID, resp.ProducerEpoch = cn.s.allocPID(), 0
		} else {
			resp.ProducerID, resp.ProducerEpoch = r.ProducerID, r.ProducerEpoch+1
		}
	default:
		resp.ProducerID, resp.ProducerEpoch = cn.s.allocPID(), 0
	}
	return resp, nil
}

// fencedFor is KafkaApis' rule for clients older than KIP-588: below
// version since, PRODUCER_FENCED is sent as INVALID_PRODUCER_EPOCH.
func fencedFor(code, version, since int16) int16 {
	if code == kerr.ProducerFenced.Code && version < since {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}
