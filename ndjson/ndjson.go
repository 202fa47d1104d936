// Package ndjson is klog's one JSON encoding: every object any klog command
// prints is one line of RFC 8259 JSON with a "type" field naming its shape,
// and the shapes are described by the JSON Schema in schema.json (Schema).
// Batches and records are written here, by append-style writers that use no
// reflection, so dump, fetch, tail, find, recover --salvage and replicate
// print them the same way.
//
// Naming rules (part of the contract): field names are Kafka's, in
// camelCase; sizes in bytes end in "Bytes" (a batch's is "sizeBytes"); a
// batch's number of records is "recordCount"; a file's kind is "fileKind"
// and a finding's kind is "kind"; timestamps are epoch milliseconds, and a
// timestamp field's optional ISO-8601 UTC twin has the same name with
// "Timestamp" replaced by "Time" ("maxTimestamp" and "maxTime"). Key and
// value bytes follow Encoding. Fields are only ever added.
package ndjson

import (
	"bufio"
	"io"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/verify"
)

// Begin starts an object of the given type: {"type":"<typ>". typ is one of
// the schema's type names and is written as is.
func Begin(dst []byte, typ string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	return append(dst, '"')
}

// End closes an object.
func End(dst []byte) []byte { return append(dst, '}') }

// Field writes ,"name": (name is a constant identifier, written as is).
func Field(dst []byte, name string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// Int writes ,"name":v.
func Int(dst []byte, name string, v int64) []byte {
	return strconv.AppendInt(Field(dst, name), v, 10)
}

// Uint writes ,"name":v.
func Uint(dst []byte, name string, v uint64) []byte {
	return strconv.AppendUint(Field(dst, name), v, 10)
}

// Bool writes ,"name":v.
func Bool(dst []byte, name string, v bool) []byte {
	return strconv.AppendBool(Field(dst, name), v)
}

// Null writes ,"name":null.
func Null(dst []byte, name string) []byte { return append(Field(dst, name), "null"...) }

// Str writes ,"name":"s" (escaped; see String).
func Str(dst []byte, name, s string) []byte { return String(Field(dst, name), s) }

// Options says how records are written. The zero value writes no keys,
// values or header values (kafka-dump-log without --print-data-log), and
// text encoding when they are written.
type Options struct {
	// Data writes keys, values and header values.
	Data bool
	// KeyEncoding renders keys (and header keys); ValueEncoding renders
	// values and header values.
	KeyEncoding, ValueEncoding Encoding
}

// BatchFields writes a batch's fields (after Begin(dst, "batch") or into
// another object): its position in the file, offsets, sizes, CRCs and
// header, in Kafka's names. Legacy compressed wrappers have a null
// baseOffset and legacy entries a null recordCount, as Kafka prints none.
func BatchFields(dst []byte, b *format.Batch) []byte {
	dst = Int(dst, "position", b.Pos)
	if b.IsV2() || b.Compression() == format.CompressionNone {
		dst = Int(dst, "baseOffset", b.BaseOffset)
	} else {
		dst = Null(dst, "baseOffset")
	}
	dst = Int(dst, "lastOffset", b.LastOffset())
	if b.IsV2() {
		dst = Int(dst, "recordCount", int64(b.RecordCount))
	} else {
		dst = Null(dst, "recordCount")
	}
	dst = Int(dst, "magic", int64(b.Magic))
	dst = Uint(dst, "crc", uint64(b.CRC))
	dst = Uint(dst, "computedCrc", uint64(b.ComputedCRC()))
	dst = Bool(dst, "isValid", b.Valid())
	dst = Int(dst, "sizeBytes", b.Size())
	dst = append(Field(dst, "compression"), '"')
	dst = append(dst, b.Compression().String()...)
	dst = append(dst, '"')
	dst = append(Field(dst, "timestampType"), '"')
	dst = append(dst, b.TimestampType().String()...)
	dst = append(dst, '"')
	dst = Int(dst, "maxTimestamp", b.MaxTimestamp)
	dst = Int(dst, "producerId", b.ProducerID)
	dst = Int(dst, "producerEpoch", int64(b.ProducerEpoch))
	dst = Int(dst, "baseSequence", int64(b.BaseSequence))
	dst = Int(dst, "lastSequence", int64(b.LastSequence()))
	dst = Int(dst, "partitionLeaderEpoch", int64(b.PartitionLeaderEpoch))
	dst = Bool(dst, "isTransactional", b.IsTransactional())
	dst = Bool(dst, "isControl", b.IsControl())
	if h, ok := b.DeleteHorizonMs(); ok {
		return Int(dst, "deleteHorizonMs", h)
	}
	return Null(dst, "deleteHorizonMs")
}

// RecordFields writes a record's fields (after Begin(dst, "record")): its
// offset, timestamp and sizes; for v2 its sequence and headers; for v0/v1
// its own CRC; for a control record a "control" object; and with
// opts.Data its key and value. The error is a control record that cannot
// be decoded; dst is still a well-formed prefix then.
func RecordFields(dst []byte, b *format.Batch, r *format.Record, opts *Options) ([]byte, error) {
	dst = Int(dst, "offset", r.Offset)
	dst = Int(dst, "timestamp", r.Timestamp)
	dst = Int(dst, "keySize", int64(r.KeySize))
	dst = Int(dst, "valueSize", int64(r.ValueSize))
	if b.IsV2() {
		dst = Int(dst, "sequence", int64(r.Sequence))
		dst = append(Field(dst, "headers"), '[')
		for i := range r.Headers {
			h := &r.Headers[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"key":`...)
			dst = bytesValue(dst, "keyEncoding", h.Key, opts.KeyEncoding)
			if opts.Data {
				dst = Bytes(dst, "value", "valueEncoding", h.Value, opts.ValueEncoding)
			}
			dst = End(dst)
		}
		dst = append(dst, ']')
	}
	if r.Legacy {
		dst = Bool(dst, "isValid", r.Valid)
		dst = Uint(dst, "crc", uint64(r.CRC))
	}
	if b.IsControl() {
		return appendControl(dst, r)
	}
	if opts.Data {
		dst = Bytes(dst, "key", "keyEncoding", r.Key, opts.KeyEncoding)
		dst = Bytes(dst, "value", "valueEncoding", r.Value, opts.ValueEncoding)
	}
	return dst, nil
}

// Writer writes NDJSON lines to a buffered writer, reusing one line
// buffer. Its methods record the first write error (Err) and do nothing
// after it.
type Writer struct {
	w    *bufio.Writer
	line []byte
	err  error
	// Options are used by Record.
	Options Options
}

// NewWriter returns a Writer on w; w is buffered unless it is already a
// *bufio.Writer. Call Flush at the end.
func NewWriter(w io.Writer, opts Options) *Writer {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 256<<10)
	}
	return &Writer{w: bw, line: make([]byte, 0, 1024), Options: opts}
}

// Line returns the reusable line buffer, empty, to build an object in and
// pass to Emit.
func (w *Writer) Line() []byte { return w.line[:0] }

// Emit writes one finished object and a newline, and keeps l's buffer for
// the next Line.
func (w *Writer) Emit(l []byte) {
	l = append(l, '\n')
	if w.err == nil {
		_, w.err = w.w.Write(l)
	}
	w.line = l
}

// Batch writes a "batch" object with extra fields from more (nil: none).
func (w *Writer) Batch(b *format.Batch, more func([]byte) []byte) {
	l := BatchFields(Begin(w.Line(), "batch"), b)
	if more != nil {
		l = more(l)
	}
	w.Emit(End(l))
}

// Record writes a "record" object with extra fields from more (nil:
// none), in w.Options. The error is that of RecordFields; the object is
// written anyway.
func (w *Writer) Record(b *format.Batch, r *format.Record, more func([]byte) []byte) error {
	l, err := RecordFields(Begin(w.Line(), "record"), b, r, &w.Options)
	if more != nil {
		l = more(l)
	}
	w.Emit(End(l))
	return err
}

// Flush flushes the buffer and returns the first error met.
func (w *Writer) Flush() error {
	if err := w.w.Flush(); w.err == nil {
		w.err = err
	}
	return w.err
}

// Err is the first write error.
func (w *Writer) Err() error { return w.err }

// ProblemFields writes a finding's fields (after Begin(dst, "problem")):
// its path when it has one, kind, position, offset and message, and the
// stored and computed CRCs or the bytes concerned when the kind has them.
// The names are those of verify.Problem's JSON tags.
func ProblemFields(dst []byte, p *verify.Problem) []byte {
	if p.Path != "" {
		dst = Str(dst, "path", p.Path)
	}
	if p.Kind != "" {
		dst = Str(dst, "kind", string(p.Kind))
	}
	dst = Int(dst, "position", p.Position)
	dst = Int(dst, "offset", p.Offset)
	dst = Str(dst, "message", p.Message)
	if p.Stored != nil {
		dst = Uint(dst, "stored", uint64(*p.Stored))
	}
	if p.Computed != nil {
		dst = Uint(dst, "computed", uint64(*p.Computed))
	}
	if p.Bytes != nil {
		dst = Int(dst, "bytes", *p.Bytes)
	}
	if p.Info {
		dst = Bool(dst, "info", true)
	}
	return dst
}
