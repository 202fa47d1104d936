package dump

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/verify"
)

// Decoder selects one of kafka-dump-log's message decoders, which print a
// record's key and value as the JSON of the message schema they hold instead
// of as UTF-8 text. A decoder implies Options.PrintData.
type Decoder int

const (
	// DecoderNone prints keys and values as text (StringDecoder).
	DecoderNone Decoder = iota
	// DecoderOffsets is --offsets-decoder: __consumer_offsets records
	// (GroupCoordinatorRecordSerde).
	DecoderOffsets
	// DecoderTransactionLog is --transaction-log-decoder: __transaction_state
	// records (TransactionCoordinatorRecordSerde).
	DecoderTransactionLog
	// DecoderClusterMetadata is --cluster-metadata-decoder: KRaft
	// __cluster_metadata records and snapshots (MetadataRecordSerde).
	DecoderClusterMetadata
)

// String returns the kafka-dump-log option that selects d.
func (d Decoder) String() string {
	switch d {
	case DecoderNone:
		return "none"
	case DecoderOffsets:
		return "offsets-decoder"
	case DecoderTransactionLog:
		return "transaction-log-decoder"
	case DecoderClusterMetadata:
		return "cluster-metadata-decoder"
	}
	return "unknown(" + strconv.Itoa(int(d)) + ")"
}

// errMissingKey is what a coordinator decoder throws on a record without a
// key; kafka-dump-log dies there (the dumper reports it with
// missingKeyMessage).
var errMissingKey = errors.New("message had a missing key")

// decodedRecord is what a decoder made of one record: the texts Kafka prints
// after "key: " and "payload: " (nil: not printed), and the problem, if any.
type decodedRecord struct {
	key, value []byte
	keyJSON    bool // key is a JSON object (not an error text)
	valueJSON  bool // value is a JSON object (not "<DELETE>" or an error text)
	missingKey bool
	// problem describes a record the decoder could not fully decode (an
	// unknown type or version, a parse error); "" if none.
	problem string
}

// recordDecoder decodes records with one Decoder; it reuses its buffers.
type recordDecoder struct {
	kind    Decoder
	schemas *decoderSchemas
	cur     decodedRecord
	keyBuf  []byte
	valBuf  []byte
}

func newRecordDecoder(kind Decoder) *recordDecoder {
	if kind == DecoderNone {
		return nil
	}
	return &recordDecoder{kind: kind, schemas: schemas()}
}

// attachDecoder creates the dumper's decoder for opts and hands it to the
// renderer, which prints d.dec.cur for each non-control record.
func (d *dumper) attachDecoder() {
	d.dec = newRecordDecoder(d.opts.Decoder)
	if d.dec == nil {
		return
	}
	switch r := d.r.(type) {
	case *textRenderer:
		r.dec = d.dec
	case *jsonRenderer:
		r.dec = d.dec
	}
}

// decodeRecord decodes r into d.dec.cur before the renderer prints it.
// Control records are not decoded: kafka-dump-log prints no contents for
// them.
func (d *dumper) decodeRecord(b *format.Batch, r *format.Record) {
	if d.dec == nil || b.IsControl() {
		return
	}
	d.dec.decode(r)
}

// reportDecodeProblem counts a record the decoder could not decode as a
// finding and reports it (a "record-decode" problem in JSON). In text mode
// the missing key ends the dump, as Kafka's tool dies there; the renderer
// has returned that error already.
func (d *dumper) reportDecodeProblem(b *format.Batch, r *format.Record) {
	if d.dec == nil || b.IsControl() {
		return
	}
	c := &d.dec.cur
	if c.problem == "" || (c.missingKey && !d.opts.JSON) {
		return
	}
	d.findings++
	pe := &format.PosError{Kind: format.ErrCorrupt, Pos: b.Pos, Offset: r.Offset, Field: "value", Msg: c.problem}
	if c.missingKey {
		pe.Field = "key"
	}
	d.r.problem(problemFromError(pe, verify.KindRecordDecode))
}

// missingKeyMessage is Kafka's exception text for a keyless record.
func missingKeyMessage(offset int64) string {
	return "Failed to decode message at offset " + strconv.FormatInt(offset, 10) +
		" using the specified decoder (message had a missing key)"
}

