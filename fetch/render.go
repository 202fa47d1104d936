package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/schema"
)

// frameRecords yields the whole batches of a response and their records,
// each with why a consumer reading at iso would drop it (Kept: it hands it
// over). Positions are the segment's (f.Position is where the frame starts),
// so that an error names the position in the file.
func frameRecords(f *Fetched, iso Isolation, fn func(b *format.Batch, r *format.Record, d Drop) error) error {
	rules := NewConsumerRules(iso, f.FetchOffset, f.AbortedTransactions)
	var rr format.RecordReader
	for b, err := range format.FrameBatches(f.Frame, f.Position) {
		if err != nil {
			return err
		}
		if err := b.CheckCRC(); err != nil {
			return fmt.Errorf("%w (at position %d)", err, b.Pos)
		}
		batchDrop := rules.Batch(b)
		for r, err := range rr.Records(b) {
			if err != nil {
				return err
			}
			d := batchDrop
			if d == Kept {
				d = rules.Record(r)
			}
			if err := fn(b, r, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// Out says how a response's records are printed: with their keys and
// values (Data), and through View (package payload: decoded, filtered by
// --where, counted, or printed by a format string; nil: as they are).
// Topic and Partition name the partition for View.
type Out struct {
	Data      bool
	View      *payload.View
	Topic     string
	Partition int32
}

// take is View.Take for a record of a response: with a format string only
// the records a consumer keeps are printed (a consumer is what kcat and
// rpk are).
func (o *Out) take(b *format.Batch, r *format.Record, d Drop) bool {
	if o.View == nil {
		return true
	}
	if d != Kept && o.View.Format != nil {
		return false
	}
	return o.View.Take(o.Topic, o.Partition, b, r)
}

// errFull stops a response's records once the View has taken its count.
var errFull = errors.New("fetch: record count reached")

// WriteText writes klog fetch's text: the response's summary line and, when
// ferr is nil, its records (with keys and values when o.Data is set), each
// one a consumer reading at iso drops marked "dropped: <why>"; with a
// format string only the records through it. It returns the error that
// stopped the records (a corrupt batch, an undecodable record), after
// saying it on the "! " line.
func (f *Fetched) WriteText(out *bufio.Writer, ferr error, iso Isolation, o Out) error {
	if o.View != nil && o.View.Format != nil {
		return f.writeFormat(out, ferr, iso, o)
	}
	fmt.Fprintf(out, "fetchOffset: %d highWatermark: %d lastStableOffset: %d logStartOffset: %d logEndOffset: %d recordsSizeInBytes: %d truncated: %t",
		f.FetchOffset, f.HighWatermark, f.LastStableOffset, f.LogStartOffset, f.LogEndOffset, len(f.Frame), f.Truncated)
	if f.Truncated {
		fmt.Fprintf(out, " truncatedRecordBytes: %d", f.TruncatedRecordBytes)
	}
	if f.AbortedTransactions != nil {
		out.WriteString(" abortedTransactions: [")
		for i, a := range f.AbortedTransactions {
			if i > 0 {
				out.WriteByte(',')
			}
			fmt.Fprintf(out, "{producerId: %d firstOffset: %d}", a.ProducerID, a.FirstOffset)
		}
		out.WriteString("]")
	}
	out.WriteByte('\n')
	if ferr != nil {
		return nil
	}
	err := frameRecords(f, iso, func(b *format.Batch, r *format.Record, d Drop) error {
		if o.View.Full() {
			return errFull
		}
		if !o.take(b, r, d) {
			return nil
		}
		fmt.Fprintf(out, "| offset: %d %s: %d keySize: %d valueSize: %d", r.Offset, b.TimestampType(), r.Timestamp, r.KeySize, r.ValueSize)
		if b.IsControl() {
			if k, err := format.ParseControlKey(r.Key); err == nil {
				fmt.Fprintf(out, " control: %s", k.Type)
			}
		} else if o.Data {
			writeKeyValue(out, r.Key, r.Value, o.View)
		}
		if d != Kept {
			out.WriteString(" dropped: " + d.String())
		}
		out.WriteByte('\n')
		return nil
	})
	if err == errFull {
		err = nil
	}
	if err != nil {
		fmt.Fprintf(out, "! %v\n", err)
	}
	return err
}

// WriteJSON writes klog fetch --json's one "fetch" object, shaped like a
// broker request-log line, for the response to req (ferr: the fetch offset
// was out of range) that took took; its records are ndjson's record
// objects. It returns the error that stopped the records (also in the
// object's "error") and the write error.
func (f *Fetched) WriteJSON(out *bufio.Writer, req Request, ferr error, took time.Duration, opts ndjson.Options, o Out) (derr, werr error) {
	l := ndjson.Begin(nil, "fetch")
	l = append(ndjson.Str(l, "requestApiKeyName", "FETCH"), `,"request":{"fetchOffset":`...)
	l = strconv.AppendInt(l, req.FetchOffset, 10)
	l = ndjson.Int(l, "maxBytes", int64(req.MaxBytes))
	l = ndjson.Int(l, "partitionMaxBytes", int64(req.PartitionMaxBytes))
	l = ndjson.Int(l, "minBytes", int64(req.MinBytes))
	l = ndjson.Int(l, "maxWaitMs", req.MaxWait.Milliseconds())
	l = ndjson.Int(l, "isolationLevel", int64(req.Isolation))
	l = ndjson.Bool(l, "replica", req.Replica)
	errCode := int64(0)
	if ferr != nil {
		errCode = 1 // OFFSET_OUT_OF_RANGE
	}
	l = append(l, `},"response":{"errorCode":`...)
	l = strconv.AppendInt(l, errCode, 10)
	l = ndjson.Int(l, "highWatermark", f.HighWatermark)
	l = ndjson.Int(l, "lastStableOffset", f.LastStableOffset)
	l = ndjson.Int(l, "logStartOffset", f.LogStartOffset)
	l = ndjson.Int(l, "recordsSizeBytes", int64(len(f.Frame)))
	l = ndjson.Bool(l, "truncated", f.Truncated)
	l = ndjson.Int(l, "truncatedRecordBytes", int64(f.TruncatedRecordBytes))
	if f.AbortedTransactions == nil {
		l = ndjson.Null(l, "abortedTransactions")
	} else {
		l = append(ndjson.Field(l, "abortedTransactions"), '[')
		for i, a := range f.AbortedTransactions {
			if i > 0 {
				l = append(l, ',')
			}
			l = append(l, `{"producerId":`...)
			l = strconv.AppendInt(l, a.ProducerID, 10)
			l = append(ndjson.Int(l, "firstOffset", a.FirstOffset), '}')
		}
		l = append(l, ']')
	}
	l = append(ndjson.Field(l, "records"), '[')
	// The records are streamed to out one by one: a batch can hold
	// millions of them, and the line must not be built in memory.
	first := true
	derr = frameRecords(f, req.Isolation, func(b *format.Batch, r *format.Record, d Drop) error {
		if o.View.Full() {
			return errFull
		}
		if !o.take(b, r, d) {
			return nil
		}
		if !first {
			l = append(l, ',')
		}
		first = false
		var err error
		l, err = ndjson.RecordFields(ndjson.Begin(l, "record"), b, r, &opts)
		if d != Kept {
			l = ndjson.Str(l, "dropped", d.String())
		}
		if o.View.Decodes() && !b.IsControl() {
			c := o.View.Current()
			l = ndjson.DecodedKeyValue(l, c.Key, c.Value)
		}
		l = ndjson.End(l)
		if _, werr = out.Write(l); werr != nil {
			return werr
		}
		l = l[:0]
		return err
	})
	if werr != nil {
		return nil, werr
	}
	if derr == errFull {
		derr = nil
	}
	l = append(l, ']', '}')
	if derr != nil {
		l = ndjson.Str(l, "error", derr.Error())
	}
	l = append(l, `,"totalTimeMs":`...)
	l = strconv.AppendFloat(l, float64(took.Microseconds())/1000, 'f', 3, 64)
	l = append(l, '}', '\n')
	_, werr = out.Write(l)
	return derr, werr
}

// writeFormat is WriteText with a format string: each record a consumer
// keeps through it, nothing else.
func (f *Fetched) writeFormat(out *bufio.Writer, ferr error, iso Isolation, o Out) error {
	if ferr != nil {
		return nil
	}
	var l []byte
	err := frameRecords(f, iso, func(b *format.Batch, r *format.Record, d Drop) error {
		if o.View.Full() {
			return errFull
		}
		if o.take(b, r, d) {
			l = o.View.AppendFormat(l[:0])
			out.Write(l)
		}
		return nil
	})
	if err == errFull {
		return nil
	}
	return err
}

// writeKeyValue prints " key: K payload: V" as kafka-dump-log does (Java's
// UTF-8 decoding; nothing for null); a key or value the view decoded as
// its JSON, with a "(not decoded: why)" note after one that should have
// ("(left as bytes: why)" after one auto left as bytes).
func writeKeyValue(out *bufio.Writer, key, value []byte, v *payload.View) {
	var dk, dv schema.Value
	if v.Decodes() {
		dk, dv = v.Current().Key, v.Current().Value
	}
	if key != nil {
		out.WriteString(" key: ")
		if dk.JSON != nil {
			out.Write(dk.JSON)
		} else {
			out.Write(format.AppendJavaUTF8(nil, key))
		}
		out.Write(payload.AppendNote(nil, dk))
	}
	if value != nil {
		out.WriteString(" payload: ")
		if dv.JSON != nil {
			out.Write(dv.JSON)
		} else {
			out.Write(format.AppendJavaUTF8(nil, value))
		}
		out.Write(payload.AppendNote(nil, dv))
	}
}

// FollowWriter prints a consumer's polls (klog fetch --follow): records and
// its position after each, as text or, with JSON, as ndjson's record
// objects and a "consumerPosition".
type FollowWriter struct {
	Out  *bufio.Writer
	JSON bool
	Opts ndjson.Options
	// View decodes, filters, counts or formats the records (nil: none);
	// Topic and Partition name the partition for it.
	View      *payload.View
	Topic     string
	Partition int32
	l         []byte
}

// Records prints a poll's records; once the View has taken its count it
// prints no more (Full).
func (w *FollowWriter) Records(recs []Record) {
	for i := range recs {
		r := &recs[i]
		// The consumer hands over v2 records without their batch: the
		// record object's fields, with no sequence (-1).
		fr := format.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers,
			KeySize: kafkaSize(r.Key), ValueSize: kafkaSize(r.Value), Sequence: -1}
		if !w.View.Take(w.Topic, w.Partition, nil, &fr) {
			continue
		}
		switch {
		case w.View != nil && w.View.Format != nil:
			w.l = w.View.AppendFormat(w.l[:0])
			w.Out.Write(w.l)
		case !w.JSON:
			fmt.Fprintf(w.Out, "| offset: %d timestamp: %d", r.Offset, r.Timestamp)
			if w.Opts.Data {
				writeKeyValue(w.Out, r.Key, r.Value, w.View)
			}
			w.Out.WriteByte('\n')
		default:
			w.l, _ = ndjson.RecordFields(ndjson.Begin(w.l[:0], "record"), &format.Batch{Magic: format.MagicV2}, &fr, &w.Opts)
			if w.View.Decodes() {
				c := w.View.Current()
				w.l = ndjson.DecodedKeyValue(w.l, c.Key, c.Value)
			}
			w.l = append(ndjson.End(w.l), '\n')
			w.Out.Write(w.l)
		}
	}
}

// Position prints the consumer's position, high watermark and lag (not
// with a format string, whose output is the records').
func (w *FollowWriter) Position(c *Consumer) {
	if w.View != nil && w.View.Format != nil {
		return
	}
	if !w.JSON {
		fmt.Fprintf(w.Out, "position: %d highWatermark: %d lag: %d\n", c.Position(), c.HighWatermark(), c.Lag())
		return
	}
	w.l = ndjson.Int(ndjson.Begin(w.l[:0], "consumerPosition"), "position", c.Position())
	w.l = ndjson.Int(w.l, "highWatermark", c.HighWatermark())
	w.l = append(ndjson.End(ndjson.Int(w.l, "lag", c.Lag())), '\n')
	w.Out.Write(w.l)
}

// kafkaSize is Kafka's size of a key or value: -1 for null.
func kafkaSize(b []byte) int32 {
	if b == nil {
		return -1
	}
	return int32(len(b))
}
