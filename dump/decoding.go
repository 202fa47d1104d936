package dump

import (
	"errors"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/verify"
)

// attachDecoder creates the dumper's decoder for opts and hands it to the
// renderer, which prints d.dec.cur for each non-control record. The
// decoder classes are loaded by loadClasses, when the first log file is
// dumped.
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

// loadClasses is DumpLogSegmentsOptions.messageParser for a log file: a
// message decoder wins over the decoder classes, which are loaded value
// first; klog's external value decoder replaces the value class.
func (d *dumper) loadClasses() error {
	o := &d.opts
	if d.dec != nil || d.cd != nil || o.KeyDecoderClass == nil && o.ValueDecoderClass == nil && o.ValueDecoder == nil {
		return nil
	}
	cd := &contentDecoder{ext: d.opts.ValueDecoder, keyEnc: d.opts.KeyEncoding, valueEnc: d.opts.ValueEncoding}
	var err error
	if d.opts.ValueDecoderClass != nil && d.opts.ValueDecoder == nil {
		if cd.value, err = loadDecoderClass("value-decoder-class", *d.opts.ValueDecoderClass); err != nil {
			return err
		}
	}
	if d.opts.KeyDecoderClass != nil {
		if cd.key, err = loadDecoderClass("key-decoder-class", *d.opts.KeyDecoderClass); err != nil {
			return err
		}
	}
	if cd.plain() {
		return nil
	}
	d.cd = cd
	switch r := d.r.(type) {
	case *textRenderer:
		r.cd = cd
	case *jsonRenderer:
		r.cd = cd
	}
	return nil
}

// decodeRecord decodes r into d.dec.cur (or d.cd.cur) before the renderer
// prints it. Control records are not decoded: kafka-dump-log prints no
// contents for them.
func (d *dumper) decodeRecord(b *format.Batch, r *format.Record) {
	if b.IsControl() || !d.opts.PrintData {
		return
	}
	switch {
	case d.dec != nil:
		d.dec.Decode(r)
	case d.cd != nil:
		d.cd.decode(r)
	}
}

// ValueDecoderError is klog's external value decoder failing on a record:
// the dump stops there.
type ValueDecoderError struct {
	Offset int64
	Err    error
}

func (e *ValueDecoderError) Error() string {
	if e.Offset < 0 {
		return "--value-decoder-cmd: " + e.Err.Error()
	}
	return "--value-decoder-cmd at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

func (e *ValueDecoderError) Unwrap() error { return e.Err }

// stopsTheRun reports the errors after which no file is dumped: a decoder
// class Kafka cannot load, and the external decoder failing.
func stopsTheRun(err error) bool {
	var dce *DecoderClassError
	var vde *ValueDecoderError
	return errors.As(err, &dce) || errors.As(err, &vde)
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
