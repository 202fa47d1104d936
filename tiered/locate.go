package tiered

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/objstore"
	"github.com/klog-dev/klog/partition"
)

// Tiers is one partition across both tiers: its remote segments (the
// listing and the metadata) and its local tail.
type Tiers struct {
	Remote  *Remote
	Objects *PartitionObjects
	Lineage *PartitionLineage
	Local   *Local
	// MaxBatchBytes bounds one batch read (0: the scanner's default).
	MaxBatchBytes int
}

// Position is where an offset or a timestamp was found.
type Position struct {
	Tier      string `json:"tier"` // "remote" or "local"
	Partition string `json:"partition"`
	SegmentID string `json:"segmentId,omitempty"`
	// Key is the remote .log's object key, or the local .log's path.
	Key         string `json:"key"`
	StartOffset int64  `json:"segmentStartOffset"`
	// Pos is the byte position of the batch in the (original) .log.
	Pos             int64 `json:"position"`
	BatchBaseOffset int64 `json:"baseOffset"`
	BatchLastOffset int64 `json:"lastOffset"`
	// Offset is the offset found (for a timestamp: the first record at
	// or after it), Timestamp that record's timestamp.
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"`
}

// ErrNotFound is a lookup with no answer in either tier.
var ErrNotFound = errors.New("not in either tier")

// remoteSegment is a segment the remote tier serves, with its offsets.
type remoteSegment struct {
	seg        *Segment
	start, end int64
	maxTs      int64
	meta       *SegmentMetadata
}

// segments are the remote segments in offset order: the finished ones the
// leader-epoch chains serve when there is metadata, else every stored one
// (with the end taken from the next one's start).
func (t *Tiers) segments() []remoteSegment {
	var out []remoteSegment
	stored := map[Uuid]*Segment{}
	if t.Objects != nil {
		for _, s := range t.Objects.Segments {
			stored[s.SegmentID] = s
		}
	}
	if t.Lineage != nil {
		for _, m := range t.Lineage.Sorted() {
			if m.State != CopySegmentFinished {
				continue
			}
			seg := stored[m.ID]
			if seg == nil {
				continue
			}
			out = append(out, remoteSegment{seg: seg, start: m.StartOffset, end: m.EndOffset, maxTs: m.MaxTimestampMs, meta: m})
		}
		// Of segments holding the same offsets, keep those the chains
		// serve.
		kept := out[:0]
		for i, s := range out {
			if t.Lineage.Referenced(s.meta.ID) || !overlapsAny(out, i) {
				kept = append(kept, s)
			}
		}
		return kept
	}
	if t.Objects == nil {
		return nil
	}
	for i, s := range t.Objects.Segments {
		if !s.Has(SuffixLog) {
			continue
		}
		end := int64(1<<63 - 1)
		if i+1 < len(t.Objects.Segments) {
			end = t.Objects.Segments[i+1].StartOffset - 1
		}
		out = append(out, remoteSegment{seg: s, start: s.StartOffset, end: end, maxTs: -1})
	}
	return out
}

func overlapsAny(ss []remoteSegment, i int) bool {
	for j, o := range ss {
		if j != i && o.start <= ss[i].end && ss[i].start <= o.end {
			return true
		}
	}
	return false
}

// localFrom is the offset from which the local tail answers (-1: no tail).
func (t *Tiers) localFrom() int64 {
	if t.Local == nil || len(t.Local.Logs) == 0 {
		return -1
	}
	return t.Local.StartOffset
}

// FindOffset is where offset is: in the local log when it holds it, else
// in the remote segment that holds it (as a broker with tiered storage
// serves a fetch below its local log start).
func (t *Tiers) FindOffset(ctx context.Context, offset int64) (Position, error) {
	if lf := t.localFrom(); lf >= 0 && offset >= lf {
		return t.findLocal(ctx, offset)
	}
	for _, s := range t.segments() {
		if offset < s.start || offset > s.end {
			continue
		}
		p, ok, err := t.findInSegment(ctx, s, offset)
		if err != nil || ok {
			return p, err
		}
	}
	if lf := t.localFrom(); lf >= 0 {
		// Below the local start and in no remote segment: the first
		// local batch answers, as the broker's fetch does not.
		return Position{}, ErrNotFound
	}
	return Position{}, ErrNotFound
}

