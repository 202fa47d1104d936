package serve

// Metadata, key 3: v0-v13.
//
// Version notes (MetadataRequest.json):
//   - v0: an empty topic list means every topic; v1+: null means every
//     topic, empty means none; v1 adds the controller and rack; v2 the
//     cluster id; v3 throttle time; v4 AllowAutoTopicCreation.
//   - v5: offline replicas; v7: each partition's leader epoch.
//   - v8: authorized operations may be asked for (answered as a broker
//     without an authorizer answers: every operation of the resource).
//   - v9: flexible; v10: topic ids in the answer; v11 drops the cluster's
//     authorized operations (KIP-700); v12: topics may be asked by id.
//   - v13: a top-level error code (KIP-1102; none here).

import (
	"errors"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(3, 0, 13, (*conn).handleMetadata) }

// handleMetadata describes this one broker (node cfg.NodeID, the leader
// and only replica of every partition) and the requested topics, or all
// of them. A writable server creates a missing topic with one partition
// when the client allows it (auto.create.topics.enable).
func (cn *conn) handleMetadata(r *kmsg.MetadataRequest) (kmsg.Response, error) {
	s := cn.s
	if s.cfg.replay != nil {
		return cn.replayMetadata(r)
	}
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	host, port := s.advertised()
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = s.cfg.NodeID, host, port
	resp.Brokers = append(resp.Brokers, b)
	cluster := s.clusterID
	resp.ClusterID = &cluster
	resp.ControllerID = s.cfg.NodeID
	if r.Version >= 8 && r.Version <= 10 && r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterOps
	}
	var names []string
	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	if all {
		names = s.topicNames()
	} else {
		for _, t := range r.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
				continue
			}
			// A topic asked for by id (v10+).
			name := ""
			for _, n := range s.topicNames() {
				if tp := s.topic(n); tp != nil && tp.id == t.TopicID {
					name = n
				}
			}
			if name == "" {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID = t.TopicID
				mt.ErrorCode = kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			names = append(names, name)
		}
	}
	for _, name := range names {
		n := name
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &n
		t := s.topic(name)
		if t == nil && !all && s.cfg.Writable && (r.Version < 4 || r.AllowAutoTopicCreation) && !cn.mayWrite() {
			// No CREATE (KafkaApis.getTopicMetadata's
			// unauthorizedForCreateTopics).
			mt.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		if t == nil && !all && s.cfg.Writable && (r.Version < 4 || r.AllowAutoTopicCreation) {
			if _, err := s.createTopic(name); err == nil {
				// Created, and answered as a KRaft broker answers the
				// Metadata that asked for it: UNKNOWN_TOPIC_OR_PARTITION
				// and no partitions, the controller's creation being
				// under way (AutoTopicCreationManager's
				// sendCreateTopicRequest); the next Metadata has it.
				mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			} else if errors.Is(err, errTopicBudget) {
				mt.ErrorCode = kerr.PolicyViolation.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			} else if errors.Is(err, errInvalidTopic) {
				mt.ErrorCode = kerr.InvalidTopicException.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			} else {
				// The disk refused (the directory made for it is gone
				// again, openNewAppender); a client retries.
				mt.ErrorCode = kerr.KafkaStorageError.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
		}
		if t == nil {
			mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		mt.TopicID = t.id
		if r.IncludeTopicAuthorizedOperations && r.Version >= 8 {
			mt.AuthorizedOperations = topicOps
		}
		for i, p := range t.parts {
			mp := kmsg.NewMetadataResponseTopicPartition()
			if p == nil {
				// Another broker's partition: no leader here.
				mp.Partition, mp.Leader, mp.ErrorCode = int32(i), -1, kerr.LeaderNotAvailable.Code
				mp.Replicas, mp.ISR = []int32{}, []int32{}
				mt.Partitions = append(mt.Partitions, mp)
				continue
			}
			mp.Partition = p.index
			mp.Leader = s.cfg.NodeID
			mp.LeaderEpoch = p.leaderEpoch()
			mp.Replicas = []int32{s.cfg.NodeID}
			mp.ISR = []int32{s.cfg.NodeID}
			mt.Partitions = append(mt.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return resp, nil
}
