package internaltopic

import (
	"encoding/base64"
	"slices"
	"strconv"

	"github.com/klog-dev/klog/format"
)

// The records of __remote_log_metadata, the topic of Kafka's
// TopicBasedRemoteLogMetadataManager (KIP-405), as typed values: what
// RemoteLogMetadataSerde.deserialize makes of a record value
// (storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage/serialization/),
// with the checks its transforms and the classes' constructors make
// (storage/api/src/main/java/org/apache/kafka/server/log/remote/storage/),
// and each class's toString(), which is what kafka-dump-log
// --remote-log-metadata-decoder prints.

// UUID is a Kafka Uuid.
type UUID [16]byte

// String is Uuid.toString: URL-safe base64 without padding.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// TopicIDPartition is Kafka's TopicIdPartition.
type TopicIDPartition struct {
	TopicID   UUID
	Topic     string // as Java decodes the UTF-8 (bad bytes become U+FFFD)
	Partition int32
}

// String is TopicIdPartition.toString: "<topicId>:<topic>-<partition>".
func (t TopicIDPartition) String() string {
	return t.TopicID.String() + ":" + t.Topic + "-" + strconv.Itoa(int(t.Partition))
}

// RemoteLogSegmentID is RemoteLogSegmentId: a segment's unique id in the
// remote tier.
type RemoteLogSegmentID struct {
	TopicIDPartition TopicIDPartition
	ID               UUID
}

// String is RemoteLogSegmentId.toString.
func (s RemoteLogSegmentID) String() string {
	return "RemoteLogSegmentId{topicIdPartition=" + s.TopicIDPartition.String() + ", id=" + s.ID.String() + "}"
}

// RemoteLogSegmentState is RemoteLogSegmentState: where a segment's copy to
// or deletion from the remote tier is.
type RemoteLogSegmentState int8

// RemoteLogSegmentState ids (RemoteLogSegmentState.id()).
const (
	CopySegmentStarted    RemoteLogSegmentState = 0
	CopySegmentFinished   RemoteLogSegmentState = 1
	DeleteSegmentStarted  RemoteLogSegmentState = 2
	DeleteSegmentFinished RemoteLogSegmentState = 3
)

var segmentStateNames = [...]string{"COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED"}

// Known reports whether s is one of Kafka's states (forId finds it).
func (s RemoteLogSegmentState) Known() bool { return s >= 0 && int(s) < len(segmentStateNames) }

// String is the Java enum's name; an unknown id (Kafka never makes one)
// prints as UNKNOWN(<id>).
func (s RemoteLogSegmentState) String() string {
	if s.Known() {
		return segmentStateNames[s]
	}
	return "UNKNOWN(" + strconv.Itoa(int(s)) + ")"
}

// RemotePartitionDeleteState is RemotePartitionDeleteState.
type RemotePartitionDeleteState int8

// RemotePartitionDeleteState ids.
const (
	DeletePartitionMarked   RemotePartitionDeleteState = 0
	DeletePartitionStarted  RemotePartitionDeleteState = 1
	DeletePartitionFinished RemotePartitionDeleteState = 2
)

var deleteStateNames = [...]string{"DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED"}

// Known reports whether s is one of Kafka's states.
func (s RemotePartitionDeleteState) Known() bool { return s >= 0 && int(s) < len(deleteStateNames) }

// String is the Java enum's name, or UNKNOWN(<id>).
func (s RemotePartitionDeleteState) String() string {
	if s.Known() {
		return deleteStateNames[s]
	}
	return "UNKNOWN(" + strconv.Itoa(int(s)) + ")"
}

// LeaderEpochEntry is one entry of a segment's leader epochs: the first
// offset of the segment written in that leader epoch.
type LeaderEpochEntry struct {
	LeaderEpoch int32
	Offset      int64
}

// RemoteLogMetadata is one decoded __remote_log_metadata record:
// *RemoteLogSegmentMetadata, *RemoteLogSegmentMetadataUpdate,
// *RemotePartitionDeleteMetadata or *RemoteLogSegmentMetadataSnapshot.
type RemoteLogMetadata interface {
	// String is the Java object's toString(): what kafka-dump-log prints.
	String() string
	// AppendJSON appends klog's JSON object of the record (the
	// remoteLogMetadata definition of ndjson/schema.json).
	AppendJSON(dst []byte) []byte
	remoteLogMetadata()
}

