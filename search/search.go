// Package search finds records across the partitions of log directories:
// by key (exact bytes) and by --where expressions (package filter), within
// an offset or time range, every partition in parallel.
//
// What cannot match is skipped without being decoded: the range's start is
// found through the partition's offset and time indexes (the broker's
// lookups: LocalLog.read's translateOffset, fetchOffsetByTimestamp, as kcat's
// -o N and -o s@T start a consumer there) and a partition stops at the
// range's end; control batches are passed by their header; for a key
// search, an uncompressed batch whose bytes do not contain the key anywhere
// is passed without decoding its records. Every
// batch read whole has its CRC checked; one that fails is a finding and is
// not searched.
package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/klog-dev/klog/filter"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/schema"
	"github.com/klog-dev/klog/verify"
)

// Query is what to find. The zero value matches every record of every
// partition.
type Query struct {
	// Key, when HasKey, is the exact key to find (a null key never
	// matches): its bytes, or, with a KeyFormat that decodes, the decoded
	// key (a string key as the string, any other as its JSON).
	Key    []byte
	HasKey bool
	// Where, when set, must hold for a record.
	Where *filter.Filter
	// FromOffset and ToOffset bound the offsets searched: from FromOffset
	// (inclusive, -1 the log start) to ToOffset (exclusive, -1 the log
	// end).
	FromOffset, ToOffset int64
	// FromTimestamp and ToTimestamp (epoch ms, -1 none) bound them by
	// time as kcat's s@T and e@T do: the offsets the broker's lookup by
	// timestamp gives for them.
	FromTimestamp, ToTimestamp int64
	// Decoder and the formats decode keys and values for Where and for
	// the matches (nil: no decoding).
	Decoder                *schema.Decoder
	KeyFormat, ValueFormat schema.Format
	// Limit stops the search after that many matches (0: none).
	Limit int
	// Jobs is how many partitions are searched at once (0: GOMAXPROCS).
	Jobs int
	// MaxBatchBytes bounds one batch (0: the format default).
	MaxBatchBytes int
}

// NewQuery is a Query matching everything.
func NewQuery() Query {
	return Query{FromOffset: -1, ToOffset: -1, FromTimestamp: -1, ToTimestamp: -1}
}

// Match is one record found. Its slices are its own.
type Match struct {
	Dir       string
	Topic     string
	Partition int32
	Segment   string
	// Batch is the record's batch header (Raw holds the 61-byte header
	// only; Valid is the CRC check of the whole batch).
	Batch  format.Batch
	Record format.Record
	// Key and Value are the decoded key and value when the query decodes
	// (KeyFormat, ValueFormat not bytes).
	Key, Value schema.Value
}

// Stats says what the search read and skipped.
type Stats struct {
	Partitions      int
	SegmentsRead    int
	BatchesRead     int
	BatchesSkipped  int // passed by their header or, for a key, their bytes
	BytesRead       int64
	RecordsExamined int64
	Matches         int64
}

// Problem is a finding met on the way, in verify's vocabulary.
type Problem struct {
	Dir string
	verify.Problem
}

// Search searches the partition directories dirs, matches of each
// partition in offset order and partitions in the order given. emit is
// called from one goroutine at a time; an error from it stops the search
// and is returned. Problems are findings (a corrupt batch, a decode
// failure); the error is for I/O and emit.
func Search(ctx context.Context, dirs []string, q Query, emit func(*Match) error) (Stats, []Problem, error) {
	jobs := q.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		matches chan *Match
		stats   Stats
		probs   []Problem
		err     error
	}
	results := make([]*result, len(dirs))
	for i := range results {
		results[i] = &result{matches: make(chan *Match, matchBuffer)}
	}
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	go func() {
		for i, d := range dirs {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for _, r := range results[i:] {
					close(r.matches)
				}
				return
			}
			wg.Add(1)
			go func(r *result, dir string) {
				defer wg.Done()
				defer func() { <-sem }()
				defer close(r.matches)
				p := &partSearch{q: &q, ctx: ctx, out: r.matches, dir: dir}
				r.err = p.run()
				r.stats, r.probs = p.stats, p.probs
			}(results[i], d)
		}
	}()
	var total Stats
	var probs []Problem
	var firstErr error
	for _, r := range results {
		for m := range r.matches {
			if firstErr != nil {
				continue
			}
			if q.Limit > 0 && total.Matches >= int64(q.Limit) {
				cancel()
				continue
			}
			total.Matches++
			if p, ok := decodeProblem(m); ok {
				probs = append(probs, p)
			}
			if err := emit(m); err != nil {
				firstErr = err
				cancel()
			}
		}
		total.add(r.stats)
		probs = append(probs, r.probs...)
		if r.err != nil && firstErr == nil && !errors.Is(r.err, context.Canceled) {
			firstErr = r.err
		}
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil && !(q.Limit > 0 && total.Matches >= int64(q.Limit)) {
		firstErr = ctx.Err()
	}
	return total, probs, firstErr
}

