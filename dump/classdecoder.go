package dump

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
)

// kafka-dump-log's --key-decoder-class and --value-decoder-class name a
// class implementing org.apache.kafka.tools.api.Decoder, loaded by name
// (DumpLogSegmentsOptions.messageParser, Utils.newInstance) for every .log
// and .checkpoint file, value decoder first, after the "Dumping" line. klog
// has the classes Kafka ships in tools-api; any other name is one Kafka's
// class loader would not find in a plain installation, and gets Kafka's
// error for that.

// DefaultDecoderClass is what both options default to, and what an option
// given without a value means (jopt-simple's withOptionalArg: the default).
const DefaultDecoderClass = "org.apache.kafka.tools.api.StringDecoder"

type decoderClass int8

const (
	stringDecoder  decoderClass = iota // new String(bytes, UTF_8)
	integerDecoder                     // ByteBuffer.wrap(bytes).getInt()
	longDecoder                        // ByteBuffer.wrap(bytes).getLong()
	defaultDecoder                     // the byte[] itself
)

var decoderClasses = map[string]decoderClass{
	DefaultDecoderClass:                         stringDecoder,
	"org.apache.kafka.tools.api.IntegerDecoder": integerDecoder,
	"org.apache.kafka.tools.api.LongDecoder":    longDecoder,
	"org.apache.kafka.tools.api.DefaultDecoder": defaultDecoder,
}

// notDecoders are classes on kafka-dump-log's class path that are not
// Decoders: Class.asSubclass throws, with the class's toString.
var notDecoders = map[string]string{
	"org.apache.kafka.tools.api.RecordReader": "interface org.apache.kafka.tools.api.RecordReader",
	"java.lang.Object":                        "class java.lang.Object",
	"java.lang.String":                        "class java.lang.String",
}

// DecoderClassError is a decoder class Kafka's tool cannot use: it dies
// with this exception when it dumps the first .log or .checkpoint file
// (after printing its "Dumping" line). Option is the flag that named it.
type DecoderClassError struct {
	Option, Class string
	// Msg is the exception as Java prints it.
	Msg string
}

func (e *DecoderClassError) Error() string {
	return "--" + e.Option + " " + strconv.Quote(e.Class) + ": " + e.Msg
}

// loadDecoderClass is Utils.newInstance(name, Decoder.class) and the
// messageParser's catch of ClassNotFoundException.
func loadDecoderClass(option, name string) (decoderClass, error) {
	if c, ok := decoderClasses[name]; ok {
		return c, nil
	}
	msg := "java.lang.RuntimeException: Failed to load decoder class (java.lang.ClassNotFoundException: " + name + ")"
	switch {
	case notDecoders[name] != "":
		msg = "java.lang.ClassCastException: " + notDecoders[name]
	case name == "org.apache.kafka.tools.api.Decoder":
		msg = "org.apache.kafka.common.KafkaException: Could not find a public no-argument constructor for " + name
	}
	return 0, &DecoderClassError{Option: option, Class: name, Msg: msg}
}

// ValueDecoder turns a record value into the text printed after
// "payload: " (--value-decoder-cmd); an error ends the dump.
type ValueDecoder interface {
	DecodeValue(offset int64, value []byte) ([]byte, error)
}

// shortBytesError is the BufferUnderflowException of IntegerDecoder and
// LongDecoder on fewer bytes than they read.
type shortBytesError struct {
	class, what string
	n, need     int
}

func (e *shortBytesError) Error() string {
	return "java.nio.BufferUnderflowException: " + e.class + " needs " + strconv.Itoa(e.need) + " bytes, the " + e.what +
		" has " + strconv.Itoa(e.n)
}

// contentDecoder renders keys and values as the decoder classes and the
// external value decoder do, for records of non-control batches.
type contentDecoder struct {
	key, value decoderClass
	ext        ValueDecoder
	keyEnc     ndjson.Encoding
	valueEnc   ndjson.Encoding
	cur        decodedContent
}

