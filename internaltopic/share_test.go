package internaltopic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
)

// shareKey is a ShareSnapshotKey/ShareUpdateKey: int16 record type, then
// groupId (classic string), topicId, partition.
func shareKey(typ int16, group string) wire {
	return wire{}.i16(typ).str(group).uuid(0xaa).i32(7)
}

// stateBatch is one compact StateBatch with its empty tag section.
func (w wire) stateBatch(first, last int64, state int8, count int16) wire {
	return w.i64(first).i64(last).i8(state).i16(count).uv(0)
}

// TestShareGroupState follows CoordinatorRecordMessageParser over
// ShareCoordinatorRecordSerde: every text is what kafka-dump-log 4.3.1
// prints after "key: " and "payload: ".
func TestShareGroupState(t *testing.T) {
	t.Parallel()
	const topicID = "qqqqqqqqqqqqqqqqqqqqqg"
	key0 := `{"type":"0","data":{"groupId":"g","topicId":"` + topicID + `","partition":7}}`
	key1 := `{"type":"1","data":{"groupId":"g","topicId":"` + topicID + `","partition":7}}`
	snapshot := wire{}.i16(0).i32(1).i32(2).i32(3).i64(40)
	tests := []struct {
		name               string
		key, value         []byte
		wantKey, wantValue string
		wantProblem        bool
	}{
		{name: "snapshot, no DeliveryCompleteCount tag (-1, not printed)",
			key: shareKey(0, "g"), value: snapshot.i64(5).i64(6).uv(2).stateBatch(0, 9, 2, 1).uv(0),
			wantKey: key0,
			wantValue: `{"version":"0","data":{"snapshotEpoch":1,"stateEpoch":2,"leaderEpoch":3,"startOffset":40,` +
				`"createTimestamp":5,"writeTimestamp":6,"stateBatches":[{"firstOffset":0,"lastOffset":9,"deliveryState":2,"deliveryCount":1}]}}`},
		{name: "snapshot, DeliveryCompleteCount -1 written explicitly is still its default",
			key: shareKey(0, "g"), value: snapshot.i64(5).i64(6).uv(1).uv(1).tag(0, wire{}.i32(-1)),
			wantKey:   key0,
			wantValue: `{"version":"0","data":{"snapshotEpoch":1,"stateEpoch":2,"leaderEpoch":3,"startOffset":40,"createTimestamp":5,"writeTimestamp":6,"stateBatches":[]}}`},
		{name: "update with DeliveryCompleteCount and an unknown tag",
			key:     shareKey(1, "g"),
			value:   wire{}.i16(0).i32(1).i32(2).i64(-1).uv(1).uv(2).tag(9, wire{}.raw(1, 2)).tag(0, wire{}.i32(0)),
			wantKey: key1, wantValue: `{"version":"0","data":{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":-1,"deliveryCompleteCount":0,"stateBatches":[]}}`},
		{name: "bytes after the value are not looked at",
			key: append(shareKey(1, "g"), 1, 2), value: append(wire{}.i16(0).i32(1).i32(2).i64(3).uv(1).uv(0), 9, 9, 9),
			wantKey: key1, wantValue: `{"version":"0","data":{"snapshotEpoch":1,"leaderEpoch":2,"startOffset":3,"stateBatches":[]}}`},
		{name: "tombstone", key: shareKey(1, "g"), wantKey: key1, wantValue: "<DELETE>"},
		{name: "Jackson escapes the group id", key: shareKey(0, "a\"\n\x01"), value: nil,
			wantKey: `{"type":"0","data":{"groupId":"a\"\n\u0001","topicId":"` + topicID + `","partition":7}}`, wantValue: "<DELETE>"},
		{name: "unknown record type", key: shareKey(2, "g"), value: snapshot,
			wantKey: "Unknown record type 2 at offset 7, skipping.", wantProblem: true},
		{name: "negative record type", key: shareKey(-1, "g"), value: nil,
			wantKey: "Unknown record type -1 at offset 7, skipping.", wantProblem: true},
		{name: "key shorter than its type", key: []byte{0}, value: nil,
			wantKey: "Error at offset 7, skipping. Could not read version from key's buffer.", wantProblem: true},
		{name: "key cut short (ShareUpdateKey is read as version 1)", key: shareKey(1, "g")[:10], value: nil,
			wantKey: "Error at offset 7, skipping. Could not read record with version 1 from key's buffer due to: null.", wantProblem: true},
		{name: "key string longer than the key", key: wire{}.i16(0).i16(50).raw(1, 2, 3), value: nil,
			wantKey:     "Error at offset 7, skipping. Could not read record with version 0 from key's buffer due to: Error reading byte array of 50 byte(s): only 3 byte(s) available.",
			wantProblem: true},
		{name: "null group id", key: wire{}.i16(0).i16(-1), value: nil,
			wantKey:     "Error at offset 7, skipping. Could not read record with version 0 from key's buffer due to: non-nullable field groupId was serialized as null.",
			wantProblem: true},
		{name: "empty value is not a tombstone", key: shareKey(0, "g"), value: []byte{},
			wantKey: "Error at offset 7, skipping. Could not read version from value's buffer.", wantProblem: true},
		{name: "unknown value version", key: shareKey(0, "g"), value: wire{}.i16(1).i32(0),
			wantKey: "Error at offset 7, skipping. Found an unknown record version 1 for 0 type", wantProblem: true},
		{name: "value cut short", key: shareKey(0, "g"), value: snapshot[:9],
			wantKey: "Error at offset 7, skipping. Could not read record with version 0 from value's buffer due to: null.", wantProblem: true},
		{name: "null state batches", key: shareKey(1, "g"), value: wire{}.i16(0).i32(1).i32(2).i64(3).cnull(),
			wantKey:     "Error at offset 7, skipping. Could not read record with version 0 from value's buffer due to: non-nullable field stateBatches was serialized as null.",
			wantProblem: true},
		{name: "more state batches than bytes", key: shareKey(1, "g"), value: wire{}.i16(0).i32(1).i32(2).i64(3).uv(101).raw(0, 0, 0),
			wantKey:     "Error at offset 7, skipping. Could not read record with version 0 from value's buffer due to: Tried to allocate a collection of size 100, but there are only 3 bytes remaining..",
			wantProblem: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := decodeOne(t, ShareGroupState, tc.key, tc.value)
			if string(c.Key) != tc.wantKey {
				t.Errorf("key\n got: %s\nwant: %s", c.Key, tc.wantKey)
			}
			if string(c.Value) != tc.wantValue {
				t.Errorf("value\n got: %s\nwant: %s", c.Value, tc.wantValue)
			}
			if (c.Problem != "") != tc.wantProblem {
				t.Errorf("problem %q, want one: %v", c.Problem, tc.wantProblem)
			}
		})
	}
	if c := decodeOne(t, ShareGroupState, nil, snapshot); !c.MissingKey || c.Problem != MissingKeyMessage(7) {
		t.Errorf("keyless record: %+v", c)
	}
}

