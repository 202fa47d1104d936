package dump

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/verify"
)

// jsonRenderer writes NDJSON through package ndjson: one object per line,
// each with a "type" field. The shapes are ndjson's schema (schema.json);
// batches and records are ndjson's, shared with fetch, tail, find and
// recover --salvage.
type jsonRenderer struct {
	w    *ndjson.Writer
	opts Options
	path string
	dec  *internaltopic.Decoder // --offsets-decoder etc. (decoder.go); nil without one
	cd   *contentDecoder        // --key-decoder-class etc. (classdecoder.go); nil for the default
}

func newJSONRenderer(w io.Writer, opts Options) *jsonRenderer {
	return &jsonRenderer{w: ndjson.NewWriter(w, ndjson.Options{Data: opts.PrintData,
		KeyEncoding: opts.KeyEncoding, ValueEncoding: opts.ValueEncoding}), opts: opts}
}

func (j *jsonRenderer) flush() error { return j.w.Flush() }

func (j *jsonRenderer) emit(l []byte) { j.w.Emit(ndjson.End(l)) }

// begin starts an object of type typ with "path" the file being dumped.
func (j *jsonRenderer) begin(typ, path string) []byte {
	return ndjson.Str(ndjson.Begin(j.w.Line(), typ), "path", path)
}

func (j *jsonRenderer) dumping(p string) { j.path = p }

func (j *jsonRenderer) ignored(p string, why error) {
	l := ndjson.Bool(j.begin("file", p), "ignored", true)
	if why != nil {
		l = ndjson.Str(l, "error", why.Error())
	}
	j.emit(l)
}

func (j *jsonRenderer) unreadable(p string, err error) {
	j.emit(ndjson.Str(j.begin("file", p), "error", err.Error()))
}

func (j *jsonRenderer) logHeader(p, header string) {}

func (j *jsonRenderer) fileStart(p string, size int64) {
	l := ndjson.Str(j.begin("file", p), "fileKind", "log")
	j.emit(ndjson.Int(l, "sizeBytes", size))
}

func (j *jsonRenderer) batch(b *format.Batch) { j.w.Batch(b, nil) }

func (j *jsonRenderer) batchPrefixOnly(b *format.Batch) {}

func (j *jsonRenderer) record(b *format.Batch, r *format.Record) error {
	switch {
	case b.IsControl() || !j.opts.PrintData:
		return j.w.Record(b, r, nil)
	case j.opts.View.Decodes():
		return j.w.Record(b, r, j.viewJSON)
	case j.dec != nil:
		return j.w.Record(b, r, func(l []byte) []byte { return appendDecodedJSON(l, j.dec.Current()) })
	case j.cd != nil:
		d := &j.cd.cur
		if d.extErr != nil {
			return d.extErr
		}
		if err := j.w.Record(b, r, func(l []byte) []byte { return appendContentsJSON(l, j.cd, d) }); err != nil {
			return err
		}
		return d.err
	}
	return j.w.Record(b, r, nil)
}

func (j *jsonRenderer) problem(p verify.Problem) {
	if p.Path == "" {
		p.Path = j.path
	}
	j.emit(ndjson.ProblemFields(ndjson.Begin(j.w.Line(), "problem"), &p))
}

func (j *jsonRenderer) trailing(name string, t format.Tail, p verify.Problem) { j.problem(p) }

func (j *jsonRenderer) fileEnd(p string, batches, records int64, t format.Tail) {
	l := ndjson.Int(j.begin("summary", p), "batches", batches)
	if j.opts.Deep {
		l = ndjson.Int(l, "records", records)
	}
	l = ndjson.Int(l, "validBytes", t.Pos)
	j.emit(ndjson.Int(l, "trailingBytes", t.Bytes))
}

func (j *jsonRenderer) indexStart(path, kind string, size int64, entries int) {
	l := ndjson.Str(j.begin("file", path), "fileKind", kind)
	l = ndjson.Int(l, "sizeBytes", size)
	j.emit(ndjson.Int(l, "entries", int64(entries)))
}

