// Package internaltopic decodes the records of Kafka's internal topics as
// kafka-dump-log's decoders do: __consumer_offsets (--offsets-decoder),
// __transaction_state (--transaction-log-decoder), __cluster_metadata
// records and snapshots (--cluster-metadata-decoder) and __share_group_state
// (--share-group-state-decoder), each to the JSON Kafka's converters print,
// byte for byte; and __remote_log_metadata (--remote-log-metadata-decoder)
// to typed values (DecodeRemoteLogMetadata) whose String is the Java
// toString kafka-dump-log prints.
// The same schema tables encode and decode the typed __consumer_offsets
// records klog itself writes (group.go: offset commits and group
// metadata), so what klog writes is what the decoder prints.
package internaltopic

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/klog-dev/klog/format"
)

// Kind selects one of kafka-dump-log's message decoders, which print a
// record's key and value as the JSON of the message schema they hold instead
// of as UTF-8 text.
type Kind int

const (
	// None prints keys and values as text (StringDecoder).
	None Kind = iota
	// Offsets is --offsets-decoder: __consumer_offsets records
	// (GroupCoordinatorRecordSerde).
	Offsets
	// TransactionLog is --transaction-log-decoder: __transaction_state
	// records (TransactionCoordinatorRecordSerde).
	TransactionLog
	// ClusterMetadata is --cluster-metadata-decoder: KRaft
	// __cluster_metadata records and snapshots (MetadataRecordSerde).
	ClusterMetadata
	// RemoteLog is --remote-log-metadata-decoder: __remote_log_metadata
	// records (RemoteLogMetadataSerde), printed as Java's toString.
	RemoteLog
	// ShareGroupState is --share-group-state-decoder: __share_group_state
	// records (ShareCoordinatorRecordSerde).
	ShareGroupState
)

// String returns the kafka-dump-log option that selects k.
func (k Kind) String() string {
	switch k {
	case None:
		return "none"
	case Offsets:
		return "offsets-decoder"
	case TransactionLog:
		return "transaction-log-decoder"
	case ClusterMetadata:
		return "cluster-metadata-decoder"
	case RemoteLog:
		return "remote-log-metadata-decoder"
	case ShareGroupState:
		return "share-group-state-decoder"
	}
	return "unknown(" + strconv.Itoa(int(k)) + ")"
}

// ErrMissingKey is what a coordinator decoder throws on a record without a
// key; kafka-dump-log dies there (MissingKeyMessage is its text).
var ErrMissingKey = errors.New("message had a missing key")

// Decoded is what a decoder made of one record: the texts Kafka prints
// after "key: " and "payload: " (nil: not printed), and the problem, if any.
// Key and Value alias the decoder's buffers until its next Decode.
type Decoded struct {
	Key, Value []byte
	KeyJSON    bool // Key is a JSON object (not an error text)
	ValueJSON  bool // Value is a JSON object (not "<DELETE>" or an error text)
	MissingKey bool
	// RemoteLog is the decoded __remote_log_metadata record (RemoteLog
	// kind; Value is then its toString), nil if it did not decode.
	RemoteLog RemoteLogMetadata
	// Problem describes a record the decoder could not fully decode (an
	// unknown type or version, a parse error); "" if none.
	Problem string
}

// Decoder decodes records with one Kind; it reuses its buffers.
type Decoder struct {
	kind    Kind
	schemas *decoderSchemas
	cur     Decoded
	keyBuf  []byte
	valBuf  []byte
}

// New returns a decoder of the given kind, or nil for None.
func New(kind Kind) *Decoder {
	if kind == None {
		return nil
	}
	return &Decoder{kind: kind, schemas: schemas()}
}

// Current is the last Decode's result.
func (rd *Decoder) Current() *Decoded { return &rd.cur }

// MissingKeyMessage is Kafka's exception text for a keyless record.
func MissingKeyMessage(offset int64) string {
	return "Failed to decode message at offset " + strconv.FormatInt(offset, 10) +
		" using the specified decoder (message had a missing key)"
}

// Decode decodes the key and value of r (a non-control record) as the
// decoder's kind says, into Current.
func (rd *Decoder) Decode(r *format.Record) *Decoded {
	rd.cur = Decoded{}
	switch rd.kind {
	case Offsets:
		rd.decodeCoordinator(r, rd.schemas.group, true)
	case TransactionLog:
		rd.decodeCoordinator(r, rd.schemas.transaction, false)
	case ClusterMetadata:
		rd.decodeMetadata(r)
	case RemoteLog:
		rd.decodeRemoteLog(r)
	case ShareGroupState:
		rd.decodeCoordinator(r, rd.schemas.share, false)
	}
	return &rd.cur
}