// RemoteLogSegmentMetadata is a segment's metadata
// (RemoteLogSegmentMetadataRecord, apiKey 0): written when its copy
// starts, and with the state reached in later records.
type RemoteLogSegmentMetadata struct {
	SegmentID        RemoteLogSegmentID
	StartOffset      int64
	EndOffset        int64
	BrokerID         int32
	MaxTimestampMs   int64
	EventTimestampMs int64
	// SegmentLeaderEpochs is ascending by epoch, one entry per epoch (the
	// last one written wins, as in Kafka's HashMap), never empty.
	SegmentLeaderEpochs []LeaderEpochEntry
	SegmentSizeInBytes  int32
	// CustomMetadata is the remote storage manager's bytes: nil for
	// Optional.empty, non-nil (possibly empty) when present.
	CustomMetadata []byte
	State          RemoteLogSegmentState
	TxnIdxEmpty    bool
}

// RemoteLogSegmentMetadataUpdate moves a segment to another state
// (RemoteLogSegmentMetadataUpdateRecord, apiKey 1).
type RemoteLogSegmentMetadataUpdate struct {
	SegmentID        RemoteLogSegmentID
	CustomMetadata   []byte // nil: Optional.empty
	State            RemoteLogSegmentState
	EventTimestampMs int64
	BrokerID         int32
}

// RemotePartitionDeleteMetadata is a partition's deletion from the remote
// tier (RemotePartitionDeleteMetadataRecord, apiKey 2).
type RemotePartitionDeleteMetadata struct {
	TopicIDPartition TopicIDPartition
	State            RemotePartitionDeleteState
	EventTimestampMs int64
	BrokerID         int32
}

// RemoteLogSegmentMetadataSnapshot is a segment's metadata as the
// manager's snapshot file keeps it (RemoteLogSegmentMetadataSnapshotRecord,
// apiKey 3): no topic partition, the segment's id only.
type RemoteLogSegmentMetadataSnapshot struct {
	SegmentID           UUID
	StartOffset         int64
	EndOffset           int64
	MaxTimestampMs      int64
	BrokerID            int32
	EventTimestampMs    int64
	SegmentSizeInBytes  int32
	CustomMetadata      []byte // nil: Optional.empty
	State               RemoteLogSegmentState
	SegmentLeaderEpochs []LeaderEpochEntry // as RemoteLogSegmentMetadata's
	TxnIdxEmpty         bool
}

func (*RemoteLogSegmentMetadata) remoteLogMetadata()         {}
func (*RemoteLogSegmentMetadataUpdate) remoteLogMetadata()   {}
func (*RemotePartitionDeleteMetadata) remoteLogMetadata()    {}
func (*RemoteLogSegmentMetadataSnapshot) remoteLogMetadata() {}

// String is RemoteLogSegmentMetadata.toString.
func (m *RemoteLogSegmentMetadata) String() string {
	b := append([]byte("RemoteLogSegmentMetadata{remoteLogSegmentId="), m.SegmentID.String()...)
	b = appendLong(b, ", startOffset=", m.StartOffset)
	b = appendLong(b, ", endOffset=", m.EndOffset)
	b = appendLong(b, ", brokerId=", int64(m.BrokerID))
	b = appendLong(b, ", maxTimestampMs=", m.MaxTimestampMs)
	b = appendLong(b, ", eventTimestampMs=", m.EventTimestampMs)
	b = appendEpochMap(append(b, ", segmentLeaderEpochs="...), m.SegmentLeaderEpochs)
	b = appendLong(b, ", segmentSizeInBytes=", int64(m.SegmentSizeInBytes))
	b = appendCustomMetadata(append(b, ", customMetadata="...), m.CustomMetadata)
	b = append(append(b, ", state="...), m.State.String()...)
	b = strconv.AppendBool(append(b, ", txnIdxEmpty="...), m.TxnIdxEmpty)
	return string(append(b, '}'))
}

// String is RemoteLogSegmentMetadataUpdate.toString.
func (m *RemoteLogSegmentMetadataUpdate) String() string {
	b := append([]byte("RemoteLogSegmentMetadataUpdate{remoteLogSegmentId="), m.SegmentID.String()...)
	b = appendCustomMetadata(append(b, ", customMetadata="...), m.CustomMetadata)
	b = append(append(b, ", state="...), m.State.String()...)
	b = appendLong(b, ", eventTimestampMs=", m.EventTimestampMs)
	b = appendLong(b, ", brokerId=", int64(m.BrokerID))
	return string(append(b, '}'))
}

