package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Checksum is the CRC-32C (Castagnoli) a v2 batch stores; the client is the
// only party that checks it on the read path, since the broker sends file
// bytes without looking at them.
func Checksum(b []byte) uint32 { return format.ChecksumC(b) }

// CorruptRecordError is a batch whose stored CRC does not match its bytes.
type CorruptRecordError = format.CorruptRecordError

// RecordExceedsMaxBytesError: the batch at Offset is RecordBytes long and the
// fetch's MaxBytes cannot hold it, so no response can deliver it (the stall
// before KIP-74; raise MaxBytes to proceed).
type RecordExceedsMaxBytesError struct {
	Offset      int64
	RecordBytes int64
	MaxBytes    int64
}

func (e *RecordExceedsMaxBytesError) Error() string {
	return "record batch at offset " + strconv.FormatInt(e.Offset, 10) + " is " + strconv.FormatInt(e.RecordBytes, 10) +
		" bytes, more than the fetch's max bytes " + strconv.FormatInt(e.MaxBytes, 10)
}

// Record is a record delivered to the application. Key, Value and Headers
// alias the fetched frame (or, for compressed batches, the consumer's
// decompression buffer) and are valid until the next Poll: copy to keep.
type Record struct {
	Offset     int64
	Timestamp  int64
	Key, Value []byte
	Headers    []format.Header
	ProducerID int64
}

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	// Group names the consumer group whose committed offset the consumer
	// resumes from; "" means none.
	Group string
	// OffsetsFile is where Commit writes; default klog-consumer-offsets in
	// the partition's log directory.
	OffsetsFile string
	// StartOffset is where to start, before any committed offset (klog
	// fetch --offset) when it is above the log start offset; the zero
	// value (and -1) start at the group's committed offset, or where Reset
	// says. UseStartOffset starts at StartOffset whatever its value (one
	// out of range is then reset as Reset says on the first poll).
	StartOffset    int64
	UseStartOffset bool
	// Reset is auto.offset.reset: where to go when there is no committed
	// offset, or when the position is out of range (retention deleted it,
	// the log was truncated). The zero value is ResetEarliest.
	Reset             OffsetReset
	MaxBytes          int32
	PartitionMaxBytes int32
	// ExactBytes takes MaxBytes and PartitionMaxBytes as given, 0
	// included (Request.ExactBytes).
	ExactBytes      bool
	MinBytes        int32
	MaxWait         time.Duration
	Isolation       Isolation
	NoMinOneMessage bool
	// HighWatermark overrides the log's when > 0 (the zero value, and -1,
	// use the log's), or whatever its value (0 too) when
	// OverrideHighWatermark is set.
	HighWatermark         int64
	OverrideHighWatermark bool
}

// OffsetReset is the consumer's auto.offset.reset.
type OffsetReset int

const (
	// ResetEarliest moves to the log start offset.
	ResetEarliest OffsetReset = iota
	// ResetLatest moves to the high watermark (the last stable offset for
	// read_committed): only records produced from now on.
	ResetLatest
	// ResetNone fails: ErrNoOffset without a committed offset,
	// OFFSET_OUT_OF_RANGE when the position is out of range.
	ResetNone
)

// ParseOffsetReset reads "earliest", "latest" or "none".
func ParseOffsetReset(s string) (OffsetReset, error) {
	switch s {
	case "earliest":
		return ResetEarliest, nil
	case "latest":
		return ResetLatest, nil
	case "none":
		return ResetNone, nil
	}
	return 0, errors.New("auto.offset.reset must be earliest, latest or none, not " + strconv.Quote(s))
}

// ErrNoOffset is the consumer's NoOffsetForPartitionException: no committed
// offset and Reset is ResetNone.
var ErrNoOffset = errors.New("no committed offset for the partition and the reset policy is none")

// Consumer reads one partition: position (the next offset to read), high
// watermark and lag, as in the reference text. Not safe for concurrent use.
type Consumer struct {
	log      *Log
	cfg      ConsumerConfig
	position int64
	hw       int64
	rr       format.RecordReader
	rec      format.Record
	pending  []pending
	polled   []Record
	// keys/values of compressed batches are copied here so they outlive
	// the record reader's buffer for the whole poll.
	arena   []byte
	hdrs    []format.Header
	aborted map[int64]bool
	watch   *watcher
	// endOfWhole is the offset after the last whole batch of the last
	// response.
	endOfWhole int64
}

type pending struct {
	rec   Record
	after int64 // position once this record is consumed
}

