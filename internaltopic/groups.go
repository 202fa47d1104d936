package internaltopic

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Typed __consumer_offsets and __transaction_state records: what
// GroupCoordinatorRecordSerde and TransactionCoordinatorRecordSerde read,
// as Go values, for code that replays the coordinators' logs (the groups
// and transactions views). They come from the same schema reader that
// prints --offsets-decoder and --transaction-log-decoder.

// CoordinatorRecord is one decoded coordinator record.
type CoordinatorRecord struct {
	// Type is the key's record type (CoordinatorRecordType: 1
	// OffsetCommit, 2 GroupMetadata, 3 ConsumerGroupMetadata, ...).
	Type int16
	// Version is the value's version (0 for a tombstone).
	Version int16
	// Key is the typed key: *OffsetCommitKey (types 0 and 1),
	// *GroupMetadataKey (2), *GroupKey (the types keyed by group id),
	// *MemberKey (by group and member id), *RegularExpressionKey (16),
	// *TransactionLogKey.
	Key any
	// Value is the typed value, nil for a tombstone.
	Value any
}

// ErrUnknownRecordType is a record type the serde does not know (Kafka's
// loader skips it, as kafka-dump-log does).
var ErrUnknownRecordType = errors.New("unknown record type")

// DecodeGroupRecord decodes a __consumer_offsets record (key and value;
// a nil value is a tombstone).
func DecodeGroupRecord(key, value []byte) (CoordinatorRecord, error) {
	return decodeCoordinatorTyped(schemas().group, key, value, groupKey, groupValue)
}

// DecodeTransactionRecord decodes a __transaction_state record.
func DecodeTransactionRecord(key, value []byte) (CoordinatorRecord, error) {
	return decodeCoordinatorTyped(schemas().transaction, key, value,
		func(_ int16, f fields) any { return &TransactionLogKey{TransactionalID: f.str("transactionalId")} },
		func(_ int16, f fields) any { return transactionValue(f) })
}

func decodeCoordinatorTyped(types map[int16]coordinatorRecord, key, value []byte, k, v func(int16, fields) any) (CoordinatorRecord, error) {
	if key == nil {
		return CoordinatorRecord{}, ErrMissingKey
	}
	m, cerr := readCoordinator(types, key, value)
	if cerr != nil {
		if cerr.unknownType {
			return CoordinatorRecord{Type: cerr.recordType}, ErrUnknownRecordType
		}
		return CoordinatorRecord{}, cerr
	}
	r := CoordinatorRecord{Type: m.recordType, Version: m.version, Key: k(m.recordType, fields{fs: m.rec.key.fields, vals: m.keyVals})}
	if !m.tombstone {
		r.Value = v(m.recordType, fields{fs: m.rec.value.fields, vals: m.valVals})
	}
	return r, nil
}

// OffsetCommitKey is OffsetCommitKey (and LegacyOffsetCommitKey).
type OffsetCommitKey struct {
	Group     string
	Topic     string
	Partition int32
}

// GroupMetadataKey is GroupMetadataKey.
type GroupMetadataKey struct{ Group string }

// GroupKey is the key of the records keyed by a group id alone
// (ConsumerGroupMetadataKey, ShareGroupMetadataKey, StreamsGroupTopologyKey, ...).
type GroupKey struct{ GroupID string }

// MemberKey is the key of the records keyed by group and member id.
type MemberKey struct {
	GroupID  string
	MemberID string
}

// RegularExpressionKey is ConsumerGroupRegularExpressionKey.
type RegularExpressionKey struct {
	GroupID           string
	RegularExpression string
}

func groupKey(t int16, f fields) any {
	switch t {
	case 0, 1:
		return &OffsetCommitKey{Group: f.str("group"), Topic: f.str("topic"), Partition: f.int32("partition")}
	case 2:
		return &GroupMetadataKey{Group: f.str("group")}
	case 5, 7, 8, 10, 13, 14, 19, 21, 22:
		return &MemberKey{GroupID: f.str("groupId"), MemberID: f.str("memberId")}
	case 16:
		return &RegularExpressionKey{GroupID: f.str("groupId"), RegularExpression: f.str("regularExpression")}
	}
	return &GroupKey{GroupID: f.str("groupId")}
}

// OffsetCommitValue is OffsetCommitValue (and LegacyOffsetCommitValue):
// LeaderEpoch -1 and ExpireTimestamp -1 when the version has none.
type OffsetCommitValue struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64
	ExpireTimestamp int64
}

