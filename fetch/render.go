package fetch

import (
	"bufio"
	"fmt"
	"strconv"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
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

// WriteText writes klog fetch's text: the response's summary line and, when
// ferr is nil, its records (with keys and values when data is set), each
// one a consumer reading at iso drops marked "dropped: <why>". It returns
// the error that stopped the records (a corrupt batch, an undecodable
// record), after saying it on the "! " line.
func (f *Fetched) WriteText(out *bufio.Writer, ferr error, iso Isolation, data bool) error {
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
		fmt.Fprintf(out, "| offset: %d %s: %d keySize: %d valueSize: %d", r.Offset, b.TimestampType(), r.Timestamp, r.KeySize, r.ValueSize)
		if b.IsControl() {
			if k, err := format.ParseControlKey(r.Key); err == nil {
				fmt.Fprintf(out, " control: %s", k.Type)
			}
		} else if data {
			writeKeyValue(out, r.Key, r.Value)
		}
		if d != Kept {
			out.WriteString(" dropped: " + d.String())
		}
		out.WriteByte('\n')
		return nil
	})
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
func (f *Fetched) WriteJSON(out *bufio.Writer, req Request, ferr error, took time.Duration, opts ndjson.Options) (derr, werr error) {
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
		if !first {
			l = append(l, ',')
		}
		first = false
		var err error
		l, err = ndjson.RecordFields(ndjson.Begin(l, "record"), b, r, &opts)
		if d != Kept {
			l = ndjson.Str(l, "dropped", d.String())
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

// writeKeyValue prints " key: K payload: V" as kafka-dump-log does (Java's
// UTF-8 decoding; nothing for null).
func writeKeyValue(out *bufio.Writer, key, value []byte) {
	if key != nil {
		out.WriteString(" key: ")
		out.Write(format.AppendJavaUTF8(nil, key))
	}
	if value != nil {
		out.WriteString(" payload: ")
		out.Write(format.AppendJavaUTF8(nil, value))
	}
}

// FollowWriter prints a consumer's polls (klog fetch --follow): records and
// its position after each, as text or, with JSON, as ndjson's record
// objects and a "consumerPosition".
type FollowWriter struct {
	Out  *bufio.Writer
	JSON bool
	Opts ndjson.Options
	l    []byte
}

// Records prints a poll's records.
func (w *FollowWriter) Records(recs []Record) {
	for i := range recs {
		r := &recs[i]
		if !w.JSON {
			fmt.Fprintf(w.Out, "| offset: %d timestamp: %d", r.Offset, r.Timestamp)
			if w.Opts.Data {
				writeKeyValue(w.Out, r.Key, r.Value)
			}
			w.Out.WriteByte('\n')
			continue
		}
		// The consumer hands over v2 records without their batch: the
		// record object's fields, with no sequence (-1).
		fr := format.Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers,
			KeySize: kafkaSize(r.Key), ValueSize: kafkaSize(r.Value), Sequence: -1}
		w.l, _ = ndjson.RecordFields(ndjson.Begin(w.l[:0], "record"), &format.Batch{Magic: format.MagicV2}, &fr, &w.Opts)
		w.l = append(ndjson.End(w.l), '\n')
		w.Out.Write(w.l)
	}
}

// Position prints the consumer's position, high watermark and lag.
func (w *FollowWriter) Position(c *Consumer) {
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
