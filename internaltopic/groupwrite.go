package internaltopic

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strconv"
)

// The __consumer_offsets records klog's own coordinators write (package
// offsetstore, for klog serve and klog fetch --group): typed values
// written by the same schema tables and writer as EncodeCoordinatorJSON,
// so what klog writes is what DecodeGroupRecord and --offsets-decoder
// read.

// Record types of __consumer_offsets keys (CoordinatorRecordType).
const (
	OffsetCommitRecord  int16 = 1
	GroupMetadataRecord int16 = 2
)

// Value versions klog writes, as Kafka 4.3 does
// (GroupCoordinatorRecordHelpers): OffsetCommitValue v3 (a leader epoch,
// no expire timestamp) and GroupMetadataValue v3 (members with their
// group instance ids).
const (
	OffsetCommitValueVersion  int16 = 3
	GroupMetadataValueVersion int16 = 3
)

// AppendOffsetCommit appends an offset commit record's key and value (v3;
// v.ExpireTimestamp is not in v3).
func AppendOffsetCommit(key, val []byte, k OffsetCommitKey, v OffsetCommitValue) ([]byte, []byte, error) {
	s := schemas()
	rec := s.group[OffsetCommitRecord]
	key, err := writeMessage(binary.BigEndian.AppendUint16(key, uint16(OffsetCommitRecord)), s, rec.key, 0, offsetKeyObj(k))
	if err != nil {
		return nil, nil, err
	}
	val, err = writeMessage(binary.BigEndian.AppendUint16(val, uint16(OffsetCommitValueVersion)), s, rec.value, OffsetCommitValueVersion,
		map[string]any{"offset": num(v.Offset), "leaderEpoch": num(int64(v.LeaderEpoch)), "metadata": v.Metadata, "commitTimestamp": num(v.CommitTimestamp)})
	return key, val, err
}

// AppendGroupMetadata appends a classic group's metadata record (v3).
func AppendGroupMetadata(key, val []byte, group string, v *GroupMetadataValue) ([]byte, []byte, error) {
	s := schemas()
	rec := s.group[GroupMetadataRecord]
	key, err := AppendGroupTombstoneKey(key, group)
	if err != nil {
		return nil, nil, err
	}
	members := make([]any, len(v.Members))
	for i, m := range v.Members {
		mm := map[string]any{"memberId": m.MemberID, "groupInstanceId": nil, "clientId": m.ClientID, "clientHost": m.ClientHost,
			"rebalanceTimeout": num(int64(m.RebalanceTimeout)), "sessionTimeout": num(int64(m.SessionTimeout)),
			"subscription": base64.StdEncoding.EncodeToString(m.Subscription), "assignment": base64.StdEncoding.EncodeToString(m.Assignment)}
		if m.GroupInstanceID != nil {
			mm["groupInstanceId"] = *m.GroupInstanceID
		}
		members[i] = mm
	}
	obj := map[string]any{"protocolType": v.ProtocolType, "generation": num(int64(v.Generation)), "protocol": optStr(v.Protocol),
		"leader": optStr(v.Leader), "currentStateTimestamp": num(v.CurrentStateTimestamp), "members": members}
	val, err = writeMessage(binary.BigEndian.AppendUint16(val, uint16(GroupMetadataValueVersion)), s, rec.value, GroupMetadataValueVersion, obj)
	return key, val, err
}

// AppendGroupTombstoneKey appends the GroupMetadataKey whose null value
// deletes a group.
func AppendGroupTombstoneKey(key []byte, group string) ([]byte, error) {
	s := schemas()
	return writeMessage(binary.BigEndian.AppendUint16(key, uint16(GroupMetadataRecord)), s, s.group[GroupMetadataRecord].key, 0,
		map[string]any{"group": group})
}

// AppendOffsetTombstoneKey appends the OffsetCommitKey whose null value
// deletes a committed offset.
func AppendOffsetTombstoneKey(key []byte, k OffsetCommitKey) ([]byte, error) {
	s := schemas()
	return writeMessage(binary.BigEndian.AppendUint16(key, uint16(OffsetCommitRecord)), s, s.group[OffsetCommitRecord].key, 0, offsetKeyObj(k))
}

func offsetKeyObj(k OffsetCommitKey) map[string]any {
	return map[string]any{"group": k.Group, "topic": k.Topic, "partition": num(int64(k.Partition))}
}

func num(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

func optStr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
