package serve

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/tiered"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The remote tier (tiered storage, KIP-405): with Config.Remote set, an
// offset below a partition's local log start is served from the remote
// segments, as a broker with remote.storage.enable answers, so that an
// archive in S3 replays to unmodified clients. The remote tier is listed
// and its metadata (the log dir's __remote_log_metadata-N) folded once, at
// New.

// maxRemoteFetchBytes bounds what one partition's remote read holds in
// memory (the first batch may be larger: KIP-74, up to the batch limit).
const maxRemoteFetchBytes = 8 << 20

// loadRemote attaches each served partition's remote segments.
func (s *Server) loadRemote() error {
	r := s.cfg.Remote
	if r == nil {
		return nil
	}
	ctx := context.Background()
	var lin *tiered.Lineage
	if md, err := tiered.MetadataDirs([]string{s.cfg.LogDir}); err == nil && len(md) > 0 {
		lin = tiered.NewLineage()
		if err := tiered.ReadMetadata(ctx, md, lin); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	served := func(tp tiered.TopicPartition) *part {
		t := s.topics[tp.Topic]
		if t == nil || tp.Partition < 0 || int(tp.Partition) >= len(t.parts) {
			return nil
		}
		if t.id != ([16]byte{}) && tiered.Uuid(t.id) != tp.TopicID {
			return nil // another incarnation of the topic
		}
		return t.parts[tp.Partition]
	}
	_, err := tiered.ListPartitions(ctx, r.Store, s.cfg.RemotePrefix, func(tp tiered.TopicPartition) bool { return served(tp) != nil },
		func(po *tiered.PartitionObjects) error {
			p := served(po.Partition)
			tr := &tiered.Tiers{Remote: r, Objects: po}
			if lin != nil {
				tr.Lineage = lin.Partitions[po.Partition]
			}
			p.remote = tr
			return nil
		})
	if err != nil {
		return fmt.Errorf("serve: listing the remote tier: %w", err)
	}
	if lin != nil {
		s.warnings = append(s.warnings, missingRemote(lin, served, s.cfg.RemotePrefix)...)
	}
	return nil
}

// missingRemote names the served partitions whose metadata has finished
// copies but whose objects the listing did not find (a wrong --remote
// prefix or bucket reads as an empty tier, and the offsets below the local
// log start would be out of range without a word).
func missingRemote(lin *tiered.Lineage, served func(tiered.TopicPartition) *part, prefix string) []string {
	tps := slices.Collect(maps.Keys(lin.Partitions))
	slices.SortFunc(tps, func(a, b tiered.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var out []string
	for _, tp := range tps {
		p := served(tp)
		if p == nil || p.remote != nil {
			continue
		}
		n, lo, hi := 0, int64(-1), int64(-1)
		for _, m := range lin.Partitions[tp].Segments {
			if m.State != tiered.CopySegmentFinished {
				continue
			}
			if n == 0 || m.StartOffset < lo {
				lo = m.StartOffset
			}
			hi = max(hi, m.EndOffset)
			n++
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s-%d: __remote_log_metadata names %d copied segments (offsets %d-%d) but the remote tier under %q holds none of its objects; offsets below the local log start are out of range",
				p.topic, p.index, n, lo, hi, prefix))
		}
	}
	return out
}

// Warnings are what New found that a user should hear of: today, served
// partitions whose copied remote segments the remote tier does not hold.
func (s *Server) Warnings() []string { return s.warnings }

// localStart is the partition's local log start offset: its first
// segment's base offset (-1: no segment).
func (p *part) localStart() int64 {
	segs := p.log.Segments()
	if len(segs) == 0 {
		return -1
	}
	return segs[0].BaseOffset
}

// readRemote answers a fetch below the local log start from the remote
// tier; ok is false when the local log answers it.
func (p *part) readRemote(req fetch.Request, minOne bool) (fp fetchPart, ok bool) {
	if p.remote == nil {
		return fp, false
	}
	o, err := p.log.Offsets()
	local := p.localStart()
	hw, lso := o.HighWatermark, o.LastStableOffset
	if err != nil || local >= 0 && req.FetchOffset >= local {
		return fp, false
	}
	start := p.remote.RemoteStart()
	if start < 0 || req.FetchOffset < start {
		return fp, false // the local log's answer: out of range
	}
	fp.hw, fp.lso, fp.start = hw, lso, start
	limit := min(int(req.PartitionMaxBytes), int(req.MaxBytes), maxRemoteFetchBytes)
	data, found, err := p.remote.ReadRemote(context.Background(), req.FetchOffset, max(limit, 1), minOne)
	switch {
	case err != nil:
		fp.code = kerr.KafkaStorageError.Code
	case !found:
		fp.code = kerr.OffsetOutOfRange.Code
	default:
		fp.data, fp.size = data, int64(len(data))
	}
	return fp, true
}

// listRemote answers ListOffsets targets the remote tier changes: -2 (the
// earliest offset, now the remote start), -4 (the earliest local offset),
// -5 (the latest tiered offset) and timestamps below the local log start;
// ok is false for the rest.
func (p *part) listRemote(target int64) (off int64, ts int64, epoch int32, ok bool) {
	if p.remote == nil {
		return 0, 0, 0, false
	}
	local := p.localStart()
	epochs := p.log.LeaderEpochs()
	localEpoch := func(o int64) int32 {
		e := int32(-1)
		for _, en := range epochs {
			if en.StartOffset <= o {
				e = en.Epoch
			}
		}
		return e
	}
	switch target {
	case partition.EarliestTimestamp:
		if s := p.remote.RemoteStart(); s >= 0 && (local < 0 || s < local) {
			return s, -1, p.remote.EpochAt(s), true
		}
	case partition.EarliestLocalTimestamp:
		if local >= 0 {
			return local, -1, localEpoch(local), true
		}
		return 0, 0, 0, false
	case latestTieredTimestamp:
		h := int64(-1)
		if p.remote.Lineage != nil {
			h = p.remote.Lineage.HighestOffset()
		}
		if h < 0 {
			return -1, -1, -1, true
		}
		return h, -1, p.remote.EpochAt(h), true
	default:
		if target < 0 {
			return 0, 0, 0, false
		}
		pos, err := p.remote.FindTimestamp(context.Background(), target)
		if err == nil && (local < 0 || pos.Offset < local) {
			return pos.Offset, pos.Timestamp, p.remote.EpochAt(pos.Offset), true
		}
	}
	return 0, 0, 0, false
}

// latestTieredTimestamp is ListOffsetsRequest.LATEST_TIERED_TIMESTAMP
// (KIP-1005).
const latestTieredTimestamp = -5
