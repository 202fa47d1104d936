package serve

import "github.com/twmb/franz-go/pkg/kmsg"

// handleLeaveGroup removes one member (v0-v2) or several (v3+, KIP-345).
func (cn *conn) handleLeaveGroup(r *kmsg.LeaveGroupRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	if r.Version < 3 {
		resp.ErrorCode = cn.s.groups.leave(r.Group, []string{r.MemberID})[0]
		return resp
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
	return resp
}
