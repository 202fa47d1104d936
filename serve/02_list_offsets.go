package serve

import (
	"encoding/binary"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
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
			if ts < 0 && ts != fetch.EarliestTimestamp && ts != fetch.LatestTimestamp && ts != fetch.MaxTimestampTimestamp {
				// -5 (latest tiered) and -6 (earliest pending upload):
				// nothing is tiered, so Kafka answers -1 (KIP-1005, KIP-1023).
				t.Partitions = append(t.Partitions, p)
				continue
			}
			off, rts, epoch, ok, err := sp.offsetForTime(ts, iso)
			switch {
			case err != nil:
				p.ErrorCode = kerr.KafkaStorageError.Code
			case ok:
				p.Offset, p.Timestamp, p.LeaderEpoch = off, rts, epoch
				if ts == fetch.LatestTimestamp || ts == fetch.EarliestTimestamp {
					p.Timestamp = -1
				}
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

// offsetForTime runs fetch's lookup under the partition lock, with the
// leader epoch UnifiedLog.fetchOffsetByTimestamp gives: for earliest and
// latest, the leader-epoch-checkpoint's (epochForOffset(log start), the
// latest epoch); for a record, its batch's partition leader epoch; -1 for
// none.
func (p *part) offsetForTime(ts int64, iso fetch.Isolation) (off, rts int64, epoch int32, ok bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refresh(); err != nil {
		return 0, 0, -1, false, err
	}
	off, rts, ok, err = p.log.OffsetForTime(ts, iso, p.hw)
	if err != nil || !ok {
		return off, rts, -1, ok, err
	}
	switch ts {
	case fetch.EarliestTimestamp:
		epoch = p.epochs().epochFor(off)
	case fetch.LatestTimestamp:
		epoch = p.epochs().latest()
	default:
		epoch = p.batchEpoch(off)
	}
	return off, rts, epoch, true, nil
}

// epochCache is a leader-epoch-checkpoint's entries.
type epochCache []format.EpochEntry

func (p *part) epochs() epochCache {
	data, err := os.ReadFile(filepath.Join(p.dir, partition.LeaderEpochCheckpoint))
	if err != nil {
		return nil
	}
	es, err := format.ParseLeaderEpochCheckpoint(data)
	if err != nil {
		return nil
	}
	return es
}

// epochFor is LeaderEpochFileCache.epochForOffset: the epoch of the last
// entry starting at or below offset.
func (c epochCache) epochFor(offset int64) int32 {
	e := int32(-1)
	for _, x := range c {
		if x.StartOffset <= offset {
			e = x.Epoch
		}
	}
	return e
}

func (c epochCache) latest() int32 {
	if len(c) == 0 {
		return -1
	}
	return c[len(c)-1].Epoch
}

// batchEpoch is the partition leader epoch of the batch holding offset
// (-1 for legacy message sets), found with fetch's offset translation.
func (p *part) batchEpoch(offset int64) int32 {
	f, err := p.log.Read(fetch.Request{FetchOffset: offset, PartitionMaxBytes: 1, MaxBytes: 1, Replica: true, Locate: true})
	if err != nil || f.Size == 0 {
		return -1
	}
	fh, err := os.Open(f.Segment)
	if err != nil {
		return -1
	}
	defer fh.Close()
	var hdr [17]byte
	if _, err := fh.ReadAt(hdr[:], f.Position); err != nil || int8(hdr[16]) < format.MagicV2 {
		return -1
	}
	return max(int32(binary.BigEndian.Uint32(hdr[posLeaderEpoch:])), -1)
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
