package cluster

import (
	"context"
	"errors"
	"sort"
	"strconv"

	"github.com/klog-dev/klog/format"
	it "github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/kraft"
)

// The consumer groups of __consumer_offsets, as the group coordinator
// loads a partition of it (GroupCoordinatorShard.replay,
// OffsetMetadataManager, GroupMetadataManager): every record in log
// order, offsets committed in a transaction pending until the producer's
// COMMIT marker (dropped at ABORT), a tombstone removing what its key
// names. Memory holds one entry per group, member and committed
// partition, never per record.

// OffsetsTopic is the group coordinator's topic.
const OffsetsTopic = "__consumer_offsets"

// DefaultOffsetsPartitions is offsets.topic.num.partitions' default.
const DefaultOffsetsPartitions = 50

// Group types.
const (
	GroupClassic  = "classic"
	GroupConsumer = "consumer"
	GroupShare    = "share"
	GroupStreams  = "streams"
)

// Group is one group as the coordinator would load it.
type Group struct {
	GroupID string `json:"groupId"`
	// Type is classic (JoinGroup/SyncGroup), consumer (KIP-848), share
	// (KIP-932) or streams (KIP-1071).
	Type string `json:"groupType"`
	// ProtocolType is a classic group's protocol type ("consumer",
	// "connect", ...; "" for a group that only commits offsets).
	ProtocolType string `json:"protocolType"`
	// State is the group's state once loaded: classic Empty or Stable
	// (ClassicGroup.fromRecord); the others Empty, Assigning, Reconciling or
	// Stable (ModernGroup: no members, a group epoch ahead of the target
	// assignment's, a member not at it); Dead once its metadata was deleted.
	State string `json:"state"`
	// Generation is a classic group's generation, GroupEpoch a modern one's
	// (and AssignmentEpoch its target assignment epoch).
	Generation      int32  `json:"generation"`
	GroupEpoch      int32  `json:"groupEpoch"`
	AssignmentEpoch int32  `json:"assignmentEpoch"`
	Protocol        string `json:"protocol"`
	Leader          string `json:"leader"`
	// StateTimestamp is a classic group's currentStateTimestamp (-1: none).
	StateTimestamp int64     `json:"stateTimestamp"`
	Members        []*Member `json:"members"`
	Offsets        []*Offset `json:"offsets"`
	// DeletedOffsets are committed partitions whose last record is a
	// tombstone: expired by offsets.retention.minutes or deleted.
	DeletedOffsets []*DeletedOffset `json:"deletedOffsets"`
	// PendingOffsets are offsets committed in a transaction with no marker
	// yet (they are not committed until its COMMIT).
	PendingOffsets []*Offset `json:"pendingTransactionalOffsets"`
	// CoordinatorPartition is the __consumer_offsets partition that owns
	// the group (abs(hashCode) % the partition count), and Partition the
	// one its records were read from.
	CoordinatorPartition int32 `json:"coordinatorPartition"`
	Partition            int32 `json:"partition"`
	// DeletedAt is the offset of the tombstone that deleted the group's
	// metadata (-1: not deleted).
	DeletedAt int64 `json:"deletedAtOffset"`

	members  map[string]*Member
	offsets  map[tp]*Offset
	deleted  map[tp]*DeletedOffset
	pending  map[int64]map[tp]*Offset // producer id
	topology bool
}

