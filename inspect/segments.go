package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// This file is `klog segments`: one row per segment of a partition, for
// people (a table) and scripts (one JSON object per segment). The views in
// segments.go, stats.go and find.go are klog's own and never
// kafka-dump-log compatible.

// viewISO renders epoch ms as ISO-8601 UTC with milliseconds; "" for the
// NoTimestamp value and other negatives.
func viewISO(ms int64) string {
	if ms < 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// PartitionDirs expands paths into partition directories: a partition
// directory is kept, a log directory gives its partitions in topic and
// partition order.
func PartitionDirs(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		dirs, err := partition.PartitionDirs([]string{p})
		if err != nil {
			return nil, &dump.IOError{Path: p, Err: err}
		}
		out = append(out, dirs...)
	}
	return out, nil
}

// SegmentsOptions configures Segments.
type SegmentsOptions struct {
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch
	// (0: the format defaults).
	MaxBatchBytes        int
	MaxDecompressedBytes int
	// Jobs is how many index files are verified at once (0: GOMAXPROCS).
	Jobs int
	// OnBytes, if set, is told how many bytes of the .log files have been
	// read, as they are read (for progress); the calls add up to the logs'
	// sizes.
	OnBytes func(n int64)
}

// PartitionSegments is the segment table of one partition directory.
type PartitionSegments struct {
	Dir       string
	Topic     string
	Partition int32 // -1 when the directory is not named <topic>-<partition>
	Segments  []SegmentRow
}

// Findings counts what makes `klog segments` exit 1: every problem of
// every segment (a batch whose CRC does not match or whose magic is not 0
// to 2, data the scan rejects, a torn or garbage tail, undecodable legacy
// wrappers, index problems, offsets overlapping an earlier segment), and
// returns the first in the order they are printed (nil for none).
func (p *PartitionSegments) Findings() (n int, first *verify.Problem) {
	for i := range p.Segments {
		s := &p.Segments[i]
		if first == nil && len(s.Problems) > 0 {
			first = &s.Problems[0]
		}
		n += len(s.Problems)
	}
	return n, first
}