// decodeCoordinator is DumpLogSegments.CoordinatorRecordMessageParser over
// CoordinatorRecordSerde.deserialize (readCoordinator), as text.
func (rd *Decoder) decodeCoordinator(r *format.Record, types map[int16]coordinatorRecord, groups bool) {
	c := &rd.cur
	if r.Key == nil {
		c.MissingKey = true
		c.Problem = MissingKeyMessage(r.Offset)
		return
	}
	m, err := readCoordinator(types, r.Key, r.Value)
	if err != nil {
		if err.unknownType {
			c.Key = append(append(rd.keyBuf[:0], "Unknown record type "...), strconv.Itoa(int(err.recordType))...)
			c.Key = append(append(append(c.Key, " at offset "...), strconv.FormatInt(r.Offset, 10)...), ", skipping."...)
			rd.keyBuf = c.Key
			c.Problem = "unknown record type " + strconv.Itoa(int(err.recordType))
			return
		}
		c.Key = append(append(rd.keyBuf[:0], "Error at offset "...), strconv.FormatInt(r.Offset, 10)...)
		c.Key = append(append(c.Key, ", skipping. "...), err.msg...)
		rd.keyBuf = c.Key
		c.Value, c.KeyJSON, c.ValueJSON = nil, false, false
		c.Problem = err.msg
		return
	}
	k := append(rd.keyBuf[:0], `{"type":"`...)
	k = strconv.AppendInt(k, int64(m.recordType), 10)
	k = append(k, `","data":`...)
	k = appendMessageJSON(k, m.rec.key, 0, m.keyVals)
	rd.keyBuf = append(k, '}')
	c.Key, c.KeyJSON = rd.keyBuf, true
	if m.tombstone {
		c.Value = append(rd.valBuf[:0], "<DELETE>"...)
		return
	}
	if groups && m.recordType == 2 {
		decodeConsumerProtocol(rd.schemas, m.version, m.valVals)
	}
	v := append(rd.valBuf[:0], `{"version":"`...)
	v = strconv.AppendInt(v, int64(m.version), 10)
	v = append(v, `","data":`...)
	v = appendMessageJSON(v, m.rec.value, m.version, m.valVals)
	rd.valBuf = append(v, '}')
	c.Value, c.ValueJSON = rd.valBuf, true
}

// coordinatorMessage is one coordinator record read against its schemas.
type coordinatorMessage struct {
	recordType int16
	rec        coordinatorRecord
	keyVals    []value
	version    int16
	valVals    []value
	tombstone  bool
}

// coordinatorError is why a coordinator record does not decode: an unknown
// record type (which the serde skips), or msg, CoordinatorRecordSerde's
// exception text.
type coordinatorError struct {
	unknownType bool
	recordType  int16
	msg         string
}

func (e *coordinatorError) Error() string {
	if e.unknownType {
		return "unknown record type " + strconv.Itoa(int(e.recordType))
	}
	return e.msg
}

// readCoordinator reads a record as CoordinatorRecordSerde.deserialize
// does: key = int16 record type + the key message (read at the record type
// as its version, printed at version 0), value = int16 version + the value
// message, or null for a tombstone. A value version outside the schema's
// valid versions is refused (UnknownRecordVersionException, KAFKA-18672).
// Bytes after either message are not looked at. The key is not nil.
func readCoordinator(types map[int16]coordinatorRecord, key, val []byte) (*coordinatorMessage, *coordinatorError) {
	fail := func(msg string) (*coordinatorMessage, *coordinatorError) { return nil, &coordinatorError{msg: msg} }
	if len(key) < 2 {
		return fail("Could not read version from key's buffer.")
	}
	m := &coordinatorMessage{recordType: int16(binary.BigEndian.Uint16(key))}
	rec, ok := types[m.recordType]
	if !ok {
		return nil, &coordinatorError{unknownType: true, recordType: m.recordType}
	}
	m.rec = rec
	var err error
	if m.keyVals, _, err = readMessage(rec.key, m.recordType, key[2:]); err != nil {
		return fail(couldNotRead(m.recordType, "key", err))
	}
	if val == nil {
		m.tombstone = true
		return m, nil
	}
	if len(val) < 2 {
		return fail("Could not read version from value's buffer.")
	}
	m.version = int16(binary.BigEndian.Uint16(val))
	if !rec.value.valid.has(m.version) {
		return fail("Found an unknown record version " + strconv.Itoa(int(m.version)) + " for " + strconv.Itoa(int(m.recordType)) + " type")
	}
	if m.valVals, _, err = readMessage(rec.value, m.version, val[2:]); err != nil {
		return fail(couldNotRead(m.version, "value", err))
	}
	return m, nil
}

// couldNotRead is CoordinatorRecordSerde.readMessage's exception text.
func couldNotRead(version int16, which string, err error) string {
	return "Could not read record with version " + strconv.Itoa(int(version)) + " from " + which +
		"'s buffer due to: " + err.Error() + "."
}