// GroupMetadataValue is a classic group's GroupMetadataValue.
type GroupMetadataValue struct {
	ProtocolType          string
	Generation            int32
	Protocol              *string
	Leader                *string
	CurrentStateTimestamp int64
	Members               []GroupMember
}

// GroupMember is one member of a GroupMetadataValue. Subscription and
// Assignment are the protocol's bytes (for the "consumer" protocol type,
// ConsumerProtocolSubscription and ConsumerProtocolAssignment:
// DecodeConsumerSubscription, DecodeConsumerAssignment).
type GroupMember struct {
	MemberID         string
	GroupInstanceID  *string
	ClientID         string
	ClientHost       string
	RebalanceTimeout int32
	SessionTimeout   int32
	Subscription     []byte
	Assignment       []byte
}

// TopicIDPartitions is a topic id's partitions in a KIP-848 assignment.
type TopicIDPartitions struct {
	TopicID    [16]byte
	Partitions []int32
}

// ConsumerGroupMetadataValue is ConsumerGroupMetadataValue: the group epoch.
type ConsumerGroupMetadataValue struct {
	Epoch        int32
	MetadataHash int64
}

// ClassicMemberMetadata is a KIP-848 member that joined with the classic
// protocol.
type ClassicMemberMetadata struct {
	SessionTimeoutMs   int32
	SupportedProtocols []string
}

// ConsumerGroupMemberMetadataValue is a KIP-848 member's subscription.
type ConsumerGroupMemberMetadataValue struct {
	InstanceID            *string
	RackID                *string
	ClientID              string
	ClientHost            string
	SubscribedTopicNames  []string
	SubscribedTopicRegex  *string
	RebalanceTimeoutMs    int32
	ServerAssignor        *string
	ClassicMemberMetadata *ClassicMemberMetadata
}

// TargetAssignmentMetadataValue is the target assignment epoch
// (ConsumerGroup-, ShareGroup- and StreamsGroupTargetAssignmentMetadataValue).
type TargetAssignmentMetadataValue struct{ AssignmentEpoch int32 }

// TargetAssignmentMemberValue is a member's target assignment
// (ConsumerGroup- and ShareGroupTargetAssignmentMemberValue).
type TargetAssignmentMemberValue struct{ TopicPartitions []TopicIDPartitions }

// CurrentMemberAssignmentValue is a member's current assignment
// (ConsumerGroup- and ShareGroupCurrentMemberAssignmentValue). State is a
// MemberState: 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS.
type CurrentMemberAssignmentValue struct {
	MemberEpoch                 int32
	PreviousMemberEpoch         int32
	State                       int8
	AssignedPartitions          []TopicIDPartitions
	PartitionsPendingRevocation []TopicIDPartitions
}

// PartitionMetadataValue is ConsumerGroupPartitionMetadataValue: the
// topics the group subscribes to, by id and name.
type PartitionMetadataValue struct{ Topics []TopicMetadata }

// TopicMetadata is a topic in a PartitionMetadataValue.
type TopicMetadata struct {
	TopicID       [16]byte
	TopicName     string
	NumPartitions int32
}

// ShareGroupMetadataValue is ShareGroupMetadataValue: the group epoch.
type ShareGroupMetadataValue struct {
	Epoch        int32
	MetadataHash int64
}

// ShareGroupMemberMetadataValue is a share group member.
type ShareGroupMemberMetadataValue struct {
	RackID               *string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
}

// RegularExpressionValue is ConsumerGroupRegularExpressionValue.
type RegularExpressionValue struct {
	Topics    []string
	Version   int64
	Timestamp int64
}

// StreamsGroupMetadataValue is StreamsGroupMetadataValue: the group epoch.
type StreamsGroupMetadataValue struct {
	Epoch                  int32
	MetadataHash           int64
	ValidatedTopologyEpoch int32
}

// StreamsGroupMemberMetadataValue is a Streams group member.
type StreamsGroupMemberMetadataValue struct {
	InstanceID         *string
	RackID             *string
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32
	TopologyEpoch      int32
	ProcessID          string
	UserEndpoint       string // host:port, "" when none
}

// TaskIDs are the partitions of one subtopology.
type TaskIDs struct {
	SubtopologyID string
	Partitions    []int32
}

