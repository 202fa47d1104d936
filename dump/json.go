package dump

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/klog-dev/klog/format"
)

// jsonRenderer writes NDJSON: one object per line, each with a "type" field
// ("file", "batch", "record", "problem", "summary"). Field names are Kafka's
// in camelCase; the README documents the schema. Objects are built with
// append-style writers (no reflection) because records are the hot path.
type jsonRenderer struct {
	w    *bufio.Writer
	opts Options
	line []byte
	path string
	dec  *recordDecoder // --offsets-decoder etc. (decoder.go); nil without one
}

func newJSONRenderer(w io.Writer, opts Options) *jsonRenderer {
	return &jsonRenderer{w: bufio.NewWriterSize(w, 256<<10), opts: opts, line: make([]byte, 0, 1024)}
}

func (j *jsonRenderer) flush() error { return j.w.Flush() }

func (j *jsonRenderer) emit(l []byte) {
	l = append(l, '}', '\n')
	j.w.Write(l)
	j.line = l
}

func (j *jsonRenderer) dumping(p string) { j.path = p }

func (j *jsonRenderer) ignored(p string, why error) {
	l := append(j.line[:0], `{"type":"file","path":`...)
	l = appendJSONString(l, p)
	l = append(l, `,"ignored":true`...)
	if why != nil {
		l = append(l, `,"error":`...)
		l = appendJSONString(l, why.Error())
	}
	j.emit(l)
}

func (j *jsonRenderer) logHeader(p, header string) {}

func (j *jsonRenderer) fileStart(p string, size int64) {
	l := append(j.line[:0], `{"type":"file","path":`...)
	l = appendJSONString(l, p)
	l = append(l, `,"size":`...)
	l = strconv.AppendInt(l, size, 10)
	j.emit(l)
}

func appendField(l []byte, name string) []byte {
	l = append(l, ',', '"')
	l = append(l, name...)
	return append(l, '"', ':')
}

func appendIntField(l []byte, name string, v int64) []byte {
	return strconv.AppendInt(appendField(l, name), v, 10)
}

func appendBoolField(l []byte, name string, v bool) []byte {
	return strconv.AppendBool(appendField(l, name), v)
}

func (j *jsonRenderer) batch(b *format.Batch) {
	l := append(j.line[:0], `{"type":"batch"`...)
	l = appendIntField(l, "position", b.Pos)
	if b.IsV2() || b.Compression() == format.CompressionNone {
		l = appendIntField(l, "baseOffset", b.BaseOffset)
	} else {
		l = append(appendField(l, "baseOffset"), "null"...)
	}
	l = appendIntField(l, "lastOffset", b.LastOffset())
	if b.IsV2() {
		l = appendIntField(l, "count", int64(b.RecordCount))
	} else {
		l = append(appendField(l, "count"), "null"...)
	}
	l = appendIntField(l, "magic", int64(b.Magic))
	l = appendIntField(l, "crc", int64(b.CRC))
	l = appendIntField(l, "computedCrc", int64(b.ComputedCRC()))
	l = appendBoolField(l, "isValid", b.Valid())
	l = appendIntField(l, "size", b.Size())
	l = append(appendField(l, "compression"), '"')
	l = append(l, b.Compression().String()...)
	l = append(l, '"')
	l = append(appendField(l, "timestampType"), '"')
	l = append(l, b.TimestampType().String()...)
	l = append(l, '"')
	l = appendIntField(l, "maxTimestamp", b.MaxTimestamp)
	l = appendIntField(l, "producerId", b.ProducerID)
	l = appendIntField(l, "producerEpoch", int64(b.ProducerEpoch))
	l = appendIntField(l, "baseSequence", int64(b.BaseSequence))
	l = appendIntField(l, "lastSequence", int64(b.LastSequence()))
	l = appendIntField(l, "partitionLeaderEpoch", int64(b.PartitionLeaderEpoch))
	l = appendBoolField(l, "isTransactional", b.IsTransactional())
	l = appendBoolField(l, "isControl", b.IsControl())
	if h, ok := b.DeleteHorizonMs(); ok {
		l = appendIntField(l, "deleteHorizonMs", h)
	} else {
		l = append(appendField(l, "deleteHorizonMs"), "null"...)
	}
	j.emit(l)
}