// decodeProblem is the finding for a match whose key or value did not
// decode as the query's format asks ("record-decode", as dump reports it):
// the match is still emitted, with its bytes.
func decodeProblem(m *Match) (Problem, bool) {
	field, err := payload.DecodeFailure(m.Key, m.Value)
	if err == nil {
		return Problem{}, false
	}
	return Problem{Dir: m.Dir, Problem: verify.Problem{Path: m.Segment, Kind: verify.KindRecordDecode,
		Position: m.Batch.Pos, Offset: m.Record.Offset, Message: field + " does not decode: " + err.Error()}}, true
}

// matchBuffer is how many matches a partition searched ahead of the one
// being emitted may hold before it waits.
const matchBuffer = 256

func (s *Stats) add(o Stats) {
	s.Partitions += o.Partitions
	s.SegmentsRead += o.SegmentsRead
	s.BatchesRead += o.BatchesRead
	s.BatchesSkipped += o.BatchesSkipped
	s.BytesRead += o.BytesRead
	s.RecordsExamined += o.RecordsExamined
}

type partSearch struct {
	q     *Query
	ctx   context.Context
	out   chan<- *Match
	dir   string
	stats Stats
	probs []Problem
	rr    format.RecordReader
	// needle is the key as a v2 record holds it: its zig-zag varint
	// length, then its bytes (so that the search rarely stops on bytes
	// that merely look like the key's first one).
	needle []byte
	// decodeKey: the key is compared decoded.
	decodeKey bool
}

func (p *partSearch) problem(seg string, pos, offset int64, kind verify.Kind, msg string) {
	p.probs = append(p.probs, Problem{Dir: p.dir, Problem: verify.Problem{Path: seg, Kind: kind, Position: pos, Offset: offset, Message: msg}})
}

// run searches one partition.
func (p *partSearch) run() error {
	l, err := partition.OpenLog(p.dir, partition.LogOptions{MaxBatchBytes: p.q.MaxBatchBytes})
	if err != nil {
		if errors.Is(err, partition.ErrNoSegment) {
			return nil
		}
		return err
	}
	p.stats.Partitions = 1
	p.decodeKey = p.q.Decoder != nil && p.q.KeyFormat != schema.FormatBytes
	if p.q.HasKey && !p.decodeKey {
		p.needle = binary.AppendVarint(nil, int64(len(p.q.Key)))
		p.needle = append(p.needle, p.q.Key...)
	}
	from, to, err := p.bounds(l)
	if err != nil || from >= to {
		return err
	}
	start, err := l.ReadStart(from, to)
	if err != nil || !start.Found {
		return err
	}
	for _, seg := range l.Segments() {
		if seg.BaseOffset < start.SegmentBase {
			continue
		}
		pos := int64(0)
		if seg.BaseOffset == start.SegmentBase {
			pos = start.Pos
		}
		done, err := p.segment(l, seg.Log, pos, from, to)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// bounds turns the query's range into offsets [from, to) of l.
func (p *partSearch) bounds(l *partition.Log) (int64, int64, error) {
	from, to := l.LogStartOffset(), l.LogEndOffset()
	if p.q.FromOffset >= 0 {
		from = max(from, p.q.FromOffset)
	}
	if p.q.ToOffset >= 0 {
		to = min(to, p.q.ToOffset)
	}
	if p.q.FromTimestamp >= 0 {
		t, err := l.FetchOffsetByTimestamp(p.q.FromTimestamp)
		if err != nil {
			return 0, 0, err
		}
		if t.Offset < 0 {
			return 0, 0, nil // no record at or after it
		}
		from = max(from, t.Offset)
	}
	if p.q.ToTimestamp >= 0 {
		t, err := l.FetchOffsetByTimestamp(p.q.ToTimestamp)
		if err != nil {
			return 0, 0, err
		}
		if t.Offset >= 0 {
			to = min(to, t.Offset)
		}
	}
	return from, to, nil
}

// segment searches one .log from pos; done is set once past to or the
// limit.
func (p *partSearch) segment(l *partition.Log, path string, pos, from, to int64) (bool, error) {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	p.stats.SegmentsRead++
	sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: p.q.MaxBatchBytes})
	sc.SetPos(pos)
	for b, err := range sc.All() {
		if err != nil {
			p.problem(path, sc.Pos(), -1, verify.Classify(err, verify.StageEntry), err.Error())
			return false, nil
		}
		if b.BaseOffset >= to {
			return true, nil
		}
		if err := p.ctx.Err(); err != nil {
			return true, err
		}
		p.stats.BytesRead += b.Size()
		if b.LastOffset() < from || b.IsControl() {
			p.stats.BatchesSkipped++
			continue
		}
		if !b.Valid() {
			p.problem(path, b.Pos, b.BaseOffset, verify.KindCRCMismatch,
				fmt.Sprintf("batch CRC mismatch: stored 0x%08x, computed 0x%08x", b.CRC, b.ComputedCRC()))
			continue
		}
		if p.needle != nil && b.IsV2() && b.Compression() == format.CompressionNone &&
			!bytes.Contains(b.Raw[format.BatchHeaderSize:], p.needle) {
			p.stats.BatchesSkipped++
			continue
		}
		p.stats.BatchesRead++
		if done, err := p.records(l, path, b, from, to); done || err != nil {
			return done, err
		}
	}
	if t := sc.Tail(); t.Kind == format.TailPartial || t.Kind == format.TailCorrupt {
		tp := verify.TailProblem(f, t)
		p.problem(path, tp.Position, tp.Offset, tp.Kind, tp.Message)
	}
	return false, nil
}

