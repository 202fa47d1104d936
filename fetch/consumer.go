package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// Checksum is the CRC-32C (Castagnoli) a v2 batch stores; the client is the
// only party that checks it on the read path, since the broker sends file
// bytes without looking at them.
func Checksum(b []byte) uint32 { return format.ChecksumC(b) }

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
	// Offsets is the store of the group's committed offsets (required with
	// a Group): package offsetstore's __consumer_offsets partitions, the
	// same ones klog serve commits to.
	Offsets OffsetStore
	// StartOffset, when set, is where to start (klog fetch --offset),
	// before any committed offset; one out of range is reset as Reset
	// says on the first poll. Nil starts at the group's committed offset,
	// or where Reset says.
	StartOffset *int64
	// Reset is auto.offset.reset: where to go when there is no committed
	// offset, or when the position is out of range (retention deleted it,
	// the log was truncated). The zero value is ResetEarliest.
	Reset OffsetReset
	// MaxBytes and PartitionMaxBytes are the fetch's byte limits, as
	// given, 0 included (Request); Kafka's consumer defaults are
	// DefaultMaxBytes and DefaultPartitionMaxBytes.
	MaxBytes          int32
	PartitionMaxBytes int32
	MinBytes          int32
	MaxWait           time.Duration
	Isolation         Isolation
	NoMinOneMessage   bool
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
// watermark and lag, as in the reference text. The bound of its reads is
// the partition model's high watermark (set one with
// partition.Log.SetHighWatermark). Not safe for concurrent use.
type Consumer struct {
	log      *partition.Log
	cfg      ConsumerConfig
	position int64
	hw       int64
	frame    []byte
	rr       format.RecordReader
	rec      format.Record
	batch    format.Batch
	pending  []pending
	polled   []Record
	// keys/values of compressed batches are copied here so they outlive
	// the record reader's buffer for the whole poll.
	arena []byte
	hdrs  []format.Header
	// follow keeps the log current for long polls when nothing else
	// does.
	follow *partition.Follower
	// endOfWhole is the offset after the last whole batch of the last
	// response.
	endOfWhole int64
	// fresh is whether the last fetch read the partition as it is on
	// disk (kept current, or refreshed for that fetch).
	fresh bool
	// refreshes counts the model's refreshes (for the tests).
	refreshes int
	// seg is the segment file of the last fetch, kept open (Close
	// closes it).
	seg segFile
}

type pending struct {
	rec   Record
	after int64 // position once this record is consumed
}

// NewConsumer opens the partition directory dir and reads it with
// NewLogConsumer.
func NewConsumer(dir string, cfg ConsumerConfig) (*Consumer, error) {
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		return nil, err
	}
	return NewLogConsumer(l, cfg)
}

