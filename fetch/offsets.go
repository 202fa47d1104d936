package fetch

import "github.com/klog-dev/klog/partition"

// ListOffsets answers a ListOffsets query as a broker does for a consumer
// (Partition.fetchOffsetForTimestamp), through the partition model: target
// is partition.EarliestTimestamp, LatestTimestamp (the high watermark, or
// the last stable offset for read_committed), MaxTimestamp, or a timestamp
// in epoch ms. An answer at or past that bound, or none, has Found false
// and offset -1. Whether the indexes are taken as found (a clean broker
// start) or rebuilt (a recovering one) is how l was opened.
func ListOffsets(l *partition.Log, target int64, iso Isolation) (partition.TimestampAndOffset, error) {
	return l.FetchOffsetForTimestamp(target, iso == ReadCommitted)
}