// FuzzShareGroupState: no key and value make the decoder panic; what it
// prints as JSON is JSON, and a key it decodes names type 0 or 1.
func FuzzShareGroupState(f *testing.F) {
	for _, dir := range []string{"__share_group_state-0", "__share_group_state-1"} {
		for _, r := range fixtureValues(f, dir) {
			f.Add(r.key, r.value)
		}
	}
	f.Add([]byte(shareKey(2, "g")), []byte{0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		rd := New(ShareGroupState)
		c := rd.Decode(&format.Record{Offset: 1, Key: key, Value: value})
		if c.KeyJSON {
			var k struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(c.Key, &k); err != nil || (k.Type != "0" && k.Type != "1") {
				t.Fatalf("key %s: %v", c.Key, err)
			}
		} else if c.Key != nil && !strings.HasPrefix(string(c.Key), "Error at offset 1, skipping. ") && !strings.HasPrefix(string(c.Key), "Unknown record type ") {
			t.Fatalf("key text %q", c.Key)
		}
		if c.ValueJSON && !json.Valid(c.Value) {
			t.Fatalf("value is not JSON: %s", c.Value)
		}
		if (c.Problem != "") == c.KeyJSON {
			t.Fatalf("problem %q with key %s", c.Problem, c.Key)
		}
	})
}
