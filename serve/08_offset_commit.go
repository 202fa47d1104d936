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
	var commits []offsetstore.Commit
	codes := map[tp]int16{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			k := tp{Topic: t.Topic, Partition: p.Partition}
			switch {
			case !cn.s.partitionExists(t.Topic, p.Partition):
				codes[k] = kerr.UnknownTopicOrPartition.Code
			case p.Metadata != nil && len(*p.Metadata) > offsetstore.MaxMetadataBytes:
				codes[k] = kerr.OffsetMetadataTooLarge.Code
			default:
				c := committed{Offset: p.Offset, LeaderEpoch: -1}
				if r.Version >= 6 {
					c.LeaderEpoch = p.LeaderEpoch
				}
				if p.Metadata != nil {
					c.Metadata = *p.Metadata
				}
				commits = append(commits, offsetstore.Commit{TopicPartition: k, Committed: c})
			}
		}
	}
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
			if c, ok := codes[tp{Topic: t.Topic, Partition: p.Partition}]; ok {
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