func (j *jsonRenderer) batchPrefixOnly(b *format.Batch) {}

func (j *jsonRenderer) record(b *format.Batch, r *format.Record) error {
	l := append(j.line[:0], `{"type":"record"`...)
	l = appendIntField(l, "offset", r.Offset)
	l = appendIntField(l, "timestamp", r.Timestamp)
	l = appendIntField(l, "keySize", int64(r.KeySize))
	l = appendIntField(l, "valueSize", int64(r.ValueSize))
	if b.IsV2() {
		l = appendIntField(l, "sequence", int64(r.Sequence))
		l = append(appendField(l, "headers"), '[')
		for i, h := range r.Headers {
			if i > 0 {
				l = append(l, ',')
			}
			l = append(l, `{"key":`...)
			l = appendJSONString(l, string(h.Key))
			if j.opts.PrintData {
				l = appendBytesFieldAs(l, "value", "valueEncoding", h.Value, j.opts.ValueEncoding)
			}
			l = append(l, '}')
		}
		l = append(l, ']')
	}
	if r.Legacy {
		l = appendBoolField(l, "isValid", r.Valid)
		l = appendIntField(l, "crc", int64(r.CRC))
	}
	var ctlErr error
	if b.IsControl() {
		l, ctlErr = appendControlJSON(l, r)
	} else if j.opts.PrintData {
		l = appendBytesFieldAs(l, "key", "keyEncoding", r.Key, j.opts.KeyEncoding)
		l = appendBytesFieldAs(l, "value", "valueEncoding", r.Value, j.opts.ValueEncoding)
	}
	if j.dec != nil && !b.IsControl() {
		l = j.dec.cur.appendJSONFields(l)
	}
	j.emit(l)
	return ctlErr
}

