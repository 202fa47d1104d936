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
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(11, 0, 9, (*conn).handleJoinGroup) }

// handleJoinGroup joins the classic group protocol; it parks until the
// rebalance completes (every member rejoined, or the rebalance timeout).
func (cn *conn) handleJoinGroup(r *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
	jr := joinRequest{group: r.Group, memberID: r.MemberID, instanceID: r.InstanceID,
		session: time.Duration(r.SessionTimeoutMillis) * time.Millisecond, rebalance: time.Duration(r.RebalanceTimeoutMillis) * time.Millisecond,
		protocolType: r.ProtocolType, version: r.Version, clientID: cn.clientID, clientHost: cn.clientHost()}
	if r.Version == 0 {
		jr.rebalance = jr.session
	}
	for _, p := range r.Protocols {
		jr.protocols = append(jr.protocols, protocol{name: p.Name, metadata: p.Metadata})
	}
	res := cn.s.groups.join(jr, cn.s.done)
	resp.ErrorCode, resp.Generation, resp.MemberID, resp.LeaderID = res.code, res.generation, res.memberID, res.leader
	if res.code == 0 {
		proto := res.protocol
		resp.Protocol = &proto
		pt := r.ProtocolType
		resp.ProtocolType = &pt
		for i, m := range res.members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.id, m.instanceID, res.metas[i]
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
