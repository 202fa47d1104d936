package serve

import "github.com/twmb/franz-go/pkg/kmsg"

// handleSyncGroup delivers the leader's assignments.
func (cn *conn) handleSyncGroup(r *kmsg.SyncGroupRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
	var as map[string][]byte
	if len(r.GroupAssignment) > 0 {
		as = make(map[string][]byte, len(r.GroupAssignment))
		for _, a := range r.GroupAssignment {
			as[a.MemberID] = a.MemberAssignment
		}
	}
	res := cn.s.groups.sync(r.Group, r.MemberID, r.Generation, as, cn.s.done)
	resp.ErrorCode, resp.MemberAssignment = res.code, res.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	resp.ProtocolType, resp.Protocol = r.ProtocolType, r.Protocol
	return resp
}
