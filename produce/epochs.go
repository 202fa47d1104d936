package produce

import "github.com/klog-dev/klog/format"

// The leader epoch cache is the model's (partition.Log), kept in
// leader-epoch-checkpoint as a broker keeps it
// (storage/.../epoch/LeaderEpochFileCache.java): an entry (epoch, start
// offset) is assigned when a batch carries an epoch above the latest one, or
// when the broker becomes leader; the file is rewritten whenever the cache
// changes.

// LatestLeaderEpoch is the cache's latest epoch, or -1 when it is empty.
func (a *Appender) LatestLeaderEpoch() int32 { return a.log.LatestEpoch() }

// LeaderEpochs is the leader epoch cache.
func (a *Appender) LeaderEpochs() []format.EpochEntry { return a.log.LeaderEpochs() }
