package partition

import (
	"testing"

	"github.com/klog-dev/klog/format"
)

func eps(v ...int64) []format.EpochEntry {
	var out []format.EpochEntry
	for i := 0; i+1 < len(v); i += 2 {
		out = append(out, format.EpochEntry{Epoch: int32(v[i]), StartOffset: v[i+1]})
	}
	return out
}

func TestEpochEndOffset(t *testing.T) {
	cache := eps(1, 10, 3, 20, 5, 30)
	cases := []struct {
		name      string
		requested int32
		epoch     int32
		end       int64
	}{
		{"latest epoch ends at the log end", 5, 5, 42},
		{"known epoch ends where the next starts", 3, 3, 30},
		{"unknown epoch between two: the floor epoch, the higher one's start", 4, 3, 30},
		{"below the first entry: the first entry's start", 0, 0, 10},
		{"above every entry: undefined", 6, UndefinedEpoch, UndefinedEpochOffset},
		{"undefined request", UndefinedEpoch, UndefinedEpoch, UndefinedEpochOffset},
	}
	for _, tc := range cases {
		e, o := EpochEndOffset(cache, tc.requested, 42)
		if e != tc.epoch || o != tc.end {
			t.Errorf("%s: (%d, %d), want (%d, %d)", tc.name, e, o, tc.epoch, tc.end)
		}
	}
	if e, o := EpochEndOffset(nil, 1, 5); e != UndefinedEpoch || o != UndefinedEpochOffset {
		t.Errorf("empty cache: (%d, %d)", e, o)
	}
}

func TestFollowerTruncation(t *testing.T) {
	cases := []struct {
		name            string
		leader          []format.EpochEntry
		leaderLEO       int64
		follower        []format.EpochEntry
		followerLEO, hw int64
		want            int64
	}{
		{"same history, follower behind: nothing to cut", eps(0, 0, 1, 10), 20, eps(0, 0, 1, 10), 15, 0, 15},
		{"old leader's epoch ended where the new one began (KIP-101)", eps(0, 0, 1, 8), 12, eps(0, 0), 10, 5, 8},
		{"follower ahead in the same epoch: cut to the leader's end", eps(0, 0), 8, eps(0, 0), 10, 5, 8},
		{"follower led an epoch the leader never saw (KIP-279, two rounds)", eps(0, 0, 2, 5, 4, 12), 20, eps(0, 0, 3, 10), 15, 0, 5},
		{"follower has no epochs: its high watermark", eps(0, 0), 20, nil, 15, 7, 7},
		{"leader has no epochs: the follower's high watermark", nil, 20, eps(0, 0), 15, 9, 9},
		{"follower's epoch above all of the leader's: the leader cannot answer, its high watermark", eps(3, 0), 20, eps(5, 0), 15, 4, 4},
	}
	for _, tc := range cases {
		got := FollowerTruncation(tc.leader, tc.leaderLEO, tc.follower, tc.followerLEO, tc.hw)
		if got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
