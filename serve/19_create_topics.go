package serve

// CreateTopics, key 19: v0-v7.
//
// Version notes (CreateTopicsRequest.json):
//   - v0: topics with partitions, replication factor or a manual
//     assignment, and configs.
//   - v1: ValidateOnly, and each topic's error message.
//   - v2: throttle time; v3: as v2; v4: -1 partitions or replication
//     factor take the broker's defaults (KIP-464).
//   - v5: flexible; the answer carries the topic's partitions,
//     replication factor and configs (KIP-525).
//   - v6: as v5; v7: the new topic's id (KIP-516).

import (
	"errors"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(19, 0, 7, (*conn).handleCreateTopics) }

// handleCreateTopics creates topics on a writable server: partition
// directories 0..n-1 with partition.metadata, the configs given kept as
// the topic's. Checks are ReplicationControlManager's: one broker, so a
// replication factor above 1 is INVALID_REPLICATION_FACTOR.
func (cn *conn) handleCreateTopics(r *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Topic]++
	}
	for _, t := range r.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		fail := func(code int16, msg string) {
			rt.ErrorCode, rt.ErrorMessage = code, &msg
		}
		n, rf := t.NumPartitions, t.ReplicationFactor
		switch {
		case count[t.Topic] > 1:
			fail(kerr.InvalidRequest.Code, "Duplicate topic name.")
		case !s.cfg.Writable:
			fail(kerr.TopicAuthorizationFailed.Code, "klog serve is read-only (start it with --writable to create topics)")
		default:
			code, msg := s.checkCreate(t, r.Version)
			if code != 0 {
				fail(code, msg)
				break
			}
			if n == -1 {
				n = int32(len(t.ReplicaAssignment))
				if n == 0 {
					n = 1 // num.partitions
				}
			}
			if rf == -1 {
				rf = 1 // default.replication.factor
			}
			values := map[string]*string{}
			for _, c := range t.Configs {
				values[c.Name] = c.Value
			}
			if !r.ValidateOnly {
				if code, msg := s.createWithConfigs(t.Topic, n, values, &rt.TopicID); code != 0 {
					fail(code, msg)
					break
				}
			}
			rt.NumPartitions, rt.ReplicationFactor = n, rf
			for _, d := range topicConfigs {
				v, src := s.topicConfig(t.Topic, d.name)
				if cv, ok := values[d.name]; ok && r.ValidateOnly && cv != nil {
					v, src = *cv, sourceDynamicTopic
				}
				c := kmsg.NewCreateTopicsResponseTopicConfig()
				c.Name, c.Value, c.Source = d.name, &v, src
				rt.Configs = append(rt.Configs, c)
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// createWithConfigs creates the topic and keeps its configs.
func (s *Server) createWithConfigs(name string, n int32, values map[string]*string, id *[16]byte) (int16, string) {
	tp, err := s.createTopicParts(name, n)
	if errors.Is(err, errTopicExists) {
		return kerr.TopicAlreadyExists.Code, "Topic '" + name + "' already exists."
	}
	if errors.Is(err, errTopicBudget) {
		return kerr.PolicyViolation.Code, err.Error()
	}
	if err != nil {
		return kerr.KafkaStorageError.Code, err.Error()
	}
	*id = tp.id
	if len(values) > 0 {
		if err := s.configs.set(resourceTopic, name, values); err != nil {
			return kerr.KafkaStorageError.Code, "the topic's configs were not kept: " + err.Error()
		}
	}
	return 0, ""
}

// checkCreate is the validation of one topic before it is created.
func (s *Server) checkCreate(t kmsg.CreateTopicsRequestTopic, version int16) (int16, string) {
	if !validTopicName(t.Topic) {
		return kerr.InvalidTopicException.Code, "Topic name " + strconv.Quote(t.Topic) +
			" is illegal: 1 to 249 of ASCII alphanumerics, '.', '_' and '-', not '.' or '..'"
	}
	if internalTopic(t.Topic) || kafkaInternalTopics[t.Topic] {
		return kerr.PolicyViolation.Code, "klog serve keeps " + t.Topic + " itself"
	}
	if s.topic(t.Topic) != nil {
		return kerr.TopicAlreadyExists.Code, "Topic '" + t.Topic + "' already exists."
	}
	s.mu.Lock()
	err := s.checkNewTopic(t.Topic)
	s.mu.Unlock()
	if err != nil {
		return kerr.InvalidTopicException.Code, err.Error()
	}
	if len(t.ReplicaAssignment) > 0 {
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return kerr.InvalidRequest.Code, "A manual partition assignment was specified, but numPartitions or replicationFactor was not set to -1."
		}
		seen := map[int32]bool{}
		for _, a := range t.ReplicaAssignment {
			if seen[a.Partition] {
				return kerr.InvalidReplicaAssignment.Code, "Partition " + strconv.Itoa(int(a.Partition)) + " was specified twice."
			}
			seen[a.Partition] = true
			if len(a.Replicas) == 0 {
				return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes an empty replica list."
			}
			for _, b := range a.Replicas {
				if b != s.cfg.NodeID {
					return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes broker " +
						strconv.Itoa(int(b)) + ", but no broker with that ID is registered."
				}
			}
			if len(a.Replicas) > 1 {
				return kerr.InvalidReplicaAssignment.Code, "The manual partition assignment includes the broker " +
					strconv.Itoa(int(s.cfg.NodeID)) + " more than once."
			}
		}
		for i := range t.ReplicaAssignment {
			if !seen[int32(i)] {
				return kerr.InvalidReplicaAssignment.Code, "Partitions should be a consecutive 0-based integer sequence, but " +
					"partition " + strconv.Itoa(i) + " is missing."
			}
		}
	} else {
		if t.NumPartitions == 0 || t.NumPartitions < -1 || (t.NumPartitions == -1 && version < 4) {
			return kerr.InvalidPartitions.Code, "Number of partitions was set to an invalid non-positive value."
		}
		if t.ReplicationFactor == 0 || t.ReplicationFactor < -1 || (t.ReplicationFactor == -1 && version < 4) {
			return kerr.InvalidReplicationFactor.Code, "Replication factor must be larger than 0, or -1 to use the default value."
		}
		if t.ReplicationFactor > 1 {
			return kerr.InvalidReplicationFactor.Code, "Unable to replicate the partition " + strconv.Itoa(int(t.ReplicationFactor)) +
				" time(s): The target replication factor of " + strconv.Itoa(int(t.ReplicationFactor)) +
				" cannot be reached because only 1 broker(s) are registered."
		}
		if t.NumPartitions > maxCreatePartitions {
			return kerr.PolicyViolation.Code, "klog serve creates at most " + strconv.Itoa(maxCreatePartitions) + " partitions per topic"
		}
	}
	seen := map[string]bool{}
	for _, c := range t.Configs {
		if seen[c.Name] {
			return kerr.InvalidRequest.Code, "Duplicate config name " + c.Name
		}
		seen[c.Name] = true
		d := topicConfigDef(c.Name)
		if d == nil {
			return kerr.InvalidConfig.Code, "Unknown topic config name: " + c.Name
		}
		if c.Value == nil {
			return kerr.InvalidConfig.Code, "Null value not supported for topic configs: " + c.Name
		}
		if err := validateConfigValue(*d, *c.Value); err != nil {
			return kerr.InvalidConfig.Code, err.Error()
		}
	}
	return 0, ""
}

// maxCreatePartitions bounds the partitions one request may make (each is
// a directory and open files): what a client can make the server hold.
const maxCreatePartitions = 1000
