package fetch

import "github.com/klog-dev/klog/partition"

// ListOffsets answers a ListOffsets query as a broker does for a consumer
// (Partition.fetchOffsetForTimestamp), through the one lookup home,
// partition.Log: target is partition.EarliestTimestamp, LatestTimestamp
// (the high watermark, or the last stable offset for read_committed),
// MaxTimestamp, or a timestamp in epoch ms. An answer at or past that bound,
// or none, has Found false and offset -1. mode says whether the indexes are
// taken as found (a clean broker start) or rebuilt (a recovering one).
func (l *Log) ListOffsets(target int64, iso Isolation, mode partition.IndexMode) (partition.TimestampAndOffset, error) {
	pl, err := partition.OpenLog(l.dir, partition.LogOptions{Mode: mode})
	if err != nil {
		return partition.TimestampAndOffset{}, err
	}
	leo := pl.LogEndOffset()
	hw := min(l.HighWatermark(), leo)
	bound := hw
	if iso == ReadCommitted {
		bound = l.LastStableOffset(hw)
	}
	return pl.ListOffsets(target, bound)
}
