package serve

import "github.com/twmb/franz-go/pkg/kmsg"

// handleHeartbeat keeps a member's session alive.
func (cn *conn) handleHeartbeat(r *kmsg.HeartbeatRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = cn.s.groups.heartbeat(r.Group, r.MemberID, r.Generation)
	return resp
}