// NewConsumer opens dir and positions the consumer at the group's committed
// offset, or cfg.StartOffset, or the log start.
func NewConsumer(dir string, cfg ConsumerConfig) (*Consumer, error) {
	l, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if cfg.OffsetsFile == "" {
		cfg.OffsetsFile = filepath.Join(filepath.Dir(filepath.Clean(dir)), "klog-consumer-offsets")
	}
	c := &Consumer{log: l, cfg: cfg, position: l.LogStartOffset(), hw: l.HighWatermark(), aborted: map[int64]bool{}}
	if cfg.OverrideHighWatermark || cfg.HighWatermark > 0 {
		c.hw = max(0, min(cfg.HighWatermark, l.LogEndOffset()))
	}
	if cfg.UseStartOffset || cfg.StartOffset > c.position {
		c.position = cfg.StartOffset
		return c, nil
	}
	if cfg.Group != "" {
		if off, ok, err := ReadCommittedOffset(cfg.OffsetsFile, cfg.Group, l.topic, l.part); err != nil {
			return nil, err
		} else if ok {
			c.position = off
			return c, nil
		}
	}
	if err := c.reset(); err != nil {
		return nil, err
	}
	return c, nil
}

// reset moves the position as Reset says (SubscriptionState's reset
// strategy): the log start, or the high watermark (last stable offset for
// read_committed), or an error.
func (c *Consumer) reset() error {
	switch c.cfg.Reset {
	case ResetNone:
		return ErrNoOffset
	case ResetLatest:
		c.position = c.hw
		if c.cfg.Isolation == ReadCommitted {
			c.position = c.log.LastStableOffset(c.hw)
		}
	default:
		c.position = c.log.LogStartOffset()
	}
	c.pending = c.pending[:0]
	return nil
}

// Log is the partition being read.
func (c *Consumer) Log() *Log { return c.log }

// Position is the next offset to read.
func (c *Consumer) Position() int64 { return c.position }

// HighWatermark is the high watermark of the last fetch.
func (c *Consumer) HighWatermark() int64 { return c.hw }

// Lag is HighWatermark - Position.
func (c *Consumer) Lag() int64 { return max(0, c.hw-c.position) }

// SetPosition moves the position.
func (c *Consumer) SetPosition(offset int64) { c.position, c.pending = offset, c.pending[:0] }

// Close releases the directory watch.
func (c *Consumer) Close() error {
	if c.watch != nil {
		return c.watch.close()
	}
	return nil
}

func (c *Consumer) request() Request {
	return Request{FetchOffset: c.position, MaxBytes: c.cfg.MaxBytes, PartitionMaxBytes: c.cfg.PartitionMaxBytes,
		MinBytes: c.cfg.MinBytes, MaxWait: c.cfg.MaxWait.Milliseconds(), Isolation: c.cfg.Isolation,
		NoMinOneMessage: c.cfg.NoMinOneMessage, HighWatermark: c.cfg.HighWatermark,
		OverrideHighWatermark: c.cfg.OverrideHighWatermark, ExactBytes: c.cfg.ExactBytes}
}

// Poll fetches from the position (long-polling when MinBytes and MaxWait are
// set) and returns the records of the whole batches received, advancing the
// position past them. A response that ends inside a batch leaves the
// position at that batch, so a retry with larger MaxBytes reads it; a
// response with no whole batch at all is a RecordExceedsMaxBytesError. A
// corrupt batch is a *CorruptRecordError and the position stays before it.
//
// A position out of range (retention deleted it, the log was truncated)
// is reset as ConsumerConfig.Reset says, as Kafka's consumer does on
// OFFSET_OUT_OF_RANGE; with ResetNone the error is returned.
func (c *Consumer) Poll(ctx context.Context) ([]Record, *Fetched, error) {
	f, err := c.fetch(ctx)
	if errors.Is(err, ErrOffsetOutOfRange) && c.cfg.Reset != ResetNone {
		if rerr := c.reset(); rerr != nil {
			return nil, f, rerr
		}
		f, err = c.fetch(ctx)
	}
	if err != nil {
		return nil, f, err
	}
	c.pending = c.pending[:0]
	derr := c.decode(f)
	recs := c.polled[:0]
	for _, p := range c.pending {
		recs = append(recs, p.rec)
	}
	c.polled = recs
	if n := len(c.pending); n > 0 {
		c.position = c.pending[n-1].after
	}
	c.position = max(c.position, c.endOfWhole)
	c.pending = c.pending[:0]
	return recs, f, derr
}

