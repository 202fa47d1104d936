package serve

// ElectLeaders, key 43: v0-v2.
//
// Version notes (ElectLeadersRequest.json):
//   - v0: preferred leader elections (KIP-183's successor, KIP-460).
//   - v1: ElectionType (0 preferred, 1 unclean) and a top-level error.
//   - v2: flexible.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(43, 0, 2, (*conn).handleElectLeaders) }

// handleElectLeaders answers as the KRaft controller's
// ReplicationControlManager.electLeaders does (apache/kafka 1eb7644),
// which changes nothing here: every partition's leader is its preferred
// (first) replica, this broker, so a preferred election is
// ELECTION_NOT_NEEDED, and so is an unclean one of a partition that has a
// leader. A partition of the topic this broker does not hold (a broker's
// share of a topic) has no leader: PREFERRED_LEADER_NOT_AVAILABLE or
// ELIGIBLE_LEADERS_NOT_AVAILABLE, its only replica being elsewhere. In a
// replay the cluster's view decides (leader, and the first of its
// replicas). A topic or partition the cluster does not have is
// UNKNOWN_TOPIC_OR_PARTITION; null topics ask for every partition, and then
// those whose election is not needed are left out. An election type other
// than 0 and 1 is INVALID_REQUEST.
func (cn *conn) handleElectLeaders(r *kmsg.ElectLeadersRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	unclean := r.Version >= 1 && r.ElectionType == 1
	if r.Version >= 1 && r.ElectionType != 0 && r.ElectionType != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	elect := func(topic string, n int32) (int16, string) {
		leader, preferred, ok := cn.s.partitionLeader(topic, n)
		switch {
		case !ok:
			return kerr.UnknownTopicOrPartition.Code, "No such partition as " + topic + "-" + strconv.Itoa(int(n))
		case !unclean && leader >= 0 && leader == preferred, unclean && leader >= 0:
			return kerr.ElectionNotNeeded.Code, ""
		case unclean:
			return kerr.EligibleLeadersNotAvailable.Code, ""
		}
		return kerr.PreferredLeaderNotAvailable.Code, ""
	}
	result := func(rt *kmsg.ElectLeadersResponseTopic, n int32, code int16, msg string) {
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode = n, code
		if msg != "" {
			rp.ErrorMessage = &msg
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	if r.Topics == nil {
		for _, name := range cn.s.clusterTopicNames() {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = name
			for n := int32(0); n < cn.s.clusterPartitions(name); n++ {
				if code, msg := elect(name, n); code != kerr.ElectionNotNeeded.Code {
					result(&rt, n, code, msg)
				}
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for _, t := range r.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, n := range t.Partitions {
			code, msg := elect(t.Topic, n)
			result(&rt, n, code, msg)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// partitionLeader is a partition's leader and preferred (first) replica as
// the cluster has them: a replay's view, else this broker, leader and only
// replica of each partition it holds, and -1 for one it does not hold (a
// broker's share of a topic). ok is false when the cluster has no such
// partition.
func (s *Server) partitionLeader(topic string, n int32) (leader, preferred int32, ok bool) {
	if rb := s.cfg.replay; rb != nil {
		p := rb.view.partition(topic, n)
		if p == nil {
			return 0, 0, false
		}
		preferred = -1
		if len(p.Replicas) > 0 {
			preferred = p.Replicas[0]
		}
		return p.Leader, preferred, true
	}
	t := s.topic(topic)
	if t == nil || n < 0 || int(n) >= len(t.parts) {
		return 0, 0, false
	}
	if t.parts[n] == nil {
		return -1, -1, true
	}
	return s.cfg.NodeID, s.cfg.NodeID, true
}

// clusterTopicNames is the cluster's topics, sorted (a replay's view, else
// this log dir's).
func (s *Server) clusterTopicNames() []string {
	if rb := s.cfg.replay; rb != nil {
		return rb.view.names
	}
	return s.topicNames()
}

// clusterPartitions is how many partitions the cluster's topic has.
func (s *Server) clusterPartitions(topic string) int32 {
	if rb := s.cfg.replay; rb != nil {
		if t := rb.view.topics[topic]; t != nil {
			return int32(len(t.Partitions))
		}
		return 0
	}
	if t := s.topic(topic); t != nil {
		return int32(len(t.parts))
	}
	return 0
}