// decodeConsumerProtocol replaces, in a GroupMetadataValue of the "consumer"
// protocol type, each member's subscription and assignment bytes by the
// JSON of the ConsumerProtocolSubscription/Assignment they hold (int16
// version prefix). Bytes that do not decode stay base64, as in Kafka.
func decodeConsumerProtocol(s *decoderSchemas, version int16, vals []value) {
	const protocolType, members = 0, 5 // field indexes in GroupMetadataValue
	if len(vals) <= members || vals[protocolType].null || string(format.AppendJavaUTF8(nil, vals[protocolType].b)) != "consumer" {
		return
	}
	m := &vals[members]
	if m.null {
		return
	}
	const subscription, assignment = 6, 7 // field indexes in MemberMetadata
	for i := range m.elems {
		fs := m.elems[i].elems
		if len(fs) <= assignment {
			continue
		}
		for _, idx := range []int{subscription, assignment} {
			schema := s.subscription
			if idx == assignment {
				schema = s.assignment
			}
			v := &fs[idx]
			if !v.set || v.null || len(v.b) < 2 {
				continue
			}
			pv := int16(binary.BigEndian.Uint16(v.b))
			pvals, _, err := readMessage(schema, pv, v.b[2:])
			if err != nil {
				continue
			}
			v.raw = appendMessageJSON(nil, schema, pv, pvals)
		}
	}
}

// decodeMetadata is DumpLogSegments.ClusterMetadataLogMessageParser over
// MetadataRecordSerde (readMetadata): there is never a key, and any error
// prints as the payload "Error at <offset>, skipping. <message>".
func (rd *Decoder) decodeMetadata(r *format.Record) {
	c := &rd.cur
	m, err := readMetadata(rd.schemas, r.Value)
	if err != nil {
		v := append(rd.valBuf[:0], "Error at "...)
		v = strconv.AppendInt(v, r.Offset, 10)
		v = append(append(v, ", skipping. "...), err.text...)
		rd.valBuf = v
		c.Value, c.ValueJSON = v, false
		c.Problem = err.text + err.detail
		return
	}
	v := append(rd.valBuf[:0], `{"type":"`...)
	v = append(v, m.rec.enum...)
	v = append(v, `","version":`...)
	v = strconv.AppendInt(v, int64(m.version), 10)
	v = append(v, `,"data":`...)
	v = appendMessageJSON(v, m.rec.msg, m.version, m.vals)
	rd.valBuf = append(v, '}')
	c.Value, c.ValueJSON = rd.valBuf, true
	c.Problem = m.versionProblem()
}

// metadataMessage is one __cluster_metadata record read against its schema.
type metadataMessage struct {
	apiKey  int16
	version int16
	rec     metadataRecord
	vals    []value
}

// versionProblem is the note for a version newer than the schema klog
// knows ("" when known): the record is read as Kafka reads it.
func (m *metadataMessage) versionProblem() string {
	if m.rec.msg.valid.has(m.version) {
		return ""
	}
	return m.rec.msg.name + " version " + strconv.Itoa(int(m.version)) + " is not one klog knows (" +
		strconv.Itoa(int(m.rec.msg.valid.lo)) + "-" + strconv.Itoa(int(m.rec.msg.valid.hi)) + "); printed as Kafka reads it"
}

// metadataError is why a metadata record does not decode: text is what
// kafka-dump-log prints after "Error at N, skipping. ", detail what klog
// adds for its problem report.
type metadataError struct{ text, detail string }

func (e *metadataError) Error() string { return e.text + e.detail }

// readMetadata reads a metadata record value as MetadataRecordSerde does
// (AbstractApiMessageSerde.read, readFrame): the frame, then the message,
// with nothing after it.
func readMetadata(s *decoderSchemas, value []byte) (*metadataMessage, *metadataError) {
	if value == nil {
		return nil, &metadataError{text: "Error while reading frame version"}
	}
	apiKey, version, body, err := readFrame(value)
	if err != nil {
		return nil, &metadataError{text: err.Error()}
	}
	rec, known := s.metadata[apiKey]
	if !known {
		return nil, &metadataError{text: unknownMetadataID(apiKey).Error()}
	}
	vals, n, err := readMessage(rec.msg, version, body)
	if err != nil {
		return nil, &metadataError{text: "Failed to deserialize record with type " + strconv.Itoa(int(apiKey)), detail: ": " + err.Error()}
	}
	if n < len(body) {
		return nil, &metadataError{text: garbageAfter(len(body)-n, apiKey).Error()}
	}
	return &metadataMessage{apiKey: apiKey, version: version, rec: rec, vals: vals}, nil
}

// decodeRemoteLog is DumpLogSegments.RemoteMetadataLogMessageParser: the
// key is never printed, the payload is the decoded object's toString, or
// "Error at offset <offset>, skipping. <message>".
func (rd *Decoder) decodeRemoteLog(r *format.Record) {
	c := &rd.cur
	m, err := DecodeRemoteLogMetadata(r.Value)
	if err != nil {
		v := append(rd.valBuf[:0], "Error at offset "...)
		v = strconv.AppendInt(v, r.Offset, 10)
		v = append(append(v, ", skipping. "...), err.Error()...)
		rd.valBuf = v
		c.Value = v
		c.Problem = err.Error()
		return
	}
	c.RemoteLog = m
	c.Value = append(rd.valBuf[:0], m.String()...)
	rd.valBuf = c.Value
}