func appendControlJSON(l []byte, r *format.Record) ([]byte, error) {
	k, err := format.ParseControlKey(r.Key)
	if err != nil {
		return l, err
	}
	l = append(appendField(l, "control"), `{"type":"`...)
	l = append(l, k.Type.String()...)
	l = append(l, '"')
	l = appendIntField(l, "typeId", int64(k.Type))
	l = appendIntField(l, "version", int64(k.Version))
	if k.Type == format.ControlAbort || k.Type == format.ControlCommit {
		m, err := format.ParseEndTxnMarker(r.Value)
		if err != nil {
			return append(l, '}'), err
		}
		l = appendIntField(l, "coordinatorEpoch", int64(m.CoordinatorEpoch))
	} else if b, err := appendControl(nil, r); err == nil && len(b) > 0 {
		// The KRaft control messages: Kafka's JSON, after its label.
		if i := indexByte(b, '{'); i >= 0 {
			l = append(appendField(l, "data"), b[i:]...)
		}
	} else if err != nil {
		return append(l, '}'), err
	}
	return append(l, '}'), nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// appendBytesFieldAs writes bytes in an explicit encoding: text keeps the
// default (a string, or base64 when not UTF-8); hex and base64 always use
// that encoding; redacted writes "sha256:<hex>" and the size only.
func appendBytesFieldAs(l []byte, name, encName string, v []byte, e Encoding) []byte {
	if e == EncodingText || v == nil {
		return appendBytesField(l, name, encName, v)
	}
	l = append(appendField(l, name), '"')
	switch e {
	case EncodingHex:
		l = hex.AppendEncode(l, v)
	case EncodingBase64:
		l = base64.StdEncoding.AppendEncode(l, v)
	default:
		sum := sha256.Sum256(v)
		l = append(l, "sha256:"...)
		l = hex.AppendEncode(l, sum[:])
	}
	l = append(l, '"')
	l = append(appendField(l, encName), '"')
	l = append(l, e.String()...)
	return append(l, '"')
}

// appendBytesField writes "name": the bytes as a JSON string when they are
// valid UTF-8, else base64 with "encName":"base64"; null for nil.
func appendBytesField(l []byte, name, encName string, v []byte) []byte {
	l = appendField(l, name)
	if v == nil {
		return append(l, "null"...)
	}
	if utf8.Valid(v) {
		return appendJSONString(l, string(v))
	}
	l = append(l, '"')
	l = base64.StdEncoding.AppendEncode(l, v)
	l = append(l, '"')
	l = appendField(l, encName)
	return append(l, `"base64"`...)
}

func (j *jsonRenderer) problem(p Problem) {
	l := append(j.line[:0], `{"type":"problem","path":`...)
	l = appendJSONString(l, j.path)
	l = append(appendField(l, "kind"), '"')
	l = append(l, p.Kind...)
	l = append(l, '"')
	l = appendIntField(l, "position", p.Position)
	l = appendIntField(l, "offset", p.Offset)
	if p.HasCRC {
		l = appendIntField(l, "stored", p.Stored)
		l = appendIntField(l, "computed", p.Computed)
	}
	if p.HasBytes {
		l = appendIntField(l, "bytes", p.Bytes)
	}
	l = appendJSONString(appendField(l, "message"), p.Message)
	j.emit(l)
}

func (j *jsonRenderer) trailing(name string, t format.Tail) {
	kind := "trailing-bytes"
	msg := strconv.FormatInt(t.Bytes, 10) + " bytes after the last complete batch"
	if t.Kind == format.TailPartial {
		kind = "truncated"
		msg = "batch at position " + strconv.FormatInt(t.Pos, 10) + " declares " + strconv.FormatInt(t.Want, 10) +
			" bytes but only " + strconv.FormatInt(t.Bytes, 10) + " remain"
	}
	j.problem(Problem{Kind: kind, Position: t.Pos, Offset: t.Offset, Bytes: t.Bytes, HasBytes: true, Message: msg})
}

func (j *jsonRenderer) fileEnd(p string, batches, records int64, t format.Tail) {
	l := append(j.line[:0], `{"type":"summary","path":`...)
	l = appendJSONString(l, p)
	l = appendIntField(l, "batches", batches)
	if j.opts.Deep {
		l = appendIntField(l, "records", records)
	}
	l = appendIntField(l, "validBytes", t.Pos)
	l = appendIntField(l, "trailingBytes", t.Bytes)
	j.emit(l)
}

// appendJSONString writes s as a JSON string (RFC 8259 escaping; invalid
// UTF-8 bytes become U+FFFD).
func appendJSONString(l []byte, s string) []byte {
	const hex = "0123456789abcdef"
	l = append(l, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				l = append(l, '\\', c)
			case c == '\n':
				l = append(l, '\\', 'n')
			case c == '\r':
				l = append(l, '\\', 'r')
			case c == '\t':
				l = append(l, '\\', 't')
			case c < 0x20:
				l = append(l, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				l = append(l, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			l = append(l, "\ufffd"...)
		} else {
			l = append(l, s[i:i+n]...)
		}
		i += n
	}
	return append(l, '"')
}

func (j *jsonRenderer) indexStart(path, kind string, size int64, entries int) {
	l := append(j.line[:0], `{"type":"file","path":`...)
	l = appendJSONString(l, path)
	l = append(l, `,"kind":"`...)
	l = append(l, kind...)
	l = append(l, '"')
	l = appendIntField(l, "size", size)
	l = appendIntField(l, "entries", int64(entries))
	j.emit(l)
}

func (j *jsonRenderer) indexEmpty(path string) {}

func (j *jsonRenderer) sanityPassed(path string) {
	l := append(j.line[:0], `{"type":"sanity","path":`...)
	l = appendJSONString(l, path)
	l = append(l, `,"passed":true`...)
	j.emit(l)
}

func (j *jsonRenderer) indexEntry(e format.IndexEntry) {
	l := append(j.line[:0], `{"type":"indexEntry"`...)
	l = appendIntField(l, "offset", e.Offset)
	l = appendIntField(l, "position", e.Pos)
	j.emit(l)
}

func (j *jsonRenderer) timeEntry(e format.TimeEntry) {
	l := append(j.line[:0], `{"type":"timeIndexEntry"`...)
	l = appendIntField(l, "timestamp", e.Timestamp)
	l = appendIntField(l, "offset", e.Offset)
	j.emit(l)
}

func (j *jsonRenderer) producerEntry(e *format.ProducerEntry) {
	l := append(j.line[:0], `{"type":"producer"`...)
	l = appendIntField(l, "producerId", e.ProducerID)
	l = appendIntField(l, "producerEpoch", int64(e.Epoch))
	l = appendIntField(l, "coordinatorEpoch", int64(e.CoordinatorEpoch))
	if e.CurrentTxnFirstOffset >= 0 {
		l = appendIntField(l, "currentTxnFirstOffset", e.CurrentTxnFirstOffset)
	} else {
		l = append(appendField(l, "currentTxnFirstOffset"), "null"...)
	}
	l = appendIntField(l, "lastTimestamp", e.Timestamp)
	if e.LastOffset >= 0 {
		l = appendIntField(l, "firstSequence", int64(e.FirstSequence()))
		l = appendIntField(l, "lastSequence", int64(e.LastSequence))
		l = appendIntField(l, "lastOffset", e.LastOffset)
		l = appendIntField(l, "offsetDelta", int64(e.OffsetDelta))
	}
	j.emit(l)
}

func (j *jsonRenderer) abortedTxn(a *format.AbortedTxn) {
	l := append(j.line[:0], `{"type":"abortedTxn"`...)
	l = appendIntField(l, "version", int64(a.Version))
	l = appendIntField(l, "producerId", a.ProducerID)
	l = appendIntField(l, "firstOffset", a.FirstOffset)
	l = appendIntField(l, "lastOffset", a.LastOffset)
	l = appendIntField(l, "lastStableOffset", a.LastStableOffset)
	j.emit(l)
}

func (j *jsonRenderer) checkpointHeader(path, kind string, entries int) {
	l := append(j.line[:0], `{"type":"file","path":`...)
	l = appendJSONString(l, path)
	l = append(l, `,"kind":"`...)
	l = append(l, kind...)
	l = append(l, '"')
	l = appendIntField(l, "version", 0)
	l = appendIntField(l, "entries", int64(entries))
	j.emit(l)
}

func (j *jsonRenderer) epochEntry(e format.EpochEntry) {
	l := append(j.line[:0], `{"type":"epoch"`...)
	l = appendIntField(l, "epoch", int64(e.Epoch))
	l = appendIntField(l, "startOffset", e.StartOffset)
	j.emit(l)
}

func (j *jsonRenderer) offsetEntry(e format.OffsetEntry) {
	l := append(j.line[:0], `{"type":"checkpointEntry","topic":`...)
	l = appendJSONString(l, e.Topic)
	l = appendIntField(l, "partition", int64(e.Partition))
	l = appendIntField(l, "offset", e.Offset)
	j.emit(l)
}

func (j *jsonRenderer) partitionMetadata(path string, m format.PartitionMetadata) {
	l := append(j.line[:0], `{"type":"file","path":`...)
	l = appendJSONString(l, path)
	l = append(l, `,"kind":"partition.metadata"`...)
	l = appendIntField(l, "version", int64(m.Version))
	l = append(appendField(l, "topicId"), '"')
	l = append(l, m.TopicID...)
	l = append(l, '"')
	j.emit(l)
}
