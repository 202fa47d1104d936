package serve

import (
	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleListOffsets answers earliest, latest, max-timestamp and timestamp
// queries through the broker's lookup (partition.Log.ListOffsets: the
// .timeindex, then the segment), bounded by the high watermark or, for
// read_committed, the last stable offset.
func (cn *conn) handleListOffsets(r *kmsg.ListOffsetsRequest) kmsg.Response {
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
			if sp == nil {
				p.ErrorCode = kerr.UnknownTopicOrPartition.Code
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
	return resp
}

// listOffsets runs the lookup under the partition lock, bounded by the
// high watermark this server serves (its own appends included).
func (p *part) listOffsets(target int64, iso fetch.Isolation) (partition.TimestampAndOffset, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return partition.TimestampAndOffset{}, err
	}
	d, err := partition.Open(p.dir)
	if err != nil {
		return partition.TimestampAndOffset{}, err
	}
	pl, err := partition.OpenLog(d, partition.LogOptions{})
	if err != nil {
		return partition.TimestampAndOffset{}, err
	}
	hw := p.log.HighWatermark()
	if p.hw >= 0 {
		hw = min(p.hw, p.log.LogEndOffset())
	}
	bound := hw
	if iso == fetch.ReadCommitted {
		bound = p.log.LastStableOffset(hw)
	}
	return pl.ListOffsets(target, bound)
}

// refresh picks up appends before a read (the caller holds p.mu).
func (p *part) refresh() error {
	if !p.dirty {
		return nil
	}
	if err := p.log.Refresh(); err != nil {
		return err
	}
	p.dirty = false
	return nil
}
