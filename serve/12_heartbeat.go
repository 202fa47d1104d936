package serve

// Heartbeat, key 12: v0-v4.
//
// Version notes (HeartbeatRequest.json):
//   - v0: group, generation, member id; v1: throttle time; v2: as v1.
//   - v3: GroupInstanceID (KIP-345).
//   - v4: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(12, 0, 4, (*conn).handleHeartbeat) }

// handleHeartbeat keeps a member's session alive and tells it of a
// rebalance (REBALANCE_IN_PROGRESS).
func (cn *conn) handleHeartbeat(r *kmsg.HeartbeatRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	c := cn.s.groups
	inst := r.InstanceID
	if r.Version < 3 {
		inst = nil
	}
	out, err := c.call(cn, r.Key(), kerr.CoordinatorNotAvailable.Code, func(w *waiter) {
		w.answer(c.heartbeat(r.Group, r.MemberID, inst, r.Generation))
	})
	if err != nil {
		return nil, err
	}
	resp.ErrorCode = out.(int16)
	return resp, nil
}
