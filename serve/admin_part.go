package serve

// What the admin handlers read of a partition model.

// leaderEpoch is the partition's leader epoch as Metadata reports it: the
// latest epoch of its leader-epoch cache (the epoch ListOffsets and
// OffsetForLeaderEpoch answer with), 0 when the cache is empty.
func (p *part) leaderEpoch() int32 {
	return max(p.log.LatestEpoch(), 0)
}
