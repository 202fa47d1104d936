package serve

import (
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleJoinGroup joins the classic group protocol; it parks until the
// rebalance completes (every member rejoined, or the rebalance timeout).
func (cn *conn) handleJoinGroup(r *kmsg.JoinGroupRequest) kmsg.Response {
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
	return resp
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
