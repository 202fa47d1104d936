package serve

// OffsetForLeaderEpoch, key 23: v0-v4.
//
// Version notes (OffsetForLeaderEpochRequest.json):
//   - v0: each partition's end offset of an epoch; v1: the epoch found
//     in the answer (KIP-279).
//   - v2: CurrentLeaderEpoch, checked as Fetch checks it (KIP-320), and
//     throttle time.
//   - v3: ReplicaID (-1 consumers, -2 debugging tools; a follower's id).
//   - v4: flexible.

import (
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(23, 0, 4, (*conn).handleOffsetForLeaderEpoch) }

// handleOffsetForLeaderEpoch answers from each partition's leader-epoch
// cache (LeaderEpochFileCache.endOffsetFor): the largest epoch not above
// the one asked and the offset where it ends, the log end offset for the
// latest epoch.
func (cn *conn) handleOffsetForLeaderEpoch(r *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, q := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.LeaderEpoch, rp.EndOffset = q.Partition, partition.UndefinedEpoch, partition.UndefinedEpochOffset
			p := cn.s.lookup(t.Topic, q.Partition)
			// The leader answers (Partition.lastOffsetForLeaderEpoch
			// with fetchOnlyFromLeader).
			if code := cn.s.placement(t.Topic, q.Partition, p, true); code != 0 {
				rp.ErrorCode = code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			current := int32(-1)
			if r.Version >= 2 {
				current = q.CurrentLeaderEpoch
			}
			rp.ErrorCode, rp.LeaderEpoch, rp.EndOffset = p.endOffsetForEpoch(current, q.LeaderEpoch, cn.s.currentLeaderEpoch(t.Topic, q.Partition, p))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// endOffsetForEpoch is Partition.lastOffsetForLeaderEpoch on the leader:
// a current epoch older than the partition's leader epoch (leader) is
// FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH (-1 skips the
// check).
func (p *part) endOffsetForEpoch(current, requested, leader int32) (int16, int32, int64) {
	end := p.log.LogEndOffset()
	if end < 0 {
		return kerr.KafkaStorageError.Code, partition.UndefinedEpoch, partition.UndefinedEpochOffset
	}
	switch {
	case current >= 0 && current < leader:
		return kerr.FencedLeaderEpoch.Code, partition.UndefinedEpoch, partition.UndefinedEpochOffset
	case current > leader:
		return kerr.UnknownLeaderEpoch.Code, partition.UndefinedEpoch, partition.UndefinedEpochOffset
	}
	epoch, end := partition.EpochEndOffset(p.log.LeaderEpochs(), requested, end)
	return 0, epoch, end
}
