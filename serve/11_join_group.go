package serve

// JoinGroup, key 11: v0-v9.
//
// Version notes (JoinGroupRequest.json):
//   - v0: the session timeout is also the rebalance timeout.
//   - v1: RebalanceTimeoutMillis; v2: throttle time; v3: as v2.
//   - v4: a new member first gets MEMBER_ID_REQUIRED with its id and joins
//     again with it (KIP-394).
//   - v5: GroupInstanceID, static membership (KIP-345).
//   - v6: flexible.
//   - v7: ProtocolType and Protocol in the response (KIP-559).
//   - v8: Reason (KIP-800).
//   - v9: SkipAssignment in the response (for the KIP-848 coordinator;
//     always false here).

import (
	"bytes"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(11, 0, 9, (*conn).handleJoinGroup) }

// handleJoinGroup joins the classic group protocol. The request is parked
// in the coordinator until the join phase completes (every member joined,
// or the rebalance timeout); a client that hangs up meanwhile releases it.
func (cn *conn) handleJoinGroup(r *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
	jr := joinRequest{group: r.Group, memberID: r.MemberID, instanceID: r.InstanceID,
		session: time.Duration(r.SessionTimeoutMillis) * time.Millisecond, rebalance: time.Duration(r.RebalanceTimeoutMillis) * time.Millisecond,
		protocolType: r.ProtocolType, version: r.Version, clientID: cn.clientID, clientHost: cn.clientHost()}
	if r.Version == 0 {
		jr.rebalance = jr.session
	}
	if r.Version < 5 {
		jr.instanceID = nil
	}
	// The member's protocols go into the group record, which a broker
	// writes only up to message.max.bytes (a larger one fails the append:
	// UNKNOWN_SERVER_ERROR, as the coordinator answers
	// RecordTooLargeException). They are copied: the request's buffer is
	// the connection's.
	size := 0
	for _, p := range r.Protocols {
		size += len(p.Name) + len(p.Metadata)
	}
	if size > int(cn.s.cfg.MaxMessageBytes) {
		resp.ErrorCode, resp.Generation, resp.MemberID = kerr.UnknownServerError.Code, -1, r.MemberID
		return resp, nil
	}
	for _, p := range r.Protocols {
		jr.protocols = append(jr.protocols, protocol{name: p.Name, metadata: bytes.Clone(p.Metadata)})
	}
	c := cn.s.groups
	out, err := c.call(cn, r.Key(), joinResult{code: kerr.CoordinatorNotAvailable.Code, generation: -1, memberID: r.MemberID},
		func(w *waiter) { c.join(jr, w) })
	if err != nil {
		return nil, err
	}
	res := out.(joinResult)
	resp.ErrorCode, resp.Generation, resp.MemberID, resp.LeaderID = res.code, res.generation, res.memberID, res.leader
	resp.SkipAssignment = res.skipAssignment
	if res.code == 0 {
		proto, pt := res.protocol, res.protocolType
		resp.Protocol, resp.ProtocolType = &proto, &pt
		for _, m := range res.members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.id, m.instanceID, m.metadata
			resp.Members = append(resp.Members, rm)
		}
	}
	return resp, nil
}

// clientHost is the member's host as the coordinator records it
// ("/127.0.0.1", InetAddress.toString).
func (cn *conn) clientHost() string {
	h, _, err := net.SplitHostPort(cn.c.RemoteAddr().String())
	if err != nil {
		return ""
	}
	return "/" + h
}
