package internaltopic

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strconv"
)

// The encoders below are the decoders' inverse: they take the JSON
// kafka-dump-log's decoders print (and klog's) and write the record bytes
// Kafka's serdes would, through the same schema tables. Tests and fixture
// generators use them to write __cluster_metadata, __consumer_offsets and
// __transaction_state records without a broker; a round trip of every
// real record in testdata (decode, print, encode) gives its bytes back.

// EncodeMetadataJSON writes the value of a __cluster_metadata record from
// the payload JSON --cluster-metadata-decoder prints:
// {"type":"TOPIC_RECORD","version":0,"data":{...}}.
func EncodeMetadataJSON(js []byte) ([]byte, error) {
	var env struct {
		Type    string
		Version int16
		Data    map[string]any
	}
	if err := unmarshalNumbers(js, &env); err != nil {
		return nil, err
	}
	s := schemas()
	for apiKey, rec := range s.metadata {
		if rec.enum != env.Type {
			continue
		}
		dst := binary.AppendUvarint(nil, 1) // frame version
		dst = binary.AppendUvarint(dst, uint64(apiKey))
		dst = binary.AppendUvarint(dst, uint64(env.Version))
		return writeMessage(dst, s, rec.msg, env.Version, env.Data)
	}
	return nil, errors.New("unknown metadata record type " + strconv.Quote(env.Type))
}

// EncodeCoordinatorJSON writes the key and value of a __consumer_offsets
// (kind Offsets) or __transaction_state (kind TransactionLog) record from
// the JSON the decoders print: key {"type":"1","data":{...}} and value
// {"version":"3","data":{...}}; a nil value (or "<DELETE>") is a tombstone.
// A GroupMetadataValue member's subscription and assignment may be given
// as the objects the decoder prints (written at the newest version that
// has exactly those fields) or as base64.
func EncodeCoordinatorJSON(kind Kind, keyJSON, valueJSON []byte) (key, value []byte, err error) {
	s := schemas()
	types := s.group
	if kind == TransactionLog {
		types = s.transaction
	} else if kind != Offsets {
		return nil, nil, errors.New("EncodeCoordinatorJSON: kind " + kind.String() + " has no coordinator records")
	}
	var k struct {
		Type string
		Data map[string]any
	}
	if err := unmarshalNumbers(keyJSON, &k); err != nil {
		return nil, nil, err
	}
	t, err := strconv.ParseInt(k.Type, 10, 16)
	if err != nil {
		return nil, nil, errors.New("key type " + strconv.Quote(k.Type) + " is not an int16")
	}
	rec, ok := types[int16(t)]
	if !ok {
		return nil, nil, errors.New("unknown record type " + k.Type)
	}
	key, err = writeMessage(binary.BigEndian.AppendUint16(nil, uint16(t)), s, rec.key, 0, k.Data)
	if err != nil || valueJSON == nil || string(valueJSON) == "<DELETE>" {
		return key, nil, err
	}
	var v struct {
		Version string
		Data    map[string]any
	}
	if err := unmarshalNumbers(valueJSON, &v); err != nil {
		return nil, nil, err
	}
	ver, err := strconv.ParseInt(v.Version, 10, 16)
	if err != nil {
		return nil, nil, errors.New("value version " + strconv.Quote(v.Version) + " is not an int16")
	}
	value, err = writeMessage(binary.BigEndian.AppendUint16(nil, uint16(ver)), s, rec.value, int16(ver), v.Data)
	return key, value, err
}

func unmarshalNumbers(js []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	return d.Decode(v)
}

// messageWriter writes one message at one version; the first error sticks.
type messageWriter struct {
	s       *decoderSchemas
	version int16
	flex    bool
	err     error
}

func writeMessage(dst []byte, s *decoderSchemas, m *message, version int16, obj map[string]any) ([]byte, error) {
	w := &messageWriter{s: s, version: version, flex: m.flexible.has(version)}
	dst = w.writeStruct(dst, m.fields, obj)
	return dst, w.err
}

func (w *messageWriter) fail(msg string) {
	if w.err == nil {
		w.err = errors.New(msg)
	}
}

