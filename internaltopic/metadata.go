package internaltopic

import "strconv"

// Typed __cluster_metadata records: what MetadataRecordSerde reads, as Go
// values, for code that replays the log (the kraft package's image). They
// come from the same schema reader that prints --cluster-metadata-decoder's
// JSON. Names follow Kafka's generated classes
// (metadata/src/main/resources/common/metadata/*Record.json) in Go casing.
//
// Nullable arrays are nil when null and non-nil (possibly empty) when
// present: for PartitionChangeRecord, nil is "no change" and an empty slice
// is "change to empty".

// MetadataType is a MetadataRecordType id (the record's apiKey).
type MetadataType int16

// The metadata record types (MetadataRecordType).
const (
	TypeRegisterBroker            MetadataType = 0
	TypeUnregisterBroker          MetadataType = 1
	TypeTopic                     MetadataType = 2
	TypePartition                 MetadataType = 3
	TypeConfig                    MetadataType = 4
	TypePartitionChange           MetadataType = 5
	TypeFenceBroker               MetadataType = 7
	TypeUnfenceBroker             MetadataType = 8
	TypeRemoveTopic               MetadataType = 9
	TypeDelegationToken           MetadataType = 10
	TypeUserScramCredential       MetadataType = 11
	TypeFeatureLevel              MetadataType = 12
	TypeClientQuota               MetadataType = 14
	TypeProducerIDs               MetadataType = 15
	TypeBrokerRegistrationChange  MetadataType = 17
	TypeAccessControlEntry        MetadataType = 18
	TypeRemoveAccessControlEntry  MetadataType = 19
	TypeNoOp                      MetadataType = 20
	TypeZkMigrationState          MetadataType = 21
	TypeRemoveUserScramCredential MetadataType = 22
	TypeBeginTransaction          MetadataType = 23
	TypeEndTransaction            MetadataType = 24
	TypeAbortTransaction          MetadataType = 25
	TypeRemoveDelegationToken     MetadataType = 26
	TypeRegisterController        MetadataType = 27
	TypeClearElr                  MetadataType = 28
)

// String is the Java enum name (REGISTER_BROKER_RECORD), or unknown(N).
func (t MetadataType) String() string {
	if r, ok := schemas().metadata[int16(t)]; ok {
		return r.enum
	}
	return "unknown(" + strconv.Itoa(int(t)) + ")"
}

// MetadataRecord is one decoded metadata record.
type MetadataRecord struct {
	Type    MetadataType
	Version int16
	// Body is the record: a *RegisterBrokerRecord for TypeRegisterBroker,
	// and so on (*NoOpRecord, *EndTransactionRecord for the empty ones).
	Body any
	// Problem notes a version newer than klog's schema (read with the
	// newest one, as dump prints it); "" otherwise.
	Problem string
}

// Endpoint is a listener of a broker or controller registration.
type Endpoint struct {
	Name             string
	Host             string
	Port             uint16
	SecurityProtocol int16
}