// StreamsGroupAssignmentValue is a Streams member's target or current
// assignment (StreamsGroupTargetAssignmentMemberValue,
// StreamsGroupCurrentMemberAssignmentValue: epochs and state only there).
type StreamsGroupAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               int8
	ActiveTasks         []TaskIDs
	StandbyTasks        []TaskIDs
	WarmupTasks         []TaskIDs
}

// StreamsGroupTopologyValue is StreamsGroupTopologyValue: its epoch and
// subtopologies' source topics.
type StreamsGroupTopologyValue struct {
	Epoch         int32
	Subtopologies []Subtopology
}

// Subtopology is one subtopology of a Streams topology.
type Subtopology struct {
	SubtopologyID string
	SourceTopics  []string
}

// OtherGroupValue is the value of a record type the views read only for
// its presence (ShareGroupStatePartitionMetadataValue).
type OtherGroupValue struct{}

func topicIDPartitions(fs []fields) []TopicIDPartitions {
	out := make([]TopicIDPartitions, len(fs))
	for i, f := range fs {
		out[i] = TopicIDPartitions{TopicID: f.uuid("topicId"), Partitions: f.int32s("partitions")}
	}
	return out
}

func taskIDs(fs []fields) []TaskIDs {
	out := make([]TaskIDs, len(fs))
	for i, f := range fs {
		out[i] = TaskIDs{SubtopologyID: f.str("subtopologyId"), Partitions: f.int32s("partitions")}
	}
	return out
}