// Member is one member of a group.
type Member struct {
	MemberID        string  `json:"memberId"`
	GroupInstanceID *string `json:"groupInstanceId"`
	ClientID        string  `json:"clientId"`
	ClientHost      string  `json:"clientHost"`
	RackID          *string `json:"rackId"`
	// SessionTimeoutMs is a classic member's (-1: none);
	// RebalanceTimeoutMs either's.
	SessionTimeoutMs   int32 `json:"sessionTimeoutMs"`
	RebalanceTimeoutMs int32 `json:"rebalanceTimeoutMs"`
	// MemberEpoch and PreviousMemberEpoch are a modern member's (-1 for a
	// classic group); MemberState its reconciliation state.
	MemberEpoch         int32  `json:"memberEpoch"`
	PreviousMemberEpoch int32  `json:"previousMemberEpoch"`
	MemberState         string `json:"memberState"`
	// Subscription is the topics the member subscribes to (for a classic
	// consumer, from its ConsumerProtocolSubscription), SubscribedRegex a
	// KIP-848 regular expression.
	Subscription    []string `json:"subscription"`
	SubscribedRegex *string  `json:"subscribedTopicRegex"`
	ServerAssignor  *string  `json:"serverAssignor"`
	// ClassicProtocol says a KIP-848 member joined with the classic
	// protocol.
	ClassicProtocol bool `json:"classicProtocol"`
	// Assignment is the member's current assignment, TargetAssignment a
	// modern member's target, PendingRevocation what it still has to
	// revoke. Topics are by name when known, else by id.
	Assignment        []TopicAssignment `json:"assignment"`
	TargetAssignment  []TopicAssignment `json:"targetAssignment"`
	PendingRevocation []TopicAssignment `json:"partitionsPendingRevocation"`
	// ProcessID and UserEndpoint are a Streams member's.
	ProcessID    string `json:"processId,omitempty"`
	UserEndpoint string `json:"userEndpoint,omitempty"`
	// memberEpochSet says a current assignment record was read.
	memberEpochSet bool
	topicIDs       []it.TopicIDPartitions
	targetIDs      []it.TopicIDPartitions
	revokingIDs    []it.TopicIDPartitions
}

// TopicAssignment is a topic's partitions in an assignment (a Streams
// member's are subtopology ids).
type TopicAssignment struct {
	Topic      string  `json:"topic"`
	TopicID    string  `json:"topicId,omitempty"`
	Partitions []int32 `json:"partitions"`
}

// Offset is one committed offset.
type Offset struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	LeaderEpoch     int32  `json:"leaderEpoch"`
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commitTimestamp"`
	ExpireTimestamp int64  `json:"expireTimestamp"`
	// RecordOffset is the offset of the record in __consumer_offsets.
	RecordOffset int64 `json:"recordOffset"`
	// ProducerID is the transactional producer that committed it (-1:
	// committed directly).
	ProducerID int64 `json:"producerId"`
	// LogEndOffset is the partition's high watermark from the log dirs
	// read (what kafka-consumer-groups.sh prints as LOG-END-OFFSET: a
	// read_uncommitted ListOffsets latest), Lag the difference; nil when
	// the partition is not on these disks.
	LogEndOffset *int64 `json:"logEndOffset"`
	Lag          *int64 `json:"lag"`
	// ConsumerID, Host and ClientID are the member the partition is
	// assigned to ("" when none).
	ConsumerID string `json:"consumerId"`
	Host       string `json:"host"`
	ClientID   string `json:"clientId"`
}

// DeletedOffset is a committed partition whose last record is a
// tombstone.
type DeletedOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// LastOffset is the offset committed before it (-1: none read).
	LastOffset      int64 `json:"lastOffset"`
	TombstoneOffset int64 `json:"tombstoneOffset"`
	// TombstoneTimestamp is the tombstone's record timestamp.
	TombstoneTimestamp int64 `json:"tombstoneTimestamp"`
}

type tp struct {
	topic string
	part  int32
}

// OffsetsPartitionRead is one __consumer_offsets partition read.
type OffsetsPartitionRead struct {
	Path      string `json:"path"`
	Partition int32  `json:"partition"`
	Records   int64  `json:"records"`
	Batches   int64  `json:"batches"`
	// Skipped are other replicas of the same partition (other brokers'
	// log dirs), not read: the one with the highest log end offset was.
	Skipped []string `json:"skippedReplicas"`
}

// GroupsReport is what Groups found.
type GroupsReport struct {
	// OffsetsPartitions is the partition count the coordinator partitions
	// are computed with.
	OffsetsPartitions int32                  `json:"offsetsTopicPartitions"`
	Read              []OffsetsPartitionRead `json:"partitionsRead"`
	Groups            []*Group               `json:"groups"`
	ProblemList
}

// ProblemList is the things a report could not read or apply: at most
// MaxProblems of them, ProblemCount counts them all.
type ProblemList struct {
	Problems     []Problem `json:"problems"`
	ProblemCount int       `json:"problemCount"`
}

