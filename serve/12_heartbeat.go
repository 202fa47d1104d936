package serve

// Heartbeat, key 12: v0-v4.
//
// Version notes (HeartbeatRequest.json):
//   - v0: group, generation, member id; v1: throttle time; v2: as v1.
//   - v3: GroupInstanceID (KIP-345).
//   - v4: flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(12, 0, 4, (*conn).handleHeartbeat) }

// handleHeartbeat keeps a member's session alive.
func (cn *conn) handleHeartbeat(r *kmsg.HeartbeatRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = cn.s.groups.heartbeat(r.Group, r.MemberID, r.Generation)
	return resp, nil
}