func (rd *recordDecoder) decode(r *format.Record) {
	rd.cur = decodedRecord{}
	switch rd.kind {
	case DecoderOffsets:
		rd.decodeCoordinator(r, rd.schemas.group, true)
	case DecoderTransactionLog:
		rd.decodeCoordinator(r, rd.schemas.transaction, false)
	case DecoderClusterMetadata:
		rd.decodeMetadata(r)
	}
}

// decodeCoordinator is DumpLogSegments.CoordinatorRecordMessageParser over
// CoordinatorRecordSerde: key = int16 record type + key message (version 0),
// value = int16 version + value message, or null for a tombstone.
func (rd *recordDecoder) decodeCoordinator(r *format.Record, types map[int16]coordinatorRecord, groups bool) {
	c := &rd.cur
	if r.Key == nil {
		c.missingKey = true
		c.problem = missingKeyMessage(r.Offset)
		return
	}
	fail := func(msg string) {
		c.key = append(append(rd.keyBuf[:0], "Error at offset "...), strconv.FormatInt(r.Offset, 10)...)
		c.key = append(append(c.key, ", skipping. "...), msg...)
		rd.keyBuf = c.key
		c.value, c.keyJSON, c.valueJSON = nil, false, false
		c.problem = msg
	}
	if len(r.Key) < 2 {
		fail("Could not read version from key's buffer.")
		return
	}
	recordType := int16(binary.BigEndian.Uint16(r.Key))
	rec, ok := types[recordType]
	if !ok {
		c.key = append(append(rd.keyBuf[:0], "Unknown record type "...), strconv.Itoa(int(recordType))...)
		c.key = append(append(append(c.key, " at offset "...), strconv.FormatInt(r.Offset, 10)...), ", skipping."...)
		rd.keyBuf = c.key
		c.problem = "unknown record type " + strconv.Itoa(int(recordType))
		return
	}
	keyVals, _, err := readMessage(rec.key, 0, r.Key[2:])
	if err != nil {
		fail(couldNotRead(0, "key", err))
		return
	}
	var version int16
	var valVals []value
	if r.Value != nil {
		if len(r.Value) < 2 {
			fail("Could not read version from value's buffer.")
			return
		}
		version = int16(binary.BigEndian.Uint16(r.Value))
		valVals, _, err = readMessage(rec.value, version, r.Value[2:])
		if err != nil {
			fail(couldNotRead(version, "value", err))
			return
		}
	}
	k := append(rd.keyBuf[:0], `{"type":"`...)
	k = strconv.AppendInt(k, int64(recordType), 10)
	k = append(k, `","data":`...)
	k = appendMessageJSON(k, rec.key, 0, keyVals)
	rd.keyBuf = append(k, '}')
	c.key, c.keyJSON = rd.keyBuf, true
	if r.Value == nil {
		c.value = append(rd.valBuf[:0], "<DELETE>"...)
		return
	}
	if groups && recordType == 2 {
		decodeConsumerProtocol(rd.schemas, version, valVals)
	}
	v := append(rd.valBuf[:0], `{"version":"`...)
	v = strconv.AppendInt(v, int64(version), 10)
	v = append(v, `","data":`...)
	v = appendMessageJSON(v, rec.value, version, valVals)
	rd.valBuf = append(v, '}')
	c.value, c.valueJSON = rd.valBuf, true
	if !rec.value.valid.has(version) {
		c.problem = rec.value.name + " version " + strconv.Itoa(int(version)) + " is not one klog knows (" +
			strconv.Itoa(int(rec.value.valid.lo)) + "-" + strconv.Itoa(int(rec.value.valid.hi)) + "); printed with the newest schema"
	}
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
	if len(vals) <= members || vals[protocolType].null || string(AppendJavaUTF8(nil, vals[protocolType].b)) != "consumer" {
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
// MetadataRecordSerde (AbstractApiMessageSerde.read): unsigned varint frame
// version (1), apiKey and version, then the message, with nothing after it.
// There is never a key.
func (rd *recordDecoder) decodeMetadata(r *format.Record) {
	c := &rd.cur
	fail := func(msg string) {
		v := append(rd.valBuf[:0], "Error at "...)
		v = strconv.AppendInt(v, r.Offset, 10)
		v = append(append(v, ", skipping. "...), msg...)
		rd.valBuf = v
		c.value, c.valueJSON = v, false
		c.problem = msg
	}
	if r.Value == nil {
		fail("Error while reading frame version")
		return
	}
	hr := &messageReader{buf: r.Value}
	header := func(entity string) (int16, bool) {
		v := hr.uvarint()
		if hr.err != nil {
			fail("Error while reading " + entity)
			return 0, false
		}
		if v > 0x7fff { // a negative Java int passes this check and is cast to short
			fail("Value for " + entity + " was too large.")
			return 0, false
		}
		return int16(v), true
	}
	frame, ok := header("frame version")
	if !ok {
		return
	}
	switch {
	case frame == 0:
		fail("Could not deserialize metadata record with frame version 0. " +
			"Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.")
		return
	case frame != 1:
		fail("Could not deserialize metadata record due to unknown frame version " + strconv.Itoa(int(frame)) +
			"(only frame version 1 is supported)")
		return
	}
	apiKey, ok := header("type")
	if !ok {
		return
	}
	version, ok := header("version")
	if !ok {
		return
	}
	rec, known := rd.schemas.metadata[apiKey]
	if !known {
		fail("org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id " + strconv.Itoa(int(apiKey)))
		return
	}
	body := r.Value[hr.pos:]
	vals, n, err := readMessage(rec.msg, version, body)
	if err != nil {
		fail("Failed to deserialize record with type " + strconv.Itoa(int(apiKey)))
		c.problem += ": " + err.Error()
		return
	}
	if n < len(body) {
		fail("Found " + strconv.Itoa(len(body)-n) + " byte(s) of garbage after " + strconv.Itoa(int(apiKey)))
		return
	}
	v := append(rd.valBuf[:0], `{"type":"`...)
	v = append(v, rec.enum...)
	v = append(v, `","version":`...)
	v = strconv.AppendInt(v, int64(version), 10)
	v = append(v, `,"data":`...)
	v = appendMessageJSON(v, rec.msg, version, vals)
	rd.valBuf = append(v, '}')
	c.value, c.valueJSON = rd.valBuf, true
	if !rec.msg.valid.has(version) {
		c.problem = rec.msg.name + " version " + strconv.Itoa(int(version)) + " is not one klog knows (" +
			strconv.Itoa(int(rec.msg.valid.lo)) + "-" + strconv.Itoa(int(rec.msg.valid.hi)) + "); printed with the newest schema"
	}
}

// appendText writes the record's contents as printRecordContents does: the
// key, then the payload; the first printed item is prefixed with "| " under
// --skip-record-metadata and with a space otherwise. A keyless coordinator
// record returns Kafka's fatal error instead.
func (c *decodedRecord) appendText(l []byte, skipMetadata bool) ([]byte, error) {
	if c.missingKey {
		return l, errMissingKey
	}
	prefix := " "
	if skipMetadata {
		prefix = "| "
	}
	if c.key != nil {
		l = append(l, prefix...)
		l = append(l, "key: "...)
		l = append(l, c.key...)
		prefix = " "
	}
	if c.value != nil {
		l = append(l, prefix...)
		l = append(l, "payload: "...)
		l = append(l, c.value...)
	}
	return l, nil
}

// appendJSONFields adds the decoder's output to an NDJSON record object:
// "decodedKey" and "decodedValue" hold the JSON Kafka prints, or the text it
// prints instead (an error, "<DELETE>") as a string, or null when it prints
// nothing.
func (c *decodedRecord) appendJSONFields(l []byte) []byte {
	l = ndjson.Field(l, "decodedKey")
	switch {
	case c.key == nil:
		l = append(l, "null"...)
	case c.keyJSON:
		l = appendKafkaJSON(l, c.key)
	default:
		l = ndjson.StringBytes(l, c.key)
	}
	l = ndjson.Field(l, "decodedValue")
	switch {
	case c.value == nil:
		l = append(l, "null"...)
	case c.valueJSON:
		l = appendKafkaJSON(l, c.value)
	default:
		l = ndjson.StringBytes(l, c.value)
	}
	return l
}