func (t *Tiers) findInSegment(ctx context.Context, s remoteSegment, offset int64) (Position, bool, error) {
	var m *Manifest
	var err error
	if s.seg.Layout == LayoutAiven {
		if m, err = t.Remote.ReadManifest(ctx, s.seg.Key(SuffixManifest)); err != nil {
			return Position{}, false, err
		}
	}
	var idx *format.OffsetIndex
	if data, err := t.Remote.ReadIndex(ctx, s.seg, m, IndexOffset); err == nil {
		idx = &format.OffsetIndex{BaseOffset: s.start, Data: data}
	}
	lr, err := t.Remote.OpenLog(ctx, s.seg, m)
	if err != nil {
		return Position{}, false, err
	}
	defer lr.Close()
	bp, ok, err := partition.TranslateOffset(lr, lr.Size(), idx, offset, 0)
	if err != nil || !ok {
		return Position{}, false, err
	}
	b, err := readBatch(lr, bp.Pos, bp.Size)
	if err != nil {
		return Position{}, false, err
	}
	return Position{Tier: "remote", Partition: t.partition(), SegmentID: s.seg.SegmentID.String(), Key: s.seg.Key(SuffixLog), StartOffset: s.start,
		Pos: bp.Pos, BatchBaseOffset: b.BaseOffset, BatchLastOffset: b.LastOffset(), Offset: max(offset, b.BaseOffset), Timestamp: recordTimestamp(b, offset)}, true, nil
}

// recordTimestamp is the timestamp of the first record of b at or after
// offset, as Position promises; the batch's largest when none decodes.
func recordTimestamp(b *format.Batch, offset int64) int64 {
	var rr format.RecordReader
	for r, err := range rr.Records(b) {
		if err != nil {
			break
		}
		if r.Offset >= offset {
			return r.Timestamp
		}
	}
	return b.MaxTimestamp
}

func readBatch(r io.ReaderAt, pos, size int64) (*format.Batch, error) {
	if size > 1<<30 {
		return nil, errors.New("a batch over 1 GiB")
	}
	buf := make([]byte, size)
	if _, err := r.ReadAt(buf, pos); err != nil && err != io.EOF {
		return nil, err
	}
	return format.ParseBatch(buf, pos)
}

func (t *Tiers) partition() string {
	switch {
	case t.Objects != nil:
		return t.Objects.Partition.String()
	case t.Lineage != nil:
		return t.Lineage.Partition.String()
	}
	return ""
}

func (t *Tiers) findLocal(ctx context.Context, offset int64) (Position, error) {
	for i, path := range t.Local.Logs {
		base := baseOf(path)
		if i+1 < len(t.Local.Logs) && offset >= baseOf(t.Local.Logs[i+1]) {
			continue
		}
		f, size, err := safeio.OpenSized(path)
		if err != nil {
			return Position{}, err
		}
		var idx *format.OffsetIndex
		if data, err := os.ReadFile(strings.TrimSuffix(path, ".log") + ".index"); err == nil {
			idx = &format.OffsetIndex{BaseOffset: base, Data: data}
		}
		bp, ok, err := partition.TranslateOffset(f, size, idx, offset, 0)
		if err != nil || !ok {
			f.Close()
			if err != nil {
				return Position{}, err
			}
			continue
		}
		b, err := readBatch(f, bp.Pos, bp.Size)
		f.Close()
		if err != nil {
			return Position{}, err
		}
		return Position{Tier: "local", Partition: t.partition(), Key: path, StartOffset: base, Pos: bp.Pos,
			BatchBaseOffset: b.BaseOffset, BatchLastOffset: b.LastOffset(), Offset: max(offset, b.BaseOffset), Timestamp: recordTimestamp(b, offset)}, nil
	}
	return Position{}, ErrNotFound
}

func baseOf(path string) int64 {
	off, _, _ := partition.ParseFileName(filepath.Base(path))
	return off
}

