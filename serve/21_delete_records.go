package serve

// DeleteRecords, key 21: v0-v2.
//
// Version notes (DeleteRecordsRequest.json):
//   - v0: each partition's new log start offset (KIP-107), -1 for the
//     high watermark; v1: as v0.
//   - v2: flexible.

import (
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(21, 0, 2, (*conn).handleDeleteRecords) }

// handleDeleteRecords advances log start offsets on a writable server as
// UnifiedLog.maybeIncrementLogStartOffset does, recorded in the log dir's
// log-start-offset-checkpoint as the broker's checkpoint writes it; an
// offset above the high watermark is OFFSET_OUT_OF_RANGE, a topic whose
// cleanup.policy has no delete POLICY_VIOLATION.
func (cn *conn) handleDeleteRecords(r *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, q := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark = q.Partition, -1
			p := s.lookup(t.Topic, q.Partition)
			switch {
			case p == nil:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case !s.cfg.Writable:
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			default:
				rp.ErrorCode, rp.LowWatermark = s.deleteRecords(p, q.Offset)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// deleteRecords moves p's log start offset to offset (-1: the high
// watermark) and returns the new log start.
func (s *Server) deleteRecords(p *part, offset int64) (int16, int64) {
	if policy, _ := s.topicConfig(p.topic, "cleanup.policy"); !listHas(policy, "delete") {
		return kerr.PolicyViolation.Code, -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.app == nil {
		return kerr.NotLeaderForPartition.Code, -1
	}
	hw := p.log.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return kerr.OffsetOutOfRange.Code, -1
	}
	start := p.log.LogStartOffset()
	if offset <= start {
		return 0, start
	}
	err := partition.UpdateCheckpointOffsets(s.cfg.LogDir, partition.LogStartCheckpoint,
		[]format.OffsetEntry{{Topic: p.topic, Partition: p.index, Offset: offset}}, partition.WriteOptions{})
	if err != nil {
		return kerr.KafkaStorageError.Code, -1
	}
	if err := p.log.Reload(); err != nil {
		return kerr.KafkaStorageError.Code, -1
	}
	p.log.SetHighWatermarkToEnd()
	return 0, p.log.LogStartOffset()
}

// listHas reports whether a LIST config holds v.
func listHas(list, v string) bool {
	for _, it := range splitList(list) {
		if it == v {
			return true
		}
	}
	return false
}
