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

import (
	"bytes"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(14, 0, 5, (*conn).handleSyncGroup) }

// handleSyncGroup delivers the leader's assignments. A member's request is
// parked in the coordinator until the leader's assignments are stored.
func (cn *conn) handleSyncGroup(r *kmsg.SyncGroupRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.SyncGroupResponse)
	// The assignments go into the group record: at most message.max.bytes
	// of them (see handleJoinGroup), copied out of the request's buffer.
	size := 0
	for _, a := range r.GroupAssignment {
		size += len(a.MemberID) + len(a.MemberAssignment)
	}
	if size > int(cn.s.cfg.MaxMessageBytes) {
		resp.ErrorCode = kerr.UnknownServerError.Code
		resp.MemberAssignment = []byte{}
		return resp, nil
	}
	as := make(map[string][]byte, len(r.GroupAssignment))
	for _, a := range r.GroupAssignment {
		as[a.MemberID] = bytes.Clone(a.MemberAssignment)
	}
	inst, ptype, proto := r.InstanceID, r.ProtocolType, r.Protocol
	if r.Version < 3 {
		inst = nil
	}
	if r.Version < 5 {
		ptype, proto = nil, nil
	}
	c := cn.s.groups
	out, err := c.call(cn, r.Key(), syncResult{code: kerr.CoordinatorNotAvailable.Code}, func(w *waiter) {
		c.syncGroup(r.Group, r.MemberID, inst, r.Generation, ptype, proto, as, w)
	})
	if err != nil {
		return nil, err
	}
	res := out.(syncResult)
	resp.ErrorCode, resp.MemberAssignment = res.code, res.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	if res.code == 0 {
		pt, p := res.protocolType, res.protocol
		resp.ProtocolType, resp.Protocol = &pt, &p
	}
	return resp, nil
}
