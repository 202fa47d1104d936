package tail

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/verify"
)

// Renderer is one output form of klog tail: text lines, JSON objects, or a
// live table. Event renders one event, Tick is called periodically when
// Redraws says so (the table redraws), Close ends the output.
type Renderer interface {
	Event(ev Event) error
	Tick(now time.Time) error
	Close() error
	Redraws() bool
}

// partitionLabel is the partition directory's name: topic-partition.
func partitionLabel(ev *Event) string { return filepath.Base(ev.Dir) }

// tailText prints one line per event, prefixed with the partition; batches
// as kafka-dump-log prints them.
type tailText struct {
	w    *bufio.Writer
	data bool
	view *payload.View
	line []byte
	rr   format.RecordReader
	rec  format.Record
	// topic and part are the partition of the batch being printed.
	topic string
	part  int32
}

// NewText is the text renderer: one line per event, prefixed with the
// partition; batches as kafka-dump-log prints them, with their records
// when data is set.
func NewText(w *bufio.Writer, data bool) Renderer { return &tailText{w: w, data: data} }

// ErrCount ends a tail whose View has taken its count of records (-c):
// the renderer returns it after the last record, and the tail ends
// cleanly.
var ErrCount = errors.New("tail: record count reached")

// NewTextView is NewText with the records through v (package payload):
// decoded, filtered by --where, counted; with a format string only the
// records are printed, each through it, as kcat prints what it consumes.
// Records are printed (data) whenever v is active.
func NewTextView(w *bufio.Writer, data bool, v *payload.View) Renderer {
	if !v.Active() {
		return NewText(w, data)
	}
	if v.Format != nil {
		return &tailFormat{w: w, view: v}
	}
	return &tailText{w: w, data: true, view: v}
}

func (t *tailText) Tick(time.Time) error { return nil }
func (t *tailText) Close() error         { return nil }
func (t *tailText) Redraws() bool        { return false }

func (t *tailText) Event(ev Event) error {
	prefix := partitionLabel(&ev) + ": "
	l := append(t.line[:0], prefix...)
	switch ev.Type {
	case TypeState, TypePartitionAdded, TypePartitionRemoved:
		l = appendPartitionLine(l, &ev)
	case TypeBatch:
		l = dump.AppendBatchLine(l, ev.Batch)
		l = l[:len(l)-1] // the newline comes below
		if t.data {
			t.topic, t.part = ev.Topic, ev.Partition
			var err error
			if l, err = t.records(l, prefix, ev.Batch); err != nil {
				t.line = append(l, '\n')
				if _, werr := t.w.Write(t.line); werr != nil {
					return werr
				}
				return err
			}
		}
	case TypeLogEndOffset, TypeHighWatermark:
		l = appendOffsetsLine(l, &ev)
	case TypeRoll, TypeSegmentDeleted, TypeTruncated, TypePartial:
		l = appendSegmentLine(l, &ev)
	case TypeCorrupt, TypeError:
		l = appendProblemLine(l, &ev)
	default:
		l = append(l, ev.Type...)
	}
	l = append(l, '\n')
	t.line = l
	_, err := t.w.Write(l)
	return err
}

// appendPartitionLine: a partition's state, appearance or disappearance.
func appendPartitionLine(l []byte, ev *Event) []byte {
	if ev.Type == TypePartitionRemoved {
		l = append(l, "partition disappeared (last logEndOffset: "...)
		l = strconv.AppendInt(l, ev.LogEndOffset, 10)
		return append(l, ')')
	}
	if ev.Type == TypePartitionAdded {
		l = append(l, "partition appeared: "...)
	}
	l = append(l, "logStartOffset: "...)
	l = strconv.AppendInt(l, ev.LogStartOffset, 10)
	l = append(l, " logEndOffset: "...)
	l = strconv.AppendInt(l, ev.LogEndOffset, 10)
	l = appendHW(l, ev)
	l = append(l, " segments: "...)
	l = strconv.AppendInt(l, int64(ev.Segments), 10)
	if ev.Segment != "" {
		l = append(l, " activeSegment: "...)
		l = append(l, ev.Segment...)
	}
	return l
}

// appendOffsetsLine: a log end offset or high watermark change.
func appendOffsetsLine(l []byte, ev *Event) []byte {
	if ev.Type == TypeLogEndOffset {
		l = append(l, "logEndOffset: "...)
		l = appendChange(l, ev.Change)
		return appendHW(l, ev)
	}
	l = append(l, "highWatermark: "...)
	l = appendChange(l, ev.Change)
	l = append(l, " logEndOffset: "...)
	l = strconv.AppendInt(l, ev.LogEndOffset, 10)
	return appendGap(l, ev)
}

