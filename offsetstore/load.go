package offsetstore

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/partition"
)

// State is what a group coordinator loads from __consumer_offsets: each
// group's committed offsets and its last stored metadata. Later records
// win; tombstones delete; a transaction's offsets count once its COMMIT
// marker is read, and never if it is aborted (TxnOffsetCommit).
type State struct {
	Offsets map[string]map[TopicPartition]Committed
	Groups  map[string]*internaltopic.GroupMetadataValue
	// ConsumerGroups are the KIP-848 consumer groups, replayed from their
	// records as GroupMetadataManager.replay does.
	ConsumerGroups map[string]*ConsumerGroup
	// pending holds open transactions' offsets by producer id.
	pending map[int64][]internaltopic.CoordinatorRecord
}

// ConsumerGroup is a KIP-848 consumer group's last written state: its
// epoch (ConsumerGroupMetadata), the target assignment's epoch, and each
// member's subscription, target and current assignment. A member is one
// with a subscription.
type ConsumerGroup struct {
	Epoch           int32
	AssignmentEpoch int32
	Members         map[string]*internaltopic.ConsumerGroupMemberMetadataValue
	Targets         map[string][]internaltopic.TopicIDPartitions
	Current         map[string]*internaltopic.CurrentMemberAssignmentValue
}

// NewState is an empty State.
func NewState() *State {
	return &State{Offsets: map[string]map[TopicPartition]Committed{}, Groups: map[string]*internaltopic.GroupMetadataValue{},
		ConsumerGroups: map[string]*ConsumerGroup{}, pending: map[int64][]internaltopic.CoordinatorRecord{}}
}

// consumerRecord: the record types a ConsumerGroup is replayed from.
func consumerRecord(t int16) bool {
	switch t {
	case internaltopic.ConsumerGroupMetadataRecord, internaltopic.ConsumerGroupMemberMetadataRecord,
		internaltopic.ConsumerGroupTargetAssignmentMetadataRecord, internaltopic.ConsumerGroupTargetAssignmentMemberRecord,
		internaltopic.ConsumerGroupCurrentMemberAssignmentRecord:
		return true
	}
	return false
}

func (st *State) consumerGroup(id string) *ConsumerGroup {
	g := st.ConsumerGroups[id]
	if g == nil {
		g = &ConsumerGroup{AssignmentEpoch: -1, Members: map[string]*internaltopic.ConsumerGroupMemberMetadataValue{},
			Targets: map[string][]internaltopic.TopicIDPartitions{}, Current: map[string]*internaltopic.CurrentMemberAssignmentValue{}}
		st.ConsumerGroups[id] = g
	}
	return g
}

// applyConsumer replays one consumer group record: the group's metadata
// tombstone deletes the group, a member's records' tombstones delete what
// they keyed.
func (st *State) applyConsumer(r internaltopic.CoordinatorRecord) {
	switch k := r.Key.(type) {
	case *internaltopic.GroupKey:
		switch v := r.Value.(type) {
		case *internaltopic.ConsumerGroupMetadataValue:
			st.consumerGroup(k.GroupID).Epoch = v.Epoch
		case *internaltopic.TargetAssignmentMetadataValue:
			st.consumerGroup(k.GroupID).AssignmentEpoch = v.AssignmentEpoch
		case nil:
			if r.Type == internaltopic.ConsumerGroupMetadataRecord {
				delete(st.ConsumerGroups, k.GroupID)
			} else if g := st.ConsumerGroups[k.GroupID]; g != nil {
				g.AssignmentEpoch = -1
			}
		}
	case *internaltopic.MemberKey:
		g := st.consumerGroup(k.GroupID)
		switch v := r.Value.(type) {
		case *internaltopic.ConsumerGroupMemberMetadataValue:
			g.Members[k.MemberID] = v
		case *internaltopic.TargetAssignmentMemberValue:
			g.Targets[k.MemberID] = v.TopicPartitions
		case *internaltopic.CurrentMemberAssignmentValue:
			g.Current[k.MemberID] = v
		case nil:
			switch r.Type {
			case internaltopic.ConsumerGroupMemberMetadataRecord:
				delete(g.Members, k.MemberID)
			case internaltopic.ConsumerGroupTargetAssignmentMemberRecord:
				delete(g.Targets, k.MemberID)
			default:
				delete(g.Current, k.MemberID)
			}
		}
	}
}