// FindTimestamp is the first record whose timestamp is at or after ts:
// the remote segments first, in offset order, skipping those whose
// maxTimestampMs is below ts (RemoteLogManager.findOffsetByTimestamp),
// then the local log.
func (t *Tiers) FindTimestamp(ctx context.Context, ts int64) (Position, error) {
	for _, s := range t.segments() {
		if s.maxTs >= 0 && s.maxTs < ts {
			continue
		}
		if lf := t.localFrom(); lf >= 0 && s.start >= lf {
			break
		}
		var found *Position
		err := t.segmentRecords(ctx, s, -1, func(b *format.Batch, r *format.Record) bool {
			if r.Timestamp >= ts {
				found = &Position{Tier: "remote", Partition: t.partition(), SegmentID: s.seg.SegmentID.String(), Key: s.seg.Key(SuffixLog), StartOffset: s.start,
					Pos: b.Pos, BatchBaseOffset: b.BaseOffset, BatchLastOffset: b.LastOffset(), Offset: r.Offset, Timestamp: r.Timestamp}
				return false
			}
			return true
		})
		if err != nil {
			return Position{}, err
		}
		if found != nil {
			return *found, nil
		}
	}
	if t.localFrom() < 0 {
		return Position{}, ErrNotFound
	}
	var found *Position
	err := t.localRecords(ctx, -1, func(path string, b *format.Batch, r *format.Record) bool {
		if r.Timestamp >= ts {
			found = &Position{Tier: "local", Partition: t.partition(), Key: path, StartOffset: baseOf(path), Pos: b.Pos,
				BatchBaseOffset: b.BaseOffset, BatchLastOffset: b.LastOffset(), Offset: r.Offset, Timestamp: r.Timestamp}
			return false
		}
		return true
	})
	if err != nil {
		return Position{}, err
	}
	if found == nil {
		return Position{}, ErrNotFound
	}
	return *found, nil
}

// Record is one record read across the tiers.
type Record struct {
	Tier string
	// Key is the remote .log's key or the local .log's path.
	Key    string
	Batch  *format.Batch
	Record *format.Record
}

// Records calls fn with every record at or after from, the remote
// segments first (below the local log start), then the local log, until
// fn returns false. The batch and record are valid during the call.
func (t *Tiers) Records(ctx context.Context, from int64, fn func(Record) bool) error {
	lf := t.localFrom()
	next := from
	stop := false
	for _, s := range t.segments() {
		if s.end < next || lf >= 0 && s.start >= lf {
			continue
		}
		err := t.segmentRecords(ctx, s, next, func(b *format.Batch, r *format.Record) bool {
			if r.Offset < next || lf >= 0 && r.Offset >= lf {
				return r.Offset < next // past the local start: the local log goes on
			}
			next = r.Offset + 1
			if !fn(Record{Tier: "remote", Key: s.seg.Key(SuffixLog), Batch: b, Record: r}) {
				stop = true
				return false
			}
			return true
		})
		if err != nil || stop {
			return err
		}
	}
	if lf < 0 {
		return nil
	}
	return t.localRecords(ctx, next, func(path string, b *format.Batch, r *format.Record) bool {
		if r.Offset < next {
			return true
		}
		return fn(Record{Tier: "local", Key: path, Batch: b, Record: r})
	})
}

// segmentRecords walks the records of one remote segment from offset from
// (-1: the start), seeking through its offset index.
func (t *Tiers) segmentRecords(ctx context.Context, s remoteSegment, from int64, fn func(*format.Batch, *format.Record) bool) error {
	var m *Manifest
	var err error
	if s.seg.Layout == LayoutAiven {
		if m, err = t.Remote.ReadManifest(ctx, s.seg.Key(SuffixManifest)); err != nil {
			return err
		}
	}
	lr, err := t.Remote.OpenLog(ctx, s.seg, m)
	if err != nil {
		return err
	}
	defer lr.Close()
	start := int64(0)
	if from > s.start {
		if data, err := t.Remote.ReadIndex(ctx, s.seg, m, IndexOffset); err == nil {
			idx := format.OffsetIndex{BaseOffset: s.start, Data: data}
			if e := idx.Lookup(from); e.Pos > 0 && e.Pos < lr.Size() {
				start = e.Pos
			}
		}
	}
	return walkRecords(ctx, lr, lr.Size(), start, t.MaxBatchBytes, fn)
}

