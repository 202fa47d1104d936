package serve

// AlterPartitionReassignments, key 45: v0.
//
// Version notes (AlterPartitionReassignmentsRequest.json):
//   - v0: each partition's target replicas, or null to cancel (KIP-455).
//   - v1 (AllowReplicationFactorChange, KIP-860) is not served.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(45, 0, 0, (*conn).handleAlterPartitionReassignments) }

// handleAlterPartitionReassignments answers as the KRaft controller's
// alterPartitionReassignment does (apache/kafka 1eb7644) for a cluster of
// this one broker: a topic or partition it does not have is
// UNKNOWN_TOPIC_OR_PARTITION; a cancel (null replicas) is
// NO_REASSIGNMENT_IN_PROGRESS, none ever being in progress; the target is
// checked as a manual assignment is (validateManualPartitionAssignment:
// no broker but this one, none twice, not empty: INVALID_REPLICA_ASSIGNMENT),
// and the one target that passes, this broker, is the current assignment,
// so nothing changes and the answer is NONE. A replay (a record, not a
// controller) refuses every reassignment with INVALID_REPLICA_ASSIGNMENT.
func (cn *conn) handleAlterPartitionReassignments(r *kmsg.AlterPartitionAssignmentsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	s := cn.s
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition = p.Partition
			code, msg := s.reassign(t.Topic, p.Partition, p.Replicas)
			rp.ErrorCode = code
			if msg != "" {
				rp.ErrorMessage = &msg
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// reassign is one partition's reassignment: its code and message.
func (s *Server) reassign(topic string, n int32, replicas []int32) (int16, string) {
	leader, _, ok := s.partitionLeader(topic, n)
	switch {
	case !ok:
		return kerr.UnknownTopicOrPartition.Code, "Unable to find partition " + topic + ":" + strconv.Itoa(int(n)) + "."
	case replicas == nil:
		return kerr.NoReassignmentInProgress.Code, kerr.NoReassignmentInProgress.Message
	case s.cfg.replay != nil:
		return kerr.InvalidReplicaAssignment.Code, "A replayed cluster cannot reassign partitions."
	case len(replicas) == 0:
		return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."
	}
	for _, b := range replicas {
		if b != s.cfg.NodeID {
			return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker " +
				strconv.Itoa(int(b)) + ", but no broker with that ID is registered."
		}
	}
	if len(replicas) > 1 {
		return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes the broker " +
			strconv.Itoa(int(s.cfg.NodeID)) + " more than once."
	}
	if leader != s.cfg.NodeID {
		// A partition of the topic another broker holds: moving it here
		// would need its data.
		return kerr.InvalidReplicaAssignment.Code, "Partition " + topic + "-" + strconv.Itoa(int(n)) + " is not on broker " +
			strconv.Itoa(int(s.cfg.NodeID)) + " and cannot be moved to it."
	}
	return 0, ""
}
