// Package payload is what the payload flags (--key-format, --value-format,
// --schemas, --where, -f/--format, -c) ask of every command that prints
// records (dump, fetch, tail, find): decode each key and value with its
// schema (package schema), keep the records a --where expression holds for
// (package filter), print them through a format string (package
// recordfmt), and stop after a count. A View carries these for one run; the
// printers call Take for each record and print the record it leaves
// current.
//
// A nil *View does nothing: Take keeps every record, nothing decodes.
package payload

import (
	"github.com/klog-dev/klog/filter"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/recordfmt"
	"github.com/klog-dev/klog/schema"
)

// View decodes, filters, formats and counts records. It is not safe for
// concurrent use: one printer owns it.
type View struct {
	// Decoder and the formats decode keys and values (nil Decoder, or
	// FormatBytes for both: nothing is decoded).
	Decoder                *schema.Decoder
	KeyFormat, ValueFormat schema.Format
	// Where, when set, keeps the records it holds for.
	Where *filter.Filter
	// Format, when set, is how a record is printed (kcat's -f, rpk's
	// --format) instead of the command's own line or object. Control
	// records are then never printed: a consumer, which is what those
	// tools are, does not hand them over.
	Format recordfmt.Formatter
	// Limit ends the run after that many records taken (0: no limit).
	Limit int64
	// OnDecodeFailure, when set, is called for each record Take keeps
	// whose key or value did not decode as its format asks (a finding;
	// the record is still printed, with its bytes), with the field that
	// failed first ("key", then "value") and why. DecodeFailures counts
	// them either way.
	OnDecodeFailure func(r *Rec, field string, err error)

	taken    int64
	failures int64
	cur      Rec
	fr       recordfmt.Record
	flt      filter.Record
}

// Rec is the record Take left current and what it decoded to.
type Rec struct {
	Topic     string
	Partition int32
	// Batch is the record's batch; nil for a record a consumer handed
	// over without one.
	Batch  *format.Batch
	Record *format.Record
	// Key and Value are the decoded key and value (Format FormatBytes,
	// nothing else set, when not asked).
	Key, Value schema.Value
}

// Active reports whether v does anything at all.
func (v *View) Active() bool {
	return v != nil && (v.Decodes() || v.Where != nil || v.Format != nil || v.Limit > 0)
}

// Decodes reports whether keys or values are decoded.
func (v *View) Decodes() bool {
	return v != nil && v.Decoder != nil && (v.KeyFormat != schema.FormatBytes || v.ValueFormat != schema.FormatBytes)
}

// Full reports whether Limit records have been taken: the printer stops.
func (v *View) Full() bool { return v != nil && v.Limit > 0 && v.taken >= v.Limit }

// Taken is how many records Take has kept.
func (v *View) Taken() int64 {
	if v == nil {
		return 0
	}
	return v.taken
}

// Take decides whether record r of batch b (nil for a consumer's record)
// in topic/partition is printed: it decodes the key and value, applies
// Where and counts it; false leaves it out (and always once Full). The
// record and its decoded values stay current (Current) until the next
// call; r must stay unchanged until then.
func (v *View) Take(topic string, partition int32, b *format.Batch, r *format.Record) bool {
	if v == nil {
		return true
	}
	if v.Full() {
		return false
	}
	control := b != nil && b.IsControl()
	if control && v.Format != nil {
		return false
	}
	v.cur = Rec{Topic: topic, Partition: partition, Batch: b, Record: r}
	if v.Decodes() && !control {
		if v.KeyFormat != schema.FormatBytes {
			v.cur.Key = v.Decoder.Decode(r.Key, v.KeyFormat)
		}
		if v.ValueFormat != schema.FormatBytes {
			v.cur.Value = v.Decoder.Decode(r.Value, v.ValueFormat)
		}
	}
	if v.Where != nil {
		f := &v.flt
		*f = filter.Record{Topic: topic, Partition: partition, Offset: r.Offset, Timestamp: r.Timestamp,
			LeaderEpoch: -1, Key: r.Key, Value: r.Value, Headers: f.Headers[:0],
			KeyDecoded: v.cur.Key.Native, HasKeyDecoded: v.cur.Key.JSON != nil,
			ValueDecoded: v.cur.Value.Native, HasValueDecoded: v.cur.Value.JSON != nil}
		if b != nil {
			f.LeaderEpoch = b.PartitionLeaderEpoch
		}
		for _, h := range r.Headers {
			f.Headers = append(f.Headers, filter.Header{Key: h.Key, Value: h.Value})
		}
		if !v.Where.Match(f) {
			return false
		}
	}
	v.taken++
	if field, err := v.cur.DecodeFailure(); err != nil {
		v.failures++
		if v.OnDecodeFailure != nil {
			v.OnDecodeFailure(&v.cur, field, err)
		}
	}
	return true
}