func (t *Tiers) localRecords(ctx context.Context, from int64, fn func(string, *format.Batch, *format.Record) bool) error {
	logs := append([]string(nil), t.Local.Logs...)
	sort.Slice(logs, func(i, j int) bool { return baseOf(logs[i]) < baseOf(logs[j]) })
	for i, path := range logs {
		if i+1 < len(logs) && from >= baseOf(logs[i+1]) {
			continue
		}
		f, size, err := safeio.OpenSized(path)
		if err != nil {
			return err
		}
		stop := false
		err = walkRecords(ctx, f, size, 0, t.MaxBatchBytes, func(b *format.Batch, r *format.Record) bool {
			if !fn(path, b, r) {
				stop = true
				return false
			}
			return true
		})
		f.Close()
		if err != nil || stop {
			return err
		}
	}
	return nil
}

func walkRecords(ctx context.Context, r io.ReaderAt, size, start int64, maxBatch int, fn func(*format.Batch, *format.Record) bool) error {
	sc := format.NewScanner(r, size, format.ScanOptions{MaxBatchBytes: maxBatch})
	sc.SetPos(start)
	var rr format.RecordReader
	for b, err := range sc.All() {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if b.IsControl() {
			continue
		}
		for rec, err := range rr.Records(b) {
			if err != nil {
				return err
			}
			if !fn(b, rec) {
				return nil
			}
		}
	}
	return nil
}

// OpenFile opens one file of a remote segment under Kafka's name for it
// (<20-digit offset>.log, .index, .timeindex, .snapshot, .txnindex, or
// leader-epoch-checkpoint), for a reader of Kafka files (dump's Open).
func (r *Remote) OpenFile(ctx context.Context, seg *Segment, m *Manifest, name string) (*File, error) {
	base := filepath.Base(name)
	if base == "leader-epoch-checkpoint" {
		return r.indexFile(ctx, seg, m, IndexLeaderEpoch)
	}
	ext := filepath.Ext(base)
	switch ext {
	case SuffixLog:
		if seg.Layout == LayoutKafka && !seg.Has(SuffixLog) || seg.Layout == LayoutAiven && !seg.Has(SuffixManifest) {
			return nil, objstore.ErrNotExist
		}
		lr, err := r.OpenLog(ctx, seg, m)
		if err != nil {
			return nil, err
		}
		return &File{ReaderAt: lr, size: lr.Size(), close: lr.Close}, nil
	case SuffixIndex:
		return r.indexFile(ctx, seg, m, IndexOffset)
	case SuffixTimeIndex:
		return r.indexFile(ctx, seg, m, IndexTimestamp)
	case SuffixSnapshot:
		return r.indexFile(ctx, seg, m, IndexProducer)
	case SuffixTxnIndex:
		return r.indexFile(ctx, seg, m, IndexTransaction)
	}
	return nil, objstore.ErrNotExist
}

func (r *Remote) indexFile(ctx context.Context, seg *Segment, m *Manifest, ix Index) (*File, error) {
	data, err := r.ReadIndex(ctx, seg, m, ix)
	if err != nil {
		return nil, err
	}
	return &File{ReaderAt: strings.NewReader(string(data)), size: int64(len(data)), close: func() error { return nil }}, nil
}

// File is an open file of a remote segment.
type File struct {
	io.ReaderAt
	size  int64
	close func() error
}

// Size is the file's size.
func (f *File) Size() int64 { return f.size }

// Close releases the file.
func (f *File) Close() error { return f.close() }

// Partition is the partition's name ("topic-N").
func (t *Tiers) Partition() string { return t.partition() }