// appendSegmentLine: a roll, a deleted or truncated segment, or a batch
// still being written.
func appendSegmentLine(l []byte, ev *Event) []byte {
	switch ev.Type {
	case TypeRoll:
		l = append(l, "segment rolled: "...)
		l = append(l, ev.Segment...)
		l = append(l, " logEndOffset: "...)
		l = strconv.AppendInt(l, ev.LogEndOffset, 10)
		l = append(l, " segments: "...)
		l = strconv.AppendInt(l, int64(ev.Segments), 10)
	case TypeSegmentDeleted:
		l = append(l, "segment deleted: "...)
		l = append(l, ev.Segment...)
		if ev.RenamedTo != "" {
			l = append(l, " (renamed to "...)
			l = append(l, ev.RenamedTo...)
			l = append(l, ')')
		}
		l = append(l, " logStartOffset: "...)
		l = strconv.AppendInt(l, ev.LogStartOffset, 10)
		l = append(l, " segments: "...)
		l = strconv.AppendInt(l, int64(ev.Segments), 10)
	case TypeTruncated:
		l = append(l, "truncated: "...)
		l = append(l, ev.Segment...)
		if tr := ev.Truncation; tr != nil {
			l = append(l, " shrank from "...)
			l = strconv.AppendInt(l, tr.PrevSizeBytes, 10)
			l = append(l, " to "...)
			l = strconv.AppendInt(l, tr.SizeBytes, 10)
			l = append(l, " bytes"...)
		}
		l = append(l, ", logEndOffset: "...)
		l = appendChange(l, ev.Change)
		l = appendHW(l, ev)
	case TypePartial:
		if p := ev.Partial; p != nil {
			l = append(l, "waiting for the rest of the batch at position "...)
			l = strconv.AppendInt(l, p.Position, 10)
			l = append(l, " of "...)
			l = append(l, ev.Segment...)
			l = append(l, ": "...)
			l = strconv.AppendInt(l, p.HaveBytes, 10)
			if p.WantBytes > 0 {
				l = append(l, " of "...)
				l = strconv.AppendInt(l, p.WantBytes, 10)
			}
			l = append(l, " bytes written"...)
		}
	}
	return l
}

// appendProblemLine: data the tail cannot read, or trouble.
func appendProblemLine(l []byte, ev *Event) []byte {
	l = append(l, ev.Type...)
	l = append(l, ": "...)
	if ev.Segment != "" {
		l = append(l, ev.Segment...)
		l = append(l, ' ')
	}
	if p := ev.Problem; p != nil {
		if p.Position >= 0 {
			l = append(l, "position "...)
			l = strconv.AppendInt(l, p.Position, 10)
			l = append(l, ": "...)
		}
		l = append(l, p.Message...)
	}
	return l
}

// records appends the batch's record lines (each on its own line after
// the prefix); a record Kafka cannot decode ends the list with a note.
func (t *tailText) records(l []byte, prefix string, b *format.Batch) ([]byte, error) {
	if err := t.rr.Reset(b); err != nil {
		l = append(l, '\n')
		l = append(l, prefix...)
		return append(l, "records: "+err.Error()...), nil
	}
	for {
		err := t.rr.Next(&t.rec)
		if err == io.EOF {
			return l, nil
		}
		l = append(l, '\n')
		l = append(l, prefix...)
		if err != nil {
			return append(l, "records: "+err.Error()...), nil
		}
		var rerr error
		if t.view != nil {
			if !t.view.Take(t.topic, t.part, b, &t.rec) {
				l = l[:len(l)-1-len(prefix)]
				if t.view.Full() {
					return l, ErrCount
				}
				continue
			}
			l, rerr = dump.AppendRecordLine(l, b, &t.rec, !t.view.Decodes())
			if rerr == nil && t.view.Decodes() && !b.IsControl() {
				l = appendDecoded(l[:len(l)-1], &t.rec, t.view.Current())
				l = append(l, '\n')
			}
		} else {
			l, rerr = dump.AppendRecordLine(l, b, &t.rec, true)
		}
		if rerr != nil {
			l = append(l, " (undecodable control record: "+rerr.Error()+")"...)
		} else {
			l = l[:len(l)-1]
		}
		if t.view.Full() {
			return l, ErrCount
		}
	}
}