// Load reads every __consumer_offsets-N partition under dir into st (none
// is no error). Records that are not offset commits, group metadata or a
// consumer group's (share groups', Streams groups') are skipped; a record that does not decode
// is an error naming its file and offset.
func (st *State) Load(dir string) error {
	dirs, err := partitionDirs(dir)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := st.LoadPartition(d); err != nil {
			return err
		}
	}
	return nil
}

// LoadPartition reads one __consumer_offsets-N partition directory (none
// is no error).
func (st *State) LoadPartition(dir string) error {
	if ok, err := isDir(dir); !ok || err != nil {
		return err
	}
	d, err := partition.Open(dir)
	if err != nil {
		return err
	}
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		if err := st.loadSegment(s.Log); err != nil {
			return err
		}
	}
	return nil
}

func (st *State) loadSegment(path string) error {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var rr format.RecordReader
	var rec format.Record
	for b, err := range format.NewScanner(f, size, format.ScanOptions{}).All() {
		if err != nil {
			// A torn tail (a writer killed mid-append) ends the log, as
			// the broker's recovery would cut it.
			var pe *format.PosError
			if errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if b.IsControl() {
			st.marker(b)
			continue
		}
		if err := rr.Reset(b); err != nil {
			return fmt.Errorf("%s: batch at offset %d: %w", path, b.BaseOffset, err)
		}
		for {
			err := rr.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: batch at offset %d: %w", path, b.BaseOffset, err)
			}
			r, err := internaltopic.DecodeGroupRecord(rec.Key, rec.Value)
			if errors.Is(err, internaltopic.ErrUnknownRecordType) || err == nil && r.Type != internaltopic.OffsetCommitRecord &&
				r.Type != internaltopic.GroupMetadataRecord && r.Type != 0 && !consumerRecord(r.Type) {
				// Records of other group types (share groups',
				// streams', a consumer group's partition metadata and
				// regular expressions) are not this store's.
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: offset %d: %w", filepath.Base(path), rec.Offset, err)
			}
			if b.IsTransactional() {
				st.pending[b.ProducerID] = append(st.pending[b.ProducerID], r)
				continue
			}
			st.apply(r)
		}
	}
	return nil
}

// marker applies (COMMIT) or drops (ABORT) a producer's pending offsets.
func (st *State) marker(b *format.Batch) {
	var rr format.RecordReader
	var rec format.Record
	if rr.Reset(b) != nil || rr.Next(&rec) != nil {
		return
	}
	k, err := format.ParseControlKey(rec.Key)
	if err != nil {
		return
	}
	if k.Type == format.ControlCommit {
		for _, r := range st.pending[b.ProducerID] {
			st.apply(r)
		}
	}
	delete(st.pending, b.ProducerID)
}

func (st *State) apply(r internaltopic.CoordinatorRecord) {
	if consumerRecord(r.Type) {
		st.applyConsumer(r)
		return
	}
	switch k := r.Key.(type) {
	case *internaltopic.OffsetCommitKey:
		tp := TopicPartition{k.Topic, k.Partition}
		v, _ := r.Value.(*internaltopic.OffsetCommitValue)
		if v == nil {
			delete(st.Offsets[k.Group], tp)
			if len(st.Offsets[k.Group]) == 0 {
				delete(st.Offsets, k.Group)
			}
			return
		}
		if st.Offsets[k.Group] == nil {
			st.Offsets[k.Group] = map[TopicPartition]Committed{}
		}
		st.Offsets[k.Group][tp] = Committed{Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp}
	case *internaltopic.GroupMetadataKey:
		if v, _ := r.Value.(*internaltopic.GroupMetadataValue); v != nil {
			st.Groups[k.Group] = v
		} else {
			delete(st.Groups, k.Group)
		}
	}
}
