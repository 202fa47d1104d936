package serve

// FindCoordinator, key 10: v0-v6.
//
// Version notes (FindCoordinatorRequest.json):
//   - v0: a group's coordinator.
//   - v1: KeyType (0 group, 1 transaction), throttle time and an error
//     message; v2: as v1.
//   - v3: flexible.
//   - v4: several keys in one request (CoordinatorKeys, KIP-699).
//   - v5: TRANSACTION_ABORTABLE (KIP-890).
//   - v6: key type 2, share groups (KIP-932).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(10, 0, 6, (*conn).handleFindCoordinator) }

// handleFindCoordinator names this broker (in a replay, the replay's
// coordinator) as every group's and every transactional id's coordinator
// (it leads every partition of __consumer_offsets and
// __transaction_state). Share groups' coordinators are not offered.
func (cn *conn) handleFindCoordinator(r *kmsg.FindCoordinatorRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	node, host, port := cn.s.coordinatorAddr()
	code := int16(0)
	var msg *string
	switch r.CoordinatorType {
	case 0, 1:
	case 2:
		code = kerr.CoordinatorNotAvailable.Code
		m := "klog serve has no share group coordinator"
		msg = &m
	default:
		code = kerr.InvalidRequest.Code
	}
	if r.Version < 4 {
		resp.ErrorCode, resp.ErrorMessage = code, msg
		if code == 0 {
			resp.NodeID, resp.Host, resp.Port = node, host, port
		} else {
			resp.NodeID = -1
		}
		return resp, nil
	}
	for _, k := range r.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.ErrorCode, c.ErrorMessage = k, code, msg
		if code == 0 {
			c.NodeID, c.Host, c.Port = node, host, port
		} else {
			c.NodeID = -1
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp, nil
}
