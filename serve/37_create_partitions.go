package serve

// CreatePartitions, key 37: v0-v3.
//
// Version notes (CreatePartitionsRequest.json):
//   - v0: a topic's new partition count, with an optional assignment of
//     the new partitions, and ValidateOnly (KIP-195); v1: as v0.
//   - v2: flexible; v3: as v2.

import (
	"errors"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(37, 0, 3, (*conn).handleCreatePartitions) }

// handleCreatePartitions grows topics on a writable server: the new
// partition directories carry the topic's id in their partition.metadata.
func (cn *conn) handleCreatePartitions(r *kmsg.CreatePartitionsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Topic]++
	}
	for _, t := range r.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		code, msg := s.checkGrow(t, count[t.Topic] > 1)
		if code == 0 && !r.ValidateOnly {
			if err := s.addPartitions(t.Topic, t.Count); errors.Is(err, errTopicBudget) {
				code, msg = kerr.PolicyViolation.Code, err.Error()
			} else if err != nil {
				code, msg = kerr.KafkaStorageError.Code, err.Error()
			}
		}
		if code != 0 {
			rt.ErrorCode, rt.ErrorMessage = code, &msg
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// checkGrow is ReplicationControlManager.createPartitions' validation.
func (s *Server) checkGrow(t kmsg.CreatePartitionsRequestTopic, duplicate bool) (int16, string) {
	if duplicate {
		return kerr.InvalidRequest.Code, "Duplicate topic name."
	}
	if !s.cfg.Writable {
		return kerr.TopicAuthorizationFailed.Code, "klog serve is read-only (start it with --writable to create partitions)"
	}
	tp := s.topic(t.Topic)
	if tp == nil {
		return kerr.UnknownTopicOrPartition.Code, "The topic '" + t.Topic + "' does not exist."
	}
	have := int32(len(tp.parts))
	switch {
	case t.Count < have:
		return kerr.InvalidPartitions.Code, "The topic " + t.Topic + " currently has " + strconv.Itoa(int(have)) +
			" partition(s); " + strconv.Itoa(int(t.Count)) + " would not be an increase."
	case t.Count == have:
		return kerr.InvalidPartitions.Code, "Topic already has " + strconv.Itoa(int(have)) + " partition(s)."
	case t.Count-have > maxCreatePartitions:
		return kerr.PolicyViolation.Code, "klog serve creates at most " + strconv.Itoa(maxCreatePartitions) + " partitions per request"
	}
	if t.Assignment != nil {
		if int32(len(t.Assignment)) != t.Count-have {
			return kerr.InvalidReplicaAssignment.Code, "Attempted to add " + strconv.Itoa(int(t.Count-have)) +
				" additional partition(s), but only " + strconv.Itoa(len(t.Assignment)) + " assignment(s) were specified."
		}
		for _, a := range t.Assignment {
			if len(a.Replicas) != 1 {
				return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes a partition with " +
					strconv.Itoa(len(a.Replicas)) + " replica(s), but the topic has a replication factor of 1."
			}
			if a.Replicas[0] != s.cfg.NodeID {
				return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker " +
					strconv.Itoa(int(a.Replicas[0])) + ", but no broker with that ID is registered."
			}
		}
	}
	return 0, ""
}
