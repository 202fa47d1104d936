package internaltopic

import (
	"bytes"
	"testing"

	"github.com/klog-dev/klog/format"
)

// TestAppendGroupRecordsAsKafka: Kafka's own offset commit (v3) and group
// metadata (v3) records, decoded, encode back to Kafka's bytes; the
// tombstone key too.
func TestAppendGroupRecordsAsKafka(t *testing.T) {
	var recs []format.Record
	eachRecord(t, "../testdata/segments/kafka-written/coordinator/__consumer_offsets-0/00000000000000000000.log", func(r *format.Record) {
		recs = append(recs, format.Record{Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value)})
	})
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5", len(recs))
	}
	g, err := DecodeGroupRecord(recs[0].Key, recs[0].Value)
	if err != nil || g.Version != 3 {
		t.Fatalf("group metadata: %v %+v", err, g)
	}
	key, val, err := AppendGroupMetadata(nil, nil, g.Key.(*GroupMetadataKey).Group, g.Value.(*GroupMetadataValue))
	if err != nil || !bytes.Equal(key, recs[0].Key) || !bytes.Equal(val, recs[0].Value) {
		t.Errorf("GroupMetadata v3 re-encoded differs from Kafka's (%v):\n%x\n%x", err, val, recs[0].Value)
	}
	c, err := DecodeGroupRecord(recs[1].Key, recs[1].Value)
	if err != nil || c.Version != 3 {
		t.Fatalf("offset commit: %v %+v", err, c)
	}
	key, val, err = AppendOffsetCommit(nil, nil, *c.Key.(*OffsetCommitKey), *c.Value.(*OffsetCommitValue))
	if err != nil || !bytes.Equal(key, recs[1].Key) || !bytes.Equal(val, recs[1].Value) {
		t.Errorf("OffsetCommit v3 re-encoded differs from Kafka's (%v):\n%x %x\n%x %x", err, key, val, recs[1].Key, recs[1].Value)
	}
	if k, err := AppendOffsetTombstoneKey(nil, OffsetCommitKey{Group: "old", Topic: "t", Partition: 2}); err != nil || !bytes.Equal(k, recs[4].Key) {
		t.Errorf("tombstone key %x (%v), Kafka's %x", k, err, recs[4].Key)
	}
}

// TestAppendGroupRecordsDecoded: what klog writes, kafka-dump-log's
// decoder (byte for byte Kafka's) prints as written: static members,
// empty groups and commits without a leader epoch.
func TestAppendGroupRecordsDecoded(t *testing.T) {
	inst, proto, leader := "i-1", "range", "m-1"
	key, val, err := AppendGroupMetadata(nil, nil, "g", &GroupMetadataValue{ProtocolType: "consumer", Generation: 4, Protocol: &proto,
		Leader: &leader, CurrentStateTimestamp: 5, Members: []GroupMember{{MemberID: "m-1", GroupInstanceID: &inst, ClientID: "c",
			ClientHost: "/h", RebalanceTimeout: 60000, SessionTimeout: 45000, Subscription: []byte{0, 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := decodeOne(t, Offsets, key, val); d.Problem != "" || string(d.Value) != `{"version":"3","data":{"protocolType":"consumer","generation":4,"protocol":"range","leader":"m-1",`+
		`"currentStateTimestamp":5,"members":[{"memberId":"m-1","groupInstanceId":"i-1","clientId":"c","clientHost":"/h",`+
		`"rebalanceTimeout":60000,"sessionTimeout":45000,"subscription":"AAE=","assignment":""}]}}` {
		t.Errorf("group: %s (%s)", d.Value, d.Problem)
	}
	key, val, err = AppendGroupMetadata(nil, nil, "g", &GroupMetadataValue{ProtocolType: "consumer", Generation: 5, CurrentStateTimestamp: 6})
	if d := decodeOne(t, Offsets, key, val); err != nil || string(d.Value) != `{"version":"3","data":{"protocolType":"consumer","generation":5,"protocol":null,"leader":null,"currentStateTimestamp":6,"members":[]}}` {
		t.Errorf("empty group: %s %v", d.Value, err)
	}
	key, val, err = AppendOffsetCommit(nil, nil, OffsetCommitKey{Group: "g", Topic: "t", Partition: 3}, OffsetCommitValue{Offset: 9, LeaderEpoch: -1, CommitTimestamp: 7})
	if d := decodeOne(t, Offsets, key, val); err != nil || string(d.Key) != `{"type":"1","data":{"group":"g","topic":"t","partition":3}}` ||
		string(d.Value) != `{"version":"3","data":{"offset":9,"leaderEpoch":-1,"metadata":"","commitTimestamp":7}}` {
		t.Errorf("commit: %s %s %v", d.Key, d.Value, err)
	}
}