func (w *messageWriter) writeStruct(dst []byte, fs []field, obj map[string]any) []byte {
	for name := range obj {
		known := false
		for i := range fs {
			if fs[i].name == name && fs[i].versions.has(w.version) {
				known = true
			}
		}
		if !known {
			w.fail("field " + name + " is not in version " + strconv.Itoa(int(w.version)))
		}
	}
	type taggedField struct {
		tag  uint32
		body []byte
	}
	var tags []taggedField
	for i := range fs {
		f := &fs[i]
		if !f.versions.has(w.version) {
			continue
		}
		v, present := obj[f.name]
		if f.tagged.has(w.version) {
			if present {
				tags = append(tags, taggedField{f.tag, w.writeField(nil, f, v)})
			}
			continue
		}
		if !present {
			v = defaultJSON(f)
		}
		dst = w.writeField(dst, f, v)
	}
	if !w.flex {
		if len(tags) > 0 {
			w.fail("tagged fields in a version that is not flexible")
		}
		return dst
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].tag < tags[j].tag })
	dst = binary.AppendUvarint(dst, uint64(len(tags)))
	for _, t := range tags {
		dst = binary.AppendUvarint(dst, uint64(t.tag))
		dst = binary.AppendUvarint(dst, uint64(len(t.body)))
		dst = append(dst, t.body...)
	}
	return dst
}

// defaultJSON is what a field absent from the JSON is written as.
func defaultJSON(f *field) any {
	switch {
	case f.def.null:
		return nil
	case f.array:
		return []any{}
	case f.typ == typeString:
		return f.def.s
	case f.typ == typeBool:
		return f.def.i != 0
	case f.typ == typeFloat64:
		return json.Number(strconv.FormatFloat(f.def.f, 'g', -1, 64))
	case f.typ == typeStruct:
		return map[string]any{}
	case f.typ == typeUUID:
		return "AAAAAAAAAAAAAAAAAAAAAA"
	case f.typ == typeBytes:
		return ""
	}
	return json.Number(strconv.FormatInt(f.def.i, 10))
}

func (w *messageWriter) length(dst []byte, n int, classic func([]byte, int) []byte) []byte {
	if w.flex {
		return binary.AppendUvarint(dst, uint64(n+1))
	}
	return classic(dst, n)
}

func int32Len(dst []byte, n int) []byte { return binary.BigEndian.AppendUint32(dst, uint32(int32(n))) }
func int16Len(dst []byte, n int) []byte { return binary.BigEndian.AppendUint16(dst, uint16(int16(n))) }

func (w *messageWriter) writeField(dst []byte, f *field, v any) []byte {
	if !f.array {
		return w.writeOne(dst, f, v, f.nullable.has(w.version))
	}
	if v == nil {
		if !f.nullable.has(w.version) {
			w.fail("field " + f.name + " is null but not nullable")
		}
		return w.length(dst, -1, int32Len)
	}
	elems, ok := v.([]any)
	if !ok {
		w.fail("field " + f.name + " is not an array")
		return dst
	}
	dst = w.length(dst, len(elems), int32Len)
	for _, e := range elems {
		dst = w.writeOne(dst, f, e, false)
	}
	return dst
}

func (w *messageWriter) number(f *field, v any) (json.Number, bool) {
	n, ok := v.(json.Number)
	if !ok {
		w.fail("field " + f.name + " is not a number")
	}
	return n, ok
}

