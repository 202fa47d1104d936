package serve

// ListOffsets, key 2: v0-v10.
//
// Version notes (ListOffsetsRequest.json):
//   - v0: MaxNumOffsets and a list of offsets (OldStyleOffsets).
//   - v1: one offset and its timestamp per partition.
//   - v2: IsolationLevel (read_committed answers up to the last stable
//     offset); v3: as v2.
//   - v4: CurrentLeaderEpoch, and the answer's LeaderEpoch; v5: as v4.
//   - v6: flexible.
//   - v7: -3, the max timestamp (KIP-734).
//   - v8: -4, the earliest local offset (KIP-405).
//   - v9: -5, the latest tiered offset (KIP-1005).
//   - v10: TimeoutMillis for remote lookups (KIP-1075).
//   - v11 (-6, earliest pending upload) is not served.

import (
	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(2, 0, 10, (*conn).handleListOffsets) }

// handleListOffsets answers earliest, latest, max-timestamp and timestamp
// queries through the broker's lookup (partition.Log.ListOffsets: the
// .timeindex, then the segment), bounded by the high watermark or, for
// read_committed, the last stable offset.
func (cn *conn) handleListOffsets(r *kmsg.ListOffsetsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	iso := fetch.ReadUncommitted
	if r.IsolationLevel == 1 {
		iso = fetch.ReadCommitted
	}
	for _, rt := range r.Topics {
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewListOffsetsResponseTopicPartition()
			p.Partition = rp.Partition
			p.Timestamp, p.Offset, p.LeaderEpoch = -1, -1, -1
			sp := cn.s.lookup(rt.Topic, rp.Partition)
			// Only the leader answers, but for the debugging replica id.
			if code := cn.s.placement(rt.Topic, rp.Partition, sp, r.ReplicaID != -2); code != 0 {
				p.ErrorCode = code
				t.Partitions = append(t.Partitions, p)
				continue
			}
			if off, ts, epoch, ok := sp.listRemote(rp.Timestamp); ok {
				// The remote tier answers (serve/remote.go).
				p.Offset, p.Timestamp, p.LeaderEpoch = off, ts, epoch
				if r.Version == 0 {
					p.OldStyleOffsets = []int64{off}
				}
				t.Partitions = append(t.Partitions, p)
				continue
			}
			if rp.Timestamp < partition.EarliestLocalTimestamp {
				// -5 (latest tiered) and -6 (earliest pending upload):
				// nothing is tiered, so Kafka answers -1 (KIP-1005).
				t.Partitions = append(t.Partitions, p)
				continue
			}
			a, err := sp.listOffsets(rp.Timestamp, iso)
			switch {
			case err != nil:
				p.ErrorCode = kerr.KafkaStorageError.Code
			case a.Found:
				p.Offset, p.Timestamp, p.LeaderEpoch = a.Offset, a.Timestamp, a.LeaderEpoch
				if r.Version == 0 {
					p.OldStyleOffsets = []int64{a.Offset}
				}
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

// listOffsets runs the lookup of the partition model, which holds the
// segments and is kept current: nothing is opened or listed again.
func (p *part) listOffsets(target int64, iso fetch.Isolation) (partition.TimestampAndOffset, error) {
	return fetch.ListOffsets(p.log, target, iso)
}
