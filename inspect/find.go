package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// This file is `klog find`: it answers "where is offset N" or "where is the
// first record at or after time T" the way the broker does, and shows every
// step (spec §2.2, §2.3, §2.6):
//
//   - by offset: the segment with the largest base offset <= N; its .index
//     lookup (the entry with the largest offset <= N, else position 0,
//     format.OffsetIndex.Lookup); a scan from that position to the first
//     batch whose last offset is >= N (LogSegment.translateOffset); and in it
//     the first record with offset >= N. When the segment has nothing at or
//     above N the next segment is read from its start, as UnifiedLog.read
//     does.
//   - by timestamp (ListOffsets, UnifiedLog.fetchOffsetByTimestamp): the
//     first segment whose largest timestamp (its last time index entry) is
//     >= T; its .timeindex lookup (the entry with the largest timestamp <= T,
//     else the segment start); the .index lookup of that entry's offset; a
//     scan from there to the first record with timestamp >= T
//     (LogSegment.findOffsetByTimestamp, FileRecords.searchForTimestamp).
//
// It reads only what it needs: the index files whole, and the log from the
// looked-up position to the batch holding the answer. Every file is opened
// through FindOptions.Open, so tests can count the bytes read.

// ErrOffsetOutOfRange is returned (wrapped in an *OffsetOutOfRangeError) when
// an offset query lies below the first segment or at or past the log end
// offset: the broker answers such a fetch with OFFSET_OUT_OF_RANGE.
var ErrOffsetOutOfRange = errors.New("dump: offset out of range")

// OffsetOutOfRangeError is an offset query no segment can answer.
// LogEndOffset is -1 when the query was below the first segment (the log end
// was not read).
type OffsetOutOfRangeError struct {
	Offset         int64
	LogStartOffset int64
	LogEndOffset   int64
}

