package internaltopic

import (
	"encoding/base64"
	"encoding/binary"
)

// The records of a KIP-848 consumer group as Kafka 4.3's group
// coordinator writes them (GroupCoordinatorRecordHelpers): the group
// epoch, each member's subscription, the target assignment and each
// member's current assignment. All values are version 0 (flexible);
// tagged fields at their default are left out, as Kafka's serializer
// leaves them out. A nil value is a tombstone.

// Record types of the consumer group records (CoordinatorRecordType).
const (
	ConsumerGroupMetadataRecord                 int16 = 3
	ConsumerGroupMemberMetadataRecord           int16 = 5
	ConsumerGroupTargetAssignmentMetadataRecord int16 = 6
	ConsumerGroupTargetAssignmentMemberRecord   int16 = 7
	ConsumerGroupCurrentMemberAssignmentRecord  int16 = 8
)

// AppendConsumerGroupKey appends the key of a consumer group record of
// type t: keyed by the group id (3, 6) or by group and member id (5, 7,
// 8).
func AppendConsumerGroupKey(key []byte, t int16, groupID, memberID string) ([]byte, error) {
	s := schemas()
	obj := map[string]any{"groupId": groupID}
	switch t {
	case ConsumerGroupMemberMetadataRecord, ConsumerGroupTargetAssignmentMemberRecord, ConsumerGroupCurrentMemberAssignmentRecord:
		obj["memberId"] = memberID
	}
	return writeMessage(binary.BigEndian.AppendUint16(key, uint16(t)), s, s.group[t].key, 0, obj)
}

func appendValue(val []byte, t int16, obj map[string]any) ([]byte, error) {
	s := schemas()
	return writeMessage(binary.BigEndian.AppendUint16(val, 0), s, s.group[t].value, 0, obj)
}

// AppendConsumerGroupMetadata appends a ConsumerGroupMetadataValue (the
// group epoch).
func AppendConsumerGroupMetadata(val []byte, v ConsumerGroupMetadataValue) ([]byte, error) {
	obj := map[string]any{"epoch": num(int64(v.Epoch))}
	if v.MetadataHash != 0 {
		obj["metadataHash"] = num(v.MetadataHash)
	}
	return appendValue(val, ConsumerGroupMetadataRecord, obj)
}

// AppendConsumerGroupMemberMetadata appends a member's subscription
// (ConsumerGroupMemberMetadataValue; ClassicMemberMetadata is not
// written).
func AppendConsumerGroupMemberMetadata(val []byte, v *ConsumerGroupMemberMetadataValue) ([]byte, error) {
	topics := make([]any, len(v.SubscribedTopicNames))
	for i, t := range v.SubscribedTopicNames {
		topics[i] = t
	}
	return appendValue(val, ConsumerGroupMemberMetadataRecord, map[string]any{
		"instanceId": optStr(v.InstanceID), "rackId": optStr(v.RackID), "clientId": v.ClientID, "clientHost": v.ClientHost,
		"subscribedTopicNames": topics, "subscribedTopicRegex": optStr(v.SubscribedTopicRegex),
		"rebalanceTimeoutMs": num(int64(v.RebalanceTimeoutMs)), "serverAssignor": optStr(v.ServerAssignor)})
}

// AppendTargetAssignmentMetadata appends the target assignment's epoch
// (ConsumerGroupTargetAssignmentMetadataValue).
func AppendTargetAssignmentMetadata(val []byte, epoch int32) ([]byte, error) {
	return appendValue(val, ConsumerGroupTargetAssignmentMetadataRecord, map[string]any{"assignmentEpoch": num(int64(epoch))})
}

// AppendTargetAssignmentMember appends a member's target assignment
// (ConsumerGroupTargetAssignmentMemberValue).
func AppendTargetAssignmentMember(val []byte, tps []TopicIDPartitions) ([]byte, error) {
	return appendValue(val, ConsumerGroupTargetAssignmentMemberRecord, map[string]any{"topicPartitions": topicIDPartitionsJSON(tps)})
}

// AppendCurrentMemberAssignment appends a member's current assignment
// (ConsumerGroupCurrentMemberAssignmentValue).
func AppendCurrentMemberAssignment(val []byte, v *CurrentMemberAssignmentValue) ([]byte, error) {
	return appendValue(val, ConsumerGroupCurrentMemberAssignmentRecord, map[string]any{
		"memberEpoch": num(int64(v.MemberEpoch)), "previousMemberEpoch": num(int64(v.PreviousMemberEpoch)), "state": num(int64(v.State)),
		"assignedPartitions": topicIDPartitionsJSON(v.AssignedPartitions), "partitionsPendingRevocation": topicIDPartitionsJSON(v.PartitionsPendingRevocation)})
}

func topicIDPartitionsJSON(tps []TopicIDPartitions) []any {
	out := make([]any, len(tps))
	for i, t := range tps {
		ps := make([]any, len(t.Partitions))
		for j, p := range t.Partitions {
			ps[j] = num(int64(p))
		}
		out[i] = map[string]any{"topicId": base64.RawURLEncoding.EncodeToString(t.TopicID[:]), "partitions": ps}
	}
	return out
}