// NewLogConsumer reads the partition l, positioned at cfg.StartOffset, or
// the group's committed offset, or as cfg.Reset says.
func NewLogConsumer(l *partition.Log, cfg ConsumerConfig) (*Consumer, error) {
	if cfg.Group != "" && cfg.Offsets == nil {
		return nil, errors.New("fetch: a consumer group needs an offset store")
	}
	o, err := l.Offsets()
	if err != nil {
		return nil, err
	}
	c := &Consumer{log: l, cfg: cfg, position: o.LogStartOffset, hw: o.HighWatermark}
	if cfg.StartOffset != nil {
		c.position = *cfg.StartOffset
		return c, nil
	}
	if cfg.Group != "" {
		if off, ok, err := cfg.Offsets.CommittedOffset(cfg.Group, l.Topic(), l.Partition()); err != nil {
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
		o, err := c.log.Offsets()
		if err != nil {
			return err
		}
		c.hw, c.position = o.HighWatermark, o.HighWatermark
		if c.cfg.Isolation == ReadCommitted {
			c.position = o.LastStableOffset
		}
	default:
		c.position = c.log.LogStartOffset()
	}
	c.pending = c.pending[:0]
	return nil
}

// Log is the partition being read.
func (c *Consumer) Log() *partition.Log { return c.log }

// Position is the next offset to read.
func (c *Consumer) Position() int64 { return c.position }

// HighWatermark is the high watermark of the last fetch.
func (c *Consumer) HighWatermark() int64 { return c.hw }

// Lag is HighWatermark - Position.
func (c *Consumer) Lag() int64 { return max(0, c.hw-c.position) }

// SetPosition moves the position.
func (c *Consumer) SetPosition(offset int64) { c.position, c.pending = offset, c.pending[:0] }

// Close stops following the partition and closes the segment file the
// consumer keeps open between fetches.
func (c *Consumer) Close() error {
	err := c.seg.close()
	if c.follow != nil {
		return errors.Join(c.follow.Close(), err)
	}
	return err
}

func (c *Consumer) request() Request {
	return Request{FetchOffset: c.position, MaxBytes: c.cfg.MaxBytes, PartitionMaxBytes: c.cfg.PartitionMaxBytes,
		MinBytes: c.cfg.MinBytes, MaxWait: c.cfg.MaxWait, Isolation: c.cfg.Isolation, NoMinOneMessage: c.cfg.NoMinOneMessage}
}

// Poll fetches from the position (long-polling when MinBytes and MaxWait are
// set) and returns the records of the whole batches received, advancing the
// position past them. A response that ends inside a batch leaves the
// position at that batch, so a retry with larger MaxBytes reads it; a
// response with no whole batch at all is a RecordExceedsMaxBytesError. A
// corrupt batch is a *format.CorruptRecordError and the position stays before it.
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

// fetch reads from the position, first refreshing the partition model
// when nothing keeps it current and the position is at the high watermark
// it knows.
func (c *Consumer) fetch(ctx context.Context) (*Fetched, error) {
	req := c.request()
	c.fresh = c.log.KeptCurrent()
	if !c.fresh && c.position >= c.hw {
		// Nothing follows the partition for us (yet), and the position
		// is at the end the model knows: read what was appended since.
		if err := c.refresh(); err != nil {
			return nil, err
		}
	}
	f, err := read(c.log, req, c.frame, &c.seg)
	if !c.fresh && (err != nil || f.Size == 0) {
		// Below the high watermark the model knew, a fetch does not need
		// what was appended since (a refresh before each one, listing
		// the directory, was 7% of a drain). A fetch that fails or finds
		// nothing there tries again on the partition as it is now (a
		// segment that retention deleted, say).
		if rerr := c.refresh(); rerr != nil {
			return nil, rerr
		}
		f, err = read(c.log, req, c.frame, &c.seg)
	}
	if err == nil && req.MaxWait > 0 && f.Size < int64(req.MinBytes) {
		if c.follow == nil && !c.log.KeptCurrent() {
			if c.follow, err = follow(c.log); err != nil {
				return nil, err
			}
		}
		f, err = longPoll(ctx, c.log, c.follow, req, c.frame)
	}
	if f != nil {
		c.hw = f.HighWatermark
		if f.Frame != nil {
			c.frame = f.Frame[:0]
		}
	}
	return f, err
}

// refresh brings the partition model up to date with the directory.
func (c *Consumer) refresh() error {
	c.refreshes++
	if err := c.log.Refresh(); err != nil {
		return err
	}
	c.fresh = true
	return nil
}

// follow starts a Follower of l alone.
func follow(l *partition.Log) (*partition.Follower, error) {
	fo, err := partition.NewFollower()
	if err != nil {
		return nil, err
	}
	if err := fo.Add(l); err != nil {
		fo.Close()
		return nil, err
	}
	return fo, nil
}

// LongPoll serves req from l, waiting up to req.MaxWait for req.MinBytes:
// it parks on l's waiters, so it wakes when l changes and for nothing else.
// l is kept current by its writer in this process or a partition.Follower;
// when nothing does, LongPoll follows it for the time of the wait.
func LongPoll(ctx context.Context, l *partition.Log, req Request, buf []byte) (*Fetched, error) {
	f, err := Read(l, req, buf)
	if err != nil || req.MaxWait <= 0 || f.Size >= int64(req.MinBytes) {
		return f, err
	}
	var fo *partition.Follower
	if !l.KeptCurrent() {
		if fo, err = follow(l); err != nil {
			return nil, err
		}
		defer fo.Close()
	}
	return longPoll(ctx, l, fo, req, buf)
}

// longPoll waits on l's changes until MinBytes are there or MaxWait has
// passed; fo, when not nil, is the Follower whose errors end the wait.
func longPoll(ctx context.Context, l *partition.Log, fo *partition.Follower, req Request, buf []byte) (*Fetched, error) {
	deadline := time.NewTimer(req.MaxWait)
	defer deadline.Stop()
	w := partition.NewWaiter()
	defer w.Stop()
	w.Add(l)
	var errs <-chan error
	if fo != nil {
		errs = fo.Errors()
	}
	for {
		// Read after arming the wait, so that an append between the
		// first read and the wait is not missed.
		f, err := Read(l, req, buf)
		if err != nil || f.Size >= int64(req.MinBytes) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return f, ctx.Err()
		case <-deadline.C:
			return f, nil
		case <-w.C():
		case err, ok := <-errs:
			if ok {
				return f, err
			}
			errs = nil
		}
	}
}

