package serve

// SyncGroup, key 14: v0-v5.
//
// Version notes (SyncGroupRequest.json):
//   - v0: the leader sends every member's assignment; v1: throttle time;
//     v2: as v1.
//   - v3: GroupInstanceID (KIP-345).
//   - v4: flexible.
//   - v5: ProtocolType and ProtocolName, checked against the group's
//     (KIP-559).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(14, 0, 5, (*conn).handleSyncGroup) }

// handleSyncGroup delivers the leader's assignments.
func (cn *conn) handleSyncGroup(r *kmsg.SyncGroupRequest) (kmsg.Response, error) {
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
	return resp, nil
}
