package serve

// LeaveGroup, key 13: v0-v5.
//
// Version notes (LeaveGroupRequest.json):
//   - v0: one member; v1: throttle time; v2: as v1.
//   - v3: several members, each by member id or GroupInstanceID (KIP-345),
//     answered one by one.
//   - v4: flexible.
//   - v5: each member's Reason (KIP-800).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(13, 0, 5, (*conn).handleLeaveGroup) }

// handleLeaveGroup removes one member (v0-v2) or several (v3+, KIP-345).
func (cn *conn) handleLeaveGroup(r *kmsg.LeaveGroupRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	if r.Version < 3 {
		resp.ErrorCode = cn.s.groups.leave(r.Group, []string{r.MemberID})[0]
		return resp, nil
	}
	ids := make([]string, len(r.Members))
	for i, m := range r.Members {
		ids[i] = m.MemberID
	}
	codes := cn.s.groups.leave(r.Group, ids)
	for i, m := range r.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, codes[i]
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