func (j *jsonRenderer) indexEmpty(path string) {}

func (j *jsonRenderer) sanityPassed(path string) {
	j.emit(ndjson.Bool(j.begin("sanity", path), "passed", true))
}

func (j *jsonRenderer) indexEntry(e format.IndexEntry) {
	l := ndjson.Int(j.begin("indexEntry", j.path), "offset", e.Offset)
	j.emit(ndjson.Int(l, "position", e.Pos))
}

func (j *jsonRenderer) timeEntry(e format.TimeEntry) {
	l := ndjson.Int(j.begin("timeIndexEntry", j.path), "timestamp", e.Timestamp)
	j.emit(ndjson.Int(l, "offset", e.Offset))
}

func (j *jsonRenderer) producerEntry(e *format.ProducerEntry) {
	l := ndjson.Int(j.begin("producer", j.path), "producerId", e.ProducerID)
	l = ndjson.Int(l, "producerEpoch", int64(e.Epoch))
	l = ndjson.Int(l, "coordinatorEpoch", int64(e.CoordinatorEpoch))
	if e.CurrentTxnFirstOffset >= 0 {
		l = ndjson.Int(l, "currentTxnFirstOffset", e.CurrentTxnFirstOffset)
	} else {
		l = ndjson.Null(l, "currentTxnFirstOffset")
	}
	l = ndjson.Int(l, "lastTimestamp", e.Timestamp)
	if e.LastOffset >= 0 {
		l = ndjson.Int(l, "firstSequence", int64(e.FirstSequence()))
		l = ndjson.Int(l, "lastSequence", int64(e.LastSequence))
		l = ndjson.Int(l, "lastOffset", e.LastOffset)
		l = ndjson.Int(l, "offsetDelta", int64(e.OffsetDelta))
	}
	j.emit(l)
}

func (j *jsonRenderer) abortedTxn(a *format.AbortedTxn) {
	l := ndjson.Int(j.begin("abortedTxn", j.path), "version", int64(a.Version))
	l = ndjson.Int(l, "producerId", a.ProducerID)
	l = ndjson.Int(l, "firstOffset", a.FirstOffset)
	l = ndjson.Int(l, "lastOffset", a.LastOffset)
	j.emit(ndjson.Int(l, "lastStableOffset", a.LastStableOffset))
}

func (j *jsonRenderer) checkpointHeader(path, kind string, entries int) {
	l := ndjson.Str(j.begin("file", path), "fileKind", kind)
	l = ndjson.Int(l, "version", 0)
	j.emit(ndjson.Int(l, "entries", int64(entries)))
}

func (j *jsonRenderer) epochEntry(e format.EpochEntry) {
	l := ndjson.Int(j.begin("epoch", j.path), "epoch", int64(e.Epoch))
	j.emit(ndjson.Int(l, "startOffset", e.StartOffset))
}

func (j *jsonRenderer) offsetEntry(e format.OffsetEntry) {
	l := ndjson.Str(j.begin("checkpointEntry", j.path), "topic", e.Topic)
	l = ndjson.Int(l, "partition", int64(e.Partition))
	j.emit(ndjson.Int(l, "offset", e.Offset))
}

func (j *jsonRenderer) partitionMetadata(path string, m format.PartitionMetadata) {
	l := ndjson.Str(j.begin("file", path), "fileKind", "partition.metadata")
	l = ndjson.Int(l, "version", int64(m.Version))
	j.emit(ndjson.Str(l, "topicId", m.TopicID))
}

// appendKafkaJSON writes JSON that Kafka's converters produced (Jackson
// writes invalid UTF-8 as it is): as it is when valid, with U+FFFD for
// invalid bytes otherwise, so the line stays RFC 8259.
func appendKafkaJSON(l, js []byte) []byte {
	if utf8.Valid(js) {
		return append(l, js...)
	}
	return append(l, bytes.ToValidUTF8(js, []byte("\ufffd"))...)
}
