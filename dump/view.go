package dump

import (
	"bufio"
	"errors"
	"io"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/verify"
)

// errLimit ends a dump whose View has taken its Limit of records: the run
// ends there, cleanly.
var errLimit = errors.New("dump: record limit reached")

// reportViewProblem counts a record whose key or value did not decode as
// the View's format asks as a finding ("record-decode", with its offset);
// the record is printed with its bytes.
func (d *dumper) reportViewProblem(b *format.Batch, r *format.Record) {
	v := d.opts.View
	if !v.Decodes() || b.IsControl() || !v.DecodeFailed() {
		return
	}
	field, err := v.Current().DecodeFailure()
	d.findings++
	pe := &format.PosError{Kind: format.ErrCorrupt, Pos: b.Pos, Offset: r.Offset, Field: field, Msg: field + " does not decode: " + err.Error()}
	d.r.problem(problemFromError(pe, verify.KindRecordDecode))
}

// appendViewText appends a record's contents as the text line prints them
// when the View decodes: the decoded JSON in place of the bytes, and a
// "(not decoded: why)" note after one that should have decoded, "(left as
// bytes: why)" after one auto left as bytes (payload.AppendNote).
func (t *textRenderer) appendViewText(l []byte, r *format.Record) []byte {
	c := t.opts.View.Current()
	prefix := " "
	if t.opts.SkipRecordMetadata {
		prefix = "| "
	}
	if r.Key != nil {
		l = append(l, prefix...)
		l = append(l, "key: "...)
		if c.Key.JSON != nil {
			l = append(l, c.Key.JSON...)
		} else {
			l = appendEncoded(l, r.Key, t.opts.KeyEncoding)
		}
		l = payload.AppendNote(l, c.Key)
		prefix = " "
	}
	if r.Value != nil {
		l = append(l, prefix...)
		l = append(l, "payload: "...)
		if c.Value.JSON != nil {
			l = append(l, c.Value.JSON...)
		} else {
			l = appendEncoded(l, r.Value, t.opts.ValueEncoding)
		}
		l = payload.AppendNote(l, c.Value)
	}
	return l
}

// viewJSON adds the View's decoded key and value to a record object.
func (j *jsonRenderer) viewJSON(l []byte) []byte {
	c := j.opts.View.Current()
	return ndjson.DecodedKeyValue(l, c.Key, c.Value)
}

// formatRenderer prints the records a View keeps through its format
// string, and nothing else: the output is the format string's, as kcat's
// -f output is. Problems still count as findings (stderr's summary).
type formatRenderer struct {
	*textRenderer // writing to io.Discard: every other line is dropped
	w             *bufio.Writer
	view          *payload.View
	line          []byte
}

func newFormatRenderer(w io.Writer, opts Options) *formatRenderer {
	return &formatRenderer{textRenderer: newTextRenderer(io.Discard, opts), w: bufio.NewWriterSize(w, 256<<10), view: opts.View}
}

func (f *formatRenderer) record(b *format.Batch, r *format.Record) error {
	f.line = f.view.AppendFormat(f.line[:0])
	_, err := f.w.Write(f.line)
	return err
}

func (f *formatRenderer) flush() error { return f.w.Flush() }