// SegmentOf finds the segment object key belongs to (listing the objects
// beside it) and the Kafka file names that print it: the file the key
// is, or for Aiven's .indexes every index it holds.
func SegmentOf(ctx context.Context, r *Remote, key string) (*Segment, []string, error) {
	n, ok := ParseKey(key)
	if !ok {
		return nil, nil, errors.New(key + ": not an object key of a remote segment (<...>/<offset>-<segment id>.<suffix> of LocalTieredStorage or the Aiven plugin)")
	}
	seg := &Segment{Name: n, Objects: map[string]objstore.Object{}}
	seg.Suffix = ""
	err := r.Store.List(ctx, n.Base+".", func(o objstore.Object) error {
		if m, ok := ParseKey(o.Key); ok && m.Base == n.Base {
			seg.Objects[m.Suffix] = o
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !seg.Has(n.Suffix) {
		return nil, nil, errors.New(r.Store.Location(key) + ": no such object")
	}
	name := FilenamePrefix(n.StartOffset)
	switch n.Suffix {
	case SuffixEpochCheckpoint:
		return seg, []string{"leader-epoch-checkpoint"}, nil
	case SuffixIndexes:
		files := []string{name + SuffixIndex, name + SuffixTimeIndex, name + SuffixSnapshot}
		if m, err := r.ReadManifest(ctx, seg.Key(SuffixManifest)); err == nil && m.Indexes.Transaction != nil {
			files = append(files, name+SuffixTxnIndex)
		}
		return seg, append(files, "leader-epoch-checkpoint"), nil
	case SuffixManifest:
		return seg, []string{name + SuffixLog}, nil
	}
	return seg, []string{name + n.Suffix}, nil
}

// RemoteStart is the first offset the remote tier serves (the start of the
// first finished segment), or -1.
func (t *Tiers) RemoteStart() int64 {
	ss := t.segments()
	if len(ss) == 0 {
		return -1
	}
	return ss[0].start
}

// EpochAt is the leader epoch of offset in the remote segment that holds
// it (its segmentLeaderEpochs), or -1.
func (t *Tiers) EpochAt(offset int64) int32 {
	for _, s := range t.segments() {
		if s.meta == nil || offset < s.start || offset > s.end {
			continue
		}
		e := int32(-1)
		for _, es := range s.meta.LeaderEpochs {
			if es.Offset <= offset {
				e = es.Epoch
			}
		}
		return e
	}
	return -1
}

// ReadRemote reads whole batches of the remote segment holding offset,
// from the batch that holds it, up to maxBytes (the first batch whole
// even when it is larger, unless minOne is false), as a broker answers a
// fetch below its local log start (RemoteLogManager.read: one segment per
// fetch). ok is false when no remote segment holds offset.
func (t *Tiers) ReadRemote(ctx context.Context, offset int64, maxBytes int, minOne bool) (data []byte, ok bool, err error) {
	for _, s := range t.segments() {
		if offset < s.start || offset > s.end {
			continue
		}
		p, found, err := t.findInSegment(ctx, s, offset)
		if err != nil || !found {
			return nil, false, err
		}
		var m *Manifest
		if s.seg.Layout == LayoutAiven {
			if m, err = t.Remote.ReadManifest(ctx, s.seg.Key(SuffixManifest)); err != nil {
				return nil, false, err
			}
		}
		lr, err := t.Remote.OpenLog(ctx, s.seg, m)
		if err != nil {
			return nil, false, err
		}
		defer lr.Close()
		sc := format.NewScanner(lr, lr.Size(), format.ScanOptions{MaxBatchBytes: t.MaxBatchBytes, HeadersOnly: true})
		sc.SetPos(p.Pos)
		end := p.Pos
		for b, err := range sc.All() {
			if err != nil {
				break
			}
			if end+b.Size()-p.Pos > int64(maxBytes) && (end > p.Pos || !minOne) {
				break
			}
			end = b.Pos + b.Size()
		}
		if end == p.Pos {
			return nil, true, nil
		}
		buf := make([]byte, end-p.Pos)
		if n, err := lr.ReadAt(buf, p.Pos); n < len(buf) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, true, err
		}
		return buf, true, nil
	}
	return nil, false, nil
}
