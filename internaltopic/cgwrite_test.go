package internaltopic

import (
	"reflect"
	"testing"
)

// TestConsumerGroupRecordsRoundTrip: what the consumer group writers
// append is what DecodeGroupRecord reads back, key and value, tombstones
// included.
func TestConsumerGroupRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	inst, regex, assignor := "i-1", "^t.*", "uniform"
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	tps := []TopicIDPartitions{{TopicID: id, Partitions: []int32{0, 2}}}
	for _, tc := range []struct {
		name string
		typ  int16
		val  func() ([]byte, error)
		want any
	}{
		{"epoch", ConsumerGroupMetadataRecord, func() ([]byte, error) {
			return AppendConsumerGroupMetadata(nil, ConsumerGroupMetadataValue{Epoch: 7})
		}, &ConsumerGroupMetadataValue{Epoch: 7}},
		{"member", ConsumerGroupMemberMetadataRecord, func() ([]byte, error) {
			return AppendConsumerGroupMemberMetadata(nil, &ConsumerGroupMemberMetadataValue{InstanceID: &inst, ClientID: "c", ClientHost: "/127.0.0.1",
				SubscribedTopicNames: []string{"a", "b"}, SubscribedTopicRegex: &regex, RebalanceTimeoutMs: 300000, ServerAssignor: &assignor})
		}, &ConsumerGroupMemberMetadataValue{InstanceID: &inst, ClientID: "c", ClientHost: "/127.0.0.1",
			SubscribedTopicNames: []string{"a", "b"}, SubscribedTopicRegex: &regex, RebalanceTimeoutMs: 300000, ServerAssignor: &assignor}},
		{"target epoch", ConsumerGroupTargetAssignmentMetadataRecord, func() ([]byte, error) { return AppendTargetAssignmentMetadata(nil, 7) },
			&TargetAssignmentMetadataValue{AssignmentEpoch: 7}},
		{"target", ConsumerGroupTargetAssignmentMemberRecord, func() ([]byte, error) { return AppendTargetAssignmentMember(nil, tps) },
			&TargetAssignmentMemberValue{TopicPartitions: tps}},
		{"current", ConsumerGroupCurrentMemberAssignmentRecord, func() ([]byte, error) {
			return AppendCurrentMemberAssignment(nil, &CurrentMemberAssignmentValue{MemberEpoch: 7, PreviousMemberEpoch: 6, State: 1,
				AssignedPartitions: tps, PartitionsPendingRevocation: []TopicIDPartitions{{TopicID: id, Partitions: []int32{1}}}})
		}, &CurrentMemberAssignmentValue{MemberEpoch: 7, PreviousMemberEpoch: 6, State: 1,
			AssignedPartitions: tps, PartitionsPendingRevocation: []TopicIDPartitions{{TopicID: id, Partitions: []int32{1}}}}},
		{"tombstone", ConsumerGroupCurrentMemberAssignmentRecord, func() ([]byte, error) { return nil, nil }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := AppendConsumerGroupKey(nil, tc.typ, "g", "m")
			if err != nil {
				t.Fatal(err)
			}
			val, err := tc.val()
			if err != nil {
				t.Fatal(err)
			}
			r, err := DecodeGroupRecord(key, val)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != tc.typ {
				t.Errorf("type %d, want %d", r.Type, tc.typ)
			}
			switch k := r.Key.(type) {
			case *GroupKey:
				if k.GroupID != "g" {
					t.Errorf("key %+v", k)
				}
			case *MemberKey:
				if k.GroupID != "g" || k.MemberID != "m" {
					t.Errorf("key %+v", k)
				}
			default:
				t.Errorf("key %T", r.Key)
			}
			if tc.want == nil {
				if r.Value != nil {
					t.Errorf("tombstone decoded to %+v", r.Value)
				}
				return
			}
			if !reflect.DeepEqual(r.Value, tc.want) {
				t.Errorf("value %+v, want %+v", r.Value, tc.want)
			}
		})
	}
}
