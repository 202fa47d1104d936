package serve

// TxnOffsetCommit, key 28: v0-v5.
//
// Version notes (TxnOffsetCommitRequest.json):
//   - v0: the offsets a transaction commits for a group; v1: as v0.
//   - v2: each partition's leader epoch.
//   - v3: flexible; the member's generation, member id and group
//     instance id (KIP-447), checked as OffsetCommit's are.
//   - v4: TRANSACTION_ABORTABLE (KIP-890).
//   - v5: transactions v2 (KIP-890): the group's __consumer_offsets
//     partition joins the transaction here (no AddOffsetsToTxn).
//   - v6 (topic ids) is not served.

import (
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(28, 0, 5, (*conn).handleTxnOffsetCommit) }

// handleTxnOffsetCommit writes the offsets into __consumer_offsets-N as
// the producer's transactional batch (txn.go); they become the group's
// committed offsets when the transaction's COMMIT marker is written.
func (cn *conn) handleTxnOffsetCommit(r *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	parts := make([]commitPart, 0, len(r.Topics))
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			cp := commitPart{topic: t.Topic, partition: p.Partition, offset: p.Offset, leaderEpoch: -1, metadata: p.Metadata}
			if r.Version >= 2 {
				cp.leaderEpoch = p.LeaderEpoch
			}
			parts = append(parts, cp)
		}
	}
	commits, codes := cn.s.checkCommits(parts)
	gen, id, inst := int32(-1), "", (*string)(nil)
	if r.Version >= 3 {
		gen, id, inst = r.Generation, r.MemberID, r.InstanceID
	}
	code := int16(0)
	if len(commits) > 0 {
		c := cn.s.groups
		out, err := c.call(cn, r.Key(), kerr.CoordinatorNotAvailable.Code, func(w *waiter) {
			c.txnOffsetCommit(r.Version, r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, id, inst, gen, commits, w)
		})
		if err != nil {
			return nil, err
		}
		code = fencedFor(out.(int16), r.Version, 3)
	}
	for _, t := range r.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
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