func (w *messageWriter) integer(f *field, v any, lo, hi int64) int64 {
	n, ok := w.number(f, v)
	if !ok {
		return 0
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || i < lo || i > hi {
		w.fail("field " + f.name + ": " + n.String() + " is out of range")
	}
	return i
}

func (w *messageWriter) writeOne(dst []byte, f *field, v any, canBeNull bool) []byte {
	switch f.typ {
	case typeBool:
		b, ok := v.(bool)
		if !ok {
			w.fail("field " + f.name + " is not a boolean")
		}
		if b {
			return append(dst, 1)
		}
		return append(dst, 0)
	case typeInt8:
		return append(dst, byte(w.integer(f, v, math.MinInt8, math.MaxInt8)))
	case typeInt16:
		return binary.BigEndian.AppendUint16(dst, uint16(w.integer(f, v, math.MinInt16, math.MaxInt16)))
	case typeUint16:
		return binary.BigEndian.AppendUint16(dst, uint16(w.integer(f, v, 0, math.MaxUint16)))
	case typeInt32:
		return binary.BigEndian.AppendUint32(dst, uint32(w.integer(f, v, math.MinInt32, math.MaxInt32)))
	case typeUint32:
		return binary.BigEndian.AppendUint32(dst, uint32(w.integer(f, v, 0, math.MaxUint32)))
	case typeInt64:
		return binary.BigEndian.AppendUint64(dst, uint64(w.integer(f, v, math.MinInt64, math.MaxInt64)))
	case typeFloat64:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(w.float(f, v)))
	case typeUUID:
		s, _ := v.(string)
		var u [16]byte
		if n, err := base64.RawURLEncoding.Decode(u[:], []byte(s)); err != nil || n != 16 {
			w.fail("field " + f.name + ": " + strconv.Quote(s) + " is not a Kafka Uuid")
		}
		return append(dst, u[:]...)
	case typeString:
		if v == nil {
			if !canBeNull {
				w.fail("field " + f.name + " is null but not nullable")
			}
			return w.length(dst, -1, int16Len)
		}
		s, ok := v.(string)
		if !ok || len(s) > math.MaxInt16 {
			w.fail("field " + f.name + " is not a string of at most 32767 bytes")
		}
		return append(w.length(dst, len(s), int16Len), s...)
	case typeBytes:
		return w.writeBytes(dst, f, v, canBeNull)
	case typeStruct:
		if canBeNull {
			if v == nil {
				return append(dst, 0xff)
			}
			dst = append(dst, 1)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			w.fail("field " + f.name + " is not an object")
			return dst
		}
		return w.writeStruct(dst, f.fields, obj)
	}
	w.fail("field " + f.name + " has an unknown type")
	return dst
}

func (w *messageWriter) float(f *field, v any) float64 {
	switch s := v.(type) {
	case string:
		switch s {
		case "NaN":
			return math.NaN()
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		}
	case json.Number:
		x, err := strconv.ParseFloat(s.String(), 64)
		if err == nil {
			return x
		}
	}
	w.fail("field " + f.name + " is not a float64")
	return 0
}

func (w *messageWriter) writeBytes(dst []byte, f *field, v any, canBeNull bool) []byte {
	var b []byte
	switch x := v.(type) {
	case nil:
		if !canBeNull {
			w.fail("field " + f.name + " is null but not nullable")
		}
		return w.length(dst, -1, int32Len)
	case string:
		var err error
		if b, err = base64.StdEncoding.DecodeString(x); err != nil {
			w.fail("field " + f.name + " is not base64")
		}
	case map[string]any:
		b = w.consumerProtocol(f, x)
	default:
		w.fail("field " + f.name + " is not base64 bytes")
	}
	return append(w.length(dst, len(b), int32Len), b...)
}

// consumerProtocol writes a GroupMetadataValue member's subscription or
// assignment given as the object the decoder prints (decodeConsumerProtocol):
// an int16 version, then the ConsumerProtocol message at the lowest
// version whose fields are exactly the object's (the newest, which is
// what Kafka's clients write: assignment versions 0 to 3 share their fields).
func (w *messageWriter) consumerProtocol(f *field, obj map[string]any) []byte {
	m := w.s.subscription
	if f.name == "assignment" {
		m = w.s.assignment
	} else if f.name != "subscription" {
		w.fail("field " + f.name + " holds bytes, not an object")
		return nil
	}
	for v := m.valid.hi; v >= m.valid.lo; v-- {
		n := 0
		for i := range m.fields {
			if m.fields[i].versions.has(v) {
				if _, ok := obj[m.fields[i].name]; !ok {
					n = -1
					break
				}
				n++
			}
		}
		if n != len(obj) {
			continue
		}
		b, err := writeMessage(binary.BigEndian.AppendUint16(nil, uint16(v)), w.s, m, v, obj)
		if err != nil {
			w.fail(err.Error())
		}
		return b
	}
	w.fail("field " + f.name + ": no " + m.name + " version has exactly these fields")
	return nil
}