func (p *partSearch) records(l *partition.Log, path string, b *format.Batch, from, to int64) (bool, error) {
	for r, err := range p.rr.Records(b) {
		if err != nil {
			stage := verify.StageRecords
			if b.Compression() != format.CompressionNone {
				stage = verify.StageDecompress
			}
			p.problem(path, b.Pos, b.BaseOffset, verify.Classify(err, stage), err.Error())
			return false, nil
		}
		if r.Offset < from {
			continue
		}
		if r.Offset >= to {
			return true, nil
		}
		p.stats.RecordsExamined++
		var key schema.Value
		if p.decodeKey {
			key = p.q.Decoder.Decode(r.Key, p.q.KeyFormat)
		}
		if p.q.HasKey && !p.keyMatches(r.Key, &key) {
			continue
		}
		m, ok := p.match(l, path, b, r, key)
		if !ok {
			continue
		}
		select {
		case p.out <- m:
		case <-p.ctx.Done():
			return true, nil
		}
	}
	return false, nil
}

// match decodes what the query needs and applies Where; the Match owns
// copies of the record's bytes.
func (p *partSearch) match(l *partition.Log, path string, b *format.Batch, r *format.Record, key schema.Value) (*Match, bool) {
	m := &Match{Dir: p.dir, Topic: l.Topic(), Partition: l.Partition(), Segment: path, Key: key}
	if d := p.q.Decoder; d != nil {
		if p.q.ValueFormat != schema.FormatBytes {
			m.Value = d.Decode(r.Value, p.q.ValueFormat)
		}
	}
	if w := p.q.Where; w != nil {
		fr := filter.Record{Topic: m.Topic, Partition: m.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
			LeaderEpoch: b.PartitionLeaderEpoch, Key: r.Key, Value: r.Value,
			KeyDecoded: m.Key.Native, HasKeyDecoded: m.Key.JSON != nil,
			ValueDecoded: m.Value.Native, HasValueDecoded: m.Value.JSON != nil}
		for _, h := range r.Headers {
			fr.Headers = append(fr.Headers, filter.Header{Key: h.Key, Value: h.Value})
		}
		if !w.Match(&fr) {
			return nil, false
		}
	}
	m.Batch = *b
	m.Batch.Raw = append([]byte(nil), b.Raw[:min(len(b.Raw), format.BatchHeaderSize)]...)
	m.Record = cloneRecord(r)
	return m, true
}

// keyMatches compares the query's key with a record's: the bytes, or the
// decoded key (a string as itself, anything else as its JSON).
func (p *partSearch) keyMatches(raw []byte, v *schema.Value) bool {
	if !p.decodeKey {
		return raw != nil && bytes.Equal(raw, p.q.Key)
	}
	if v.JSON == nil {
		return false
	}
	if s, ok := v.Native.(string); ok {
		return s == string(p.q.Key)
	}
	return bytes.Equal(v.JSON, p.q.Key)
}

func cloneRecord(r *format.Record) format.Record {
	c := *r
	c.Key = cloneBytes(r.Key)
	c.Value = cloneBytes(r.Value)
	c.Headers = make([]format.Header, len(r.Headers))
	for i, h := range r.Headers {
		c.Headers[i] = format.Header{Key: cloneBytes(h.Key), Value: cloneBytes(h.Value)}
	}
	return c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
