package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/tail"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

var (
	tailJSONFlag    = &cli.BoolFlag{Name: "json", Usage: "one JSON object per event per line (type, topic, partition, logEndOffset, highWatermark, time, ...)"}
	tailTableFlag   = &cli.BoolFlag{Name: "table", Usage: "a live table, one row per partition: LEO, HW, LEO−HW, last batch, batches/s"}
	tailBeginFlag   = &cli.BoolFlag{Name: "from-beginning", Usage: "report the batches already there first, as --from earliest"}
	tailFromFlag    = &cli.StringFlag{Name: "from", Usage: "where to start: latest (the end; the default), earliest, N (the batches holding offsets from N) or -N (the batches holding the last N offsets), reported before new ones"}
	tailDataFlag    = &cli.BoolFlag{Name: "print-data-log", Usage: "print every record of each new batch, with keys and values"}
	tailTimeoutFlag = &cli.DurationFlag{Name: "timeout", Usage: "stop after this long (default: until interrupted)"}
)

var tailCommand = &cli.Command{
	Name:      "tail",
	Usage:     "watch partitions live: new batches, log end offset, high watermark, rolls, deletions, truncations",
	ArgsUsage: "PATH...",
	Description: `Each PATH is a partition directory or a log directory (every partition in it,
and those that appear later). Prints, as they happen: each new batch (the
kafka-dump-log batch line after the partition name; its records with
--print-data-log), log end offset and high watermark changes with the gap
between them (records consumers cannot see yet; the high watermark is the
partition's entry in the log dir's replication-offset-checkpoint), segment
rolls, deletions and truncations, partitions appearing and disappearing.
--json prints one event object per line; --table a live table, redrawn in
place on a terminal and printed as snapshots otherwise. Watches directories
with inotify (one watch per directory; see fs.inotify.max_user_watches) and
never polls. Exit status 0 on --timeout, 130 on Ctrl-C (143 on SIGTERM), 2 on
trouble (an unreadable partition is reported and the others followed).`,
	Flags:  []cli.Flag{tailJSONFlag, tailTableFlag, tailFromFlag, tailBeginFlag, tailDataFlag, tailTimeoutFlag, keyEncFlag, valueEncFlag},
	Action: runTail,
}

// tailOptions reads where to start (--from-beginning, --from).
func tailOptions(c *cli.Context) (tail.Options, error) {
	opts := tail.Options{FromBeginning: c.Bool(tailBeginFlag.Name)}
	if c.IsSet(tailFromFlag.Name) {
		o, err := parseOffset(c.String(tailFromFlag.Name))
		if err != nil {
			return opts, usageError("tail: --from: %v", err)
		}
		if opts.FromBeginning && o.kind != offsetEarliest {
			return opts, usageError("tail: --from-beginning and --from %s exclude each other", o)
		}
		switch o.kind {
		case offsetEarliest:
			opts.FromBeginning = true
		case offsetLast:
			opts.FromLast = o.n
		case offsetAbsolute:
			opts.FromOffset = o.n
			opts.FromBeginning = o.n == 0
		}
	}
	return opts, nil
}

// newTailRenderer is the renderer the flags ask for.
func newTailRenderer(c *cli.Context, out *bufio.Writer) (tailRenderer, error) {
	switch {
	case c.Bool(tailJSONFlag.Name):
		opts, err := recordOptions(c, true)
		if err != nil {
			return nil, err
		}
		return newTailJSON(out, c.Bool(tailDataFlag.Name), opts), nil
	case c.Bool(tailTableFlag.Name):
		return newTailTable(out, isTerminal(c.App.Writer)), nil
	}
	return &tailText{w: out, data: c.Bool(tailDataFlag.Name)}, nil
}

// pumpTail renders events until the channel closes (flushing whenever it
// is drained) and, for the table, redraws on a ticker. The first write
// error cancels the tail; events are drained until Run returns.
func pumpTail(events <-chan tail.Event, r tailRenderer, out *bufio.Writer, cancel context.CancelFunc) error {
	var tick <-chan time.Time
	if _, ok := r.(*tailTable); ok {
		t := time.NewTicker(tableRefresh)
		defer t.Stop()
		tick = t.C
	}
	var werr error
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return werr
			}
			if werr != nil {
				continue // drain until Run returns
			}
			werr = r.event(ev)
			if werr == nil && len(events) == 0 {
				werr = out.Flush()
			}
			if werr != nil {
				cancel()
			}
		case now := <-tick:
			if werr == nil {
				if werr = r.tick(now); werr == nil {
					werr = out.Flush()
				}
				if werr != nil {
					cancel()
				}
			}
		}
	}
}

