package internaltopic

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// The message schemas the decoders interpret, transcribed from Kafka's JSON
// message definitions (4.3 line):
//
//   - group-coordinator/src/main/resources/common/message/*{Key,Value}.json
//   - transaction-coordinator/src/main/resources/common/message/TransactionLog{Key,Value}.json
//   - clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json
//   - metadata/src/main/resources/common/metadata/*Record.json
//   - share-coordinator/src/main/resources/common/message/Share{Snapshot,Update}{Key,Value}.json
//   - storage/src/main/resources/message/Remote*Record.json
//
// Each schema keeps what the wire format and the generated *JsonConverter
// depend on: field order, type, versions, nullable versions, tagged versions
// and tag, and the default a tagged field is compared with before it is
// written. Field names are Kafka's; the JSON name is the same with a
// lower-case first letter (MessageGenerator's camelCaseName).

// fieldType is the wire type of a field, or of an array's elements.
type fieldType uint8

const (
	typeBool fieldType = iota + 1
	typeInt8
	typeInt16
	typeUint16
	typeInt32
	typeUint32
	typeInt64
	typeFloat64
	typeUUID
	typeString
	typeBytes
	typeStruct
)

// versionRange is an inclusive range of message versions; lo > hi is empty.
type versionRange struct{ lo, hi int16 }

var noVersions = versionRange{1, 0}

func (r versionRange) has(v int16) bool { return v >= r.lo && v <= r.hi }