// String is RemotePartitionDeleteMetadata.toString (it names the field
// topicPartition).
func (m *RemotePartitionDeleteMetadata) String() string {
	b := append([]byte("RemotePartitionDeleteMetadata{topicPartition="), m.TopicIDPartition.String()...)
	b = append(append(b, ", state="...), m.State.String()...)
	b = appendLong(b, ", eventTimestampMs=", m.EventTimestampMs)
	b = appendLong(b, ", brokerId=", int64(m.BrokerID))
	return string(append(b, '}'))
}

// String is RemoteLogSegmentMetadataSnapshot.toString (it leaves out
// brokerId and eventTimestampMs).
func (m *RemoteLogSegmentMetadataSnapshot) String() string {
	b := append([]byte("RemoteLogSegmentMetadataSnapshot{segmentId="), m.SegmentID.String()...)
	b = appendLong(b, ", startOffset=", m.StartOffset)
	b = appendLong(b, ", endOffset=", m.EndOffset)
	b = appendLong(b, ", maxTimestampMs=", m.MaxTimestampMs)
	b = appendEpochMap(append(b, ", segmentLeaderEpochs="...), m.SegmentLeaderEpochs)
	b = appendLong(b, ", segmentSizeInBytes=", int64(m.SegmentSizeInBytes))
	b = appendCustomMetadata(append(b, ", customMetadata="...), m.CustomMetadata)
	b = append(append(b, ", state="...), m.State.String()...)
	b = strconv.AppendBool(append(b, ", txnIdxEmpty="...), m.TxnIdxEmpty)
	return string(append(b, '}'))
}

func appendLong(b []byte, name string, v int64) []byte {
	return strconv.AppendInt(append(b, name...), v, 10)
}

// appendEpochMap is AbstractMap.toString of the TreeMap: "{0=0, 1=40}".
func appendEpochMap(b []byte, es []LeaderEpochEntry) []byte {
	b = append(b, '{')
	for i, e := range es {
		if i > 0 {
			b = append(b, ',', ' ')
		}
		b = strconv.AppendInt(b, int64(e.LeaderEpoch), 10)
		b = strconv.AppendInt(append(b, '='), e.Offset, 10)
	}
	return append(b, '}')
}

// appendCustomMetadata is Optional<CustomMetadata>.toString.
func appendCustomMetadata(b []byte, md []byte) []byte {
	if md == nil {
		return append(b, "Optional.empty"...)
	}
	b = strconv.AppendInt(append(b, "Optional[CustomMetadata{"...), int64(len(md)), 10)
	return append(b, " bytes}]"...)
}

// DecodeError is the exception Kafka's decoder throws on a record it cannot
// decode; Msg is its getMessage() ("null" for an exception without one),
// the text kafka-dump-log prints after "skipping. ".
type DecodeError struct{ Msg string }

func (e *DecodeError) Error() string { return e.Msg }

// nullValueMessage is the JVM's message for the NullPointerException
// RemoteMetadataLogMessageParser.parse meets on a null value
// (record.value().remaining(); helpful NullPointerException messages, on by
// default since Java 15).
const nullValueMessage = `Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of ` +
	`"org.apache.kafka.common.record.internal.Record.value()" is null`

// DecodeRemoteLogMetadata decodes one __remote_log_metadata record value
// as RemoteLogMetadataSerde.deserialize does: the framing of
// AbstractApiMessageSerde (frame version 1, apiKey, version, the message and
// nothing after it), then the transform of the record's type with the
// checks of the classes it builds. A nil value is a tombstone, which Kafka
// cannot decode either. The error is a *DecodeError with Kafka's message.
func DecodeRemoteLogMetadata(value []byte) (RemoteLogMetadata, error) {
	if value == nil {
		return nil, &DecodeError{nullValueMessage}
	}
	apiKey, version, body, err := readFrame(value)
	if err != nil {
		return nil, err
	}
	m, ok := schemas().remoteLog[apiKey]
	if !ok {
		return nil, unknownMetadataID(apiKey)
	}
	vals, n, rerr := readMessage(m, version, body)
	if rerr != nil {
		return nil, &DecodeError{"Failed to deserialize record with type " + strconv.Itoa(int(apiKey))}
	}
	if n < len(body) {
		return nil, garbageAfter(len(body)-n, apiKey)
	}
	switch apiKey {
	case 0:
		return segmentMetadata(vals)
	case 1:
		return segmentUpdate(vals)
	case 2:
		return partitionDelete(vals)
	}
	return segmentSnapshot(vals)
}

