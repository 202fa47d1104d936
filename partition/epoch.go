package partition

import "github.com/klog-dev/klog/format"

// The leader-epoch rule a follower applies when it (re)joins a leader
// (KIP-101, refined by KIP-279): it asks the leader for the end offset of
// its latest epoch, and truncates to where the two epoch histories stop
// agreeing. klog replicate and klog diff both use FollowerTruncation.

// UndefinedEpoch and UndefinedEpochOffset are Kafka's "unknown" answers
// (OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochEndOffset is LeaderEpochFileCache.endOffsetFor: for the requested
// epoch, the largest epoch <= it that the cache holds and the offset where
// that epoch ends (the start of the next higher epoch; the log end offset
// for the latest epoch). An epoch above every entry, or an empty cache,
// answers (UndefinedEpoch, UndefinedEpochOffset); an epoch below the first
// entry answers (requested, first entry's start offset).
func EpochEndOffset(cache []format.EpochEntry, requested int32, logEndOffset int64) (int32, int64) {
	if requested == UndefinedEpoch || len(cache) == 0 {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if requested == cache[len(cache)-1].Epoch {
		return requested, logEndOffset
	}
	higher := -1
	for i, e := range cache {
		if e.Epoch > requested {
			higher = i
			break
		}
	}
	if higher < 0 {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if higher == 0 {
		return requested, cache[0].StartOffset
	}
	return cache[higher-1].Epoch, cache[higher].StartOffset
}

// FollowerTruncation is the offset a follower with epoch history follower
// and log end offset followerLEO truncates to when it fetches from a
// leader with history leader and log end offset leaderLEO: the exchange of
// AbstractFetcherThread.getOffsetTruncationState, repeated while the
// follower does not know the epoch the leader answers with (KIP-279). A
// follower with no epoch (or a leader that cannot answer) truncates to its
// high watermark hw. The result is never above followerLEO.
func FollowerTruncation(leader []format.EpochEntry, leaderLEO int64, follower []format.EpochEntry, followerLEO, hw int64) int64 {
	end := followerLEO
	cache := follower
	for range len(follower) + 1 {
		if len(cache) == 0 {
			return min(max(hw, 0), end)
		}
		latest := cache[len(cache)-1].Epoch
		lEpoch, lEnd := EpochEndOffset(leader, latest, leaderLEO)
		if lEnd == UndefinedEpochOffset {
			return min(max(hw, 0), end)
		}
		if lEpoch == UndefinedEpoch {
			return min(lEnd, end)
		}
		fEpoch, fEnd := EpochEndOffset(cache, lEpoch, end)
		switch {
		case fEpoch == UndefinedEpoch:
			// The follower has no epoch at or below the leader's answer.
			return min(lEnd, end)
		case fEpoch != lEpoch:
			// The follower does not know the leader's epoch: truncate to
			// the end of its own largest epoch below it and ask again.
			end = min(fEnd, end)
			cache = truncateEpochs(cache, end)
		default:
			return min(lEnd, fEnd, end)
		}
	}
	return end
}

// truncateEpochs drops the entries starting at or above offset
// (LeaderEpochFileCache.truncateFromEnd).
func truncateEpochs(cache []format.EpochEntry, offset int64) []format.EpochEntry {
	n := len(cache)
	for n > 0 && cache[n-1].StartOffset >= offset {
		n--
	}
	return cache[:n]
}