// appendDecoded appends " key: K payload: V" with the decoded JSON in place
// of a key or value that decoded, and a "(not decoded: why)" note after one
// that should have ("(left as bytes: why)" after one auto left as bytes).
func appendDecoded(l []byte, r *format.Record, c *payload.Rec) []byte {
	if r.Key != nil {
		l = append(l, " key: "...)
		if c.Key.JSON != nil {
			l = append(l, c.Key.JSON...)
		} else {
			l = format.AppendJavaUTF8(l, r.Key)
		}
		l = payload.AppendNote(l, c.Key)
	}
	if r.Value != nil {
		l = append(l, " payload: "...)
		if c.Value.JSON != nil {
			l = append(l, c.Value.JSON...)
		} else {
			l = format.AppendJavaUTF8(l, r.Value)
		}
		l = payload.AppendNote(l, c.Value)
	}
	return l
}

// tailFormat prints each new record through the View's format string and
// nothing else.
type tailFormat struct {
	w    *bufio.Writer
	view *payload.View
	line []byte
	rr   format.RecordReader
}

func (t *tailFormat) Tick(time.Time) error { return nil }
func (t *tailFormat) Close() error         { return nil }
func (t *tailFormat) Redraws() bool        { return false }

func (t *tailFormat) Event(ev Event) error {
	if ev.Type != TypeBatch || ev.Batch == nil {
		return nil
	}
	for r, err := range t.rr.Records(ev.Batch) {
		if err != nil {
			// The record lines cannot be read: said as the text does.
			_, werr := fmt.Fprintf(t.w, "%s: records: %v\n", partitionLabel(&ev), err)
			return werr
		}
		if t.view.Take(ev.Topic, ev.Partition, ev.Batch, r) {
			t.line = t.view.AppendFormat(t.line[:0])
			if _, err := t.w.Write(t.line); err != nil {
				return err
			}
		}
		if t.view.Full() {
			return ErrCount
		}
	}
	return nil
}

func appendChange(l []byte, c *Change) []byte {
	if c == nil {
		return l
	}
	l = appendOffset(l, c.From)
	l = append(l, " -> "...)
	return appendOffset(l, c.To)
}

func appendOffset(l []byte, v int64) []byte {
	if v < 0 {
		return append(l, "none"...)
	}
	return strconv.AppendInt(l, v, 10)
}

func appendHW(l []byte, ev *Event) []byte {
	l = append(l, " highWatermark: "...)
	if ev.HighWatermark < 0 {
		return append(l, "unknown (no entry in replication-offset-checkpoint)"...)
	}
	l = strconv.AppendInt(l, ev.HighWatermark, 10)
	return appendGap(l, ev)
}

// appendGap: "(N records not yet visible to consumers)".
func appendGap(l []byte, ev *Event) []byte {
	if ev.HighWatermark < 0 {
		return l
	}
	l = append(l, " ("...)
	l = strconv.AppendInt(l, ev.Gap, 10)
	if ev.Gap == 1 {
		l = append(l, " record"...)
	} else {
		l = append(l, " records"...)
	}
	return append(l, " not yet visible to consumers)"...)
}

// tailJSON writes each event as one JSON object per line; with records,
// ndjson's "record" object per record follows each batch, with the
// partition's dir, topic and partition.
type tailJSON struct {
	enc  *json.Encoder
	w    *ndjson.Writer
	data bool
	view *payload.View
	rr   format.RecordReader
}

// NewJSONView is NewJSON with the records through v (decoded, filtered,
// counted); records are printed whenever v is active.
func NewJSONView(w *bufio.Writer, data bool, opts ndjson.Options, v *payload.View) Renderer {
	r := NewJSON(w, data || v.Active(), opts).(*tailJSON)
	r.view = v
	return r
}

// NewJSON is the JSON renderer: one event object per line, with ndjson's
// batch object for a batch and, when data is set, its record objects.
func NewJSON(w *bufio.Writer, data bool, opts ndjson.Options) Renderer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &tailJSON{enc: enc, w: ndjson.NewWriter(w, opts), data: data}
}

func (t *tailJSON) Tick(time.Time) error { return nil }
func (t *tailJSON) Close() error         { return t.w.Err() }
func (t *tailJSON) Redraws() bool        { return false }

