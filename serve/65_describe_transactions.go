package serve

// DescribeTransactions, key 65: v0.
//
// Version notes (DescribeTransactionsRequest.json):
//   - v0: each transactional id's state, producer, timeout, start and
//     partitions (KIP-664).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(65, 0, 0, (*conn).handleDescribeTransactions) }

// handleDescribeTransactions describes each transactional id from the
// transaction coordinator's state, as TransactionCoordinator's
// handleDescribeTransactions does (read at apache/kafka 1eb7644): an
// empty id is INVALID_REQUEST, an id the coordinator does not hold (or
// holds as Dead, being expired) TRANSACTIONAL_ID_NOT_FOUND, a stopped
// coordinator COORDINATOR_NOT_AVAILABLE, and in a replay a broker other
// than the coordinator NOT_COORDINATOR (it owns no __transaction_state
// partition). Every principal that may connect may describe (a read user
// has DESCRIBE), so nothing is filtered out.
func (cn *conn) handleDescribeTransactions(r *kmsg.DescribeTransactionsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	var byID map[string]*TxnState
	code := int16(0)
	if node, _, _ := cn.s.coordinatorAddr(); node != cn.s.cfg.NodeID {
		code = kerr.NotCoordinator.Code
	} else if len(r.TransactionalIDs) > 0 {
		sts, ok := cn.s.transactions()
		if !ok {
			code = kerr.CoordinatorNotAvailable.Code
		}
		byID = make(map[string]*TxnState, len(sts))
		for i := range sts {
			byID[sts[i].TransactionalID] = &sts[i]
		}
	}
	for _, id := range r.TransactionalIDs {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID = id
		st := byID[id]
		switch {
		case code != 0:
			ts.ErrorCode = code
		case id == "":
			ts.ErrorCode = kerr.InvalidRequest.Code
		case st == nil || st.State == txnDead.String():
			ts.ErrorCode = kerr.TransactionalIDNotFound.Code
		default:
			ts.State, ts.TimeoutMillis, ts.StartTimestamp = st.State, st.TimeoutMs, st.StartTimestamp
			ts.ProducerID, ts.ProducerEpoch = st.ProducerID, st.ProducerEpoch
			for _, p := range st.Partitions { // sorted: one entry a topic
				if n := len(ts.Topics); n == 0 || ts.Topics[n-1].Topic != p.Topic {
					t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
					t.Topic = p.Topic
					ts.Topics = append(ts.Topics, t)
				}
				t := &ts.Topics[len(ts.Topics)-1]
				t.Partitions = append(t.Partitions, p.Partition)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp, nil
}