func groupValue(t int16, f fields) any {
	switch t {
	case 0:
		return &OffsetCommitValue{Offset: f.int("offset"), LeaderEpoch: -1, Metadata: f.str("metadata"), CommitTimestamp: f.int("commitTimestamp"), ExpireTimestamp: -1}
	case 1:
		return &OffsetCommitValue{Offset: f.int("offset"), LeaderEpoch: f.int32("leaderEpoch"), Metadata: f.str("metadata"),
			CommitTimestamp: f.int("commitTimestamp"), ExpireTimestamp: f.int("expireTimestamp")}
	case 2:
		v := &GroupMetadataValue{ProtocolType: f.str("protocolType"), Generation: f.int32("generation"), Protocol: f.optStr("protocol"),
			Leader: f.optStr("leader"), CurrentStateTimestamp: f.int("currentStateTimestamp"), Members: []GroupMember{}}
		for _, m := range f.structs("members") {
			v.Members = append(v.Members, GroupMember{MemberID: m.str("memberId"), GroupInstanceID: m.optStr("groupInstanceId"),
				ClientID: m.str("clientId"), ClientHost: m.str("clientHost"), RebalanceTimeout: m.int32("rebalanceTimeout"),
				SessionTimeout: m.int32("sessionTimeout"), Subscription: m.bytes("subscription"), Assignment: m.bytes("assignment")})
		}
		return v
	case 3:
		return &ConsumerGroupMetadataValue{Epoch: f.int32("epoch"), MetadataHash: f.int("metadataHash")}
	case 4:
		v := &PartitionMetadataValue{}
		for _, tm := range f.structs("topics") {
			v.Topics = append(v.Topics, TopicMetadata{TopicID: tm.uuid("topicId"), TopicName: tm.str("topicName"), NumPartitions: tm.int32("numPartitions")})
		}
		return v
	case 5:
		v := &ConsumerGroupMemberMetadataValue{InstanceID: f.optStr("instanceId"), RackID: f.optStr("rackId"), ClientID: f.str("clientId"),
			ClientHost: f.str("clientHost"), SubscribedTopicNames: f.strs("subscribedTopicNames"), SubscribedTopicRegex: f.optStr("subscribedTopicRegex"),
			RebalanceTimeoutMs: f.int32("rebalanceTimeoutMs"), ServerAssignor: f.optStr("serverAssignor")}
		if c, ok := f.strct("classicMemberMetadata"); ok {
			cm := &ClassicMemberMetadata{SessionTimeoutMs: c.int32("sessionTimeoutMs")}
			for _, p := range c.structs("supportedProtocols") {
				cm.SupportedProtocols = append(cm.SupportedProtocols, p.str("name"))
			}
			v.ClassicMemberMetadata = cm
		}
		return v
	case 6, 12, 20:
		return &TargetAssignmentMetadataValue{AssignmentEpoch: f.int32("assignmentEpoch")}
	case 7, 13:
		return &TargetAssignmentMemberValue{TopicPartitions: topicIDPartitions(f.structs("topicPartitions"))}
	case 8:
		return &CurrentMemberAssignmentValue{MemberEpoch: f.int32("memberEpoch"), PreviousMemberEpoch: f.int32("previousMemberEpoch"), State: f.int8("state"),
			AssignedPartitions: topicIDPartitions(f.structs("assignedPartitions")), PartitionsPendingRevocation: topicIDPartitions(f.structs("partitionsPendingRevocation"))}
	case 10:
		return &ShareGroupMemberMetadataValue{RackID: f.optStr("rackId"), ClientID: f.str("clientId"), ClientHost: f.str("clientHost"), SubscribedTopicNames: f.strs("subscribedTopicNames")}
	case 11:
		return &ShareGroupMetadataValue{Epoch: f.int32("epoch"), MetadataHash: f.int("metadataHash")}
	case 14:
		return &CurrentMemberAssignmentValue{MemberEpoch: f.int32("memberEpoch"), PreviousMemberEpoch: f.int32("previousMemberEpoch"), State: f.int8("state"),
			AssignedPartitions: topicIDPartitions(f.structs("assignedPartitions"))}
	case 16:
		return &RegularExpressionValue{Topics: f.strs("topics"), Version: f.int("version"), Timestamp: f.int("timestamp")}
	case 17:
		return &StreamsGroupMetadataValue{Epoch: f.int32("epoch"), MetadataHash: f.int("metadataHash"), ValidatedTopologyEpoch: f.int32("validatedTopologyEpoch")}
	case 19:
		v := &StreamsGroupMemberMetadataValue{InstanceID: f.optStr("instanceId"), RackID: f.optStr("rackId"), ClientID: f.str("clientId"),
			ClientHost: f.str("clientHost"), RebalanceTimeoutMs: f.int32("rebalanceTimeoutMs"), TopologyEpoch: f.int32("topologyEpoch"), ProcessID: f.str("processId")}
		if e, ok := f.strct("userEndpoint"); ok {
			v.UserEndpoint = e.str("host") + ":" + strconv.Itoa(int(e.int("port")))
		}
		return v
	case 21:
		return &StreamsGroupAssignmentValue{MemberEpoch: -1, PreviousMemberEpoch: -1, ActiveTasks: taskIDs(f.structs("activeTasks")),
			StandbyTasks: taskIDs(f.structs("standbyTasks")), WarmupTasks: taskIDs(f.structs("warmupTasks"))}
	case 22:
		return &StreamsGroupAssignmentValue{MemberEpoch: f.int32("memberEpoch"), PreviousMemberEpoch: f.int32("previousMemberEpoch"), State: f.int8("state"),
			ActiveTasks: taskIDs(f.structs("activeTasks")), StandbyTasks: taskIDs(f.structs("standbyTasks")), WarmupTasks: taskIDs(f.structs("warmupTasks"))}
	case 23:
		v := &StreamsGroupTopologyValue{Epoch: f.int32("epoch")}
		for _, s := range f.structs("subtopologies") {
			v.Subtopologies = append(v.Subtopologies, Subtopology{SubtopologyID: s.str("subtopologyId"), SourceTopics: s.strs("sourceTopics")})
		}
		return v
	}
	return &OtherGroupValue{}
}

// TopicPartitions is a topic's partitions in a consumer protocol message.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// ConsumerSubscription is a ConsumerProtocolSubscription (the classic
// consumer protocol's JoinGroup metadata).
type ConsumerSubscription struct {
	Version         int16
	Topics          []string
	UserData        []byte
	OwnedPartitions []TopicPartitions
	GenerationID    int32
	RackID          *string
}

// ConsumerAssignment is a ConsumerProtocolAssignment (a member's
// SyncGroup assignment).
type ConsumerAssignment struct {
	Version    int16
	Partitions []TopicPartitions
	UserData   []byte
}

func consumerMessage(m *message, b []byte) (fields, int16, error) {
	if len(b) < 2 {
		return fields{}, 0, errors.New("a consumer protocol message needs its int16 version")
	}
	v := int16(binary.BigEndian.Uint16(b))
	if v < 0 {
		return fields{}, v, errors.New("negative consumer protocol version " + strconv.Itoa(int(v)))
	}
	vals, _, err := readMessage(m, v, b[2:])
	if err != nil {
		return fields{}, v, err
	}
	return fields{fs: m.fields, vals: vals}, v, nil
}

