package serve

// OffsetFetch, key 9: v0-v9.
//
// Version notes (OffsetFetchRequest.json):
//   - v0: offsets from ZooKeeper (answered from __consumer_offsets here).
//   - v1: offsets from __consumer_offsets.
//   - v2: a null topic list asks for every committed partition, and a
//     top-level error code; v3-v5: as v2 (v3 adds throttle time, v5 the
//     committed leader epoch).
//   - v6: flexible; v7: RequireStable (wait out pending transactional
//     commits).
//   - v8: several groups in one request.
//   - v9: MemberID and MemberEpoch for the consumer protocol (KIP-848).
//   - v10 (topic ids) is not served.

import (
	"sort"

	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(9, 0, 9, (*conn).handleOffsetFetch) }

// handleOffsetFetch returns committed offsets: -1 for a partition without
// one; every committed partition when no topics are named (v2+).
func (cn *conn) handleOffsetFetch(r *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.Version < 8 {
		topics := make([]reqTopic, 0, len(r.Topics))
		for _, t := range r.Topics {
			topics = append(topics, reqTopic{t.Topic, t.Partitions})
		}
		if r.Topics == nil && r.Version < 2 {
			topics = []reqTopic{}
		}
		for _, t := range cn.offsetsFor(r.Group, topics, r.Topics == nil, r.Version >= 7 && r.RequireStable) {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.topic
			for _, p := range t.parts {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p.part, p.c.Offset, p.c.LeaderEpoch, p.code
				md := p.c.Metadata
				rp.Metadata = &md
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for _, g := range r.Groups {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group = g.Group
		if r.Version >= 9 {
			// A consumer group's member fetches at its member epoch
			// (ConsumerGroup.validateOffsetFetch).
			if code := cn.s.groups.validateConsumerFetch(g.Group, g.MemberID, g.MemberEpoch); code != 0 {
				rg.ErrorCode = code
				resp.Groups = append(resp.Groups, rg)
				continue
			}
		}
		topics := make([]reqTopic, 0, len(g.Topics))
		for _, t := range g.Topics {
			topics = append(topics, reqTopic{t.Topic, t.Partitions})
		}
		for _, t := range cn.offsetsFor(g.Group, topics, g.Topics == nil, r.RequireStable) {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic = t.topic
			for _, p := range t.parts {
				rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p.part, p.c.Offset, p.c.LeaderEpoch, p.code
				md := p.c.Metadata
				rp.Metadata = &md
				rt.Partitions = append(rt.Partitions, rp)
			}
			rg.Topics = append(rg.Topics, rt)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

type reqTopic struct {
	topic string
	parts []int32
}

type partOffset struct {
	part int32
	c    offsetstore.Committed
	code int16
}

type topicOffsets struct {
	topic string
	parts []partOffset
}

// offsetsFor answers the named partitions, or all committed ones. With
// stable (RequireStable, KIP-447), a partition an open transaction holds
// an offset for is UNSTABLE_OFFSET_COMMIT with no offset, as Kafka's
// OffsetMetadataManager answers it, so that a new member waits out the
// transaction.
func (cn *conn) offsetsFor(group string, topics []reqTopic, all, stable bool) []topicOffsets {
	got, pending := cn.s.groups.fetchOffsetsStable(group)
	none := offsetstore.Committed{Offset: -1, LeaderEpoch: -1}
	var out []topicOffsets
	if all {
		by := map[string][]partOffset{}
		for k, c := range got {
			by[k.Topic] = append(by[k.Topic], partOffset{part: k.Partition, c: c})
		}
		for t, ps := range by {
			sort.Slice(ps, func(i, j int) bool { return ps[i].part < ps[j].part })
			out = append(out, topicOffsets{t, ps})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].topic < out[j].topic })
	} else {
		for _, t := range topics {
			to := topicOffsets{topic: t.topic}
			for _, p := range t.parts {
				c, ok := got[offsetstore.TopicPartition{Topic: t.topic, Partition: p}]
				if !ok {
					c = none
				}
				to.parts = append(to.parts, partOffset{part: p, c: c})
			}
			out = append(out, to)
		}
	}
	if stable {
		for i := range out {
			for j, p := range out[i].parts {
				if pending[offsetstore.TopicPartition{Topic: out[i].topic, Partition: p.part}] {
					out[i].parts[j] = partOffset{part: p.part, c: none, code: kerr.UnstableOffsetCommit.Code}
				}
			}
		}
	}
	return out
}