// tableRefresh is how often --table redraws while anything changes.
const tableRefresh = 500 * time.Millisecond

func runTail(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return usageError("tail: no PATH given (a partition directory or a log directory)")
	}
	if c.Bool(tailJSONFlag.Name) && c.Bool(tailTableFlag.Name) {
		return usageError("tail: --json and --table exclude each other")
	}
	signalEndsFollow(c)
	opts, err := tailOptions(c)
	if err != nil {
		return err
	}
	// A path that is not there is said and the others are followed, as
	// verify and the views read the rest; the run then ends with exit 2
	// (unless a signal ends it: 130/143). None left is exit 2 at once.
	paths, missing := existingPaths(c.App.ErrWriter, "tail", paths)
	if len(paths) == 0 {
		return troubleError("")
	}
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	if d := c.Duration(tailTimeoutFlag.Name); d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	out := bufio.NewWriterSize(c.App.Writer, 64<<10)
	r, err := newTailRenderer(c, out)
	if err != nil {
		return err
	}
	events := make(chan tail.Event, 256)
	done := make(chan error, 1)
	go func() { done <- tail.Run(ctx, paths, opts, events) }()
	werr := pumpTail(events, r, out, cancel)
	err = <-done
	if werr == nil {
		werr = r.close()
		if ferr := out.Flush(); werr == nil {
			werr = ferr
		}
	}
	if werr != nil {
		return fail("tail", werr)
	}
	if errors.Is(err, tail.ErrUnreadable) || err == nil && missing {
		return troubleError("")
	}
	if err != nil {
		return fail("tail", err)
	}
	return nil
}

// existingPaths says on w each path that cannot be stat'ed (naming it and
// why, once) and returns the others; missing reports whether any was left
// out.
func existingPaths(w io.Writer, cmd string, paths []string) (kept []string, missing bool) {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			why := err.Error()
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err.Error()
			}
			fmt.Fprintf(w, "klog: %s: %s: %s\n", cmd, p, why)
			missing = true
			continue
		}
		kept = append(kept, p)
	}
	return kept, missing
}

// tailRenderer is one output form of klog tail.
type tailRenderer interface {
	event(ev tail.Event) error
	tick(now time.Time) error
	close() error
}

// partitionLabel is the partition directory's name: topic-partition.
func partitionLabel(ev *tail.Event) string { return filepath.Base(ev.Dir) }

// tailText prints one line per event, prefixed with the partition; batches
// as kafka-dump-log prints them.
type tailText struct {
	w    *bufio.Writer
	data bool
	line []byte
	rr   format.RecordReader
	rec  format.Record
}

func (t *tailText) tick(time.Time) error { return nil }
func (t *tailText) close() error         { return nil }

