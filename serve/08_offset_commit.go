package serve

// OffsetCommit, key 8: v0-v9.
//
// Version notes (OffsetCommitRequest.json):
//   - v0: group and offsets only (a simple commit, no member checks).
//   - v1: generation and member id, and a per-partition commit timestamp.
//   - v2: a retention time instead of the timestamp; v3, v4: as v2.
//   - v5: the retention time goes (offsets.retention.minutes decides).
//   - v6: each partition's leader epoch.
//   - v7: GroupInstanceID (KIP-345).
//   - v8: flexible; v9: usable with the consumer protocol (KIP-848).
//   - v10 (topic ids) is not served.

import (
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(8, 0, 9, (*conn).handleOffsetCommit) }

// handleOffsetCommit stores offsets in __consumer_offsets-N (Kafka's
// record format, one batch per request) after the group's member and
// generation checks; it is answered once the batch is written.
func (cn *conn) handleOffsetCommit(r *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	parts := make([]commitPart, 0, len(r.Topics))
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			cp := commitPart{topic: t.Topic, partition: p.Partition, offset: p.Offset, leaderEpoch: -1, metadata: p.Metadata}
			if r.Version >= 6 {
				cp.leaderEpoch = p.LeaderEpoch
			}
			parts = append(parts, cp)
		}
	}
	commits, codes := cn.s.checkCommits(parts)
	gen, id, inst := r.Generation, r.MemberID, r.InstanceID
	if r.Version == 0 {
		gen, id = -1, ""
	}
	if r.Version < 7 {
		inst = nil
	}
	c := cn.s.groups
	out, err := c.call(cn, r.Key(), kerr.CoordinatorNotAvailable.Code, func(w *waiter) {
		c.commit(r.Version, r.Group, id, inst, gen, commits, w)
	})
	if err != nil {
		return nil, err
	}
	code := out.(int16)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if c, ok := codes[offsetstore.TopicPartition{Topic: t.Topic, Partition: p.Partition}]; ok {
				rp.ErrorCode = c
			} else {
				rp.ErrorCode = code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// commitPart is one partition of an OffsetCommit or a TxnOffsetCommit, as
// both are checked (checkCommits).
type commitPart struct {
	topic       string
	partition   int32
	offset      int64
	leaderEpoch int32 // -1 before the version that carries it
	metadata    *string
}

// checkCommits is the per-partition checks OffsetCommit and
// TxnOffsetCommit share (GroupCoordinator's handleCommitOffsets and
// handleTxnCommitOffsets): a partition the cluster does not have is
// UNKNOWN_TOPIC_OR_PARTITION (in a replay the cluster's view decides: the
// coordinator need not hold a replica of what its groups commit),
// metadata longer than offset.metadata.max.bytes OFFSET_METADATA_TOO_LARGE.
// The rest are the commits to write.
func (s *Server) checkCommits(parts []commitPart) ([]offsetstore.Commit, map[offsetstore.TopicPartition]int16) {
	var commits []offsetstore.Commit
	codes := map[offsetstore.TopicPartition]int16{}
	for _, p := range parts {
		k := offsetstore.TopicPartition{Topic: p.topic, Partition: p.partition}
		switch {
		case !s.partitionExists(p.topic, p.partition):
			codes[k] = kerr.UnknownTopicOrPartition.Code
		case p.metadata != nil && len(*p.metadata) > offsetstore.MaxMetadataBytes:
			codes[k] = kerr.OffsetMetadataTooLarge.Code
		default:
			c := offsetstore.Committed{Offset: p.offset, LeaderEpoch: p.leaderEpoch}
			if p.metadata != nil {
				c.Metadata = *p.metadata
			}
			commits = append(commits, offsetstore.Commit{TopicPartition: k, Committed: c})
		}
	}
	return commits, codes
}
