package serve

// OffsetDelete, key 47: v0.
//
// Version notes (OffsetDeleteRequest.json):
//   - v0: a group's committed offsets of the named partitions (KIP-496).

import (
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(47, 0, 0, (*conn).handleOffsetDelete) }

// handleOffsetDelete deletes committed offsets (tombstones in
// __consumer_offsets) of topics the group does not consume; a topic the
// server does not have is UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis
// answers it before the coordinator sees the request.
func (cn *conn) handleOffsetDelete(r *kmsg.OffsetDeleteRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
	req := map[string][]int32{}
	unknown := map[offsetstore.TopicPartition]bool{}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if !cn.s.topicExists(t.Topic) {
				unknown[offsetstore.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = true
				continue
			}
			req[t.Topic] = append(req[t.Topic], p.Partition)
		}
	}
	c := cn.s.groups
	out, err := c.call(cn, r.Key(), offsetDeleteResult{code: kerr.CoordinatorNotAvailable.Code}, func(w *waiter) {
		c.deleteOffsets(r.Group, req, w)
	})
	if err != nil {
		return nil, err
	}
	res := out.(offsetDeleteResult)
	if resp.ErrorCode = res.code; res.code != 0 {
		return resp, nil
	}
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			k := offsetstore.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if unknown[k] {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				rp.ErrorCode = res.codes[k]
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