// decode turns the frame's whole batches into pending records (walk),
// each noting the position after it.
func (c *Consumer) decode(f *Fetched) error {
	c.arena = c.arena[:0]
	c.hdrs = c.hdrs[:0]
	_, err := c.walk(f, func(b *format.Batch, r *format.Record) bool {
		compressed := b.Compression() != format.CompressionNone
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
		return true
	}, func(b *format.Batch, kept bool) bool {
		if kept {
			// Consuming the batch's last record moves past the batch.
			c.pending[len(c.pending)-1].after = b.NextOffset()
		}
		return true
	})
	return err
}

// walk decodes the frame's whole batches as ConsumerRules says: control
// records, aborted transactions (read_committed) and records below the
// fetch offset are dropped. It hands each record kept to rec (valid for
// the call only) and then each whole batch to done, with whether any of
// its records was kept; c.endOfWhole is then past it. A false from either
// stops the walk, and walk returns false.
func (c *Consumer) walk(f *Fetched, rec func(*format.Batch, *format.Record) bool, done func(b *format.Batch, kept bool) bool) (bool, error) {
	c.endOfWhole = c.position
	rules := NewConsumerRules(c.cfg.Isolation, c.position, f.AbortedTransactions)
	whole := 0
	// Positions are the segment's (f.Position is where the frame starts in
	// f.Segment), so an error names the byte in the file.
	// One Batch for all of them (FrameBatches' walk, without a Batch
	// allocated for each: 16 per 256 KiB of a drain); none outlives its
	// iteration.
	b := &c.batch
	for p := 0; ; {
		n := format.EntrySize(f.Frame[p:])
		if n == 0 {
			break
		}
		if err := b.Parse(f.Frame[p:p+n], f.Position+int64(p)); err != nil {
			return true, err
		}
		p += n
		if !b.Valid() {
			// The records before it are delivered; the position stops here.
			return true, fmt.Errorf("%w (at position %d)", &format.CorruptRecordError{Offset: b.BaseOffset, Stored: b.CRC, Computed: b.ComputedCRC()}, b.Pos)
		}
		whole++
		kept := false
		if rules.Batch(b) == Kept {
			if err := c.rr.Reset(b); err != nil {
				return true, err
			}
			for {
				err := c.rr.Next(&c.rec)
				if err == io.EOF {
					break
				}
				if err != nil {
					return true, err
				}
				if rules.Record(&c.rec) != Kept {
					continue
				}
				kept = true
				if !rec(b, &c.rec) {
					return false, nil
				}
			}
		}
		c.endOfWhole = max(c.endOfWhole, b.NextOffset())
		if !done(b, kept) {
			return false, nil
		}
	}
	if whole == 0 && f.Truncated {
		return true, &RecordExceedsMaxBytesError{Offset: c.position, RecordBytes: f.TruncatedRecordBytes, MaxBytes: int64(f.MaxBytes)}
	}
	return true, nil
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
			// Each record is decoded as it is yielded: valid for its
			// iteration only, it needs no copy and no pending list.
			goOn, derr := c.walk(f, func(b *format.Batch, fr *format.Record) bool {
				if !yield(Record{Offset: fr.Offset, Timestamp: fr.Timestamp, Key: fr.Key, Value: fr.Value,
					Headers: fr.Headers, ProducerID: b.ProducerID}, nil) {
					return false
				}
				c.position = fr.Offset + 1
				return true
			}, func(b *format.Batch, _ bool) bool {
				c.position = max(c.position, b.NextOffset())
				return true
			})
			if !goOn {
				return
			}
			c.position = max(c.position, c.endOfWhole)
			if derr != nil {
				yield(Record{}, derr)
				return
			}
			// The end is the high watermark of a model read for this
			// fetch (an empty response always is one: fetch refreshed).
			if len(f.Frame) == 0 || c.position >= c.hw && c.fresh {
				return
			}
		}
	}
}

// OffsetStore is where a consumer group's committed offsets live: the
// offset the group reads next, per partition (OffsetCommit's meaning).
type OffsetStore interface {
	CommittedOffset(group, topic string, partition int32) (offset int64, ok bool, err error)
	CommitOffset(group, topic string, partition int32, offset int64) error
}

// Commit records the position as the group's committed offset (the next
// offset to read, as OffsetCommit does).
func (c *Consumer) Commit() error {
	if c.cfg.Group == "" {
		return errors.New("fetch: Commit needs a consumer group")
	}
	return c.cfg.Offsets.CommitOffset(c.cfg.Group, c.log.Topic(), c.log.Partition(), c.position)
}