// DecodeFailures is how many of the records Take kept did not decode as
// their formats ask.
func (v *View) DecodeFailures() int64 {
	if v == nil {
		return 0
	}
	return v.failures
}

// DecodeFailure says whether r's key or value did not decode as its format
// asked: the field ("key" first, then "value") and why; nil when both did
// (or nothing was asked).
func (r *Rec) DecodeFailure() (field string, err error) {
	return DecodeFailure(r.Key, r.Value)
}

// DecodeFailure says whether a record's key or value did not decode as its
// format asked: the field ("key" first, then "value") and why; nil when
// both did (or nothing was asked). dump, fetch, tail and find report it
// as a record-decode finding.
func DecodeFailure(key, value schema.Value) (field string, err error) {
	switch {
	case key.Err != nil:
		return "key", key.Err
	case value.Err != nil:
		return "value", value.Err
	}
	return "", nil
}

// Current is the record the last Take kept.
func (v *View) Current() *Rec { return &v.cur }

// DecodeFailed reports whether the current record's key or value did not
// decode as its format asked: a finding for the record.
func (v *View) DecodeFailed() bool { return v.cur.Key.Err != nil || v.cur.Value.Err != nil }

// AppendFormat appends the current record through Format: the decoded
// JSON in place of a key or value that decoded, else its bytes.
func (v *View) AppendFormat(dst []byte) []byte {
	c := &v.cur
	r := c.Record
	v.fr = recordfmt.Record{Topic: c.Topic, Partition: c.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
		Key: Shown(r.Key, c.Key), Value: Shown(r.Value, c.Value), LeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1,
		TimestampType: -1, Position: -1, LogStartOffset: -1, LastStableOffset: -1, HighWatermark: -1,
		Headers: v.fr.Headers[:0]}
	if b := c.Batch; b != nil {
		v.fr.LeaderEpoch, v.fr.ProducerID, v.fr.ProducerEpoch = b.PartitionLeaderEpoch, b.ProducerID, b.ProducerEpoch
		v.fr.Codec, v.fr.TimestampType = int8(b.Compression()), int8(b.TimestampType())
		v.fr.Transactional, v.fr.Control, v.fr.Position = b.IsTransactional(), b.IsControl(), b.Pos
	}
	for _, h := range r.Headers {
		v.fr.Headers = append(v.fr.Headers, recordfmt.Header{Key: h.Key, Value: h.Value})
	}
	return v.Format.Append(dst, &v.fr)
}

// Shown is what a printer shows for a key or value: the decoded JSON when
// it decoded, else the bytes.
func Shown(raw []byte, d schema.Value) []byte {
	if d.JSON != nil {
		return d.JSON
	}
	return raw
}

// AppendNote appends what the text says after a key or value: " (not
// decoded: why)" when d did not decode as its format asked, " (left as
// bytes: why)" when auto left it as bytes (the JSON's keyNote/valueNote);
// nothing otherwise.
func AppendNote(b []byte, d schema.Value) []byte {
	switch {
	case d.Err != nil:
		b = append(b, " (not decoded: "...)
		b = append(b, d.Err.Error()...)
	case d.Note != "":
		b = append(b, " (left as bytes: "...)
		b = append(b, d.Note...)
	default:
		return b
	}
	return append(b, ')')
}
