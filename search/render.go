package search

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strconv"

	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/recordfmt"
	"github.com/klog-dev/klog/schema"
)

// Output says how matches are written.
type Output struct {
	// Format, when set, prints each match through a format string (kcat's
	// -f or rpk's --format); else JSON or the text line.
	Format recordfmt.Formatter
	JSON   bool
	// Record is how keys, values and headers are encoded in JSON and text.
	Record ndjson.Options
}

// Writer writes matches: one text line, one JSON object, or the format
// string's output per match. It is not safe for concurrent use (Search
// calls emit from one goroutine at a time).
type Writer struct {
	w   *bufio.Writer
	o   Output
	buf []byte
	fr  recordfmt.Record
}

// NewWriter returns a Writer on w; call Flush at the end.
func NewWriter(w io.Writer, o Output) *Writer {
	o.Record.Data = true
	return &Writer{w: bufio.NewWriterSize(w, 256<<10), o: o}
}

// Match writes one match.
func (w *Writer) Match(m *Match) error {
	switch {
	case w.o.Format != nil:
		w.buf = w.o.Format.Append(w.buf[:0], w.formatRecord(m))
	case w.o.JSON:
		w.buf = w.json(w.buf[:0], m)
	default:
		w.buf = w.text(w.buf[:0], m)
	}
	_, err := w.w.Write(w.buf)
	return err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }

func (w *Writer) formatRecord(m *Match) *recordfmt.Record {
	r := &m.Record
	w.fr = recordfmt.Record{Topic: m.Topic, Partition: m.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
		Key: shown(r.Key, m.Key), Value: shown(r.Value, m.Value), LeaderEpoch: m.Batch.PartitionLeaderEpoch,
		ProducerID: m.Batch.ProducerID, ProducerEpoch: m.Batch.ProducerEpoch, Codec: int8(m.Batch.Compression()),
		TimestampType: int8(m.Batch.TimestampType()), Transactional: m.Batch.IsTransactional(), Control: m.Batch.IsControl(),
		Position: m.Batch.Pos, LogStartOffset: -1, LastStableOffset: -1, HighWatermark: -1, Headers: w.fr.Headers[:0]}
	for _, h := range r.Headers {
		w.fr.Headers = append(w.fr.Headers, recordfmt.Header{Key: h.Key, Value: h.Value})
	}
	return &w.fr
}

// shown is what a format string prints for a key or value: the decoded
// JSON when it decoded, else the bytes.
func shown(raw []byte, v schema.Value) []byte {
	if v.JSON != nil {
		return v.JSON
	}
	return raw
}

// text is one line: "TOPIC-PARTITION offset: O timestamp: T keySize: K
// valueSize: V headers: k=v,... key: K value: V", with decoded values as
// their JSON, and a "(not decoded: why)" note after a value that should
// have decoded, "(left as bytes: why)" after one auto left as bytes.
func (w *Writer) text(b []byte, m *Match) []byte {
	r := &m.Record
	b = append(b, m.Topic...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(m.Partition), 10)
	b = append(b, " offset: "...)
	b = strconv.AppendInt(b, r.Offset, 10)
	b = append(b, " timestamp: "...)
	b = strconv.AppendInt(b, r.Timestamp, 10)
	b = append(b, " keySize: "...)
	b = strconv.AppendInt(b, int64(r.KeySize), 10)
	b = append(b, " valueSize: "...)
	b = strconv.AppendInt(b, int64(r.ValueSize), 10)
	if len(r.Headers) > 0 {
		b = append(b, " headers: "...)
		for i, h := range r.Headers {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendText(b, h.Key, w.o.Record.KeyEncoding)
			b = append(b, '=')
			b = appendText(b, h.Value, w.o.Record.ValueEncoding)
		}
	}
	b = append(b, " key: "...)
	b = textValue(b, r.Key, m.Key, w.o.Record.KeyEncoding)
	b = append(b, " value: "...)
	b = textValue(b, r.Value, m.Value, w.o.Record.ValueEncoding)
	return append(b, '\n')
}

func textValue(b, raw []byte, v schema.Value, e ndjson.Encoding) []byte {
	if v.JSON != nil {
		b = append(b, v.JSON...)
	} else {
		b = appendText(b, raw, e)
	}
	return payload.AppendNote(b, v)
}

// json is the common record object with where it is (dir, topic,
// partition, path, position) and the decoded key and value.
func (w *Writer) json(b []byte, m *Match) []byte {
	b = ndjson.Begin(b, "record")
	b, _ = ndjson.RecordFields(b, &m.Batch, &m.Record, &w.o.Record)
	b = ndjson.Str(b, "dir", m.Dir)
	b = ndjson.Str(b, "topic", m.Topic)
	b = ndjson.Int(b, "partition", int64(m.Partition))
	b = ndjson.Str(b, "path", m.Segment)
	b = ndjson.Int(b, "position", m.Batch.Pos)
	b = ndjson.DecodedKeyValue(b, m.Key, m.Value)
	return append(ndjson.End(b), '\n')
}

// appendText writes bytes for the text line in encoding e: as they are
// (text, as kafka-dump-log prints payloads), hex, base64 or their hash;
// null as null.
func appendText(b, v []byte, e ndjson.Encoding) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	switch e {
	case ndjson.EncodingHex:
		return hex.AppendEncode(b, v)
	case ndjson.EncodingBase64:
		return base64.StdEncoding.AppendEncode(b, v)
	case ndjson.EncodingRedacted:
		sum := sha256.Sum256(v)
		b = append(b, "<redacted "...)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, " bytes sha256:"...)
		b = hex.AppendEncode(b, sum[:])
		return append(b, '>')
	}
	return append(b, v...)
}
