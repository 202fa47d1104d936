package serve

// ListTransactions, key 66: v0-v1.
//
// Version notes (ListTransactionsRequest.json):
//   - v0: the coordinator's transactions, filtered by state and producer
//     id (KIP-664).
//   - v1: DurationFilter: only transactions running longer than it
//     (KIP-994).
//   - v2 (TransactionalIdPattern, KIP-1152) is not served: Kafka's source
//     read here (apache/kafka 1eb7644) predates it, so its semantics are
//     not checked against the broker's.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(66, 0, 1, (*conn).handleListTransactions) }

// handleListTransactions lists the transaction coordinator's
// transactions as TransactionStateManager.listTransactionStates filters
// them (read at apache/kafka 1eb7644): Dead ones never (they are being
// expired); with producer id filters only those producers; with state
// filters only those states, a name that is no TransactionState going
// into UnknownStateFilters (and matching nothing); with a duration filter
// of 0 or more only transactions whose start is more than that many
// milliseconds before the server's clock (an Empty transaction's start is
// -1, so it passes any). A stopped coordinator answers
// COORDINATOR_NOT_AVAILABLE. A replay's other brokers own no
// __transaction_state partition and list nothing.
func (cn *conn) handleListTransactions(r *kmsg.ListTransactionsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.ListTransactionsResponse)
	states := map[string]bool{}
	for _, name := range r.StateFilters {
		if txnStateByName(name) {
			states[name] = true
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	pids := make(map[int64]bool, len(r.ProducerIDFilters))
	for _, id := range r.ProducerIDFilters {
		pids[id] = true
	}
	duration := int64(-1)
	if r.Version >= 1 {
		duration = r.DurationFilterMillis
	}
	if node, _, _ := cn.s.coordinatorAddr(); node != cn.s.cfg.NodeID {
		return resp, nil
	}
	sts, ok := cn.s.transactions()
	if !ok {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	now := cn.s.cfg.Clock.Now().UnixMilli()
	for _, st := range sts {
		switch {
		case st.State == txnDead.String():
		case len(pids) > 0 && !pids[st.ProducerID]:
		case len(r.StateFilters) > 0 && !states[st.State]:
		case duration >= 0 && now-st.StartTimestamp <= duration:
		default:
			ts := kmsg.NewListTransactionsResponseTransactionState()
			ts.TransactionalID, ts.ProducerID, ts.TransactionState = st.TransactionalID, st.ProducerID, st.State
			resp.TransactionStates = append(resp.TransactionStates, ts)
		}
	}
	return resp, nil
}

// txnStateByName reports whether name is one of TransactionState's names
// (TransactionState.fromName).
func txnStateByName(name string) bool {
	for s := txnEmpty; s <= txnPrepareEpochFence; s++ {
		if s.String() == name {
			return true
		}
	}
	return false
}