// readFrame is AbstractApiMessageSerde.read up to the message: three
// unsigned varints (frame version, apiKey, version), each a Java int that
// must not exceed Short.MAX_VALUE (a negative one passes and is cast).
func readFrame(buf []byte) (apiKey, version int16, body []byte, err error) {
	r := &messageReader{buf: buf}
	header := func(entity string) (int16, error) {
		v := r.uvarint()
		if r.err != nil {
			return 0, &DecodeError{"Error while reading " + entity}
		}
		if v > 0x7fff {
			return 0, &DecodeError{"Value for " + entity + " was too large."}
		}
		return int16(v), nil
	}
	frame, err := header("frame version")
	if err != nil {
		return 0, 0, nil, err
	}
	switch {
	case frame == 0:
		return 0, 0, nil, &DecodeError{"Could not deserialize metadata record with frame version 0. " +
			"Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."}
	case frame != 1:
		return 0, 0, nil, &DecodeError{"Could not deserialize metadata record due to unknown frame version " +
			strconv.Itoa(int(frame)) + "(only frame version 1 is supported)"}
	}
	if apiKey, err = header("type"); err != nil {
		return 0, 0, nil, err
	}
	if version, err = header("version"); err != nil {
		return 0, 0, nil, err
	}
	return apiKey, version, buf[r.pos:], nil
}

// unknownMetadataID is MetadataParseException(e) around the generated
// MetadataRecordType.fromId's exception: the cause's toString.
func unknownMetadataID(apiKey int16) error {
	return &DecodeError{"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id " + strconv.Itoa(int(apiKey))}
}

func garbageAfter(n int, apiKey int16) error {
	return &DecodeError{"Found " + strconv.Itoa(n) + " byte(s) of garbage after " + strconv.Itoa(int(apiKey))}
}

// topicIDPartition is a TopicIdPartitionEntry as the transforms turn it
// into a TopicIdPartition.
func topicIDPartition(v value) TopicIDPartition {
	var t TopicIDPartition
	copy(t.TopicID[:], v.elems[1].b)
	t.Topic = string(format.AppendJavaUTF8(nil, v.elems[0].b))
	t.Partition = int32(v.elems[2].i)
	return t
}

// segmentID is a RemoteLogSegmentIdEntry as a RemoteLogSegmentId.
func segmentID(v value) RemoteLogSegmentID {
	s := RemoteLogSegmentID{TopicIDPartition: topicIDPartition(v.elems[0])}
	copy(s.ID[:], v.elems[1].b)
	return s
}

// leaderEpochs is the transforms' HashMap of the entries, as the TreeMap
// the classes keep: ascending by epoch, a repeated epoch's last offset.
func leaderEpochs(v value) []LeaderEpochEntry {
	es := make([]LeaderEpochEntry, 0, len(v.elems))
	for _, e := range v.elems {
		es = append(es, LeaderEpochEntry{LeaderEpoch: int32(e.elems[0].i), Offset: e.elems[1].i})
	}
	slices.SortStableFunc(es, func(a, b LeaderEpochEntry) int { return int(a.LeaderEpoch) - int(b.LeaderEpoch) })
	out := es[:0]
	for i, e := range es {
		if i+1 < len(es) && es[i+1].LeaderEpoch == e.LeaderEpoch {
			continue // a later put of the same epoch replaced it
		}
		out = append(out, e)
	}
	return out
}

// customMetadata is Optional.ofNullable(bytes).map(CustomMetadata::new).
func customMetadata(v value) []byte {
	if v.null {
		return nil
	}
	if v.b == nil {
		return []byte{}
	}
	return slices.Clone(v.b)
}

func errEmptyEpochs() error {
	return &DecodeError{"segmentLeaderEpochs can not be null or empty"}
}

// errNullState is Objects.requireNonNull(state, "state can not be null")
// on a state id forId does not know.
func errNullState() error { return &DecodeError{"state can not be null"} }