func topicPartitionsOf(fs []fields) []TopicPartitions {
	out := make([]TopicPartitions, len(fs))
	for i, f := range fs {
		out[i] = TopicPartitions{Topic: f.str("topic"), Partitions: f.int32s("partitions")}
	}
	return out
}

// DecodeConsumerSubscription reads a ConsumerProtocolSubscription (an
// int16 version, then the message; versions above klog's are read with
// the newest schema, as ConsumerProtocol does).
func DecodeConsumerSubscription(b []byte) (ConsumerSubscription, error) {
	f, v, err := consumerMessage(schemas().subscription, b)
	if err != nil {
		return ConsumerSubscription{}, err
	}
	return ConsumerSubscription{Version: v, Topics: f.strs("topics"), UserData: f.bytes("userData"),
		OwnedPartitions: topicPartitionsOf(f.structs("ownedPartitions")), GenerationID: f.int32("generationId"), RackID: f.optStr("rackId")}, nil
}

// DecodeConsumerAssignment reads a ConsumerProtocolAssignment.
func DecodeConsumerAssignment(b []byte) (ConsumerAssignment, error) {
	f, v, err := consumerMessage(schemas().assignment, b)
	if err != nil {
		return ConsumerAssignment{}, err
	}
	return ConsumerAssignment{Version: v, Partitions: topicPartitionsOf(f.structs("assignedPartitions")), UserData: f.bytes("userData")}, nil
}

// TransactionLogKey is TransactionLogKey.
type TransactionLogKey struct{ TransactionalID string }

// TransactionLogValue is TransactionLogValue. TransactionStatus is a
// TransactionState id (TransactionStateName).
type TransactionLogValue struct {
	ProducerID               int64
	PreviousProducerID       int64
	NextProducerID           int64
	ProducerEpoch            int16
	TransactionTimeoutMs     int32
	TransactionStatus        int8
	Partitions               []TransactionPartitions
	LastUpdateTimestampMs    int64
	StartTimestampMs         int64
	ClientTransactionVersion int16
}

// TransactionPartitions is a topic's partitions in a transaction.
type TransactionPartitions struct {
	Topic        string
	PartitionIDs []int32
}

func transactionValue(f fields) *TransactionLogValue {
	v := &TransactionLogValue{ProducerID: f.int("producerId"), PreviousProducerID: f.int("previousProducerId"), NextProducerID: f.int("nextProducerId"),
		ProducerEpoch: f.int16("producerEpoch"), TransactionTimeoutMs: f.int32("transactionTimeoutMs"), TransactionStatus: f.int8("transactionStatus"),
		LastUpdateTimestampMs: f.int("transactionLastUpdateTimestampMs"), StartTimestampMs: f.int("transactionStartTimestampMs"),
		ClientTransactionVersion: f.int16("clientTransactionVersion")}
	if ps := f.structs("transactionPartitions"); ps != nil {
		v.Partitions = make([]TransactionPartitions, len(ps))
		for i, p := range ps {
			v.Partitions[i] = TransactionPartitions{Topic: p.str("topic"), PartitionIDs: p.int32s("partitionIds")}
		}
	}
	return v
}

// TransactionStateName is TransactionState's name for a
// TransactionStatus id (Empty, Ongoing, PrepareCommit, PrepareAbort,
// CompleteCommit, CompleteAbort, Dead, PrepareEpochFence).
func TransactionStateName(status int8) string {
	names := []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}
	if status >= 0 && int(status) < len(names) {
		return names[status]
	}
	return "Unknown(" + strconv.Itoa(int(status)) + ")"
}

// CoordinatorPartition is the partition of a coordinator topic that owns
// a group id or transactional id: Utils.abs(id.hashCode()) % partitions
// (GroupCoordinatorService.partitionFor,
// TransactionStateManager.partitionFor), with Java's String.hashCode over
// the UTF-16 code units of the id as Java decodes its bytes, and Kafka's
// Utils.abs, which maps Integer.MIN_VALUE to 0. partitions must be > 0.
func CoordinatorPartition(id string, partitions int32) int32 {
	var h int32
	for _, r := range javaString([]byte(id)) {
		if r >= 0x10000 { // a surrogate pair in UTF-16
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3ff))
			continue
		}
		h = 31*h + int32(r)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}
