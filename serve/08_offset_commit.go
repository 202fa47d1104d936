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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(8, 0, 9, (*conn).handleOffsetCommit) }

// handleOffsetCommit stores offsets in __consumer_offsets-N (Kafka's
// record format) after the group's member and generation checks.
func (cn *conn) handleOffsetCommit(r *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
	commits := map[tp]committed{}
	codes := map[tp]int16{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			k := tp{t.Topic, p.Partition}
			switch {
			case cn.s.lookup(t.Topic, p.Partition) == nil:
				codes[k] = kerr.UnknownTopicOrPartition.Code
			case p.Metadata != nil && len(*p.Metadata) > maxOffsetMetadata:
				codes[k] = kerr.OffsetMetadataTooLarge.Code
			default:
				c := committed{offset: p.Offset, leaderEpoch: -1}
				if r.Version >= 6 {
					c.leaderEpoch = p.LeaderEpoch
				}
				if p.Metadata != nil {
					c.metadata = *p.Metadata
				}
				commits[k] = c
			}
		}
	}
	gen, id := r.Generation, r.MemberID
	if r.Version == 0 {
		gen, id = -1, ""
	}
	code := cn.s.groups.commit(r.Group, id, gen, commits)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if c, ok := codes[tp{t.Topic, p.Partition}]; ok {
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