// segmentMetadata is RemoteLogSegmentMetadataTransform.fromApiMessageAndVersion:
// a RemoteLogSegmentMetadata in COPY_SEGMENT_STARTED (its constructor
// checks the offsets, then the epochs), an update with the record's state
// (whose constructor checks the state), then createWithUpdates.
func segmentMetadata(vals []value) (RemoteLogMetadata, error) {
	m := &RemoteLogSegmentMetadata{
		SegmentID:           segmentID(vals[rlsmSegmentID]),
		StartOffset:         vals[rlsmStartOffset].i,
		EndOffset:           vals[rlsmEndOffset].i,
		BrokerID:            int32(vals[rlsmBrokerID].i),
		MaxTimestampMs:      vals[rlsmMaxTimestamp].i,
		EventTimestampMs:    vals[rlsmEventTimestamp].i,
		SegmentLeaderEpochs: leaderEpochs(vals[rlsmLeaderEpochs]),
		SegmentSizeInBytes:  int32(vals[rlsmSize].i),
		CustomMetadata:      customMetadata(vals[rlsmCustomMetadata]),
		State:               RemoteLogSegmentState(vals[rlsmState].i),
		TxnIdxEmpty:         vals[rlsmTxnIndexEmpty].i != 0,
	}
	if m.StartOffset < 0 {
		return nil, &DecodeError{"Unexpected start offset = " + strconv.FormatInt(m.StartOffset, 10) +
			". StartOffset for a remote segment cannot be negative"}
	}
	if m.EndOffset < m.StartOffset {
		return nil, &DecodeError{"Unexpected end offset = " + strconv.FormatInt(m.EndOffset, 10) +
			". EndOffset for a remote segment cannot be less than startOffset = " + strconv.FormatInt(m.StartOffset, 10)}
	}
	if len(m.SegmentLeaderEpochs) == 0 {
		return nil, errEmptyEpochs()
	}
	if !m.State.Known() {
		return nil, errNullState()
	}
	return m, nil
}

// segmentUpdate is RemoteLogSegmentMetadataUpdateTransform.fromApiMessageAndVersion.
func segmentUpdate(vals []value) (RemoteLogMetadata, error) {
	m := &RemoteLogSegmentMetadataUpdate{
		SegmentID:        segmentID(vals[updSegmentID]),
		CustomMetadata:   customMetadata(vals[updCustomMetadata]),
		State:            RemoteLogSegmentState(vals[updState].i),
		EventTimestampMs: vals[updEventTimestamp].i,
		BrokerID:         int32(vals[updBrokerID].i),
	}
	if !m.State.Known() {
		return nil, errNullState()
	}
	return m, nil
}

// partitionDelete is RemotePartitionDeleteMetadataTransform.fromApiMessageAndVersion;
// its constructor's Objects.requireNonNull(state) has no message.
func partitionDelete(vals []value) (RemoteLogMetadata, error) {
	m := &RemotePartitionDeleteMetadata{
		TopicIDPartition: topicIDPartition(vals[delTopicIDPartition]),
		State:            RemotePartitionDeleteState(vals[delState].i),
		EventTimestampMs: vals[delEventTimestamp].i,
		BrokerID:         int32(vals[delBrokerID].i),
	}
	if !m.State.Known() {
		return nil, &DecodeError{"null"}
	}
	return m, nil
}

// segmentSnapshot is RemoteLogSegmentMetadataSnapshotTransform.fromApiMessageAndVersion;
// the constructor checks the state before the epochs, and no offsets.
func segmentSnapshot(vals []value) (RemoteLogMetadata, error) {
	m := &RemoteLogSegmentMetadataSnapshot{
		StartOffset:         vals[snapStartOffset].i,
		EndOffset:           vals[snapEndOffset].i,
		MaxTimestampMs:      vals[snapMaxTimestamp].i,
		BrokerID:            int32(vals[snapBrokerID].i),
		EventTimestampMs:    vals[snapEventTimestamp].i,
		SegmentSizeInBytes:  int32(vals[snapSize].i),
		CustomMetadata:      customMetadata(vals[snapCustomMetadata]),
		State:               RemoteLogSegmentState(vals[snapState].i),
		SegmentLeaderEpochs: leaderEpochs(vals[snapLeaderEpochs]),
		TxnIdxEmpty:         vals[snapTxnIndexEmpty].i != 0,
	}
	copy(m.SegmentID[:], vals[snapSegmentID].b)
	if !m.State.Known() {
		return nil, errNullState()
	}
	if len(m.SegmentLeaderEpochs) == 0 {
		return nil, errEmptyEpochs()
	}
	return m, nil
}