// FeatureRange is a feature a node supports.
type FeatureRange struct {
	Name                string
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// RegisterBrokerRecord is REGISTER_BROKER_RECORD.
type RegisterBrokerRecord struct {
	BrokerID             int32
	IsMigratingZkBroker  bool
	IncarnationID        [16]byte
	BrokerEpoch          int64
	EndPoints            []Endpoint
	Features             []FeatureRange
	Rack                 *string
	Fenced               bool
	InControlledShutdown bool
	LogDirs              [][16]byte
	CordonedLogDirs      [][16]byte
}

// UnregisterBrokerRecord is UNREGISTER_BROKER_RECORD.
type UnregisterBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// TopicRecord is TOPIC_RECORD.
type TopicRecord struct {
	Name    string
	TopicID [16]byte
}

// PartitionRecord is PARTITION_RECORD.
type PartitionRecord struct {
	PartitionID            int32
	TopicID                [16]byte
	Replicas               []int32
	Isr                    []int32
	RemovingReplicas       []int32
	AddingReplicas         []int32
	Leader                 int32
	LeaderRecoveryState    int8
	LeaderEpoch            int32
	PartitionEpoch         int32
	Directories            [][16]byte
	EligibleLeaderReplicas []int32
	LastKnownElr           []int32
}

// ConfigRecord is CONFIG_RECORD; a nil Value removes the key.
type ConfigRecord struct {
	ResourceType int8
	ResourceName string
	Name         string
	Value        *string
}

// NoLeaderChange is PartitionChangeRecord's Leader when the leader does
// not change (LeaderConstants.NO_LEADER_CHANGE).
const NoLeaderChange = -2

// NoLeaderRecoveryStateChange is PartitionChangeRecord's
// LeaderRecoveryState when it does not change.
const NoLeaderRecoveryStateChange = -1

// PartitionChangeRecord is PARTITION_CHANGE_RECORD: nil slices, Leader
// NoLeaderChange and LeaderRecoveryState NoLeaderRecoveryStateChange mean
// "unchanged".
type PartitionChangeRecord struct {
	PartitionID            int32
	TopicID                [16]byte
	Isr                    []int32
	Leader                 int32
	Replicas               []int32
	RemovingReplicas       []int32
	AddingReplicas         []int32
	LeaderRecoveryState    int8
	Directories            [][16]byte
	EligibleLeaderReplicas []int32
	LastKnownElr           []int32
}

// FenceBrokerRecord is FENCE_BROKER_RECORD.
type FenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// UnfenceBrokerRecord is UNFENCE_BROKER_RECORD.
type UnfenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// RemoveTopicRecord is REMOVE_TOPIC_RECORD.
type RemoveTopicRecord struct{ TopicID [16]byte }

// DelegationTokenRecord is DELEGATION_TOKEN_RECORD.
type DelegationTokenRecord struct {
	Owner               string
	Requester           string
	Renewers            []string
	IssueTimestamp      int64
	MaxTimestamp        int64
	ExpirationTimestamp int64
	TokenID             string
}

// UserScramCredentialRecord is USER_SCRAM_CREDENTIAL_RECORD. The salt and
// keys are secrets; they are kept here because the record holds them, and
// the image never prints them.
type UserScramCredentialRecord struct {
	Name       string
	Mechanism  int8
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// FeatureLevelRecord is FEATURE_LEVEL_RECORD.
type FeatureLevelRecord struct {
	Name         string
	FeatureLevel int16
}

// QuotaEntity is one part of a client quota entity (user, client-id, ip);
// a nil EntityName is the default entity.
type QuotaEntity struct {
	EntityType string
	EntityName *string
}

// ClientQuotaRecord is CLIENT_QUOTA_RECORD.
type ClientQuotaRecord struct {
	Entity []QuotaEntity
	Key    string
	Value  float64
	Remove bool
}

// ProducerIDsRecord is PRODUCER_IDS_RECORD.
type ProducerIDsRecord struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// BrokerRegistrationChangeRecord is BROKER_REGISTRATION_CHANGE_RECORD.
// Fenced and InControlledShutdown are BrokerRegistrationFencingChange and
// BrokerRegistrationInControlledShutdownChange values (0 none, 1 fence or
// in controlled shutdown, -1 unfence).
type BrokerRegistrationChangeRecord struct {
	BrokerID             int32
	BrokerEpoch          int64
	Fenced               int8
	InControlledShutdown int8
	LogDirs              [][16]byte
	CordonedLogDirs      [][16]byte
}

// AccessControlEntryRecord is ACCESS_CONTROL_ENTRY_RECORD.
type AccessControlEntryRecord struct {
	ID             [16]byte
	ResourceType   int8
	ResourceName   string
	PatternType    int8
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

// RemoveAccessControlEntryRecord is REMOVE_ACCESS_CONTROL_ENTRY_RECORD.
type RemoveAccessControlEntryRecord struct{ ID [16]byte }

// NoOpRecord is NO_OP_RECORD.
type NoOpRecord struct{}

// ZkMigrationStateRecord is ZK_MIGRATION_STATE_RECORD.
type ZkMigrationStateRecord struct{ ZkMigrationState int8 }

// RemoveUserScramCredentialRecord is REMOVE_USER_SCRAM_CREDENTIAL_RECORD.
type RemoveUserScramCredentialRecord struct {
	Name      string
	Mechanism int8
}

// BeginTransactionRecord is BEGIN_TRANSACTION_RECORD (KIP-868).
type BeginTransactionRecord struct{ Name *string }

// EndTransactionRecord is END_TRANSACTION_RECORD.
type EndTransactionRecord struct{}

// AbortTransactionRecord is ABORT_TRANSACTION_RECORD.
type AbortTransactionRecord struct{ Reason *string }

// RemoveDelegationTokenRecord is REMOVE_DELEGATION_TOKEN_RECORD.
type RemoveDelegationTokenRecord struct{ TokenID string }

// RegisterControllerRecord is REGISTER_CONTROLLER_RECORD.
type RegisterControllerRecord struct {
	ControllerID     int32
	IncarnationID    [16]byte
	ZkMigrationReady bool
	EndPoints        []Endpoint
	Features         []FeatureRange
}

// ClearElrRecord is CLEAR_ELR_RECORD: an empty TopicName clears the ELR of
// every topic.
type ClearElrRecord struct{ TopicName string }

// DecodeMetadata decodes a __cluster_metadata record value (a non-control
// record) into its typed record. The error is what kafka-dump-log prints
// for a record it cannot read ("Failed to deserialize record with type
// 3"...), with klog's detail after it.
func DecodeMetadata(value []byte) (MetadataRecord, error) {
	m, err := readMetadata(schemas(), value)
	if err != nil {
		return MetadataRecord{}, err
	}
	f := fields{fs: m.rec.msg.fields, vals: m.vals}
	return MetadataRecord{Type: MetadataType(m.apiKey), Version: m.version, Body: metadataBody(MetadataType(m.apiKey), f), Problem: m.versionProblem()}, nil
}

func endpoints(fs []fields) []Endpoint {
	out := make([]Endpoint, len(fs))
	for i, e := range fs {
		out[i] = Endpoint{Name: e.str("name"), Host: e.str("host"), Port: uint16(e.int("port")), SecurityProtocol: e.int16("securityProtocol")}
	}
	return out
}

func featureRanges(fs []fields) []FeatureRange {
	out := make([]FeatureRange, len(fs))
	for i, e := range fs {
		out[i] = FeatureRange{Name: e.str("name"), MinSupportedVersion: e.int16("minSupportedVersion"), MaxSupportedVersion: e.int16("maxSupportedVersion")}
	}
	return out
}

// metadataBody builds the typed record of type t from its fields.
func metadataBody(t MetadataType, f fields) any {
	switch t {
	case TypeRegisterBroker:
		return &RegisterBrokerRecord{
			BrokerID: f.int32("brokerId"), IsMigratingZkBroker: f.bool("isMigratingZkBroker"),
			IncarnationID: f.uuid("incarnationId"), BrokerEpoch: f.int("brokerEpoch"),
			EndPoints: endpoints(f.structs("endPoints")), Features: featureRanges(f.structs("features")),
			Rack: f.optStr("rack"), Fenced: f.bool("fenced"), InControlledShutdown: f.bool("inControlledShutdown"),
			LogDirs: f.uuids("logDirs"), CordonedLogDirs: f.uuids("cordonedLogDirs"),
		}
	case TypeUnregisterBroker:
		return &UnregisterBrokerRecord{BrokerID: f.int32("brokerId"), BrokerEpoch: f.int("brokerEpoch")}
	case TypeTopic:
		return &TopicRecord{Name: f.str("name"), TopicID: f.uuid("topicId")}
	case TypePartition:
		return &PartitionRecord{
			PartitionID: f.int32("partitionId"), TopicID: f.uuid("topicId"),
			Replicas: f.int32s("replicas"), Isr: f.int32s("isr"),
			RemovingReplicas: f.int32s("removingReplicas"), AddingReplicas: f.int32s("addingReplicas"),
			Leader: f.int32("leader"), LeaderRecoveryState: f.int8("leaderRecoveryState"),
			LeaderEpoch: f.int32("leaderEpoch"), PartitionEpoch: f.int32("partitionEpoch"),
			Directories: f.uuids("directories"), EligibleLeaderReplicas: f.int32s("eligibleLeaderReplicas"),
			LastKnownElr: f.int32s("lastKnownElr"),
		}
	case TypeConfig:
		return &ConfigRecord{ResourceType: f.int8("resourceType"), ResourceName: f.str("resourceName"), Name: f.str("name"), Value: f.optStr("value")}
	case TypePartitionChange:
		return &PartitionChangeRecord{
			PartitionID: f.int32("partitionId"), TopicID: f.uuid("topicId"),
			Isr: f.int32s("isr"), Leader: f.int32("leader"), Replicas: f.int32s("replicas"),
			RemovingReplicas: f.int32s("removingReplicas"), AddingReplicas: f.int32s("addingReplicas"),
			LeaderRecoveryState: f.int8("leaderRecoveryState"), Directories: f.uuids("directories"),
			EligibleLeaderReplicas: f.int32s("eligibleLeaderReplicas"), LastKnownElr: f.int32s("lastKnownElr"),
		}
	case TypeFenceBroker:
		return &FenceBrokerRecord{ID: f.int32("id"), Epoch: f.int("epoch")}
	case TypeUnfenceBroker:
		return &UnfenceBrokerRecord{ID: f.int32("id"), Epoch: f.int("epoch")}
	case TypeRemoveTopic:
		return &RemoveTopicRecord{TopicID: f.uuid("topicId")}
	case TypeDelegationToken:
		return &DelegationTokenRecord{
			Owner: f.str("owner"), Requester: f.str("requester"), Renewers: f.strs("renewers"),
			IssueTimestamp: f.int("issueTimestamp"), MaxTimestamp: f.int("maxTimestamp"),
			ExpirationTimestamp: f.int("expirationTimestamp"), TokenID: f.str("tokenId"),
		}
	case TypeUserScramCredential:
		return &UserScramCredentialRecord{
			Name: f.str("name"), Mechanism: f.int8("mechanism"), Salt: f.bytes("salt"),
			StoredKey: f.bytes("storedKey"), ServerKey: f.bytes("serverKey"), Iterations: f.int32("iterations"),
		}
	case TypeFeatureLevel:
		return &FeatureLevelRecord{Name: f.str("name"), FeatureLevel: f.int16("featureLevel")}
	case TypeClientQuota:
		es := f.structs("entity")
		ents := make([]QuotaEntity, len(es))
		for i, e := range es {
			ents[i] = QuotaEntity{EntityType: e.str("entityType"), EntityName: e.optStr("entityName")}
		}
		return &ClientQuotaRecord{Entity: ents, Key: f.str("key"), Value: f.float("value"), Remove: f.bool("remove")}
	case TypeProducerIDs:
		return &ProducerIDsRecord{BrokerID: f.int32("brokerId"), BrokerEpoch: f.int("brokerEpoch"), NextProducerID: f.int("nextProducerId")}
	case TypeBrokerRegistrationChange:
		return &BrokerRegistrationChangeRecord{
			BrokerID: f.int32("brokerId"), BrokerEpoch: f.int("brokerEpoch"), Fenced: f.int8("fenced"),
			InControlledShutdown: f.int8("inControlledShutdown"), LogDirs: f.uuids("logDirs"),
			CordonedLogDirs: f.uuids("cordonedLogDirs"),
		}
	case TypeAccessControlEntry:
		return &AccessControlEntryRecord{
			ID: f.uuid("id"), ResourceType: f.int8("resourceType"), ResourceName: f.str("resourceName"),
			PatternType: f.int8("patternType"), Principal: f.str("principal"), Host: f.str("host"),
			Operation: f.int8("operation"), PermissionType: f.int8("permissionType"),
		}
	case TypeRemoveAccessControlEntry:
		return &RemoveAccessControlEntryRecord{ID: f.uuid("id")}
	case TypeNoOp:
		return &NoOpRecord{}
	case TypeZkMigrationState:
		return &ZkMigrationStateRecord{ZkMigrationState: f.int8("zkMigrationState")}
	case TypeRemoveUserScramCredential:
		return &RemoveUserScramCredentialRecord{Name: f.str("name"), Mechanism: f.int8("mechanism")}
	case TypeBeginTransaction:
		return &BeginTransactionRecord{Name: f.optStr("name")}
	case TypeEndTransaction:
		return &EndTransactionRecord{}
	case TypeAbortTransaction:
		return &AbortTransactionRecord{Reason: f.optStr("reason")}
	case TypeRemoveDelegationToken:
		return &RemoveDelegationTokenRecord{TokenID: f.str("tokenId")}
	case TypeRegisterController:
		return &RegisterControllerRecord{
			ControllerID: f.int32("controllerId"), IncarnationID: f.uuid("incarnationId"),
			ZkMigrationReady: f.bool("zkMigrationReady"), EndPoints: endpoints(f.structs("endPoints")),
			Features: featureRanges(f.structs("features")),
		}
	case TypeClearElr:
		return &ClearElrRecord{TopicName: f.str("topicName")}
	}
	return nil
}
