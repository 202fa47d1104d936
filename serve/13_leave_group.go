package serve

// LeaveGroup, key 13: v0-v5.
//
// Version notes (LeaveGroupRequest.json):
//   - v0: one member; v1: throttle time; v2: as v1.
//   - v3: several members, each by member id or GroupInstanceID (KIP-345),
//     answered one by one.
//   - v4: flexible.
//   - v5: each member's Reason (KIP-800).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(13, 0, 5, (*conn).handleLeaveGroup) }

// handleLeaveGroup removes one member (v0-v2) or several, by member id or
// group instance id (v3+, KIP-345), and rebalances the rest.
func (cn *conn) handleLeaveGroup(r *kmsg.LeaveGroupRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.LeaveGroupResponse)
	ms := []leaveMember{{id: r.MemberID}}
	if r.Version >= 3 {
		ms = ms[:0]
		for _, m := range r.Members {
			ms = append(ms, leaveMember{id: m.MemberID, instanceID: m.InstanceID})
		}
	}
	type left struct {
		code  int16
		codes []int16
	}
	c := cn.s.groups
	stopped := left{code: kerr.CoordinatorNotAvailable.Code, codes: make([]int16, len(ms))}
	out, err := c.call(cn, r.Key(), stopped, func(w *waiter) {
		code, codes := c.leave(r.Group, ms)
		w.answer(left{code, codes})
	})
	if err != nil {
		return nil, err
	}
	res := out.(left)
	if r.Version < 3 {
		resp.ErrorCode = res.code
		if resp.ErrorCode == 0 {
			resp.ErrorCode = res.codes[0]
		}
		return resp, nil
	}
	resp.ErrorCode = res.code
	for i, m := range r.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, res.codes[i]
		resp.Members = append(resp.Members, rm)
	}
	return resp, nil
}