// parseVersions reads Kafka's version syntax: "none", "N", "N+" or "N-M".
func parseVersions(s string) versionRange {
	if s == "" || s == "none" {
		return noVersions
	}
	if n, ok := strings.CutSuffix(s, "+"); ok {
		return versionRange{mustInt16(n), math.MaxInt16}
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok {
		return versionRange{mustInt16(lo), mustInt16(hi)}
	}
	v := mustInt16(s)
	return versionRange{v, v}
}

func mustInt16(s string) int16 {
	n, err := strconv.ParseInt(s, 10, 16)
	if err != nil {
		panic("dump: bad version in a schema table: " + s)
	}
	return int16(n)
}

// field is one field of a message or struct.
type field struct {
	name       string // JSON name
	typ        fieldType
	array      bool
	versions   versionRange
	nullable   versionRange
	tagged     versionRange
	tag        uint32
	def        fieldDefault
	structName string  // for typeStruct: the struct's name (used in errors)
	fields     []field // for typeStruct: its fields
}

// fieldDefault is a field's "default" (Kafka's FieldSpec.fieldDefault): the
// value of a field that was not read, and what a tagged field's value is
// compared with before the JSON converter writes it.
type fieldDefault struct {
	null bool // "default": "null"
	i    int64
	f    float64
	s    string
}

// message is one message schema.
type message struct {
	name     string
	valid    versionRange
	flexible versionRange
	fields   []field
}

type fieldOpt func(*field)

// fld builds a field from Kafka's spelling: typ is "int32", "[]string",
// "[]TopicPartition", "Endpoint", ... (a struct type needs withFields).
func fld(name, typ, versions string, opts ...fieldOpt) field {
	f := field{name: lowerFirst(name), versions: parseVersions(versions), nullable: noVersions, tagged: noVersions}
	if t, ok := strings.CutPrefix(typ, "[]"); ok {
		f.array = true
		typ = t
	}
	switch typ {
	case "bool":
		f.typ = typeBool
	case "int8":
		f.typ = typeInt8
	case "int16":
		f.typ = typeInt16
	case "uint16":
		f.typ = typeUint16
	case "int32":
		f.typ = typeInt32
	case "uint32":
		f.typ = typeUint32
	case "int64":
		f.typ = typeInt64
	case "float64":
		f.typ = typeFloat64
	case "uuid":
		f.typ = typeUUID
	case "string":
		f.typ = typeString
	case "bytes":
		f.typ = typeBytes
	default:
		f.typ = typeStruct
		f.structName = typ
	}
	for _, o := range opts {
		o(&f)
	}
	if f.typ == typeStruct && f.fields == nil {
		panic("dump: struct field without fields in a schema table: " + name)
	}
	return f
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// nullable sets "nullableVersions".
func nullable(v string) fieldOpt { return func(f *field) { f.nullable = parseVersions(v) } }

// tagged sets "taggedVersions" and "tag".
func tagged(tag uint32, v string) fieldOpt {
	return func(f *field) { f.tag, f.tagged = tag, parseVersions(v) }
}

// def sets an integer or boolean (0/1) "default".
func def(i int64) fieldOpt { return func(f *field) { f.def.i = i } }

// defNull sets "default": "null".
func defNull() fieldOpt { return func(f *field) { f.def.null = true } }

// withFields gives a struct field (or array of structs) its fields.
func withFields(fs ...field) fieldOpt { return func(f *field) { f.fields = fs } }

func msg(name, valid, flexible string, fs ...field) *message {
	return &message{name: name, valid: parseVersions(valid), flexible: parseVersions(flexible), fields: fs}
}

// coordinatorKey is a coordinator record key: version 0 only, not flexible,
// string fields unless a field says otherwise.
func coordinatorKey(name string, fs ...field) *message { return msg(name, "0", "none", fs...) }

func groupIDKey(name string) *message {
	return coordinatorKey(name, fld("GroupId", "string", "0"))
}

func memberKey(name string) *message {
	return coordinatorKey(name, fld("GroupId", "string", "0"), fld("MemberId", "string", "0"))
}

// coordinatorRecord is one record type of a coordinator topic.
type coordinatorRecord struct {
	key, value *message
}

// metadataRecord is one MetadataRecordType.
type metadataRecord struct {
	enum string // MetadataRecordType's Java enum name
	msg  *message
}

// decoderSchemas holds every table; built once, on first use.
type decoderSchemas struct {
	group        map[int16]coordinatorRecord
	transaction  map[int16]coordinatorRecord
	metadata     map[int16]metadataRecord
	share        map[int16]coordinatorRecord
	remoteLog    map[int16]*message
	subscription *message
	assignment   *message
}

var schemas = sync.OnceValue(buildSchemas)

func buildSchemas() *decoderSchemas {
	return &decoderSchemas{
		group:        groupRecords(),
		transaction:  transactionRecords(),
		metadata:     metadataRecords(),
		share:        shareRecords(),
		remoteLog:    remoteLogRecords(),
		subscription: consumerProtocolSubscription(),
		assignment:   consumerProtocolAssignment(),
	}
}

// consumerProtocolSubscription is ConsumerProtocolSubscription.json.
func consumerProtocolSubscription() *message {
	return msg("ConsumerProtocolSubscription", "0-3", "none",
		fld("Topics", "[]string", "0+"),
		fld("UserData", "bytes", "0+", nullable("0+"), defNull()),
		fld("OwnedPartitions", "[]TopicPartition", "1+", withFields(
			fld("Topic", "string", "1+"),
			fld("Partitions", "[]int32", "1+"),
		)),
		fld("GenerationId", "int32", "2+", def(-1)),
		fld("RackId", "string", "3+", nullable("3+"), defNull()),
	)
}

// consumerProtocolAssignment is ConsumerProtocolAssignment.json.
func consumerProtocolAssignment() *message {
	return msg("ConsumerProtocolAssignment", "0-3", "none",
		fld("AssignedPartitions", "[]TopicPartition", "0+", withFields(
			fld("Topic", "string", "0+"),
			fld("Partitions", "[]int32", "0+"),
		)),
		fld("UserData", "bytes", "0+", nullable("0+"), defNull()),
	)
}

// groupRecords are GroupCoordinatorRecordSerde's record types
// (__consumer_offsets), keyed by record type.
func groupRecords() map[int16]coordinatorRecord {
	offsetKey := func(name string) *message {
		return coordinatorKey(name,
			fld("group", "string", "0"),
			fld("topic", "string", "0"),
			fld("partition", "int32", "0"))
	}
	topicPartitions := func(v string) []field {
		return []field{fld("TopicId", "uuid", v), fld("Partitions", "[]int32", v)}
	}
	taskIDs := []field{fld("SubtopologyId", "string", "0+"), fld("Partitions", "[]int32", "0+")}
	topicInfo := []field{
		fld("Name", "string", "0+"),
		fld("Partitions", "int32", "0+"),
		fld("ReplicationFactor", "int16", "0+"),
		fld("TopicConfigs", "[]TopicConfig", "0+", withFields(
			fld("key", "string", "0+"),
			fld("value", "string", "0+"),
		)),
	}
	return map[int16]coordinatorRecord{
		0: {offsetKey("LegacyOffsetCommitKey"), msg("LegacyOffsetCommitValue", "0", "none",
			fld("offset", "int64", "0"),
			fld("metadata", "string", "0"),
			fld("commitTimestamp", "int64", "0"),
		)},
		1: {offsetKey("OffsetCommitKey"), msg("OffsetCommitValue", "0-4", "4+",
			fld("offset", "int64", "0+"),
			fld("leaderEpoch", "int32", "3+", def(-1)),
			fld("metadata", "string", "0+"),
			fld("commitTimestamp", "int64", "0+"),
			fld("expireTimestamp", "int64", "1", def(-1)),
		)},
		2: {coordinatorKey("GroupMetadataKey", fld("group", "string", "0")), msg("GroupMetadataValue", "0-4", "4+",
			fld("protocolType", "string", "0+"),
			fld("generation", "int32", "0+"),
			fld("protocol", "string", "0+", nullable("0+")),
			fld("leader", "string", "0+", nullable("0+")),
			fld("currentStateTimestamp", "int64", "2+", def(-1)),
			fld("members", "[]MemberMetadata", "0+", withFields(
				fld("memberId", "string", "0+"),
				fld("groupInstanceId", "string", "3+", nullable("3+"), defNull()),
				fld("clientId", "string", "0+"),
				fld("clientHost", "string", "0+"),
				fld("rebalanceTimeout", "int32", "1+"),
				fld("sessionTimeout", "int32", "0+"),
				fld("subscription", "bytes", "0+"),
				fld("assignment", "bytes", "0+"),
			)),
		)},
		3: {groupIDKey("ConsumerGroupMetadataKey"), msg("ConsumerGroupMetadataValue", "0", "0+",
			fld("Epoch", "int32", "0+"),
			fld("MetadataHash", "int64", "0+", tagged(0, "0+")),
			fld("CreationTimeMs", "int64", "0+", tagged(1, "0+"), def(-1)),
		)},
		4: {groupIDKey("ConsumerGroupPartitionMetadataKey"), msg("ConsumerGroupPartitionMetadataValue", "0", "0+",
			fld("Topics", "[]TopicMetadata", "0+", withFields(
				fld("TopicId", "uuid", "0+"),
				fld("TopicName", "string", "0+"),
				fld("NumPartitions", "int32", "0+"),
				fld("PartitionMetadata", "[]PartitionMetadata", "0+", withFields(
					fld("Partition", "int32", "0+"),
					fld("Racks", "[]string", "0+"),
				)),
			)),
		)},
		5: {memberKey("ConsumerGroupMemberMetadataKey"), msg("ConsumerGroupMemberMetadataValue", "0", "0+",
			fld("InstanceId", "string", "0+", nullable("0+")),
			fld("RackId", "string", "0+", nullable("0+")),
			fld("ClientId", "string", "0+"),
			fld("ClientHost", "string", "0+"),
			fld("SubscribedTopicNames", "[]string", "0+"),
			fld("SubscribedTopicRegex", "string", "0+", nullable("0+")),
			fld("RebalanceTimeoutMs", "int32", "0+", def(-1)),
			fld("ServerAssignor", "string", "0+", nullable("0+")),
			fld("ClassicMemberMetadata", "ClassicMemberMetadata", "0+", nullable("0+"), defNull(), tagged(0, "0+"), withFields(
				fld("SessionTimeoutMs", "int32", "0+"),
				fld("SupportedProtocols", "[]ClassicProtocol", "0+", withFields(
					fld("Name", "string", "0+"),
					fld("Metadata", "bytes", "0+"),
				)),
			)),
		)},
		6: {groupIDKey("ConsumerGroupTargetAssignmentMetadataKey"), msg("ConsumerGroupTargetAssignmentMetadataValue", "0", "0+",
			fld("AssignmentEpoch", "int32", "0+"),
			fld("AssignmentTimestamp", "int64", "0+", tagged(0, "0+")),
		)},
		7: {memberKey("ConsumerGroupTargetAssignmentMemberKey"), msg("ConsumerGroupTargetAssignmentMemberValue", "0", "0+",
			fld("TopicPartitions", "[]TopicPartition", "0+", withFields(topicPartitions("0+")...)),
		)},
		8: {memberKey("ConsumerGroupCurrentMemberAssignmentKey"), msg("ConsumerGroupCurrentMemberAssignmentValue", "0", "0+",
			fld("MemberEpoch", "int32", "0+"),
			fld("PreviousMemberEpoch", "int32", "0+"),
			fld("State", "int8", "0+"),
			fld("AssignedPartitions", "[]TopicPartitions", "0+", withFields(assignedTopicPartitions()...)),
			fld("PartitionsPendingRevocation", "[]TopicPartitions", "0+", withFields(assignedTopicPartitions()...)),
		)},
		10: {memberKey("ShareGroupMemberMetadataKey"), msg("ShareGroupMemberMetadataValue", "0", "0+",
			fld("RackId", "string", "0+", nullable("0+")),
			fld("ClientId", "string", "0+"),
			fld("ClientHost", "string", "0+"),
			fld("SubscribedTopicNames", "[]string", "0+"),
		)},
		11: {groupIDKey("ShareGroupMetadataKey"), msg("ShareGroupMetadataValue", "0", "0+",
			fld("Epoch", "int32", "0+"),
			fld("MetadataHash", "int64", "0+"),
		)},
		12: {groupIDKey("ShareGroupTargetAssignmentMetadataKey"), msg("ShareGroupTargetAssignmentMetadataValue", "0", "0+",
			fld("AssignmentEpoch", "int32", "0+"),
		)},
		13: {memberKey("ShareGroupTargetAssignmentMemberKey"), msg("ShareGroupTargetAssignmentMemberValue", "0", "0+",
			fld("TopicPartitions", "[]TopicPartition", "0+", withFields(topicPartitions("0+")...)),
		)},
		14: {memberKey("ShareGroupCurrentMemberAssignmentKey"), msg("ShareGroupCurrentMemberAssignmentValue", "0", "0+",
			fld("MemberEpoch", "int32", "0+"),
			fld("PreviousMemberEpoch", "int32", "0+"),
			fld("State", "int8", "0+"),
			fld("AssignedPartitions", "[]TopicPartitions", "0+", withFields(topicPartitions("0+")...)),
		)},
		15: {groupIDKey("ShareGroupStatePartitionMetadataKey"), msg("ShareGroupStatePartitionMetadataValue", "0", "0+",
			fld("InitializingTopics", "[]TopicPartitionsInfo", "0+", withFields(topicPartitionsInfo()...)),
			fld("InitializedTopics", "[]TopicPartitionsInfo", "0+", withFields(topicPartitionsInfo()...)),
			fld("DeletingTopics", "[]TopicInfo", "0+", withFields(
				fld("TopicId", "uuid", "0+"),
				fld("TopicName", "string", "0+"),
			)),
		)},
		16: {coordinatorKey("ConsumerGroupRegularExpressionKey",
			fld("GroupId", "string", "0"),
			fld("RegularExpression", "string", "0"),
		), msg("ConsumerGroupRegularExpressionValue", "0", "0+",
			fld("Topics", "[]string", "0+"),
			fld("Version", "int64", "0+"),
			fld("Timestamp", "int64", "0+"),
		)},
		17: {groupIDKey("StreamsGroupMetadataKey"), msg("StreamsGroupMetadataValue", "0", "0+",
			fld("Epoch", "int32", "0+"),
			fld("MetadataHash", "int64", "0+"),
			fld("ValidatedTopologyEpoch", "int32", "0+", tagged(0, "0+"), def(-1)),
			fld("AssignmentConfigs", "[]AssignmentConfig", "0+", withFields(
				fld("Key", "string", "0+"),
				fld("Value", "string", "0+"),
			)),
		)},
		19: {memberKey("StreamsGroupMemberMetadataKey"), msg("StreamsGroupMemberMetadataValue", "0", "0+",
			fld("InstanceId", "string", "0+", nullable("0+")),
			fld("RackId", "string", "0+", nullable("0+")),
			fld("ClientId", "string", "0+"),
			fld("ClientHost", "string", "0+"),
			fld("RebalanceTimeoutMs", "int32", "0+", def(-1)),
			fld("TopologyEpoch", "int32", "0+"),
			fld("ProcessId", "string", "0+"),
			fld("UserEndpoint", "Endpoint", "0+", nullable("0+"), defNull(), withFields(
				fld("Host", "string", "0+"),
				fld("Port", "uint16", "0+"),
			)),
			fld("ClientTags", "[]KeyValue", "0+", withFields(
				fld("Key", "string", "0+"),
				fld("Value", "string", "0+"),
			)),
		)},
		20: {groupIDKey("StreamsGroupTargetAssignmentMetadataKey"), msg("StreamsGroupTargetAssignmentMetadataValue", "0", "0+",
			fld("AssignmentEpoch", "int32", "0+"),
		)},
		21: {memberKey("StreamsGroupTargetAssignmentMemberKey"), msg("StreamsGroupTargetAssignmentMemberValue", "0", "0+",
			fld("ActiveTasks", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("StandbyTasks", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("WarmupTasks", "[]TaskIds", "0+", withFields(taskIDs...)),
		)},
		22: {memberKey("StreamsGroupCurrentMemberAssignmentKey"), msg("StreamsGroupCurrentMemberAssignmentValue", "0", "0+",
			fld("MemberEpoch", "int32", "0+"),
			fld("PreviousMemberEpoch", "int32", "0+"),
			fld("State", "int8", "0+"),
			fld("ActiveTasks", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("StandbyTasks", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("WarmupTasks", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("ActiveTasksPendingRevocation", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("StandbyTasksPendingRevocation", "[]TaskIds", "0+", withFields(taskIDs...)),
			fld("WarmupTasksPendingRevocation", "[]TaskIds", "0+", withFields(taskIDs...)),
		)},
		23: {groupIDKey("StreamsGroupTopologyKey"), msg("StreamsGroupTopologyValue", "0", "0+",
			fld("Epoch", "int32", "0+"),
			fld("Subtopologies", "[]Subtopology", "0+", withFields(
				fld("SubtopologyId", "string", "0+"),
				fld("SourceTopics", "[]string", "0+"),
				fld("SourceTopicRegex", "[]string", "0+"),
				fld("StateChangelogTopics", "[]TopicInfo", "0+", withFields(topicInfo...)),
				fld("RepartitionSinkTopics", "[]string", "0+"),
				fld("RepartitionSourceTopics", "[]TopicInfo", "0+", withFields(topicInfo...)),
				fld("CopartitionGroups", "[]CopartitionGroup", "0+", withFields(
					fld("SourceTopics", "[]int16", "0+"),
					fld("SourceTopicRegex", "[]int16", "0+"),
					fld("RepartitionSourceTopics", "[]int16", "0+"),
				)),
			)),
		)},
	}
}

// assignedTopicPartitions is ConsumerGroupCurrentMemberAssignmentValue's
// TopicPartitions common struct.
func assignedTopicPartitions() []field {
	return []field{
		fld("TopicId", "uuid", "0+"),
		fld("Partitions", "[]int32", "0+"),
		fld("AssignmentEpochs", "[]int32", "0+", nullable("0+"), defNull(), tagged(0, "0+")),
	}
}

func topicPartitionsInfo() []field {
	return []field{
		fld("TopicId", "uuid", "0+"),
		fld("TopicName", "string", "0+"),
		fld("Partitions", "[]int32", "0+"),
		fld("CreateTimestamp", "int64", "0+"),
	}
}

// transactionRecords are TransactionCoordinatorRecordSerde's record types
// (__transaction_state). 4.3 prints TransactionStatus as its int8.
func transactionRecords() map[int16]coordinatorRecord {
	return map[int16]coordinatorRecord{
		0: {coordinatorKey("TransactionLogKey", fld("TransactionalId", "string", "0")),
			msg("TransactionLogValue", "0-1", "1+",
				fld("ProducerId", "int64", "0+"),
				fld("PreviousProducerId", "int64", "1+", tagged(0, "1+"), def(-1)),
				fld("NextProducerId", "int64", "1+", tagged(1, "1+"), def(-1)),
				fld("ProducerEpoch", "int16", "0+"),
				fld("TransactionTimeoutMs", "int32", "0+"),
				fld("TransactionStatus", "int8", "0+"),
				fld("TransactionPartitions", "[]PartitionsSchema", "0+", nullable("0+"), withFields(
					fld("Topic", "string", "0+"),
					fld("PartitionIds", "[]int32", "0+"),
				)),
				fld("TransactionLastUpdateTimestampMs", "int64", "0+"),
				fld("TransactionStartTimestampMs", "int64", "0+"),
				fld("ClientTransactionVersion", "int16", "1+", tagged(2, "1+")),
			)},
	}
}

// metadataRecords are the MetadataRecordType values (KRaft
// __cluster_metadata), keyed by apiKey. Every metadata record is flexible
// from version 0.
func metadataRecords() map[int16]metadataRecord {
	endpoint := func(name string) field {
		return fld("EndPoints", "[]"+name, "0+", withFields(
			fld("Name", "string", "0+"),
			fld("Host", "string", "0+"),
			fld("Port", "uint16", "0+"),
			fld("SecurityProtocol", "int16", "0+"),
		))
	}
	features := func(name string) field {
		return fld("Features", "[]"+name, "0+", withFields(
			fld("Name", "string", "0+"),
			fld("MinSupportedVersion", "int16", "0+"),
			fld("MaxSupportedVersion", "int16", "0+"),
		))
	}
	m := func(enum, name, valid string, fs ...field) metadataRecord {
		return metadataRecord{enum, msg(name, valid, "0+", fs...)}
	}
	return map[int16]metadataRecord{
		0: m("REGISTER_BROKER_RECORD", "RegisterBrokerRecord", "0-4",
			fld("BrokerId", "int32", "0+"),
			fld("IsMigratingZkBroker", "bool", "2+"),
			fld("IncarnationId", "uuid", "0+"),
			fld("BrokerEpoch", "int64", "0+"),
			endpoint("BrokerEndpoint"),
			features("BrokerFeature"),
			fld("Rack", "string", "0+", nullable("0+")),
			fld("Fenced", "bool", "0+", def(1)),
			fld("InControlledShutdown", "bool", "1+"),
			fld("LogDirs", "[]uuid", "3+", tagged(0, "3+")),
			fld("CordonedLogDirs", "[]uuid", "4+", nullable("4+"), defNull(), tagged(1, "4+")),
		),
		1: m("UNREGISTER_BROKER_RECORD", "UnregisterBrokerRecord", "0",
			fld("BrokerId", "int32", "0+"),
			fld("BrokerEpoch", "int64", "0+"),
		),
		2: m("TOPIC_RECORD", "TopicRecord", "0",
			fld("Name", "string", "0+"),
			fld("TopicId", "uuid", "0+"),
		),
		3: m("PARTITION_RECORD", "PartitionRecord", "0-2",
			fld("PartitionId", "int32", "0+", def(-1)),
			fld("TopicId", "uuid", "0+"),
			fld("Replicas", "[]int32", "0+"),
			fld("Isr", "[]int32", "0+"),
			fld("RemovingReplicas", "[]int32", "0+"),
			fld("AddingReplicas", "[]int32", "0+"),
			fld("Leader", "int32", "0+", def(-1)),
			fld("LeaderRecoveryState", "int8", "0+", tagged(0, "0+")),
			fld("LeaderEpoch", "int32", "0+", def(-1)),
			fld("PartitionEpoch", "int32", "0+", def(-1)),
			fld("Directories", "[]uuid", "1+"),
			fld("EligibleLeaderReplicas", "[]int32", "2+", nullable("2+"), defNull(), tagged(1, "2+")),
			fld("LastKnownElr", "[]int32", "2+", nullable("2+"), defNull(), tagged(2, "2+")),
		),
		4: m("CONFIG_RECORD", "ConfigRecord", "0",
			fld("ResourceType", "int8", "0+"),
			fld("ResourceName", "string", "0+"),
			fld("Name", "string", "0+"),
			fld("Value", "string", "0+", nullable("0+")),
		),
		5: m("PARTITION_CHANGE_RECORD", "PartitionChangeRecord", "0-2",
			fld("PartitionId", "int32", "0+", def(-1)),
			fld("TopicId", "uuid", "0+"),
			fld("Isr", "[]int32", "0+", nullable("0+"), defNull(), tagged(0, "0+")),
			fld("Leader", "int32", "0+", def(-2), tagged(1, "0+")),
			fld("Replicas", "[]int32", "0+", nullable("0+"), defNull(), tagged(2, "0+")),
			fld("RemovingReplicas", "[]int32", "0+", nullable("0+"), defNull(), tagged(3, "0+")),
			fld("AddingReplicas", "[]int32", "0+", nullable("0+"), defNull(), tagged(4, "0+")),
			fld("LeaderRecoveryState", "int8", "0+", def(-1), tagged(5, "0+")),
			fld("Directories", "[]uuid", "1+", nullable("1+"), defNull(), tagged(8, "1+")),
			fld("EligibleLeaderReplicas", "[]int32", "2+", nullable("2+"), defNull(), tagged(6, "2+")),
			fld("LastKnownElr", "[]int32", "2+", nullable("2+"), defNull(), tagged(7, "2+")),
		),
		7: m("FENCE_BROKER_RECORD", "FenceBrokerRecord", "0",
			fld("Id", "int32", "0+"),
			fld("Epoch", "int64", "0+"),
		),
		8: m("UNFENCE_BROKER_RECORD", "UnfenceBrokerRecord", "0",
			fld("Id", "int32", "0+"),
			fld("Epoch", "int64", "0+"),
		),
		9: m("REMOVE_TOPIC_RECORD", "RemoveTopicRecord", "0",
			fld("TopicId", "uuid", "0+"),
		),
		10: m("DELEGATION_TOKEN_RECORD", "DelegationTokenRecord", "0",
			fld("Owner", "string", "0+"),
			fld("Requester", "string", "0+"),
			fld("Renewers", "[]string", "0+"),
			fld("IssueTimestamp", "int64", "0+"),
			fld("MaxTimestamp", "int64", "0+"),
			fld("ExpirationTimestamp", "int64", "0+"),
			fld("TokenId", "string", "0+"),
		),
		11: m("USER_SCRAM_CREDENTIAL_RECORD", "UserScramCredentialRecord", "0",
			fld("Name", "string", "0+"),
			fld("Mechanism", "int8", "0+"),
			fld("Salt", "bytes", "0+"),
			fld("StoredKey", "bytes", "0+"),
			fld("ServerKey", "bytes", "0+"),
			fld("Iterations", "int32", "0+"),
		),
		12: m("FEATURE_LEVEL_RECORD", "FeatureLevelRecord", "0",
			fld("Name", "string", "0+"),
			fld("FeatureLevel", "int16", "0+"),
		),
		14: m("CLIENT_QUOTA_RECORD", "ClientQuotaRecord", "0",
			fld("Entity", "[]EntityData", "0+", withFields(
				fld("EntityType", "string", "0+"),
				fld("EntityName", "string", "0+", nullable("0+")),
			)),
			fld("Key", "string", "0+"),
			fld("Value", "float64", "0+"),
			fld("Remove", "bool", "0+"),
		),
		15: m("PRODUCER_IDS_RECORD", "ProducerIdsRecord", "0",
			fld("BrokerId", "int32", "0+"),
			fld("BrokerEpoch", "int64", "0+"),
			fld("NextProducerId", "int64", "0+"),
		),
		17: m("BROKER_REGISTRATION_CHANGE_RECORD", "BrokerRegistrationChangeRecord", "0-3",
			fld("BrokerId", "int32", "0+"),
			fld("BrokerEpoch", "int64", "0+"),
			fld("Fenced", "int8", "0+", tagged(0, "0+")),
			fld("InControlledShutdown", "int8", "1+", tagged(1, "1+")),
			fld("LogDirs", "[]uuid", "2+", tagged(2, "2+")),
			fld("CordonedLogDirs", "[]uuid", "3+", nullable("3+"), defNull(), tagged(3, "3+")),
		),
		18: m("ACCESS_CONTROL_ENTRY_RECORD", "AccessControlEntryRecord", "0",
			fld("Id", "uuid", "0+"),
			fld("ResourceType", "int8", "0+"),
			fld("ResourceName", "string", "0+"),
			fld("PatternType", "int8", "0+"),
			fld("Principal", "string", "0+"),
			fld("Host", "string", "0+"),
			fld("Operation", "int8", "0+"),
			fld("PermissionType", "int8", "0+"),
		),
		19: m("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "RemoveAccessControlEntryRecord", "0",
			fld("Id", "uuid", "0+"),
		),
		20: m("NO_OP_RECORD", "NoOpRecord", "0"),
		21: m("ZK_MIGRATION_STATE_RECORD", "ZkMigrationStateRecord", "0",
			fld("ZkMigrationState", "int8", "0+"),
		),
		22: m("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", "RemoveUserScramCredentialRecord", "0",
			fld("Name", "string", "0+"),
			fld("Mechanism", "int8", "0+"),
		),
		23: m("BEGIN_TRANSACTION_RECORD", "BeginTransactionRecord", "0",
			fld("Name", "string", "0+", nullable("0+"), defNull(), tagged(0, "0+")),
		),
		24: m("END_TRANSACTION_RECORD", "EndTransactionRecord", "0"),
		25: m("ABORT_TRANSACTION_RECORD", "AbortTransactionRecord", "0",
			fld("Reason", "string", "0+", nullable("0+"), defNull(), tagged(0, "0+")),
		),
		26: m("REMOVE_DELEGATION_TOKEN_RECORD", "RemoveDelegationTokenRecord", "0",
			fld("TokenId", "string", "0+"),
		),
		27: m("REGISTER_CONTROLLER_RECORD", "RegisterControllerRecord", "0",
			fld("ControllerId", "int32", "0+"),
			fld("IncarnationId", "uuid", "0+"),
			fld("ZkMigrationReady", "bool", "0+"),
			endpoint("ControllerEndpoint"),
			features("ControllerFeature"),
		),
		28: m("CLEAR_ELR_RECORD", "ClearElrRecord", "0",
			fld("TopicName", "string", "0+"),
		),
	}
}

// shareRecords are ShareCoordinatorRecordSerde's record types
// (__share_group_state). DeliveryCompleteCount (KIP-1226, Kafka 4.2) is a
// tagged field of version 0.
func shareRecords() map[int16]coordinatorRecord {
	key := func(name string) *message {
		return coordinatorKey(name,
			fld("GroupId", "string", "0"),
			fld("TopicId", "uuid", "0"),
			fld("Partition", "int32", "0"))
	}
	stateBatches := fld("StateBatches", "[]StateBatch", "0+", withFields(
		fld("FirstOffset", "int64", "0+"),
		fld("LastOffset", "int64", "0+"),
		fld("DeliveryState", "int8", "0+"),
		fld("DeliveryCount", "int16", "0+"),
	))
	deliveryCompleteCount := fld("DeliveryCompleteCount", "int32", "0+", tagged(0, "0+"), def(-1))
	return map[int16]coordinatorRecord{
		0: {key("ShareSnapshotKey"), msg("ShareSnapshotValue", "0", "0+",
			fld("SnapshotEpoch", "int32", "0+"),
			fld("StateEpoch", "int32", "0+"),
			fld("LeaderEpoch", "int32", "0+"),
			fld("StartOffset", "int64", "0+"),
			deliveryCompleteCount,
			fld("CreateTimestamp", "int64", "0+"),
			fld("WriteTimestamp", "int64", "0+"),
			stateBatches,
		)},
		1: {key("ShareUpdateKey"), msg("ShareUpdateValue", "0", "0+",
			fld("SnapshotEpoch", "int32", "0+"),
			fld("LeaderEpoch", "int32", "0+"),
			fld("StartOffset", "int64", "0+"),
			deliveryCompleteCount,
			stateBatches,
		)},
	}
}

// Field indexes of the __remote_log_metadata messages below, for the
// typed values (remotelog.go).
const (
	rlsmSegmentID = iota
	rlsmStartOffset
	rlsmEndOffset
	rlsmBrokerID
	rlsmMaxTimestamp
	rlsmEventTimestamp
	rlsmLeaderEpochs
	rlsmSize
	rlsmCustomMetadata
	rlsmState
	rlsmTxnIndexEmpty
)

const (
	updSegmentID = iota
	updBrokerID
	updEventTimestamp
	updCustomMetadata
	updState
)

const (
	delTopicIDPartition = iota
	delBrokerID
	delEventTimestamp
	delState
)

const (
	snapSegmentID = iota
	snapStartOffset
	snapEndOffset
	snapBrokerID
	snapMaxTimestamp
	snapEventTimestamp
	snapLeaderEpochs
	snapSize
	snapCustomMetadata
	snapState
	snapTxnIndexEmpty
)

// remoteLogRecords are the records of RemoteLogMetadataSerde
// (__remote_log_metadata), keyed by apiKey (storage's generated
// MetadataRecordType). All are version 0, flexible.
func remoteLogRecords() map[int16]*message {
	topicIDPartition := func(name string) field {
		return fld(name, "TopicIdPartitionEntry", "0+", withFields(
			fld("Name", "string", "0+"),
			fld("Id", "uuid", "0+"),
			fld("Partition", "int32", "0+"),
		))
	}
	segmentID := fld("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", "0+", withFields(
		topicIDPartition("TopicIdPartition"),
		fld("Id", "uuid", "0+"),
	))
	leaderEpochs := fld("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", "0+", withFields(
		fld("LeaderEpoch", "int32", "0+"),
		fld("Offset", "int64", "0+"),
	))
	customMetadata := fld("CustomMetadata", "bytes", "0+", nullable("0+"), defNull())
	txnIndexEmpty := fld("TxnIndexEmpty", "bool", "0+", tagged(0, "0+"))
	return map[int16]*message{
		0: msg("RemoteLogSegmentMetadataRecord", "0", "0+",
			segmentID,
			fld("StartOffset", "int64", "0+"),
			fld("EndOffset", "int64", "0+"),
			fld("BrokerId", "int32", "0+"),
			fld("MaxTimestampMs", "int64", "0+"),
			fld("EventTimestampMs", "int64", "0+"),
			leaderEpochs,
			fld("SegmentSizeInBytes", "int32", "0+"),
			customMetadata,
			fld("RemoteLogSegmentState", "int8", "0+"),
			txnIndexEmpty,
		),
		1: msg("RemoteLogSegmentMetadataUpdateRecord", "0", "0+",
			segmentID,
			fld("BrokerId", "int32", "0+"),
			fld("EventTimestampMs", "int64", "0+"),
			customMetadata,
			fld("RemoteLogSegmentState", "int8", "0+"),
		),
		2: msg("RemotePartitionDeleteMetadataRecord", "0", "0+",
			topicIDPartition("TopicIdPartition"),
			fld("BrokerId", "int32", "0+"),
			fld("EventTimestampMs", "int64", "0+"),
			fld("RemotePartitionDeleteState", "int8", "0+"),
		),
		3: msg("RemoteLogSegmentMetadataSnapshotRecord", "0", "0+",
			fld("SegmentId", "uuid", "0+"),
			fld("StartOffset", "int64", "0+"),
			fld("EndOffset", "int64", "0+"),
			fld("BrokerId", "int32", "0+"),
			fld("MaxTimestampMs", "int64", "0+"),
			fld("EventTimestampMs", "int64", "0+"),
			leaderEpochs,
			fld("SegmentSizeInBytes", "int32", "0+"),
			customMetadata,
			fld("RemoteLogSegmentState", "int8", "0+"),
			txnIndexEmpty,
		),
	}
}