// decodedContent is one record's contents: the text after "key: " and
// "payload: " (nil: not printed), whether each is a number (JSON), and the
// error that stops Kafka's tool (a decoder class's exception) or klog's
// (the external decoder).
type decodedContent struct {
	key, value       []byte
	keyNum, valueNum bool
	err              error
	extErr           error
	keyBuf, valBuf   []byte
}

// plain reports whether the decoders are the default ones, which the
// renderers print directly with their encodings.
func (c *contentDecoder) plain() bool {
	return c == nil || (c.key == stringDecoder && c.value == stringDecoder && c.ext == nil)
}

// decode is DecoderMessageParser.parse: the key if the record has one,
// then the value if it has one, each through its decoder.
func (c *contentDecoder) decode(r *format.Record) *decodedContent {
	d := &c.cur
	d.key, d.value, d.keyNum, d.valueNum, d.err, d.extErr = nil, nil, false, false, nil, nil
	if r.Key != nil {
		d.keyBuf, d.keyNum, d.err = appendClass(d.keyBuf[:0], c.key, r.Key, c.keyEnc, "key")
		if d.err != nil {
			return d
		}
		d.key = d.keyBuf
	}
	if r.Value == nil {
		return d
	}
	if c.ext != nil {
		out, err := c.ext.DecodeValue(r.Offset, r.Value)
		if err != nil {
			d.extErr = &ValueDecoderError{Offset: r.Offset, Err: err}
			return d
		}
		d.valBuf = append(d.valBuf[:0], out...)
	} else {
		d.valBuf, d.valueNum, d.err = appendClass(d.valBuf[:0], c.value, r.Value, c.valueEnc, "value")
		if d.err != nil {
			return d
		}
	}
	d.value = d.valBuf
	return d
}

// appendClass appends b as the decoder class prints it: StringDecoder with
// the --*-encoding klog adds; DefaultDecoder, whose byte[] Kafka prints as
// its identity hash ("[B@1b6d3586", different on every run), as hex.
func appendClass(l []byte, c decoderClass, b []byte, enc ndjson.Encoding, what string) ([]byte, bool, error) {
	switch c {
	case integerDecoder:
		if len(b) < 4 {
			return l, false, &shortBytesError{"IntegerDecoder", what, len(b), 4}
		}
		return strconv.AppendInt(l, int64(int32(binary.BigEndian.Uint32(b))), 10), true, nil
	case longDecoder:
		if len(b) < 8 {
			return l, false, &shortBytesError{"LongDecoder", what, len(b), 8}
		}
		return strconv.AppendInt(l, int64(binary.BigEndian.Uint64(b)), 10), true, nil
	case defaultDecoder:
		return hex.AppendEncode(l, b), false, nil
	}
	return appendEncoded(l, b, enc), false, nil
}

// appendContentsText appends the contents as printRecordContents does.
func appendContentsText(l []byte, d *decodedContent, skipMetadata bool) []byte {
	prefix := " "
	if skipMetadata {
		prefix = "| "
	}
	if d.key != nil {
		l = append(append(l, prefix...), "key: "...)
		l = append(l, d.key...)
		prefix = " "
	}
	if d.value != nil {
		l = append(append(l, prefix...), "payload: "...)
		l = append(l, d.value...)
	}
	return l
}

// appendContentsJSON adds "decodedKey" and "decodedValue" to a record
// object: numbers for IntegerDecoder and LongDecoder, the external
// decoder's answer as a string; nothing for StringDecoder and
// DefaultDecoder, whose bytes the key and value fields carry.
func appendContentsJSON(l []byte, c *contentDecoder, d *decodedContent) []byte {
	if d.key != nil && d.keyNum {
		l = append(ndjson.Field(l, "decodedKey"), d.key...)
	}
	switch {
	case d.value != nil && d.valueNum:
		l = append(ndjson.Field(l, "decodedValue"), d.value...)
	case d.value != nil && c.ext != nil:
		l = ndjson.StringBytes(ndjson.Field(l, "decodedValue"), d.value)
	}
	return l
}

// isShortBytes reports a decoder class's BufferUnderflowException.
func isShortBytes(err error) bool {
	var s *shortBytesError
	return errors.As(err, &s)
}