func (c *Consumer) fetch(ctx context.Context) (*Fetched, error) {
	if err := c.log.Refresh(); err != nil {
		return nil, err
	}
	req := c.request()
	f, err := c.log.Read(req)
	if err == nil && req.MaxWait > 0 && int64(len(f.Frame)) < int64(req.MinBytes) {
		f, err = c.longPoll(ctx, req)
	}
	if f != nil {
		c.hw = f.HighWatermark
	}
	return f, err
}

// longPoll parks the fetch until MinBytes are available or MaxWait expires,
// waking on changes to the partition directory (and the log dir, where the
// high watermark checkpoint is rewritten) instead of sleeping in a loop.
func (c *Consumer) longPoll(ctx context.Context, req Request) (*Fetched, error) {
	if c.watch == nil {
		w, err := newWatcher(c.log.dir)
		if err != nil {
			return nil, err
		}
		c.watch = w
	}
	return longPoll(ctx, c.log, c.watch, req)
}

// LongPoll serves req, waiting up to req.MaxWait for req.MinBytes.
func (l *Log) LongPoll(ctx context.Context, req Request) (*Fetched, error) {
	f, err := l.Read(req)
	if err != nil || req.MaxWait <= 0 || int64(len(f.Frame)) >= int64(req.MinBytes) {
		return f, err
	}
	w, err := newWatcher(l.dir)
	if err != nil {
		return nil, err
	}
	defer w.close()
	return longPoll(ctx, l, w, req)
}

func longPoll(ctx context.Context, l *Log, w *watcher, req Request) (*Fetched, error) {
	deadline := time.NewTimer(time.Duration(req.MaxWait) * time.Millisecond)
	defer deadline.Stop()
	w.drain()
	for {
		// Re-read after arming the watch so an append between the first
		// read and the watch is not missed.
		if err := l.Refresh(); err != nil {
			return nil, err
		}
		f, err := l.Read(req)
		if err != nil || int64(len(f.Frame)) >= int64(req.MinBytes) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return f, ctx.Err()
		case <-deadline.C:
			return f, nil
		case <-w.events:
		case err := <-w.errs:
			return f, err
		}
	}
}

// decode turns the frame's whole batches into pending records: control
// batches and (read_committed) aborted transactions are skipped, records
// below the fetch offset dropped, and each record notes the position after it.
func (c *Consumer) decode(f *Fetched) error {
	c.endOfWhole = c.position
	c.arena = c.arena[:0]
	c.hdrs = c.hdrs[:0]
	aborts := append([]AbortedTransaction(nil), f.AbortedTransactions...)
	sort.Slice(aborts, func(i, j int) bool { return aborts[i].FirstOffset < aborts[j].FirstOffset })
	whole := 0
	// Positions are the segment's (f.Position is where the frame starts in
	// f.Segment), so an error names the byte in the file.
	for b, err := range format.FrameBatches(f.Frame, f.Position) {
		if err != nil {
			return err
		}
		if !b.Valid() {
			// The records before it are delivered; the position stops here.
			return fmt.Errorf("%w (at position %d)", &CorruptRecordError{Offset: b.BaseOffset, Stored: b.CRC, Computed: b.ComputedCRC()}, b.Pos)
		}
		whole++
		if err := c.decodeBatch(b, &aborts); err != nil {
			return err
		}
		c.endOfWhole = max(c.endOfWhole, b.NextOffset())
	}
	if whole == 0 && f.Truncated {
		return &RecordExceedsMaxBytesError{Offset: c.position, RecordBytes: f.TruncatedRecordBytes, MaxBytes: int64(f.MaxBytes)}
	}
	return nil
}