func (t *tailJSON) Event(ev Event) error {
	if ev.Type == TypeBatch && ev.Batch != nil {
		// ndjson's batch object, with the event's partition state.
		t.w.Batch(ev.Batch, func(l []byte) []byte { return appendEventFields(l, &ev) })
	} else if err := t.enc.Encode(ev); err != nil { // ev has its "type"
		return err
	}
	if !t.data || ev.Batch == nil {
		return nil
	}
	more := func(l []byte) []byte {
		l = ndjson.Str(l, "dir", ev.Dir)
		l = ndjson.Str(l, "topic", ev.Topic)
		return ndjson.Int(l, "partition", int64(ev.Partition))
	}
	withDecoded := func(l []byte) []byte {
		l = more(l)
		if c := t.view.Current(); !ev.Batch.IsControl() {
			l = ndjson.DecodedKeyValue(l, c.Key, c.Value)
		}
		return l
	}
	var err error
	for r, rerr := range t.rr.Records(ev.Batch) {
		if err = rerr; err != nil {
			break
		}
		if t.view == nil {
			t.w.Record(ev.Batch, r, more)
			continue
		}
		if t.view.Take(ev.Topic, ev.Partition, ev.Batch, r) {
			if t.view.Decodes() {
				t.w.Record(ev.Batch, r, withDecoded)
			} else {
				t.w.Record(ev.Batch, r, more)
			}
		}
		if t.view.Full() {
			if werr := t.w.Err(); werr != nil {
				return werr
			}
			return ErrCount
		}
	}
	if err != nil {
		p := verify.ProblemAt(err, verify.StageRecords, ev.Batch.Pos, ev.Batch.BaseOffset)
		p.Path = filepath.Join(ev.Dir, ev.Segment)
		t.w.Emit(ndjson.End(ndjson.ProblemFields(ndjson.Begin(t.w.Line(), "problem"), &p)))
	}
	return t.w.Err()
}

// appendEventFields writes the fields every tail event has.
func appendEventFields(l []byte, ev *Event) []byte {
	l = ndjson.Int(l, "timestamp", ev.Timestamp)
	l = ndjson.Str(l, "time", ev.Time.Format(time.RFC3339Nano))
	l = ndjson.Str(l, "dir", ev.Dir)
	l = ndjson.Str(l, "topic", ev.Topic)
	l = ndjson.Int(l, "partition", int64(ev.Partition))
	l = ndjson.Int(l, "logStartOffset", ev.LogStartOffset)
	l = ndjson.Int(l, "logEndOffset", ev.LogEndOffset)
	l = ndjson.Int(l, "highWatermark", ev.HighWatermark)
	l = ndjson.Int(l, "gap", ev.Gap)
	l = ndjson.Int(l, "segments", int64(ev.Segments))
	return ndjson.Str(l, "segment", ev.Segment)
}

// tailTable keeps one row per partition and draws it with tablewriter:
// in place on a terminal (ANSI home and clear), as plain snapshots
// otherwise.
type tailTable struct {
	w     *bufio.Writer
	term  bool
	width func() int
	rows  map[string]*tableRow
	dirty bool
	buf   bytes.Buffer
}

type tableRow struct {
	label     string
	leo, hw   int64
	lastBatch time.Time
	rate      batchRate
	lag       lagHistory
}

// NewTable is the live table renderer: one row per partition, redrawn in
// place when term is set (a terminal, width() columns wide), printed as
// snapshots otherwise.
func NewTable(w *bufio.Writer, term bool, width func() int) Renderer {
	return &tailTable{w: w, term: term, width: width, rows: map[string]*tableRow{}}
}

func (t *tailTable) Redraws() bool { return true }

func (t *tailTable) Event(ev Event) error {
	if ev.Type == TypeCorrupt || ev.Type == TypeError || ev.Type == TypePartial {
		return nil
	}
	if ev.Type == TypePartitionRemoved {
		delete(t.rows, ev.Dir)
		t.dirty = true
		return nil
	}
	r := t.rows[ev.Dir]
	if r == nil {
		r = &tableRow{label: partitionLabel(&ev)}
		t.rows[ev.Dir] = r
	}
	if changed := r.leo != ev.LogEndOffset || r.hw != ev.HighWatermark || r.lag.n == 0; changed && ev.HighWatermark >= 0 {
		r.lag.add(ev.LogEndOffset - ev.HighWatermark)
	}
	r.leo, r.hw = ev.LogEndOffset, ev.HighWatermark
	if ev.Type == TypeBatch {
		r.lastBatch = ev.Time
		r.rate.add(ev.Time)
	}
	t.dirty = true
	return nil
}

// tick redraws when something changed, and on a terminal also while a
// rate is decaying; a snapshot is printed only when something changed.
func (t *tailTable) Tick(now time.Time) error {
	active := false
	for _, r := range t.rows {
		if t.term && r.rate.recent(now) {
			active = true
			break
		}
	}
	if !t.dirty && !active {
		return nil
	}
	return t.draw(now)
}