func (t *tailText) event(ev tail.Event) error {
	prefix := partitionLabel(&ev) + ": "
	l := append(t.line[:0], prefix...)
	switch ev.Type {
	case tail.TypeState, tail.TypePartitionAdded, tail.TypePartitionRemoved:
		l = appendPartitionLine(l, &ev)
	case tail.TypeBatch:
		l = dump.AppendBatchLine(l, ev.Batch)
		l = l[:len(l)-1] // the newline comes below
		if t.data {
			var err error
			if l, err = t.records(l, prefix, ev.Batch); err != nil {
				return err
			}
		}
	case tail.TypeLogEndOffset, tail.TypeHighWatermark:
		l = appendOffsetsLine(l, &ev)
	case tail.TypeRoll, tail.TypeSegmentDeleted, tail.TypeTruncated, tail.TypePartial:
		l = appendSegmentLine(l, &ev)
	case tail.TypeCorrupt, tail.TypeError:
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
func appendPartitionLine(l []byte, ev *tail.Event) []byte {
	if ev.Type == tail.TypePartitionRemoved {
		l = append(l, "partition disappeared (last logEndOffset: "...)
		l = strconv.AppendInt(l, ev.LogEndOffset, 10)
		return append(l, ')')
	}
	if ev.Type == tail.TypePartitionAdded {
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
func appendOffsetsLine(l []byte, ev *tail.Event) []byte {
	if ev.Type == tail.TypeLogEndOffset {
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
func appendSegmentLine(l []byte, ev *tail.Event) []byte {
	switch ev.Type {
	case tail.TypeRoll:
		l = append(l, "segment rolled: "...)
		l = append(l, ev.Segment...)
		l = append(l, " logEndOffset: "...)
		l = strconv.AppendInt(l, ev.LogEndOffset, 10)
		l = append(l, " segments: "...)
		l = strconv.AppendInt(l, int64(ev.Segments), 10)
	case tail.TypeSegmentDeleted:
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
	case tail.TypeTruncated:
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
	case tail.TypePartial:
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
func appendProblemLine(l []byte, ev *tail.Event) []byte {
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
		l, rerr = dump.AppendRecordLine(l, b, &t.rec, true)
		if rerr != nil {
			l = append(l, " (undecodable control record: "+rerr.Error()+")"...)
		} else {
			l = l[:len(l)-1]
		}
	}
}

func appendChange(l []byte, c *tail.Change) []byte {
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

func appendHW(l []byte, ev *tail.Event) []byte {
	l = append(l, " highWatermark: "...)
	if ev.HighWatermark < 0 {
		return append(l, "unknown (no entry in replication-offset-checkpoint)"...)
	}
	l = strconv.AppendInt(l, ev.HighWatermark, 10)
	return appendGap(l, ev)
}

// appendGap: "(N records not yet visible to consumers)".
func appendGap(l []byte, ev *tail.Event) []byte {
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
	rr   format.RecordReader
}

func newTailJSON(w *bufio.Writer, data bool, opts ndjson.Options) *tailJSON {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &tailJSON{enc: enc, w: ndjson.NewWriter(w, opts), data: data}
}

func (t *tailJSON) tick(time.Time) error { return nil }
func (t *tailJSON) close() error         { return t.w.Err() }

func (t *tailJSON) event(ev tail.Event) error {
	if ev.Type == tail.TypeBatch && ev.Batch != nil {
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
	var err error
	for r, rerr := range t.rr.Records(ev.Batch) {
		if err = rerr; err != nil {
			break
		}
		t.w.Record(ev.Batch, r, more)
	}
	if err != nil {
		p := verify.ProblemAt(err, verify.StageRecords, ev.Batch.Pos, ev.Batch.BaseOffset)
		p.Path = filepath.Join(ev.Dir, ev.Segment)
		t.w.Emit(ndjson.End(ndjson.ProblemFields(ndjson.Begin(t.w.Line(), "problem"), &p)))
	}
	return t.w.Err()
}

// appendEventFields writes the fields every tail event has.
func appendEventFields(l []byte, ev *tail.Event) []byte {
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
	rows  map[string]*tableRow
	dirty bool
	buf   bytes.Buffer
}

type tableRow struct {
	label     string
	leo, hw   int64
	lastBatch time.Time
	rate      batchRate
}

func newTailTable(w *bufio.Writer, term bool) *tailTable {
	return &tailTable{w: w, term: term, rows: map[string]*tableRow{}}
}

func (t *tailTable) event(ev tail.Event) error {
	if ev.Type == tail.TypeCorrupt || ev.Type == tail.TypeError || ev.Type == tail.TypePartial {
		return nil
	}
	if ev.Type == tail.TypePartitionRemoved {
		delete(t.rows, ev.Dir)
		t.dirty = true
		return nil
	}
	r := t.rows[ev.Dir]
	if r == nil {
		r = &tableRow{label: partitionLabel(&ev)}
		t.rows[ev.Dir] = r
	}
	r.leo, r.hw = ev.LogEndOffset, ev.HighWatermark
	if ev.Type == tail.TypeBatch {
		r.lastBatch = ev.Time
		r.rate.add(ev.Time)
	}
	t.dirty = true
	return nil
}

// tick redraws when something changed, and on a terminal also while a
// rate is decaying; a snapshot is printed only when something changed.
func (t *tailTable) tick(now time.Time) error {
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

func (t *tailTable) close() error {
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
		rows = append(rows, []string{l, strconv.FormatInt(r.leo, 10), hw, gap, last,
			strconv.FormatFloat(r.rate.per(now), 'f', 1, 64)})
	}
	t.buf.Reset()
	if t.term {
		t.buf.WriteString("\x1b[H\x1b[2J")
	} else {
		t.buf.WriteString(now.UTC().Format("2006-01-02T15:04:05.000Z") + "\n")
	}
	if err := dump.WriteTable(&dump.StyledWriter{W: &t.buf, Style: dump.TableStyle{MaxWidth: terminalWidth(t.w)}}, tableHeader, rows); err != nil {
		return fmt.Errorf("table: %w", err)
	}
	_, err := t.w.Write(t.buf.Bytes())
	return err
}

// tableHeader: tablewriter upper-cases headers and spaces out punctuation
// ("LEO − HW").
var tableHeader = []string{"partition", "LEO", "HW", "LEO−HW", "last batch UTC", "batches per sec"}

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