func (c *Consumer) decodeBatch(b *format.Batch, aborts *[]AbortedTransaction) error {
	if b.IsV2() && b.IsTransactional() && c.cfg.Isolation == ReadCommitted {
		for len(*aborts) > 0 && (*aborts)[0].FirstOffset <= b.LastOffset() {
			c.aborted[(*aborts)[0].ProducerID] = true
			*aborts = (*aborts)[1:]
		}
		if b.IsControl() {
			delete(c.aborted, b.ProducerID)
			return nil
		}
		if c.aborted[b.ProducerID] {
			return nil
		}
	}
	if b.IsControl() {
		return nil
	}
	if err := c.rr.Reset(b); err != nil {
		return err
	}
	compressed := b.Compression() != format.CompressionNone
	for {
		err := c.rr.Next(&c.rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		r := &c.rec
		if r.Offset < c.position {
			continue
		}
		rec := Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, ProducerID: b.ProducerID}
		if compressed {
			rec.Key, rec.Value = c.keep(r.Key), c.keep(r.Value)
		}
		if len(r.Headers) > 0 {
			at := len(c.hdrs)
			for _, h := range r.Headers {
				if compressed {
					h = format.Header{Key: c.keep(h.Key), Value: c.keep(h.Value)}
				}
				c.hdrs = append(c.hdrs, h)
			}
			rec.Headers = c.hdrs[at:len(c.hdrs):len(c.hdrs)]
		}
		c.pending = append(c.pending, pending{rec: rec, after: r.Offset + 1})
	}
	if n := len(c.pending); n > 0 && c.pending[n-1].rec.Offset <= b.LastOffset() {
		c.pending[n-1].after = b.NextOffset()
	}
	return nil
}

// keep copies b into the poll's arena (nil stays nil).
func (c *Consumer) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(c.arena)-len(c.arena) < len(b) {
		// A new arena: slices handed out earlier keep the old one alive.
		c.arena = make([]byte, 0, max(2*cap(c.arena), len(b), 64<<10))
	}
	at := len(c.arena)
	c.arena = append(c.arena, b...)
	return c.arena[at:len(c.arena):len(c.arena)]
}

// Records iterates over the records from the position up to the high
// watermark on the caller's goroutine, polling as needed. The position
// advances only as each record is consumed: stopping the loop early loses
// nothing. An error is yielded at most once, as the last element. A yielded
// record is valid for that iteration only.
func (c *Consumer) Records(ctx context.Context) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			f, err := c.fetch(ctx)
			if err != nil {
				yield(Record{}, err)
				return
			}
			c.pending = c.pending[:0]
			derr := c.decode(f)
			for _, p := range c.pending {
				if !yield(p.rec, nil) {
					return
				}
				c.position = p.after
			}
			c.position = max(c.position, c.endOfWhole)
			if derr != nil {
				yield(Record{}, derr)
				return
			}
			if len(f.Frame) == 0 || c.position >= c.hw {
				return
			}
		}
	}
}

// Commit records the position as the group's committed offset (the next
// offset to read, as OffsetCommit does).
func (c *Consumer) Commit() error {
	if c.cfg.Group == "" {
		return errors.New("fetch: Commit needs a consumer group")
	}
	return WriteCommittedOffset(c.cfg.OffsetsFile, c.cfg.Group, c.log.topic, c.log.part, c.position)
}

// ReadCommittedOffset returns a group's committed offset for a partition from an
// offsets file ("0", a count, then "group topic partition offset" lines).
func ReadCommittedOffset(path, group, topic string, part int32) (int64, bool, error) {
	data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	cp, err := format.ParseCheckpoint(data, 0, 4)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	for _, e := range cp.Entries {
		if e[0] == group && e[1] == topic && e[2] == strconv.Itoa(int(part)) {
			off, err := strconv.ParseInt(e[3], 10, 64)
			return off, err == nil, err
		}
	}
	return 0, false, nil
}

// WriteCommittedOffset sets a group's committed offset, rewriting the file through
// a temporary file and a rename, as Kafka writes its checkpoints.
func WriteCommittedOffset(path, group, topic string, part int32, offset int64) error {
	// Never write into a log directory a running broker holds, and keep
	// one from starting while this writes.
	broker, err := safeio.HoldBroker(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer broker.Release()
	var entries [][]string
	if data, err := safeio.ReadFile(path, safeio.MaxCheckpointBytes); err == nil {
		cp, err := format.ParseCheckpoint(data, 0, 4)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		entries = cp.Entries
	} else if !os.IsNotExist(err) {
		return err
	}
	line := []string{group, topic, strconv.Itoa(int(part)), strconv.FormatInt(offset, 10)}
	found := false
	for i, e := range entries {
		if e[0] == group && e[1] == topic && e[2] == line[2] {
			entries[i], found = line, true
		}
	}
	if !found {
		entries = append(entries, line)
	}
	var b strings.Builder
	b.WriteString("0\n" + strconv.Itoa(len(entries)) + "\n")
	for _, e := range entries {
		b.WriteString(strings.Join(e, " ") + "\n")
	}
	return partition.WriteFileAtomic(path, []byte(b.String()), partition.WriteOptions{Perm: safeio.OutputPerm(path)})
}
