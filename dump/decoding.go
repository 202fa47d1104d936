package dump

import (
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/verify"
)

// Decoder selects one of kafka-dump-log's message decoders (package
// internaltopic), which print a record's key and value as the JSON of the
// message schema they hold instead of as UTF-8 text. A decoder implies
// Options.PrintData.
type Decoder = internaltopic.Kind

// Decoders.
const (
	DecoderNone            = internaltopic.None
	DecoderOffsets         = internaltopic.Offsets
	DecoderTransactionLog  = internaltopic.TransactionLog
	DecoderClusterMetadata = internaltopic.ClusterMetadata
	DecoderRemoteLog       = internaltopic.RemoteLog
	DecoderShareGroupState = internaltopic.ShareGroupState
)

// attachDecoder creates the dumper's decoder for opts and hands it to the
// renderer, which prints d.dec.cur for each non-control record.
func (d *dumper) attachDecoder() {
	d.dec = internaltopic.New(d.opts.Decoder)
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
	d.dec.Decode(r)
}

// reportDecodeProblem counts a record the decoder could not decode as a
// finding and reports it (a "record-decode" problem in JSON). In text mode
// the missing key ends the dump, as Kafka's tool dies there; the renderer
// has returned that error already.
func (d *dumper) reportDecodeProblem(b *format.Batch, r *format.Record) {
	if d.dec == nil || b.IsControl() {
		return
	}
	c := d.dec.Current()
	if c.Problem == "" || (c.MissingKey && !d.opts.JSON) {
		return
	}
	d.findings++
	pe := &format.PosError{Kind: format.ErrCorrupt, Pos: b.Pos, Offset: r.Offset, Field: "value", Msg: c.Problem}
	if c.MissingKey {
		pe.Field = "key"
	}
	d.r.problem(problemFromError(pe, verify.KindRecordDecode))
}

// appendText writes the record's contents as printRecordContents does: the
// key, then the payload; the first printed item is prefixed with "| " under
// --skip-record-metadata and with a space otherwise. A keyless coordinator
// record returns Kafka's fatal error instead.
func appendDecodedText(l []byte, c *internaltopic.Decoded, skipMetadata bool) ([]byte, error) {
	if c.MissingKey {
		return l, internaltopic.ErrMissingKey
	}
	prefix := " "
	if skipMetadata {
		prefix = "| "
	}
	if c.Key != nil {
		l = append(l, prefix...)
		l = append(l, "key: "...)
		l = append(l, c.Key...)
		prefix = " "
	}
	if c.Value != nil {
		l = append(l, prefix...)
		l = append(l, "payload: "...)
		l = append(l, c.Value...)
	}
	return l, nil
}

// appendDecodedJSON adds the decoder's output to an NDJSON record object:
// "decodedKey" and "decodedValue" hold the JSON Kafka prints, or the text it
// prints instead (an error, "<DELETE>") as a string, or null when it prints
// nothing. A __remote_log_metadata value, which Kafka prints as Java's
// toString, is klog's typed object (internaltopic.RemoteLogMetadata).
func appendDecodedJSON(l []byte, c *internaltopic.Decoded) []byte {
	l = ndjson.Field(l, "decodedKey")
	switch {
	case c.Key == nil:
		l = append(l, "null"...)
	case c.KeyJSON:
		l = appendKafkaJSON(l, c.Key)
	default:
		l = ndjson.StringBytes(l, c.Key)
	}
	l = ndjson.Field(l, "decodedValue")
	switch {
	case c.RemoteLog != nil:
		l = c.RemoteLog.AppendJSON(l)
	case c.Value == nil:
		l = append(l, "null"...)
	case c.ValueJSON:
		l = appendKafkaJSON(l, c.Value)
	default:
		l = ndjson.StringBytes(l, c.Value)
	}
	return l
}