func (e *OffsetOutOfRangeError) Error() string {
	s := "offset " + strconv.FormatInt(e.Offset, 10) + " is out of range: the log starts at " + strconv.FormatInt(e.LogStartOffset, 10)
	if e.LogEndOffset >= 0 {
		s += " and ends at " + strconv.FormatInt(e.LogEndOffset, 10) + " (exclusive)"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrOffsetOutOfRange) true.
func (e *OffsetOutOfRangeError) Unwrap() error { return ErrOffsetOutOfRange }

// FindFile is what find reads a partition file through; *os.File satisfies
// it.
type FindFile interface {
	io.ReaderAt
	io.Closer
}

// maxFindIndexBytes bounds the index file find reads into memory: Kafka's
// segment.index.bytes defaults to 10 MiB.
const maxFindIndexBytes = 256 << 20

// FindOptions configures Find.
type FindOptions struct {
	// Open opens a .log, .index or .timeindex file and returns its size;
	// nil means os.Open. Tests inject a reader that counts bytes.
	Open func(path string) (FindFile, int64, error)
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch
	// (0: the format defaults).
	MaxBatchBytes        int
	MaxDecompressedBytes int
	// Record says how the record found is written in JSON (keys and
	// values are written only with Record.Data).
	Record ndjson.Options
}

// FindQuery is what to look for: an offset, or (ByTimestamp) the first
// record whose timestamp is >= Timestamp (epoch ms).
type FindQuery struct {
	Offset      int64
	Timestamp   int64
	ByTimestamp bool
}

// FindResult is the answer of Find, and the JSON object `klog find --json`
// writes (its tags are the schema).
type FindResult struct {
	Type string `json:"type"` // "find"
	Dir  string `json:"dir"`
	// Query is "offset" or "timestamp"; Target is the offset or the
	// timestamp (epoch ms).
	Query  string `json:"query"`
	Target int64  `json:"target"`
	// Found reports whether a record answers the query.
	Found bool `json:"found"`
	// Exact: an offset query found a record with exactly that offset
	// (otherwise the next one, after a gap or compaction).
	Exact bool `json:"exact"`
	// Lookups are the segments searched, in order; the last one holds the
	// answer when Found.
	Lookups []FindLookup `json:"lookups"`
	// Batch and Record are the answer (nil when not Found).
	Batch  *FindBatch  `json:"batch"`
	Record *FindRecord `json:"record"`
	// Problems are index entries that do not describe the log: findings.
	Problems []verify.Problem `json:"problems"`
	// LogBytesRead and IndexBytesRead count the bytes read from .log files
	// and from .index/.timeindex files.
	LogBytesRead   int64 `json:"logBytesRead"`
	IndexBytesRead int64 `json:"indexBytesRead"`
}

// FindLookup is the search in one segment.
type FindLookup struct {
	Log        string `json:"log"`
	BaseOffset int64  `json:"baseOffset"`
	SizeBytes  int64  `json:"sizeBytes"`
	// MaxTimestamp is the segment's largest timestamp as the time index
	// knows it (its last entry; -1 when it has none). Timestamp queries
	// only.
	MaxTimestamp *int64 `json:"maxTimestamp,omitempty"`
	// LargestTimestamp is what the broker compared with the target
	// (LogSegment.largestTimestamp): MaxTimestamp, or when that is -1 the
	// .log's modification time, and then ByModTime is true. Timestamp
	// queries only.
	LargestTimestamp *int64 `json:"largestTimestamp,omitempty"`
	ByModTime        bool   `json:"byModTime,omitempty"`
	// Skipped: a timestamp query passed over the segment because its
	// largest timestamp is below the target; nothing else was read.
	Skipped bool `json:"skipped,omitempty"`
	// TimeIndexEntry is the time index lookup (timestamp queries only).
	TimeIndexEntry *FindTimeEntry `json:"timeIndexEntry,omitempty"`
	// IndexEntry is the offset index lookup.
	IndexEntry FindIndexEntry `json:"indexEntry"`
	// StartPosition is where the scan started: the entry's position, or 0
	// when the entry was unusable (then Rescanned is true).
	StartPosition int64 `json:"startPosition"`
	Rescanned     bool  `json:"rescanned"`
	// BatchesScanned and BytesRead describe the scan of the .log.
	BatchesScanned int64 `json:"batchesScanned"`
	BytesRead      int64 `json:"bytesRead"`
	Found          bool  `json:"found"`
}

// FindIndexEntry is the .index entry the lookup picked. Slot is the entry
// number, -1 when no entry is <= the target (then Offset is the base offset
// and Position 0). OK reports that the entry points at the start of a batch
// whose last offset is Offset (always true for slot -1).
type FindIndexEntry struct {
	Slot     int   `json:"slot"`
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
	OK       bool  `json:"ok"`
}

// FindTimeEntry is the .timeindex entry the lookup picked; Slot -1 means no
// entry has a timestamp <= the target (Timestamp -1, Offset the base offset).
type FindTimeEntry struct {
	Slot      int    `json:"slot"`
	Timestamp int64  `json:"timestamp"`
	Time      string `json:"time"`
	Offset    int64  `json:"offset"`
}

// FindBatch describes the batch holding the answer.
type FindBatch struct {
	Position      int64  `json:"position"`
	BaseOffset    int64  `json:"baseOffset"`
	LastOffset    int64  `json:"lastOffset"`
	SizeBytes     int64  `json:"sizeBytes"`
	Magic         int8   `json:"magic"`
	RecordCount   int32  `json:"recordCount"`
	Compression   string `json:"compression"`
	TimestampType string `json:"timestampType"`
	MaxTimestamp  int64  `json:"maxTimestamp"`
	ProducerID    int64  `json:"producerId"`
	IsControl     bool   `json:"isControl"`

	batch *format.Batch
}

// MarshalJSON writes ndjson's "batch" object, the shape every command uses.
func (fb *FindBatch) MarshalJSON() ([]byte, error) {
	return ndjson.End(ndjson.BatchFields(ndjson.Begin(nil, "batch"), fb.batch)), nil
}

// MarshalJSON writes ndjson's "record" object, the shape every command
// uses, with "time", the timestamp's ISO-8601 twin.
func (fr *FindRecord) MarshalJSON() ([]byte, error) {
	l, _ := ndjson.RecordFields(ndjson.Begin(nil, "record"), fr.batch, &fr.rec, &fr.opts)
	return ndjson.End(ndjson.Str(l, "time", fr.Time)), nil
}

// FindRecord is the record found. Key and Value are the bytes as Kafka's
// tools print them (new String(bytes, UTF_8), dump.AppendJavaUTF8); nil when
// null. KeyBase64/ValueBase64 carry the exact bytes when they are not valid
// UTF-8.
type FindRecord struct {
	Offset      int64    `json:"offset"`
	Timestamp   int64    `json:"timestamp"`
	Time        string   `json:"time"`
	KeySize     int32    `json:"keySize"`
	ValueSize   int32    `json:"valueSize"`
	Key         *string  `json:"key"`
	Value       *string  `json:"value"`
	KeyBase64   []byte   `json:"keyBase64,omitempty"`
	ValueBase64 []byte   `json:"valueBase64,omitempty"`
	HeaderKeys  []string `json:"headerKeys"`

	key, value []byte // exact bytes, for the text view
	batch      *format.Batch
	rec        format.Record
	opts       ndjson.Options
}

// Find answers q over the partition directory d. The error is for I/O
// trouble and for an offset out of range (*OffsetOutOfRangeError); index
// entries that do not match the log are FindResult.Problems.
func Find(d *partition.Dir, q FindQuery, opts FindOptions) (*FindResult, error) {
	return FindContext(context.Background(), d, q, opts)
}

// FindContext is Find that stops when ctx ends (checked every 256 batches
// of a scan), with ctx's error.
func FindContext(ctx context.Context, d *partition.Dir, q FindQuery, opts FindOptions) (*FindResult, error) {
	f := &findState{ctx: ctx, opts: opts}
	if f.opts.Open == nil {
		f.opts.Open = openFindFile
	}
	f.rr.Decompressor.MaxBytes = opts.MaxDecompressedBytes
	f.res = &FindResult{Type: "find", Dir: d.Path, Problems: []verify.Problem{}, Lookups: []FindLookup{}}
	var segs []partition.Segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	var err error
	if q.ByTimestamp {
		f.res.Query, f.res.Target = "timestamp", q.Timestamp
		err = f.byTimestamp(d, q.Timestamp)
	} else {
		f.res.Query, f.res.Target = "offset", q.Offset
		err = f.byOffset(segs, q.Offset)
	}
	if err != nil {
		return nil, err
	}
	return f.res, nil
}

func openFindFile(path string) (FindFile, int64, error) {
	file, size, err := safeio.OpenSized(path)
	if err != nil {
		return nil, 0, err // not a nil *os.File in the interface
	}
	return file, size, nil
}

type findState struct {
	ctx  context.Context
	opts FindOptions
	res  *FindResult
	sc   *format.Scanner
	cur  io.ReaderAt // the log sc reads
	ps   []verify.Problem
	rr   format.RecordReader
	rec  format.Record
}

// openPartitionFile gives partition.Log find's files, counting what it
// reads from the indexes in IndexBytesRead.
func (f *findState) openPartitionFile(path string) (partition.File, error) {
	file, size, err := f.opts.Open(path)
	if err != nil {
		return nil, err
	}
	pf := &findPartitionFile{FindFile: file, size: size, name: filepath.Base(path)}
	if !strings.HasSuffix(path, partition.LogSuffix) {
		pf.counter = &f.res.IndexBytesRead
	}
	return pf, nil
}

// findPartitionFile is a FindFile as a partition.File: Stat comes from the
// file when it has one (an *os.File), else only the size is known.
type findPartitionFile struct {
	FindFile
	size    int64
	name    string
	counter *int64
}

func (p *findPartitionFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.FindFile.ReadAt(b, off)
	if p.counter != nil {
		*p.counter += int64(n)
	}
	return n, err
}

func (p *findPartitionFile) Stat() (fs.FileInfo, error) {
	if st, ok := p.FindFile.(interface{ Stat() (fs.FileInfo, error) }); ok {
		return st.Stat()
	}
	return findSizeInfo{name: p.name, size: p.size}, nil
}

// findSizeInfo is the FileInfo of a file known only by its size.
type findSizeInfo struct {
	name string
	size int64
}

func (i findSizeInfo) Name() string       { return i.name }
func (i findSizeInfo) Size() int64        { return i.size }
func (i findSizeInfo) Mode() fs.FileMode  { return 0o444 }
func (i findSizeInfo) ModTime() time.Time { return time.Time{} }
func (i findSizeInfo) IsDir() bool        { return false }
func (i findSizeInfo) Sys() any           { return nil }

// findCountingReader counts the bytes read through it.
type findCountingReader struct {
	r io.ReaderAt
	n int64
}

func (c *findCountingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// readIndexFile reads a whole index file; a missing file is (nil, false).
func (f *findState) readIndexFile(path string) ([]byte, bool, error) {
	if path == "" {
		return nil, false, nil
	}
	file, size, err := f.opts.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer file.Close()
	if size > maxFindIndexBytes {
		return nil, false, &dump.IOError{Path: path, Err: errors.New("index file of " + strconv.FormatInt(size, 10) + " bytes is over the 256 MiB limit")}
	}
	buf := make([]byte, size)
	n, err := file.ReadAt(buf, 0)
	f.res.IndexBytesRead += int64(n)
	if int64(n) < size {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, false, &dump.IOError{Path: path, Err: err}
	}
	return buf, true, nil
}

// offsetIndex loads a segment's .index, trimmed to its real entries: the
// zero tail of a preallocated active index is not part of the broker's
// in-memory entry count once the segment is recovered (spec §2.4), so the
// lookup runs over Used() entries, with format.OffsetIndex.Lookup's search.
func (f *findState) offsetIndex(s partition.Segment) (*format.OffsetIndex, error) {
	data, _, err := f.readIndexFile(s.Index)
	if err != nil {
		return nil, err
	}
	x := &format.OffsetIndex{BaseOffset: s.BaseOffset, Data: data}
	n := x.Used()
	if n == 1 && x.Entry(0) == (format.IndexEntry{Offset: s.BaseOffset}) {
		n = 0 // an all-zero index: the broker never indexes position 0
	}
	x.Data = x.Data[:n*format.OffsetIndexEntrySize]
	return x, nil
}

// findIndexLookup is OffsetIndex.Lookup plus the slot of the entry it returned.
func findIndexLookup(x *format.OffsetIndex, target int64) FindIndexEntry {
	slot := x.LookupSlot(target)
	e := x.Lookup(target)
	return FindIndexEntry{Slot: slot, Offset: e.Offset, Position: e.Pos, OK: slot < 0}
}

// findSegment is a segment log opened for one lookup.
type findSegment struct {
	file FindFile
	cr   *findCountingReader
	size int64
}

func (f *findState) openLog(s partition.Segment) (*findSegment, error) {
	file, size, err := f.opts.Open(s.Log)
	if err != nil {
		return nil, &dump.IOError{Path: s.Log, Err: err}
	}
	sr := &findSegment{file: file, cr: &findCountingReader{r: file}, size: size}
	f.cur = sr.cr
	if f.sc == nil {
		// Exact reads (no read-ahead window): find reads only the batches it
		// walks through.
		f.sc = format.NewScanner(sr.cr, size, format.ScanOptions{MaxBatchBytes: f.opts.MaxBatchBytes, ReadAhead: -1})
	} else {
		f.sc.Reset(sr.cr, size)
	}
	return sr, nil
}

func (f *findState) closeLog(sr *findSegment, lk *FindLookup) {
	sr.file.Close()
	lk.BytesRead = sr.cr.n
	f.res.LogBytesRead += sr.cr.n
	f.res.Lookups = append(f.res.Lookups, *lk)
}

func (f *findState) problem(path string, kind verify.Kind, pos, offset int64, msg string) {
	f.res.Problems = append(f.res.Problems, verify.Problem{Path: path, Kind: kind, Position: pos, Offset: offset, Message: msg})
}

// startAt positions the scanner at the index entry and checks the entry:
// it must point at the start of a batch whose last offset is the entry's
// offset. A bad entry is a finding and the scan restarts at the segment
// start, so the answer is still the log's truth. It returns the first batch
// (nil at the end of the data).
func (f *findState) startAt(s partition.Segment, size int64, lk *FindLookup) (*format.Batch, error) {
	e := &lk.IndexEntry
	at := int64(e.Slot) * format.OffsetIndexEntrySize
	lk.StartPosition = 0
	if e.Slot >= 0 {
		if e.Position < 0 || e.Position >= size {
			f.problem(s.Index, verify.KindIndexMismatch, at, e.Offset, "entry "+strconv.Itoa(e.Slot)+" (offset "+
				viewItoa(e.Offset)+") points at position "+viewItoa(e.Position)+", outside the log of "+viewItoa(size)+" bytes")
		} else {
			f.sc.SetPos(e.Position)
			n := len(f.res.Problems)
			b, err := f.next(lk)
			if err != nil || b == nil || b.LastOffset() != e.Offset {
				// What the walk met where a bad entry points is not the
				// log's: the entry is the finding, and the log is read
				// again from its start.
				f.res.Problems = f.res.Problems[:n]
			}
			switch {
			case err != nil || b == nil:
				f.problem(s.Index, verify.KindIndexMismatch, at, e.Offset, "entry "+strconv.Itoa(e.Slot)+" (offset "+
					viewItoa(e.Offset)+") points at position "+viewItoa(e.Position)+", where no batch can be read")
			case b.LastOffset() != e.Offset:
				f.problem(s.Index, verify.KindIndexMismatch, at, e.Offset, "entry "+strconv.Itoa(e.Slot)+" (offset "+
					viewItoa(e.Offset)+") points at position "+viewItoa(e.Position)+", whose batch's last offset is "+viewItoa(b.LastOffset()))
			default:
				e.OK = true
				lk.StartPosition = e.Position
				return b, nil
			}
		}
		lk.Rescanned = true
	}
	f.sc.SetPos(0)
	return f.next(lk)
}

// next returns the next batch, nil at the end of the readable data. Data
// the scanner rejects is skipped when it can resynchronise; otherwise the
// segment ends there.
func (f *findState) next(lk *FindLookup) (*format.Batch, error) {
	for {
		if lk.BatchesScanned&255 == 255 {
			if err := f.ctx.Err(); err != nil {
				return nil, err
			}
		}
		b, err := f.sc.Next()
		if err == nil {
			lk.BatchesScanned++
			f.ps = verify.BatchProblems(f.ps[:0], b)
			for _, p := range f.ps {
				p.Path = lk.Log
				f.res.Problems = append(f.res.Problems, p)
			}
			return b, nil
		}
		if errors.Is(err, io.EOF) {
			if t := f.sc.Tail(); t.Bytes > 0 && (t.Kind == format.TailShort || t.Kind == format.TailPartial) {
				// The walk reached a torn last batch.
				p := verify.TailProblem(f.cur, t)
				p.Path = lk.Log
				f.res.Problems = append(f.res.Problems, p)
			}
			return nil, nil
		}
		var pe *format.PosError
		if !errors.As(err, &pe) {
			return nil, &dump.IOError{Path: lk.Log, Err: err} // a read error
		}
		if !f.sc.Done() || f.sc.Tail().Kind != format.TailZeros {
			// Data the scan rejects on the way (a zero tail is a
			// preallocated segment).
			f.problem(lk.Log, verify.Classify(pe, verify.StageEntry), pe.Pos, pe.Offset, pe.Error())
		}
		if f.sc.Done() {
			return nil, nil
		}
	}
}

// firstRecord reports whether b holds a record at or above minOffset with
// a timestamp >= minTS, leaving the first such record in f.rec (valid until
// the next call). Records that cannot be decoded are a finding.
func (f *findState) firstRecord(s partition.Segment, b *format.Batch, minOffset, minTS int64) bool {
	if err := f.rr.Reset(b); err != nil {
		f.problem(s.Log, verify.KindRecordDecode, b.Pos, b.BaseOffset, err.Error())
		return false
	}
	for {
		err := f.rr.Next(&f.rec)
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			f.problem(s.Log, verify.KindRecordDecode, b.Pos, b.BaseOffset, err.Error())
			return false
		}
		if f.rec.Offset >= minOffset && f.rec.Timestamp >= minTS {
			return true
		}
	}
}

func (f *findState) found(lk *FindLookup, b *format.Batch) {
	lk.Found = true
	f.res.Found = true
	f.res.Batch = &FindBatch{batch: b.Clone(),
		Position: b.Pos, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(), SizeBytes: b.Size(),
		Magic: b.Magic, RecordCount: b.RecordCount, Compression: b.Compression().String(),
		TimestampType: b.TimestampType().String(), MaxTimestamp: b.MaxTimestamp, ProducerID: b.ProducerID, IsControl: b.IsControl(),
	}
	r := &f.rec
	fr := &FindRecord{Offset: r.Offset, Timestamp: r.Timestamp, Time: viewISO(r.Timestamp), KeySize: r.KeySize, ValueSize: r.ValueSize,
		HeaderKeys: []string{}, key: findCloneBytes(r.Key), value: findCloneBytes(r.Value),
		batch: f.res.Batch.batch, rec: *r, opts: f.opts.Record}
	fr.rec.Key, fr.rec.Value = fr.key, fr.value
	fr.rec.Headers = make([]format.Header, len(r.Headers))
	for i, h := range r.Headers {
		fr.rec.Headers[i] = format.Header{Key: findCloneBytes(h.Key), Value: findCloneBytes(h.Value)}
	}
	fr.Key, fr.KeyBase64 = findJavaText(fr.key)
	fr.Value, fr.ValueBase64 = findJavaText(fr.value)
	for _, h := range r.Headers {
		fr.HeaderKeys = append(fr.HeaderKeys, string(format.AppendJavaUTF8(nil, h.Key)))
	}
	f.res.Record = fr
}

func findCloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// findJavaText renders bytes as Kafka's tools print them, plus the exact bytes
// when they are not valid UTF-8.
func findJavaText(b []byte) (*string, []byte) {
	if b == nil {
		return nil, nil
	}
	s := string(format.AppendJavaUTF8(nil, b))
	if s != string(b) {
		return &s, b
	}
	return &s, nil
}

// byOffset: the floor segment, then later ones while the target is above
// everything read.
func (f *findState) byOffset(segs []partition.Segment, target int64) error {
	if len(segs) == 0 || target < segs[0].BaseOffset {
		start := int64(0)
		if len(segs) > 0 {
			start = segs[0].BaseOffset
		}
		return &OffsetOutOfRangeError{Offset: target, LogStartOffset: start, LogEndOffset: -1}
	}
	first := 0
	for i, s := range segs {
		if s.BaseOffset <= target {
			first = i
		}
	}
	leo := segs[first].BaseOffset
	for _, s := range segs[first:] {
		x, err := f.offsetIndex(s)
		if err != nil {
			return err
		}
		sr, err := f.openLog(s)
		if err != nil {
			return err
		}
		lk := FindLookup{Log: s.Log, BaseOffset: s.BaseOffset, SizeBytes: sr.size, IndexEntry: findIndexLookup(x, target)}
		done, err := f.scanOffset(s, &lk, target, &leo)
		f.closeLog(sr, &lk)
		if err != nil || done {
			return err
		}
	}
	return &OffsetOutOfRangeError{Offset: target, LogStartOffset: segs[0].BaseOffset, LogEndOffset: max(leo, segs[len(segs)-1].BaseOffset)}
}

// scanOffset scans one segment for the first record with offset >= target
// (in the first batch whose last offset is >= target, or a later one when
// compaction emptied it).
func (f *findState) scanOffset(s partition.Segment, lk *FindLookup, target int64, leo *int64) (bool, error) {
	b, err := f.startAt(s, lk.SizeBytes, lk)
	for ; err == nil && b != nil; b, err = f.next(lk) {
		*leo = max(*leo, b.NextOffset())
		if b.LastOffset() < target {
			continue
		}
		if f.firstRecord(s, b, target, -1<<63) {
			f.found(lk, b)
			f.res.Exact = f.rec.Offset == target
			return true, nil
		}
	}
	return false, err
}

// byTimestamp searches as ListOffsets does, through partition.Log (the
// lookup home fetch and `klog offsets` use, with the indexes as found): the
// first segment whose largest timestamp (its last time index entry, or the
// .log's modification time when the time index has none) is >= target is
// the only one searched; earlier segments are skipped on that alone.
func (f *findState) byTimestamp(d *partition.Dir, target int64) error {
	l, err := partition.OpenLog(d.Path, partition.LogOptions{Listing: d, MaxBatchBytes: f.opts.MaxBatchBytes,
		MaxDecompressedBytes: f.opts.MaxDecompressedBytes, Open: f.openPartitionFile})
	if err != nil {
		return err
	}
	startOffset := l.LogStartOffset()
	for i, ls := range l.Segments() {
		s := ls.Segment
		segMax := ls.MaxTimestamp
		largest, byMod := ls.LargestTimestamp()
		lk := FindLookup{Log: s.Log, BaseOffset: s.BaseOffset, MaxTimestamp: &segMax, LargestTimestamp: &largest, ByModTime: byMod}
		if largest < target {
			lk.Skipped = true
			lk.IndexEntry = FindIndexEntry{Slot: -1, Offset: s.BaseOffset}
			f.res.Lookups = append(f.res.Lookups, lk)
			continue
		}
		tl, err := l.LookupTime(i, target, startOffset)
		if err != nil {
			return err
		}
		te := FindTimeEntry{Slot: tl.TimeSlot, Timestamp: tl.TimeEntry.Timestamp, Offset: tl.TimeEntry.Offset}
		if te.Slot >= 0 {
			te.Time = viewISO(te.Timestamp)
		}
		lk.TimeIndexEntry = &te
		lk.IndexEntry = FindIndexEntry{Slot: tl.IndexSlot, Offset: tl.Entry.Offset, Position: tl.Entry.Pos, OK: tl.IndexSlot < 0}
		sr, err := f.openLog(s)
		if err != nil {
			return err
		}
		lk.SizeBytes = sr.size
		done, err := f.scanTimestamp(s, &lk, target, startOffset)
		f.closeLog(sr, &lk)
		if err != nil || done {
			return err
		}
		if !byMod {
			f.problem(s.TimeIndex, verify.KindTimeIndexMismatch, int64(ls.TimeIndexEntries-1)*format.TimeIndexEntrySize, -1,
				"the time index's largest timestamp "+viewItoa(segMax)+" is >= "+viewItoa(target)+
					" but no record in the segment has such a timestamp (the broker answers none here)")
		}
		return nil
	}
	return nil
}

// scanTimestamp scans one segment from the looked-up position for the first
// record with timestamp >= target, checking the time index entry on the way.
func (f *findState) scanTimestamp(s partition.Segment, lk *FindLookup, target, startOffset int64) (bool, error) {
	te := lk.TimeIndexEntry
	checked := te.Slot < 0
	b, err := f.startAt(s, lk.SizeBytes, lk)
	for ; err == nil && b != nil; b, err = f.next(lk) {
		if !checked && b.LastOffset() >= te.Offset {
			checked = true
			at := int64(te.Slot) * format.TimeIndexEntrySize
			switch {
			case b.LastOffset() != te.Offset:
				f.problem(s.TimeIndex, verify.KindTimeIndexMismatch, at, te.Offset, "entry "+strconv.Itoa(te.Slot)+
					" names offset "+viewItoa(te.Offset)+", which is not the last offset of a batch (the batch holding it ends at "+viewItoa(b.LastOffset())+")")
			case b.MaxTimestamp != te.Timestamp:
				f.problem(s.TimeIndex, verify.KindTimeIndexMismatch, at, te.Offset, "entry "+strconv.Itoa(te.Slot)+
					" has timestamp "+viewItoa(te.Timestamp)+" but its batch's max timestamp is "+viewItoa(b.MaxTimestamp))
			}
		}
		if b.MaxTimestamp < target {
			continue
		}
		if f.firstRecord(s, b, startOffset, target) {
			f.found(lk, b)
			return true, nil
		}
	}
	return false, err
}

func viewItoa(v int64) string { return strconv.FormatInt(v, 10) }

// WriteFindJSON writes r as one JSON object on one line.
func WriteFindJSON(w io.Writer, r *FindResult) error {
	return json.NewEncoder(w).Encode(r)
}

// WriteFindTable writes r for people: one row per step. Keys and values
// longer than maxData bytes are cut (0: no limit).
func WriteFindTable(w io.Writer, r *FindResult, maxData int) error {
	var rows [][]string
	add := func(k, v string) { rows = append(rows, []string{k, v}) }
	if r.Query == "timestamp" {
		add("query", "first record with timestamp >= "+viewISO(r.Target)+" ("+viewItoa(r.Target)+")")
	} else {
		add("query", "offset "+viewItoa(r.Target))
	}
	for _, lk := range r.Lookups {
		seg := lk.Log + "\nbase offset " + viewItoa(lk.BaseOffset)
		if !lk.Skipped {
			seg += ", " + viewItoa(lk.SizeBytes) + " bytes"
		}
		add("segment", seg)
		largest := ""
		if lk.LargestTimestamp != nil {
			largest = viewTimeText(*lk.LargestTimestamp)
			if lk.ByModTime {
				largest += ", the .log's modification time (the time index has no entry)"
			}
		}
		if lk.Skipped {
			add("  skipped", "largest timestamp "+largest+" < target")
			continue
		}
		if lk.LargestTimestamp != nil {
			add("  largest timestamp", largest)
		}
		if te := lk.TimeIndexEntry; te != nil {
			if te.Slot < 0 {
				add("  .timeindex", "no entry <= target: segment start (offset "+viewItoa(te.Offset)+")")
			} else {
				add("  .timeindex", "entry "+strconv.Itoa(te.Slot)+": timestamp "+viewTimeText(te.Timestamp)+" -> offset "+viewItoa(te.Offset))
			}
		}
		e := lk.IndexEntry
		if e.Slot < 0 {
			add("  .index", "no entry <= target: position 0")
		} else {
			v := "entry " + strconv.Itoa(e.Slot) + ": offset " + viewItoa(e.Offset) + " -> position " + viewItoa(e.Position)
			if e.OK {
				v += " (ok)"
			} else {
				v += " (BAD: not the start of the batch ending at that offset)"
			}
			add("  .index", v)
		}
		scan := "from position " + viewItoa(lk.StartPosition)
		if lk.Rescanned {
			scan += " (segment start: the index entry is unusable)"
		}
		scan += ": " + viewPlural(int(lk.BatchesScanned), "batch") + ", " + bytesOf(lk.BytesRead) + " read"
		if !lk.Found {
			scan += ", nothing here"
		}
		add("  scan", scan)
	}
	if b := r.Batch; b != nil {
		add("batch", "position "+viewItoa(b.Position)+", offsets "+viewItoa(b.BaseOffset)+".."+viewItoa(b.LastOffset)+
			", "+bytesOf(b.SizeBytes)+", magic "+strconv.Itoa(int(b.Magic))+", "+b.Compression)
	}
	if rec := r.Record; rec != nil {
		v := "offset " + viewItoa(rec.Offset)
		if r.Query == "offset" && !r.Exact {
			v += " (the next one: offset " + viewItoa(r.Target) + " is absent)"
		}
		add("record", v)
		add("timestamp", viewTimeText(rec.Timestamp))
		add("key", findDataText(rec.key, rec.KeySize, maxData))
		add("value", findDataText(rec.value, rec.ValueSize, maxData))
		if len(rec.HeaderKeys) > 0 {
			add("header keys", strings.Join(rec.HeaderKeys, ", "))
		}
	} else {
		add("record", "none")
	}
	add("bytes read", bytesCell(r.LogBytesRead)+" of logs, "+bytesCell(r.IndexBytesRead)+" of indexes")
	for _, p := range r.Problems {
		add("PROBLEM", string(p.Kind)+" in "+p.Path+" at position "+viewItoa(p.Position)+": "+p.Message)
	}
	return dump.WriteTable(w, []string{"step", "result"}, rows)
}

func viewTimeText(ms int64) string {
	if ms < 0 {
		return viewItoa(ms)
	}
	return viewISO(ms) + " (" + viewItoa(ms) + ")"
}

func findDataText(b []byte, size int32, maxData int) string {
	if b == nil {
		return "null"
	}
	s := strconv.Itoa(int(size)) + " bytes: "
	cut := b
	if maxData > 0 && len(cut) > maxData {
		cut = cut[:maxData]
	}
	s += string(format.AppendJavaUTF8(nil, cut))
	if len(cut) < len(b) {
		s += " … (" + strconv.Itoa(len(b)-len(cut)) + " more bytes)"
	}
	return s
}
