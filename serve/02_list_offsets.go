package serve

import (
	"github.com/klog-dev/klog/fetch"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Special ListOffsets timestamps beyond fetch's (ListOffsetsRequest.java):
// KIP-405's earliest local offset is the log start here (no tiering).
const earliestLocalTimestamp = -4

// handleListOffsets answers earliest, latest, max-timestamp and timestamp
// queries with fetch's lookup (Partition.fetchOffsetForTimestamp), bounded
// by the high watermark or, for read_committed, the last stable offset.
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
			ts := rp.Timestamp
			if ts == earliestLocalTimestamp {
				ts = fetch.EarliestTimestamp
			}
			off, rts, ok, err := sp.offsetForTime(ts, iso)
			switch {
			case err != nil:
				p.ErrorCode = kerr.KafkaStorageError.Code
			case ts < 0 && ts != fetch.EarliestTimestamp && ts != fetch.LatestTimestamp && ts != fetch.MaxTimestampTimestamp:
				p.ErrorCode = kerr.UnsupportedVersion.Code
			case ok:
				p.Offset, p.Timestamp = off, rts
				if rp.Timestamp == fetch.LatestTimestamp || rp.Timestamp == fetch.EarliestTimestamp || rp.Timestamp == earliestLocalTimestamp {
					p.Timestamp = -1
				}
				p.LeaderEpoch = 0
				if r.Version == 0 {
					p.OldStyleOffsets = []int64{off}
				}
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// offsetForTime runs fetch's lookup under the partition lock.
func (p *part) offsetForTime(ts int64, iso fetch.Isolation) (int64, int64, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return 0, 0, false, err
	}
	return p.log.OffsetForTime(ts, iso, p.hw)
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
