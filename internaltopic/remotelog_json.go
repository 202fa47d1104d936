package internaltopic

import (
	"encoding/base64"
	"strconv"
)

// klog's JSON of the __remote_log_metadata values: an object whose "kind"
// names the Java class, with the class's fields under Kafka's names
// (ndjson/schema.json, remoteLogMetadata). Kafka prints these records only as
// toString text; the objects are klog's.

type jsonObject struct {
	b     []byte
	first bool
}

func beginObject(dst []byte, kind string) *jsonObject {
	o := &jsonObject{b: append(dst, '{'), first: true}
	o.str("kind", kind)
	return o
}

func (o *jsonObject) field(name string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

func (o *jsonObject) str(name, v string) {
	o.field(name)
	o.b = AppendJacksonString(o.b, v)
}

func (o *jsonObject) int(name string, v int64) {
	o.field(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *jsonObject) bool(name string, v bool) {
	o.field(name)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObject) raw(name string, v []byte) {
	o.field(name)
	o.b = append(o.b, v...)
}

func (o *jsonObject) end() []byte { return append(o.b, '}') }

func appendTopicIDPartitionJSON(dst []byte, t TopicIDPartition) []byte {
	dst = append(dst, `{"topicId":"`...)
	dst = append(dst, t.TopicID.String()...)
	dst = append(dst, `","topic":`...)
	dst = AppendJacksonString(dst, t.Topic)
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(t.Partition), 10)
	return append(dst, '}')
}

func appendSegmentIDJSON(dst []byte, s RemoteLogSegmentID) []byte {
	dst = append(dst, `{"topicIdPartition":`...)
	dst = appendTopicIDPartitionJSON(dst, s.TopicIDPartition)
	dst = append(dst, `,"id":"`...)
	dst = append(dst, s.ID.String()...)
	return append(dst, `"}`...)
}

func appendEpochsJSON(dst []byte, es []LeaderEpochEntry) []byte {
	dst = append(dst, '[')
	for i, e := range es {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(append(dst, `{"leaderEpoch":`...), int64(e.LeaderEpoch), 10)
		dst = strconv.AppendInt(append(dst, `,"offset":`...), e.Offset, 10)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendCustomMetadataJSON: null for Optional.empty, else standard base64.
func appendCustomMetadataJSON(dst []byte, md []byte) []byte {
	if md == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, md)
	return append(dst, '"')
}

// AppendJSON appends the record as klog's JSON object.
func (m *RemoteLogSegmentMetadata) AppendJSON(dst []byte) []byte {
	o := beginObject(dst, "RemoteLogSegmentMetadata")
	o.raw("remoteLogSegmentId", appendSegmentIDJSON(nil, m.SegmentID))
	o.int("startOffset", m.StartOffset)
	o.int("endOffset", m.EndOffset)
	o.int("brokerId", int64(m.BrokerID))
	o.int("maxTimestampMs", m.MaxTimestampMs)
	o.int("eventTimestampMs", m.EventTimestampMs)
	o.raw("segmentLeaderEpochs", appendEpochsJSON(nil, m.SegmentLeaderEpochs))
	o.int("segmentSizeInBytes", int64(m.SegmentSizeInBytes))
	o.raw("customMetadata", appendCustomMetadataJSON(nil, m.CustomMetadata))
	o.str("state", m.State.String())
	o.bool("txnIdxEmpty", m.TxnIdxEmpty)
	return o.end()
}

// AppendJSON appends the record as klog's JSON object.
func (m *RemoteLogSegmentMetadataUpdate) AppendJSON(dst []byte) []byte {
	o := beginObject(dst, "RemoteLogSegmentMetadataUpdate")
	o.raw("remoteLogSegmentId", appendSegmentIDJSON(nil, m.SegmentID))
	o.raw("customMetadata", appendCustomMetadataJSON(nil, m.CustomMetadata))
	o.str("state", m.State.String())
	o.int("eventTimestampMs", m.EventTimestampMs)
	o.int("brokerId", int64(m.BrokerID))
	return o.end()
}

// AppendJSON appends the record as klog's JSON object.
func (m *RemotePartitionDeleteMetadata) AppendJSON(dst []byte) []byte {
	o := beginObject(dst, "RemotePartitionDeleteMetadata")
	o.raw("topicIdPartition", appendTopicIDPartitionJSON(nil, m.TopicIDPartition))
	o.str("state", m.State.String())
	o.int("eventTimestampMs", m.EventTimestampMs)
	o.int("brokerId", int64(m.BrokerID))
	return o.end()
}

// AppendJSON appends the record as klog's JSON object.
func (m *RemoteLogSegmentMetadataSnapshot) AppendJSON(dst []byte) []byte {
	o := beginObject(dst, "RemoteLogSegmentMetadataSnapshot")
	o.str("segmentId", m.SegmentID.String())
	o.int("startOffset", m.StartOffset)
	o.int("endOffset", m.EndOffset)
	o.int("maxTimestampMs", m.MaxTimestampMs)
	o.int("brokerId", int64(m.BrokerID))
	o.int("eventTimestampMs", m.EventTimestampMs)
	o.raw("segmentLeaderEpochs", appendEpochsJSON(nil, m.SegmentLeaderEpochs))
	o.int("segmentSizeInBytes", int64(m.SegmentSizeInBytes))
	o.raw("customMetadata", appendCustomMetadataJSON(nil, m.CustomMetadata))
	o.str("state", m.State.String())
	o.bool("txnIdxEmpty", m.TxnIdxEmpty)
	return o.end()
}