func (t *tailTable) Close() error {
	if len(t.rows) == 0 && !t.dirty {
		return nil
	}
	return t.draw(time.Now())
}

func (t *tailTable) draw(now time.Time) error {
	t.dirty = false
	labels := make([]string, 0, len(t.rows))
	byLabel := make(map[string]*tableRow, len(t.rows))
	for _, r := range t.rows {
		labels = append(labels, r.label)
		byLabel[r.label] = r
	}
	sort.Strings(labels)
	rows := make([][]string, 0, len(labels))
	for _, l := range labels {
		r := byLabel[l]
		hw, gap, last := "-", "-", "-"
		if r.hw >= 0 {
			hw, gap = strconv.FormatInt(r.hw, 10), strconv.FormatInt(r.leo-r.hw, 10)
		}
		if !r.lastBatch.IsZero() {
			last = r.lastBatch.UTC().Format("15:04:05.000")
		}
		trend := "-"
		if r.lag.n > 0 {
			trend = r.lag.sparkline()
		}
		rows = append(rows, []string{l, strconv.FormatInt(r.leo, 10), hw, gap, trend, last,
			strconv.FormatFloat(r.rate.per(now), 'f', 1, 64)})
	}
	t.buf.Reset()
	if t.term {
		t.buf.WriteString("\x1b[H\x1b[2J")
	} else {
		t.buf.WriteString(now.UTC().Format("2006-01-02T15:04:05.000Z") + "\n")
	}
	if err := dump.WriteTable(&dump.StyledWriter{W: &t.buf, Style: dump.TableStyle{MaxWidth: t.width()}}, tableHeader, rows); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	_, err := t.w.Write(t.buf.Bytes())
	return err
}

// tableHeader: tablewriter upper-cases headers and spaces out punctuation
// ("LEO − HW").
var tableHeader = []string{"partition", "LEO", "HW", "LEO−HW", "lag trend", "last batch UTC", "batches per sec"}

// lagHistory is the last lagSamples values of a partition's lag (LEO −
// HW: what the followers have not yet acknowledged), one per change.
type lagHistory struct {
	v [lagSamples]int64
	n int // samples taken (the last min(n, lagSamples) are kept)
}

const lagSamples = 12

func (h *lagHistory) add(lag int64) {
	h.v[h.n%lagSamples] = lag
	h.n++
}

// values are the kept samples, oldest first.
func (h *lagHistory) values() []int64 {
	k := min(h.n, lagSamples)
	out := make([]int64, 0, k)
	for i := h.n - k; i < h.n; i++ {
		out = append(out, h.v[i%lagSamples])
	}
	return out
}

// sparkline draws the samples with the eighth blocks ▁ to █: ▁ is no lag,
// █ the largest lag of the window, the rest in proportion (any lag at
// all is at least ▂).
func (h *lagHistory) sparkline() string { return Sparkline(h.values()) }

// Sparkline draws non-negative values as a line of eighth blocks, scaled
// to their maximum: 0 is ▁, the maximum █, any other value at least ▂.
func Sparkline(vals []int64) string {
	const blocks = "▁▂▃▄▅▆▇█"
	bs := []rune(blocks)
	var top int64
	for _, v := range vals {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if v > 0 && top > 0 {
			i = 1 + int((v-1)*int64(len(bs)-2)/max(top-1, 1))
			if v == top {
				i = len(bs) - 1
			}
		}
		b.WriteRune(bs[i])
	}
	return b.String()
}

// batchRate counts batches in one-second buckets over the last
// rateWindow seconds.
type batchRate struct {
	sec [rateWindow]int64
	n   [rateWindow]int
}

const rateWindow = 5

func (r *batchRate) add(t time.Time) {
	s := t.Unix()
	i := s % rateWindow
	if r.sec[i] != s {
		r.sec[i], r.n[i] = s, 0
	}
	r.n[i]++
}

// per is batches per second over the window ending now.
func (r *batchRate) per(now time.Time) float64 {
	s := now.Unix()
	total := 0
	for i := range r.sec {
		if r.sec[i] > s-rateWindow && r.sec[i] <= s {
			total += r.n[i]
		}
	}
	return float64(total) / rateWindow
}

// recent reports a batch within the window plus a second, so the table
// is redrawn once more after the rate falls to 0.
func (r *batchRate) recent(now time.Time) bool {
	s := now.Unix()
	for i := range r.sec {
		if r.n[i] > 0 && r.sec[i] > s-rateWindow-1 {
			return true
		}
	}
	return false
}