// SegmentRow is one segment, and the JSON object `klog segments --json`
// writes for it (its tags are the schema). Offsets and timestamps are -1
// when the segment holds no batch.
type SegmentRow struct {
	Type      string `json:"type"` // "segment"
	Dir       string `json:"dir"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Log is the .log path ("" when only index files exist).
	Log        string `json:"log"`
	BaseOffset int64  `json:"baseOffset"`
	// FirstOffset is the first offset present (for a legacy compressed
	// wrapper, its first inner message); LastOffset the largest last offset.
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
	Batches     int64 `json:"batches"`
	Records     int64 `json:"records"`
	// SizeBytes is the .log size; ValidBytes where its readable batches end.
	SizeBytes  int64 `json:"sizeBytes"`
	ValidBytes int64 `json:"validBytes"`
	// MinTimestamp is the smallest first-record timestamp of a batch (v2
	// baseTimestamp; the max timestamp for LogAppendTime and v1), which is
	// the smallest record timestamp unless a producer sent records out of
	// time order inside one batch. MaxTimestamp is the largest batch max
	// timestamp, the broker's segment largestTimestamp. Epoch ms; MinTime
	// and MaxTime are the same in ISO-8601 UTC ("" for none).
	MinTimestamp int64  `json:"minTimestamp"`
	MaxTimestamp int64  `json:"maxTimestamp"`
	MinTime      string `json:"minTime"`
	MaxTime      string `json:"maxTime"`
	// Codecs are the compression codecs seen, in codec id order.
	Codecs []string `json:"codecs"`
	// IndexEntries and TimeIndexEntries count the real entries (not the
	// zero tail of a preallocated index); -1 when the file is absent.
	IndexEntries     int64 `json:"indexEntries"`
	TimeIndexEntries int64 `json:"timeIndexEntries"`
	// IndexProblems and TimeIndexProblems are verify's findings on the
	// .index and .timeindex; IndexHealth sums them up: "ok", "N problems",
	// or "missing .index" / "missing .timeindex" (the broker rebuilds a
	// missing index; not a finding).
	IndexProblems     int    `json:"indexProblems"`
	TimeIndexProblems int    `json:"timeIndexProblems"`
	IndexHealth       string `json:"indexHealth"`
	// GapBefore is how many offsets are absent between the previous
	// segments' last offset and FirstOffset (normal after compaction);
	// OverlapBefore how many of this segment's offsets are at or below it
	// (a finding).
	GapBefore     int64 `json:"gapBefore"`
	OverlapBefore int64 `json:"overlapBefore"`
	// Tail is what follows the valid data (format.TailKind: none, short,
	// partial, zeros, corrupt) and TailBytes its size.
	Tail      string `json:"tail"`
	TailBytes int64  `json:"tailBytes"`
	// Problems are the index findings and what stopped the log scan.
	Problems []verify.Problem `json:"problems"`
}

// Segments builds the segment table of the partition directory dir: every
// .log is scanned (batch headers and CRCs; legacy compressed wrappers are
// decompressed to count their records) and every .index and .timeindex is
// checked with verify. The error is for I/O trouble only; what is wrong
// with the data is in the rows' Problems (PartitionSegments.Findings).
func Segments(ctx context.Context, dir string, opts SegmentsOptions) (*PartitionSegments, error) {
	d, err := partition.Open(dir)
	if err != nil {
		return nil, &dump.IOError{Path: dir, Err: err}
	}
	ps := &PartitionSegments{Dir: dir, Partition: -1}
	if t, n, ok := partition.NameOf(dir); ok {
		ps.Topic, ps.Partition = t, n
	}
	var idxPaths []string
	for _, s := range d.Segments {
		for _, p := range []string{s.Index, s.TimeIndex} {
			if p != "" {
				idxPaths = append(idxPaths, p)
			}
		}
	}
	reports := map[string]*verify.FileReport{}
	if len(idxPaths) > 0 {
		for f, err := range verify.Files(ctx, idxPaths, verify.Options{Jobs: opts.Jobs, MaxBatchBytes: opts.MaxBatchBytes, MaxDecompressedBytes: opts.MaxDecompressedBytes}) {
			if err != nil {
				return nil, err
			}
			reports[f.Path] = f
		}
	}
	sc := &segScanner{opts: opts}
	sc.rr.Decompressor.MaxBytes = opts.MaxDecompressedBytes
	prevLast := int64(-1)
	for _, s := range d.Segments {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row := SegmentRow{Type: "segment", Dir: dir, Topic: ps.Topic, Partition: ps.Partition, Log: s.Log, BaseOffset: s.BaseOffset,
			FirstOffset: -1, LastOffset: -1, MinTimestamp: -1, MaxTimestamp: -1, Codecs: []string{},
			IndexEntries: -1, TimeIndexEntries: -1, Tail: format.TailNone.String(), Problems: []verify.Problem{}}
		if s.Log != "" {
			if err := sc.scanFile(&row); err != nil {
				return nil, err
			}
		}
		var missing []string
		for _, ix := range []struct {
			path, suffix string
			entries      *int64
			problems     *int
		}{{s.Index, partition.IndexSuffix, &row.IndexEntries, &row.IndexProblems}, {s.TimeIndex, partition.TimeIndexSuffix, &row.TimeIndexEntries, &row.TimeIndexProblems}} {
			f := reports[ix.path]
			if ix.path == "" || f == nil {
				missing = append(missing, ix.suffix)
				continue
			}
			if f.Err != "" {
				return nil, &dump.IOError{Path: ix.path, Err: errors.New(f.Err)}
			}
			*ix.entries = f.Records
			for _, p := range f.Problems {
				if p.Info {
					continue
				}
				*ix.problems++
				row.Problems = append(row.Problems, verify.Problem{Path: ix.path, Kind: p.Kind, Position: p.Position, Offset: p.Offset, Message: p.Message})
			}
		}
		switch n := row.IndexProblems + row.TimeIndexProblems; {
		case n == 1:
			row.IndexHealth = "1 problem"
		case n > 1:
			row.IndexHealth = strconv.Itoa(n) + " problems"
		case len(missing) > 0:
			row.IndexHealth = "missing " + strings.Join(missing, " ")
		default:
			row.IndexHealth = "ok"
		}
		if row.FirstOffset >= 0 {
			switch {
			case prevLast < 0:
			case row.FirstOffset > prevLast+1:
				row.GapBefore = row.FirstOffset - prevLast - 1
			case row.FirstOffset <= prevLast:
				row.OverlapBefore = min(row.LastOffset, prevLast) - row.FirstOffset + 1
				row.Problems = append(row.Problems, verify.Problem{Path: s.Log, Kind: verify.KindSegmentOverlap, Offset: row.FirstOffset,
					Message: "offsets " + viewItoa(row.FirstOffset) + ".." + viewItoa(min(row.LastOffset, prevLast)) + " are also in an earlier segment (which ends at " + viewItoa(prevLast) + ")"})
			}
			prevLast = max(prevLast, row.LastOffset)
		}
		ps.Segments = append(ps.Segments, row)
	}
	return ps, nil
}

// segScanner scans segments' batch headers, reusing its buffers.
type segScanner struct {
	opts SegmentsOptions
	ps   []verify.Problem
	sc   *format.Scanner
	rr   format.RecordReader
	rec  format.Record
}

func (s *segScanner) scanFile(row *SegmentRow) error {
	f, size, err := safeio.OpenSized(row.Log)
	if err != nil {
		return &dump.IOError{Path: row.Log, Err: err}
	}
	defer f.Close()
	if s.opts.OnBytes != nil {
		pr := safeio.NewProgressReaderAt(f, s.opts.OnBytes)
		defer pr.Done(size)
		return s.scan(pr, size, row)
	}
	return s.scan(f, size, row)
}

// scan fills row from the batches of one segment.
func (s *segScanner) scan(r io.ReaderAt, size int64, row *SegmentRow) error {
	row.SizeBytes = size
	if s.sc == nil {
		s.sc = format.NewScanner(r, size, format.ScanOptions{MaxBatchBytes: s.opts.MaxBatchBytes})
	} else {
		s.sc.Reset(r, size)
	}
	var codecs uint8
	for {
		b, err := s.sc.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			var pe *format.PosError
			if !errors.As(err, &pe) {
				return &dump.IOError{Path: row.Log, Err: err}
			}
			// A zero tail is a preallocated segment, not damage.
			if !s.sc.Done() || s.sc.Tail().Kind != format.TailZeros {
				row.Problems = append(row.Problems, verify.Problem{Path: row.Log, Kind: viewScanProblemKind(pe), Position: pe.Pos, Offset: pe.Offset, Message: pe.Error()})
			}
			if s.sc.Done() {
				break
			}
			continue
		}
		row.Batches++
		s.ps = verify.BatchProblems(s.ps[:0], b)
		for _, p := range s.ps {
			p.Path = row.Log
			row.Problems = append(row.Problems, p)
		}
		codecs |= 1 << (uint8(b.Compression()) & 7)
		first, n := b.BaseOffset, max(int64(b.RecordCount), 0)
		if !b.IsV2() && b.Compression() == format.CompressionNone {
			n = 1
		} else {
			// The records are decoded: a batch whose records do not
			// (an unknown codec, a failed decompression, a count they do
			// not fill) is a finding, as in stats and verify.
			w := walkRecords(&s.rr, &s.rec, row.Log, b)
			if w.problem != nil {
				row.Problems = append(row.Problems, *w.problem)
			}
			if !b.IsV2() {
				first, n = w.first, w.n
			}
		}
		row.Records += n
		if row.FirstOffset < 0 {
			row.FirstOffset = first
		}
		row.LastOffset = max(row.LastOffset, b.LastOffset())
		if ts := segBatchFirstTimestamp(b); ts >= 0 && (row.MinTimestamp < 0 || ts < row.MinTimestamp) {
			row.MinTimestamp = ts
		}
		row.MaxTimestamp = max(row.MaxTimestamp, b.MaxTimestamp)
	}
	t := s.sc.Tail()
	if t.Bytes > 0 && (t.Kind == format.TailShort || t.Kind == format.TailPartial) {
		// A torn last batch (or bytes that do not start one). A corrupt
		// tail was reported by the scan; a zero tail is a preallocated
		// segment.
		p := verify.TailProblem(r, t)
		p.Path = row.Log
		row.Problems = append(row.Problems, p)
	}
	row.ValidBytes = t.Pos
	row.Tail, row.TailBytes = t.Kind.String(), t.Bytes
	row.MinTime, row.MaxTime = viewISO(row.MinTimestamp), viewISO(row.MaxTimestamp)
	for c := 0; c < 8; c++ {
		if codecs&(1<<c) != 0 {
			row.Codecs = append(row.Codecs, format.Compression(c).String())
		}
	}
	return nil
}

// segBatchFirstTimestamp is the timestamp of a batch's first record as far as
// the header tells: v2 CreateTime baseTimestamp (unless it holds the delete
// horizon), else the max timestamp (LogAppendTime, v1); -1 for v0.
func segBatchFirstTimestamp(b *format.Batch) int64 {
	if b.IsV2() && b.TimestampType() == format.CreateTime && !b.HasDeleteHorizon() {
		return b.BaseTimestamp
	}
	return b.MaxTimestamp
}

func viewScanProblemKind(pe *format.PosError) verify.Kind {
	return verify.Classify(pe, verify.StageEntry)
}

// WriteSegmentsJSON writes one JSON object per segment, one per line.
func WriteSegmentsJSON(w io.Writer, p *PartitionSegments) error {
	enc := json.NewEncoder(w)
	for i := range p.Segments {
		if err := enc.Encode(&p.Segments[i]); err != nil {
			return err
		}
	}
	return nil
}

// WriteSegmentsTable writes a title line, one table row per segment, then
// one line per problem.
func WriteSegmentsTable(w io.Writer, p *PartitionSegments) error {
	title := p.Dir
	if p.Partition >= 0 {
		title += " (topic " + p.Topic + ", partition " + strconv.Itoa(int(p.Partition)) + ")"
	}
	title += ": " + viewPlural(len(p.Segments), "segment") + "\n"
	if _, err := io.WriteString(w, title); err != nil {
		return err
	}
	header := []string{"base offset", "last offset", "batches", "records", "bytes", "min timestamp", "max timestamp",
		"codecs", "index entries", "timeindex entries", "index health", "vs previous"}
	rows := make([][]string, 0, len(p.Segments))
	var problems []string
	for _, s := range p.Segments {
		rows = append(rows, []string{
			viewItoa(s.BaseOffset), segOffsetCell(s.LastOffset), viewItoa(s.Batches), viewItoa(s.Records), segSizeCell(s),
			segTimeCell(s.MinTimestamp), segTimeCell(s.MaxTimestamp), strings.Join(s.Codecs, ","),
			segEntriesCell(s.IndexEntries), segEntriesCell(s.TimeIndexEntries), s.IndexHealth, segNeighbourCell(s),
		})
		for _, pr := range s.Problems {
			l := "  " + string(pr.Kind) + ": " + filepath.Base(pr.Path) + " at position " + viewItoa(pr.Position)
			if pr.Offset >= 0 {
				l += ", offset " + viewItoa(pr.Offset)
			}
			problems = append(problems, l+": "+pr.Message+"\n")
		}
	}
	if err := dump.WriteTable(w, header, rows); err != nil {
		return err
	}
	for _, l := range problems {
		if _, err := io.WriteString(w, l); err != nil {
			return err
		}
	}
	return nil
}

// viewPlural is "1 segment" or "N segments" ("N batches").
func viewPlural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	if strings.HasSuffix(one, "ch") {
		return strconv.Itoa(n) + " " + one + "es"
	}
	return strconv.Itoa(n) + " " + one + "s"
}

func segOffsetCell(v int64) string {
	if v < 0 {
		return "-"
	}
	return viewItoa(v)
}

func segEntriesCell(v int64) string {
	if v < 0 {
		return "missing"
	}
	return viewItoa(v)
}

func segSizeCell(s SegmentRow) string {
	if s.Log == "" {
		return "no .log"
	}
	c := dump.ViewBytes(s.SizeBytes)
	if s.Tail != format.TailNone.String() {
		c += "\n" + bytesCell(s.TailBytes) + " " + s.Tail + " at end"
	}
	return c
}

func segTimeCell(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return viewISO(ms) + "\n" + viewItoa(ms)
}

func segNeighbourCell(s SegmentRow) string {
	switch {
	case s.OverlapBefore > 0:
		return "OVERLAP " + viewItoa(s.OverlapBefore) + " (" + viewItoa(s.FirstOffset) + ".." + viewItoa(s.FirstOffset+s.OverlapBefore-1) + ")"
	case s.GapBefore > 0:
		return "gap " + viewItoa(s.GapBefore) + " (" + viewItoa(s.FirstOffset-s.GapBefore) + ".." + viewItoa(s.FirstOffset-1) + ")"
	}
	return ""
}