func (ps *ProblemList) problem(p Problem) {
	ps.ProblemCount++
	if len(ps.Problems) < MaxProblems {
		ps.Problems = append(ps.Problems, p)
	}
}

// Problem is something the replay could not read or apply.
type Problem struct {
	File     string `json:"file"`
	Position int64  `json:"position"`
	Offset   int64  `json:"offset"`
	Message  string `json:"message"`
}

// MaxProblems bounds the problems a report keeps (the count goes on).
const MaxProblems = 100

// GroupsOptions say what to read.
type GroupsOptions struct {
	// Groups limits the report to these group ids (all when empty).
	Groups []string
	// OffsetsPartitions is offsets.topic.num.partitions for the coordinator
	// partitions; 0: the highest __consumer_offsets-N found plus one, or 50.
	OffsetsPartitions int32
	// NoLag skips reading the committed partitions' offsets.
	NoLag         bool
	MaxBatchBytes int
}

// Groups reads every __consumer_offsets partition in the log dirs and the
// partitions beside them for lag.
func Groups(ctx context.Context, dirs []*LogDir, opts GroupsOptions) (*GroupsReport, error) {
	rep := &GroupsReport{Read: []OffsetsPartitionRead{}, Groups: []*Group{}, ProblemList: ProblemList{Problems: []Problem{}}}
	parts := replicasOf(dirs, OffsetsTopic)
	im := metadataImage(ctx, dirs)
	rep.OffsetsPartitions = opts.OffsetsPartitions
	if rep.OffsetsPartitions <= 0 {
		rep.OffsetsPartitions = offsetsPartitions(im, parts)
	}
	want := map[string]bool{}
	for _, g := range opts.Groups {
		want[g] = true
	}
	names := topicNames(dirs, im)
	var keys []int32
	for n := range parts {
		keys = append(keys, n)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, n := range keys {
		pd, skipped := mostComplete(parts[n])
		rd := &groupReplay{rep: rep, want: want, groups: map[string]*Group{}, part: n, topicNames: names}
		read := OffsetsPartitionRead{Path: pd.Path, Partition: n, Skipped: skipped}
		if err := rd.readPartition(ctx, pd, &read, opts.MaxBatchBytes); err != nil {
			return nil, err
		}
		rep.Read = append(rep.Read, read)
		for _, g := range rd.groups {
			g.finish(names, rep.OffsetsPartitions)
			rep.Groups = append(rep.Groups, g)
		}
	}
	sort.Slice(rep.Groups, func(i, j int) bool {
		if rep.Groups[i].GroupID != rep.Groups[j].GroupID {
			return rep.Groups[i].GroupID < rep.Groups[j].GroupID
		}
		return rep.Groups[i].Partition < rep.Groups[j].Partition
	})
	if !opts.NoLag {
		if err := fillLag(ctx, dirs, rep.Groups, opts.MaxBatchBytes); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// groupReplay replays one __consumer_offsets partition.
type groupReplay struct {
	rep        *GroupsReport
	want       map[string]bool
	groups     map[string]*Group
	part       int32
	topicNames map[[16]byte]string
	// openGroups are the groups each producer has pending offsets in.
	openGroups map[int64]map[string]bool
}

func (rd *groupReplay) readPartition(ctx context.Context, pd *PartitionDir, read *OffsetsPartitionRead, maxBatchBytes int) error {
	return eachRecord(ctx, pd.Path, maxBatchBytes, rd.rep.problem, read, func(b *format.Batch, r *format.Record) {
		if b.IsControl() {
			k, err := format.ParseControlKey(r.Key)
			if err == nil && (k.Type == format.ControlCommit || k.Type == format.ControlAbort) {
				rd.endTransaction(b.ProducerID, k.Type == format.ControlCommit)
			}
			return
		}
		rec, err := it.DecodeGroupRecord(r.Key, r.Value)
		if errors.Is(err, it.ErrUnknownRecordType) {
			return // the coordinator's loader skips what it does not know
		}
		if err != nil {
			rd.rep.problem(Problem{File: pd.Path, Position: b.Pos, Offset: r.Offset, Message: err.Error()})
			return
		}
		pid := int64(-1)
		if b.IsTransactional() {
			pid = b.ProducerID
		}
		rd.replay(r.Offset, r.Timestamp, pid, rec)
	})
}

// group returns the group of that id as typ, creating it, reviving a
// deleted one, or turning one of another type into typ (a classic group
// upgraded to KIP-848 or back); nil when the report leaves it out.
func (rd *groupReplay) group(id string, typ string) *Group {
	if len(rd.want) > 0 && !rd.want[id] {
		return nil
	}
	g := rd.groups[id]
	if g == nil {
		g = &Group{GroupID: id, Type: typ, Partition: rd.part, members: map[string]*Member{}, offsets: map[tp]*Offset{},
			deleted: map[tp]*DeletedOffset{}, pending: map[int64]map[tp]*Offset{}}
		g.reset(typ)
		rd.groups[id] = g
		return g
	}
	if g.Type != typ || g.DeletedAt >= 0 {
		g.reset(typ)
	}
	return g
}

// reset makes g a new group of type typ, keeping its offsets (they are
// stored apart from the group in Kafka too).
func (g *Group) reset(typ string) {
	g.Type, g.State, g.ProtocolType, g.Protocol, g.Leader = typ, "Empty", "", "", ""
	g.Generation, g.GroupEpoch, g.AssignmentEpoch, g.StateTimestamp, g.DeletedAt = -1, -1, -1, -1, -1
	g.members, g.topology = map[string]*Member{}, false
}

func (g *Group) member(id string) *Member {
	m := g.members[id]
	if m == nil {
		m = &Member{MemberID: id, SessionTimeoutMs: -1, RebalanceTimeoutMs: -1, MemberEpoch: -1, PreviousMemberEpoch: -1}
		g.members[id] = m
	}
	return m
}

// replay applies one record (GroupCoordinatorShard.replay).
func (rd *groupReplay) replay(offset, ts, pid int64, rec it.CoordinatorRecord) {
	switch k := rec.Key.(type) {
	case *it.OffsetCommitKey:
		rd.replayOffset(offset, ts, pid, k, rec.Value)
	case *it.GroupMetadataKey:
		rd.replayClassic(offset, k.Group, rec.Value)
	case *it.GroupKey:
		rd.replayGroupKey(offset, rec.Type, k.GroupID, rec.Value)
	case *it.MemberKey:
		rd.replayMember(rec.Type, k, rec.Value)
	}
}

// replayOffset is OffsetMetadataManager.replay: a commit outside a
// transaction is stored, one inside waits for its marker, a tombstone
// removes the committed offset and the pending ones of the group's open
// transactions. A commit for a group that does not exist creates a simple
// (classic, protocol-less) group.
func (rd *groupReplay) replayOffset(offset, ts, pid int64, k *it.OffsetCommitKey, v any) {
	g := rd.groups[k.Group]
	switch {
	case g != nil && (v == nil || g.DeletedAt < 0):
	case v == nil:
		// A tombstone for a group not seen: kept to report the deleted
		// offset (the group is Dead unless records bring it back).
		if g = rd.group(k.Group, GroupClassic); g == nil {
			return
		}
		g.State, g.DeletedAt = "Dead", offset
	default:
		if g = rd.group(k.Group, GroupClassic); g == nil {
			return
		}
	}
	key := tp{k.Topic, k.Partition}
	if v == nil {
		del := &DeletedOffset{Topic: k.Topic, Partition: k.Partition, LastOffset: -1, TombstoneOffset: offset, TombstoneTimestamp: ts}
		if o := g.offsets[key]; o != nil {
			del.LastOffset = o.Offset
		} else if old := g.deleted[key]; old != nil {
			del.LastOffset = old.LastOffset
		}
		delete(g.offsets, key)
		g.deleted[key] = del
		for _, p := range g.pending {
			delete(p, key)
		}
		return
	}
	c := v.(*it.OffsetCommitValue)
	if pid < 0 {
		// The common case, millions of times: update in place.
		o := g.offsets[key]
		if o == nil {
			o = &Offset{Topic: k.Topic, Partition: k.Partition}
			g.offsets[key] = o
		}
		o.Offset, o.LeaderEpoch, o.Metadata, o.CommitTimestamp, o.ExpireTimestamp = c.Offset, c.LeaderEpoch, c.Metadata, c.CommitTimestamp, c.ExpireTimestamp
		o.RecordOffset, o.ProducerID = offset, pid
		if len(g.deleted) > 0 {
			delete(g.deleted, key)
		}
		return
	}
	o := &Offset{Topic: k.Topic, Partition: k.Partition, Offset: c.Offset, LeaderEpoch: c.LeaderEpoch, Metadata: c.Metadata,
		CommitTimestamp: c.CommitTimestamp, ExpireTimestamp: c.ExpireTimestamp, RecordOffset: offset, ProducerID: pid}
	p := g.pending[pid]
	if p == nil {
		p = map[tp]*Offset{}
		g.pending[pid] = p
	}
	p[key] = o
	if rd.openGroups == nil {
		rd.openGroups = map[int64]map[string]bool{}
	}
	if rd.openGroups[pid] == nil {
		rd.openGroups[pid] = map[string]bool{}
	}
	rd.openGroups[pid][g.GroupID] = true
}

// endTransaction is OffsetMetadataManager.replayEndTransactionMarker: at
// COMMIT the producer's pending offsets become committed unless a later
// record already committed the partition; at ABORT they are dropped.
func (rd *groupReplay) endTransaction(pid int64, commit bool) {
	for id := range rd.openGroups[pid] {
		g := rd.groups[id]
		if g == nil {
			continue
		}
		for key, o := range g.pending[pid] {
			if !commit {
				continue
			}
			if cur := g.offsets[key]; cur == nil || o.RecordOffset > cur.RecordOffset {
				g.offsets[key] = o
				delete(g.deleted, key)
			}
		}
		delete(g.pending, pid)
	}
	delete(rd.openGroups, pid)
}

// replayClassic is GroupMetadataManager.replay(GroupMetadataKey): the
// value replaces the group (Empty without members, Stable with), a
// tombstone removes it.
func (rd *groupReplay) replayClassic(offset int64, id string, v any) {
	if v == nil {
		if g := rd.groups[id]; g != nil && g.Type == GroupClassic {
			g.State, g.DeletedAt, g.members = "Dead", offset, map[string]*Member{}
		}
		return
	}
	g := rd.group(id, GroupClassic)
	if g == nil {
		return
	}
	gv := v.(*it.GroupMetadataValue)
	g.ProtocolType, g.Generation, g.StateTimestamp = gv.ProtocolType, gv.Generation, gv.CurrentStateTimestamp
	g.Protocol, g.Leader = deref(gv.Protocol), deref(gv.Leader)
	g.members = map[string]*Member{}
	for _, mv := range gv.Members {
		m := g.member(mv.MemberID)
		m.GroupInstanceID, m.ClientID, m.ClientHost = mv.GroupInstanceID, mv.ClientID, mv.ClientHost
		m.SessionTimeoutMs, m.RebalanceTimeoutMs = mv.SessionTimeout, mv.RebalanceTimeout
		if m.RebalanceTimeoutMs == -1 {
			m.RebalanceTimeoutMs = mv.SessionTimeout
		}
		if gv.ProtocolType == "consumer" {
			if sub, err := it.DecodeConsumerSubscription(mv.Subscription); err == nil {
				m.Subscription, m.RackID = sub.Topics, sub.RackID
			}
			if as, err := it.DecodeConsumerAssignment(mv.Assignment); err == nil {
				for _, p := range as.Partitions {
					m.Assignment = append(m.Assignment, TopicAssignment{Topic: p.Topic, Partitions: p.Partitions})
				}
			}
		}
	}
	g.State = "Empty"
	if len(gv.Members) > 0 {
		g.State = "Stable"
	}
}

// replayGroupKey applies the records keyed by a group id alone: the group
// epoch of a consumer, share or Streams group, its target assignment
// epoch, its subscription metadata, its Streams topology.
func (rd *groupReplay) replayGroupKey(offset int64, typ int16, id string, v any) {
	kind := modernType(typ)
	if kind == "" {
		return
	}
	if v == nil {
		g := rd.groups[id]
		if g == nil {
			return
		}
		switch typ {
		case 3, 11, 17: // the group metadata: the group is removed
			g.State, g.DeletedAt = "Dead", offset
		case 6, 12, 20:
			g.AssignmentEpoch = -1
		}
		return
	}
	g := rd.group(id, kind)
	if g == nil {
		return
	}
	switch x := v.(type) {
	case *it.ConsumerGroupMetadataValue:
		g.GroupEpoch = x.Epoch
	case *it.ShareGroupMetadataValue:
		g.GroupEpoch = x.Epoch
	case *it.StreamsGroupMetadataValue:
		g.GroupEpoch = x.Epoch
	case *it.TargetAssignmentMetadataValue:
		g.AssignmentEpoch = x.AssignmentEpoch
	case *it.PartitionMetadataValue:
		for _, t := range x.Topics {
			if _, ok := rd.topicNames[t.TopicID]; !ok {
				rd.topicNames[t.TopicID] = t.TopicName
			}
		}
	case *it.StreamsGroupTopologyValue:
		g.topology = true
	}
}

// modernType is the group type of a record type keyed by group id.
func modernType(t int16) string {
	switch {
	case t >= 3 && t <= 8, t == 16:
		return GroupConsumer
	case t >= 9 && t <= 15:
		return GroupShare
	case t >= 17 && t <= 23:
		return GroupStreams
	}
	return ""
}

// replayMember applies a member's subscription, target or current
// assignment (GroupMetadataManager.replay of the member records): the
// subscription's tombstone removes the member, the current assignment's
// sets its epochs to -1 (LEAVE_GROUP_MEMBER_EPOCH).
func (rd *groupReplay) replayMember(typ int16, k *it.MemberKey, v any) {
	kind := modernType(typ)
	if kind == "" {
		return
	}
	g := rd.groups[k.GroupID]
	if v == nil {
		if g == nil {
			return
		}
		m := g.members[k.MemberID]
		if m == nil {
			return
		}
		switch typ {
		case 5, 10, 19:
			delete(g.members, k.MemberID)
		case 7, 13, 21:
			m.targetIDs, m.TargetAssignment = nil, nil
		case 8, 14, 22:
			m.MemberEpoch, m.PreviousMemberEpoch, m.memberEpochSet = -1, -1, true
			m.topicIDs, m.revokingIDs, m.Assignment = nil, nil, nil
		}
		return
	}
	if g = rd.group(k.GroupID, kind); g == nil {
		return
	}
	m := g.member(k.MemberID)
	switch x := v.(type) {
	case *it.ConsumerGroupMemberMetadataValue:
		m.GroupInstanceID, m.RackID, m.ClientID, m.ClientHost = x.InstanceID, x.RackID, x.ClientID, x.ClientHost
		m.Subscription, m.SubscribedRegex, m.RebalanceTimeoutMs, m.ServerAssignor = x.SubscribedTopicNames, x.SubscribedTopicRegex, x.RebalanceTimeoutMs, x.ServerAssignor
		if x.ClassicMemberMetadata != nil {
			m.ClassicProtocol, m.SessionTimeoutMs = true, x.ClassicMemberMetadata.SessionTimeoutMs
		}
	case *it.ShareGroupMemberMetadataValue:
		m.RackID, m.ClientID, m.ClientHost, m.Subscription = x.RackID, x.ClientID, x.ClientHost, x.SubscribedTopicNames
	case *it.StreamsGroupMemberMetadataValue:
		m.GroupInstanceID, m.RackID, m.ClientID, m.ClientHost = x.InstanceID, x.RackID, x.ClientID, x.ClientHost
		m.RebalanceTimeoutMs, m.ProcessID, m.UserEndpoint = x.RebalanceTimeoutMs, x.ProcessID, x.UserEndpoint
	case *it.TargetAssignmentMemberValue:
		m.targetIDs = x.TopicPartitions
	case *it.CurrentMemberAssignmentValue:
		m.MemberEpoch, m.PreviousMemberEpoch, m.memberEpochSet = x.MemberEpoch, x.PreviousMemberEpoch, true
		m.MemberState = memberState(x.State)
		m.topicIDs, m.revokingIDs = x.AssignedPartitions, x.PartitionsPendingRevocation
	case *it.StreamsGroupAssignmentValue:
		if typ == 21 {
			m.TargetAssignment = tasks(x.ActiveTasks)
		} else {
			m.MemberEpoch, m.PreviousMemberEpoch, m.memberEpochSet = x.MemberEpoch, x.PreviousMemberEpoch, true
			m.MemberState = memberState(x.State)
			m.Assignment = tasks(x.ActiveTasks)
		}
	}
}

func tasks(ts []it.TaskIDs) []TopicAssignment {
	out := make([]TopicAssignment, len(ts))
	for i, t := range ts {
		out[i] = TopicAssignment{Topic: "subtopology " + t.SubtopologyID, Partitions: t.Partitions}
	}
	return out
}

// memberState is MemberState's name.
func memberState(s int8) string {
	switch s {
	case 0:
		return "STABLE"
	case 1:
		return "UNREVOKED_PARTITIONS"
	case 2:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN(" + strconv.Itoa(int(s)) + ")"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// finish fills the group's exported lists from its maps and computes a
// modern group's state (ModernGroup.maybeUpdateGroupState).
func (g *Group) finish(names map[[16]byte]string, partitions int32) {
	g.CoordinatorPartition = it.CoordinatorPartition(g.GroupID, partitions)
	resolve := func(ids []it.TopicIDPartitions) []TopicAssignment {
		var out []TopicAssignment
		for _, t := range ids {
			a := TopicAssignment{TopicID: format.FormatTopicID(t.TopicID), Partitions: t.Partitions}
			a.Topic = names[t.TopicID]
			if a.Topic == "" {
				a.Topic = a.TopicID
			}
			out = append(out, a)
		}
		return out
	}
	g.Members = []*Member{}
	for _, m := range g.members {
		if m.topicIDs != nil || m.targetIDs != nil || m.revokingIDs != nil {
			m.Assignment = resolve(m.topicIDs)
			m.TargetAssignment = resolve(m.targetIDs)
			m.PendingRevocation = resolve(m.revokingIDs)
		}
		g.Members = append(g.Members, m)
	}
	sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].MemberID < g.Members[j].MemberID })
	if g.Type != GroupClassic && g.DeletedAt < 0 {
		g.State = modernState(g)
	}
	if g.DeletedAt >= 0 {
		g.State = "Dead"
	}
	g.Offsets = sortedOffsets(g.offsets)
	g.PendingOffsets = []*Offset{}
	for _, p := range g.pending {
		g.PendingOffsets = append(g.PendingOffsets, sortedOffsets(p)...)
	}
	g.DeletedOffsets = []*DeletedOffset{}
	for _, d := range g.deleted {
		g.DeletedOffsets = append(g.DeletedOffsets, d)
	}
	sort.Slice(g.DeletedOffsets, func(i, j int) bool {
		a, b := g.DeletedOffsets[i], g.DeletedOffsets[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	// Who holds each committed partition (kafka-consumer-groups.sh's
	// CONSUMER-ID, HOST, CLIENT-ID).
	owner := map[tp]*Member{}
	for _, m := range g.Members {
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				owner[tp{a.Topic, p}] = m
			}
		}
	}
	for _, o := range g.Offsets {
		if m := owner[tp{o.Topic, o.Partition}]; m != nil {
			o.ConsumerID, o.Host, o.ClientID = m.MemberID, m.ClientHost, m.ClientID
		}
	}
}

// modernState is ModernGroup.maybeUpdateGroupState: Empty without
// members, Assigning while the group epoch is ahead of the target
// assignment's, Reconciling while a member is not at the target epoch in
// a stable state, Stable otherwise (a Streams group without a topology is
// NotReady).
func modernState(g *Group) string {
	switch {
	case len(g.members) == 0:
		return "Empty"
	case g.Type == GroupStreams && !g.topology:
		return "NotReady"
	case g.GroupEpoch > g.AssignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if m.MemberEpoch != g.AssignmentEpoch || m.MemberState != "STABLE" {
			return "Reconciling"
		}
	}
	return "Stable"
}

func sortedOffsets(m map[tp]*Offset) []*Offset {
	out := make([]*Offset, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// replicasOf is the partition directories of topic in the log dirs, by
// partition number (several when several brokers' log dirs hold one).
func replicasOf(dirs []*LogDir, topic string) map[int32][]*PartitionDir {
	out := map[int32][]*PartitionDir{}
	for _, ld := range dirs {
		for _, pd := range ld.Partitions {
			if pd.Topic == topic {
				out[pd.Partition] = append(out[pd.Partition], pd)
			}
		}
	}
	return out
}

// mostComplete picks, of a partition's replicas, the one with the highest
// log end offset (the first on a tie); the others' paths are returned.
func mostComplete(replicas []*PartitionDir) (*PartitionDir, []string) {
	best, bestLEO := replicas[0], int64(-2)
	skipped := []string{}
	if len(replicas) > 1 {
		for _, r := range replicas {
			leo := int64(-1)
			if st, err := readState(r, stateOptions{}); err == nil {
				leo = st.LogEndOffset
			}
			if leo > bestLEO {
				best, bestLEO = r, leo
			}
		}
	}
	for _, r := range replicas {
		if r != best {
			skipped = append(skipped, r.Path)
		}
	}
	return best, skipped
}

// offsetsPartitions is __consumer_offsets' partition count: the metadata
// image's when the log dirs hold one, else offsets.topic.num.partitions'
// default (50), or more when a higher partition is on the disks.
func offsetsPartitions(im *kraft.Image, parts map[int32][]*PartitionDir) int32 {
	if im != nil {
		if t := im.Topic(OffsetsTopic); t != nil && len(t.Partitions) > 0 {
			return int32(len(t.Partitions))
		}
	}
	n := int32(DefaultOffsetsPartitions)
	for p := range parts {
		n = max(n, p+1)
	}
	return n
}

// topicNames maps topic ids to names: the metadata image's, then what the
// log dirs record (partition.metadata).
func topicNames(dirs []*LogDir, im *kraft.Image) map[[16]byte]string {
	out := map[[16]byte]string{}
	if im != nil {
		for _, t := range im.Topics {
			out[t.ID] = t.Name
		}
	}
	for _, ld := range dirs {
		for _, pd := range ld.Partitions {
			if _, known := out[pd.TopicID]; pd.TopicID != ([16]byte{}) && !known {
				out[pd.TopicID] = pd.Topic
			}
		}
	}
	return out
}

// fillLag reads each committed partition's high watermark from the log
// dirs (the highest of its replicas) and sets LogEndOffset and Lag.
func fillLag(ctx context.Context, dirs []*LogDir, groups []*Group, maxBatchBytes int) error {
	type ends struct {
		hw    int64
		found bool
	}
	cache := map[tp]ends{}
	replicas := map[tp][]*PartitionDir{}
	for _, ld := range dirs {
		for _, pd := range ld.Partitions {
			k := tp{pd.Topic, pd.Partition}
			replicas[k] = append(replicas[k], pd)
		}
	}
	for _, g := range groups {
		for _, o := range g.Offsets {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := tp{o.Topic, o.Partition}
			e, seen := cache[k]
			if !seen {
				e.hw = -1
				for _, pd := range replicas[k] {
					st, err := readState(pd, stateOptions{maxBatchBytes: maxBatchBytes})
					if err != nil || st.HighWatermark < 0 {
						continue
					}
					if !e.found || st.HighWatermark > e.hw {
						e.hw, e.found = st.HighWatermark, true
					}
				}
				cache[k] = e
			}
			if e.found {
				hw, lag := e.hw, e.hw-o.Offset
				o.LogEndOffset, o.Lag = &hw, &lag
			}
		}
	}
	return nil
}

// GroupByID returns the group of that id in the report, or nil.
func (rep *GroupsReport) GroupByID(id string) *Group {
	for _, g := range rep.Groups {
		if g.GroupID == id {
			return g
		}
	}
	return nil
}

// metadataImage is the KRaft image of the __cluster_metadata-0 in the log
// dirs (the first found), nil when there is none or it cannot be read.
func metadataImage(ctx context.Context, dirs []*LogDir) *kraft.Image {
	for _, ld := range dirs {
		for _, pd := range ld.Partitions {
			if pd.Topic == kraft.MetadataTopic && pd.Partition == 0 {
				im, err := kraft.Load(ctx, pd.Path, kraft.Options{UpTo: -1})
				if err == nil {
					return im
				}
			}
		}
	}
	return nil
}
