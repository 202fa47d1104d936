package serve

import (
	"errors"
	"sync/atomic"

	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The state directory's bounds. A read-only server writes only there (its
// __consumer_offsets partitions: offset commits and group metadata), and
// any client may commit under any group id, so what it keeps is capped,
// in groups and in bytes:
//
//   - A group the server does not know yet (a JoinGroup, or a simple
//     OffsetCommit, of a new group id) is refused COORDINATOR_NOT_AVAILABLE
//     once the server knows Config.StateMaxGroups groups, or once the
//     store holds more than half of Config.StateMaxBytes: the other half
//     is kept for the commits of the groups it has.
//   - A write that would take the store past StateMaxBytes first compacts
//     it (offsetstore's Compact, Kafka's log cleaner: the latest record of
//     each key), when at least a quarter of the cap is reclaimable by what
//     was written since the last compaction, so that a compaction's cost is
//     paid for by the bytes appended before it. A commit that still does
//     not fit is refused COORDINATOR_NOT_AVAILABLE, as a coordinator
//     answers when its __consumer_offsets partition cannot take the
//     append (GroupMetadataManager maps a failed append so); a group's
//     metadata that does not fit is kept in memory only (its generation
//     is what a restart would lose; the group works on).
//
// A writable server keeps its offsets in the log dir, as a broker does,
// with no such cap.

// Defaults of Config.StateMaxBytes and StateMaxGroups.
const (
	DefaultStateMaxBytes  = 64 << 20
	DefaultStateMaxGroups = 1000
)

// errStateFull: the state directory is at Config.StateMaxBytes.
var errStateFull = errors.New("serve: the state directory is full (--state-max-bytes)")

// stateCap is a read-only server's bound of its state directory.
type stateCap struct {
	maxBytes  int64 // 0: no bound
	maxGroups int   // 0: no bound
	// total is the store's bytes, set by the writer, read by the loop.
	total atomic.Int64
	// live is the store's bytes after the last compaction (0 before the
	// first: all of it may be reclaimable). Writer-owned.
	live int64
}

// newStateCap bounds store by cfg (nil for a writable server).
func newStateCap(cfg Config, store *offsetstore.Store) (*stateCap, error) {
	if cfg.Writable {
		return nil, nil
	}
	k := &stateCap{maxBytes: cfg.StateMaxBytes, maxGroups: cfg.StateMaxGroups}
	switch {
	case k.maxBytes == 0:
		k.maxBytes = DefaultStateMaxBytes
	case k.maxBytes < 0:
		k.maxBytes = 0
	}
	switch {
	case k.maxGroups == 0:
		k.maxGroups = DefaultStateMaxGroups
	case k.maxGroups < 0:
		k.maxGroups = 0
	}
	n, err := store.Bytes()
	if err != nil {
		return nil, err
	}
	k.total.Store(n)
	return k, nil
}

// admitGroup reports whether the loop may take a group it does not know
// yet (on the loop).
func (c *coordinator) admitGroup() bool {
	k := c.cap
	if k == nil {
		return true
	}
	if k.maxBytes > 0 && k.total.Load() > k.maxBytes/2 {
		// A compaction may make room: the writer tries when it can
		// reclaim enough (capped), and a later join may then be taken.
		c.write(c.capped(k.maxBytes, func() error { return nil }), func(error) {})
		return false
	}
	if k.maxGroups <= 0 {
		return true
	}
	n := len(c.groups)
	for name := range c.offsets {
		if c.groups[name] == nil {
			n++
		}
	}
	return n < k.maxGroups
}

// capped wraps do, a write of about est bytes, in the bound (on the
// writer): it compacts first when the write would take the store past
// the cap and enough is reclaimable, and returns errStateFull when it
// still would.
func (c *coordinator) capped(est int64, do func() error) func() error {
	k := c.cap
	if k == nil || k.maxBytes <= 0 {
		return do
	}
	return func() error {
		total := k.total.Load()
		if total+est > k.maxBytes && total-k.live >= k.maxBytes/4 {
			n, err := c.store.Compact()
			if err != nil {
				return err
			}
			k.live, total = n, n
			k.total.Store(n)
		}
		if total+est > k.maxBytes {
			return errStateFull
		}
		err := do()
		if n, berr := c.store.Bytes(); berr == nil {
			k.total.Store(n)
		}
		return err
	}
}

// Bounds of what one record adds to a __consumer_offsets partition beyond
// its key's and value's variable parts: the record's framing and fixed
// fields, and a batch's header with an entry in each index and, for a
// partition opened now, its new files.
const (
	stateRecordOverhead = 64
	stateBatchOverhead  = 61 + 20 + 512
)

// commitBytes bounds the bytes a commit's batch takes.
func commitBytes(group string, commits []offsetstore.Commit) int64 {
	n := int64(stateBatchOverhead)
	for _, cm := range commits {
		n += int64(stateRecordOverhead + len(group) + len(cm.Topic) + len(cm.Metadata))
	}
	return n
}

// groupBytes bounds the bytes a group metadata record takes.
func groupBytes(group string, gm *internaltopic.GroupMetadataValue) int64 {
	n := int64(stateBatchOverhead + stateRecordOverhead + len(group) + len(gm.ProtocolType))
	if gm.Protocol != nil {
		n += int64(len(*gm.Protocol))
	}
	if gm.Leader != nil {
		n += int64(len(*gm.Leader))
	}
	for _, m := range gm.Members {
		n += int64(stateRecordOverhead + len(m.MemberID) + len(m.ClientID) + len(m.ClientHost) + len(m.Subscription) + len(m.Assignment))
		if m.GroupInstanceID != nil {
			n += int64(len(*m.GroupInstanceID))
		}
	}
	return n
}

// storeError maps a failed __consumer_offsets append to the answer
// (appendGroupMetadataErrorToResponseError: a storage error is
// NOT_COORDINATOR, so that the client finds the coordinator again; a
// state directory at its bound, COORDINATOR_NOT_AVAILABLE, as a
// __consumer_offsets partition that cannot take the append).
func storeError(err error) int16 {
	if errors.Is(err, errStateFull) {
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.NotCoordinator.Code
}
