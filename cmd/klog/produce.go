package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/produce"
	"github.com/urfave/cli/v2"
)

var (
	prodLogFlag      = &cli.StringFlag{Name: "log", Usage: "the partition directory, as the DIR argument gives it (kept for scripts written before DIR)"}
	prodInputFlag    = &cli.StringFlag{Name: "input", Value: "lines", Usage: "lines: one value per line; json: one object per line {key, value, headers, timestamp}"}
	prodKeySepFlag   = &cli.StringFlag{Name: "key-separator", Aliases: []string{"K"}, Usage: "with --input lines, split each line into key and value at the first S (kcat's -K)"}
	prodRecordsFlag  = &cli.IntFlag{Name: "batch-records", Value: 500, Usage: "records per batch at most"}
	prodBytesFlag    = &cli.IntFlag{Name: "batch-bytes", Value: 16384, Usage: "close a batch once its records reach N bytes (batch.size)"}
	prodCodecFlag    = &cli.StringFlag{Name: "compression", Value: "none", Usage: "none, gzip, snappy, lz4 or zstd"}
	prodTSTypeFlag   = &cli.StringFlag{Name: "timestamp-type", Value: "create", Usage: "create (CreateTime) or log-append (LogAppendTime)"}
	prodPIDFlag      = &cli.Int64Flag{Name: "producer-id", Value: -1, Usage: "idempotent producer id; sequences continue from the log"}
	prodEpochFlag    = &cli.IntFlag{Name: "producer-epoch", Value: 0, Usage: "producer epoch"}
	prodTxnFlag      = &cli.BoolFlag{Name: "transactional", Usage: "write transactional batches (needs --producer-id)"}
	prodEndTxnFlag   = &cli.StringFlag{Name: "end-txn", Usage: "commit or abort: write the producer's transaction marker and read no input"}
	prodCoordFlag    = &cli.IntFlag{Name: "coordinator-epoch", Value: 0, Usage: "coordinator epoch written in a transaction marker"}
	prodAcksFlag     = &cli.StringFlag{Name: "acks", Value: "1", Usage: "0: print nothing; 1 or all: one response line per batch"}
	prodJSONFlag     = &cli.BoolFlag{Name: "json", Usage: "print responses as JSON objects"}
	prodSegmentFlag  = &cli.Int64Flag{Name: "segment-bytes", Value: 1 << 30, Usage: "roll a new segment past N bytes (segment.bytes)"}
	prodIntervalFlag = &cli.Int64Flag{Name: "index-interval-bytes", Value: 4096, Usage: "bytes between index entries (index.interval.bytes)"}
	prodFsyncFlag    = &cli.StringFlag{Name: "fsync", Value: "end", Usage: "batch: fsync after every batch; end: once at the end; never"}
	prodTruncFlag    = &cli.BoolFlag{Name: "truncate-invalid", Usage: "cut an invalid tail of the active segment instead of refusing"}
	prodWaitFlag     = &cli.BoolFlag{Name: "wait", Usage: "wait for another writer's lock instead of failing"}
	prodTopicIDFlag  = &cli.StringFlag{Name: "topic-id", Usage: "topic id for partition.metadata (22 characters of URL-safe base64, as Kafka prints one); must match an existing partition.metadata (default: the id of the topic's other partitions beside DIR, else a new one, written only when produce creates the partition)"}
	prodLeaderFlag   = &cli.IntFlag{Name: "leader-epoch", Usage: "partition leader epoch written in the batches and leader-epoch-checkpoint (default: the partition's latest, 0 for a new one)"}
)

var produceCommand = &cli.Command{
	Name:      "produce",
	Usage:     "append records from stdin to a partition directory as a broker does",
	ArgsUsage: "DIR",
	Description: `Reads records from stdin and appends v2 batches to the partition directory
DIR (--log DIR says the same; DIR is created on first use) at the partition's
log end offset, maintaining .index/.timeindex, rolling segments, continuing
producer sequences and writing transaction markers, .txnindex entries and
producer snapshots as a Kafka broker does. The directory is locked while
appending. On exit the partition is left as a broker's clean shutdown leaves
it: the active segment's .timeindex ends with its largest timestamp, a
producer snapshot is written at the log end offset, and leader-epoch-checkpoint
holds the leader epochs of the batches (--leader-epoch). A partition produce
creates gets partition.metadata with its topic's id (--topic-id).

With --acks 1 or all, one line per batch: baseOffset, lastOffset,
logAppendTime (-1 for CreateTime) and logStartOffset. --acks 0 prints nothing.`,
	Flags: []cli.Flag{prodHeaderFlag, prodKeySchemaFlag, prodValueSchemaFlag, prodMessageFlag, schemasFlag, prodLogFlag, prodInputFlag, prodKeySepFlag, prodRecordsFlag, prodBytesFlag, prodCodecFlag,
		prodTSTypeFlag, prodPIDFlag, prodEpochFlag, prodTxnFlag, prodEndTxnFlag, prodCoordFlag, prodAcksFlag, prodJSONFlag,
		prodSegmentFlag, prodIntervalFlag, prodFsyncFlag, prodTruncFlag, prodWaitFlag, prodLeaderFlag, prodTopicIDFlag},
	Action: runProduce,
}

func runProduce(c *cli.Context) error {
	dir, err := partitionDirArg(c, "produce", prodLogFlag.Name, "; records come from stdin",
		"records always come from stdin; give the partition directory")
	if err != nil {
		return err
	}
	feed, err := produceFeed(c)
	if err != nil {
		return err
	}
	if err := produceEncoders(c, dir, feed); err != nil {
		return err
	}
	opts, err := produceOptions(c)
	if err != nil {
		return err
	}
	acks := c.String(prodAcksFlag.Name)
	if acks != "0" && acks != "1" && acks != "all" && acks != "-1" {
		return usageError("produce: --acks must be 0, 1 or all")
	}
	pr := feed.Template.Producer
	et := c.String(prodEndTxnFlag.Name)
	switch {
	case feed.Template.Transactional && pr == nil:
		return usageError("produce: --transactional needs --producer-id")
	case et != "" && et != "commit" && et != "abort":
		return usageError("produce: --end-txn must be commit or abort")
	case et != "" && pr == nil:
		return usageError("produce: --end-txn needs --producer-id")
	}
	app, err := openAppender(c, dir, opts)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(c.App.Writer)
	var line []byte
	sent := func(r produce.Result) {
		if acks == "0" {
			return
		}
		line = appendProduceResponse(line[:0], r, c.Bool(prodJSONFlag.Name))
		out.Write(line)
	}
	// A response is sent when its batch is in the log, not at exit: the
	// responses of each write to the log leave together.
	feed.Flushed = func() { out.Flush() }
	if et != "" {
		var r produce.Result
		if r, err = app.EndTxn(pr.ID, pr.Epoch, et == "commit", int32(c.Int(prodCoordFlag.Name))); err == nil {
			sent(r)
		}
	} else {
		// A stdin that stays open (a terminal, a pipe) must not hold off a
		// signal: the read returns when the context ends.
		in, release := safeio.Interruptible(c.Context, c.App.Reader)
		err = feed.Run(c.Context, app, in, sent)
		release()
	}
	out.Flush()
	if cerr := app.Close(); err == nil && cerr != nil {
		err = cerr
	}
	var ie *produce.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return usageError("produce: stdin line %d: %v", ie.Line, ie.Err)
	}
	return produceFail(err)
}

// appendProduceResponse is one response line: baseOffset, lastOffset,
// logAppendTime and logStartOffset, as text or a JSON object.
func appendProduceResponse(b []byte, r produce.Result, asJSON bool) []byte {
	if asJSON {
		b = append(b, `{"type":"produceResponse","baseOffset":`...)
		b = strconv.AppendInt(b, r.BaseOffset, 10)
		b = append(b, `,"lastOffset":`...)
		b = strconv.AppendInt(b, r.LastOffset, 10)
		b = append(b, `,"logAppendTime":`...)
		b = strconv.AppendInt(b, r.LogAppendTime, 10)
		b = append(b, `,"logStartOffset":`...)
		b = strconv.AppendInt(b, r.LogStartOffset, 10)
		return append(b, "}\n"...)
	}
	b = append(b, "baseOffset: "...)
	b = strconv.AppendInt(b, r.BaseOffset, 10)
	b = append(b, " lastOffset: "...)
	b = strconv.AppendInt(b, r.LastOffset, 10)
	b = append(b, " logAppendTime: "...)
	b = strconv.AppendInt(b, r.LogAppendTime, 10)
	b = append(b, " logStartOffset: "...)
	b = strconv.AppendInt(b, r.LogStartOffset, 10)
	return append(b, '\n')
}

// produceFail is fail("produce", err): package produce's own errors say
// "produce: " already, and fail does not say it twice, so the line reads
// "klog: produce: producer 5 epoch 1 ... (fenced)", not "produce: produce:".
func produceFail(err error) error { return fail("produce", err) }

// produceFeed reads the input and batching flags.
func produceFeed(c *cli.Context) (*produce.Feed, error) {
	codec, ok := format.ParseCompression(c.String(prodCodecFlag.Name))
	if !ok {
		return nil, usageError("produce: unknown --compression %q", c.String(prodCodecFlag.Name))
	}
	tsType, err := format.ParseTimestampType(c.String(prodTSTypeFlag.Name))
	if err != nil {
		return nil, usageError("produce: --timestamp-type: %v", err)
	}
	input, err := produce.ParseInputFormat(c.String(prodInputFlag.Name))
	if err != nil {
		return nil, usageError("produce: --%s: %v", prodInputFlag.Name, err)
	}
	// A producer id and epoch are what a batch header stores: never
	// wrapped into the int16 field or dropped without a word.
	switch pid, epoch := c.Int64(prodPIDFlag.Name), c.Int(prodEpochFlag.Name); {
	case pid < -1:
		return nil, usageError("produce: --producer-id must be 0 or more (-1: none), got %d", pid)
	case epoch < 0 || epoch > math.MaxInt16:
		return nil, usageError("produce: --producer-epoch must be between 0 and %d (Kafka's producer epoch is a short), got %d", math.MaxInt16, epoch)
	case c.IsSet(prodEpochFlag.Name) && pid < 0:
		return nil, usageError("produce: --producer-epoch needs --producer-id")
	}
	if err := int32Flags(c, prodCoordFlag.Name); err != nil {
		return nil, err
	}
	headers, err := produceHeaders(c)
	if err != nil {
		return nil, err
	}
	return &produce.Feed{Format: input, KeySeparator: c.String(prodKeySepFlag.Name), Headers: headers,
		MaxRecords: c.Int(prodRecordsFlag.Name), MaxBytes: c.Int(prodBytesFlag.Name),
		Template: produce.Batch{Compression: codec, TimestampType: tsType, Producer: producerFlags(c), Transactional: c.Bool(prodTxnFlag.Name)}}, nil
}

// producerFlags is --producer-id and --producer-epoch, nil without an id.
func producerFlags(c *cli.Context) *produce.Producer {
	if pid := c.Int64(prodPIDFlag.Name); pid >= 0 {
		return &produce.Producer{ID: pid, Epoch: int16(c.Int(prodEpochFlag.Name))}
	}
	return nil
}

// produceOptions reads the appender's flags.
func produceOptions(c *cli.Context) (produce.Options, error) {
	opts := produce.Options{
		SegmentBytes:       c.Int64(prodSegmentFlag.Name),
		IndexIntervalBytes: c.Int64(prodIntervalFlag.Name),
		TruncateInvalid:    c.Bool(prodTruncFlag.Name),
		Wait:               c.Bool(prodWaitFlag.Name),
	}
	var err error
	if opts.Sync, err = produce.ParseSync(c.String(prodFsyncFlag.Name)); err != nil {
		return opts, usageError("produce: --fsync: %v", err)
	}
	if e := c.Int(prodLeaderFlag.Name); e < 0 || e > math.MaxInt32 {
		return opts, usageError("produce: --leader-epoch must be between 0 and %d", math.MaxInt32)
	}
	opts.PartitionLeaderEpoch = int32(c.Int(prodLeaderFlag.Name))
	if c.IsSet(prodTopicIDFlag.Name) {
		if opts.TopicID, err = format.ParseTopicID(c.String(prodTopicIDFlag.Name)); err != nil {
			return opts, usageError("produce: --%s: %v", prodTopicIDFlag.Name, err)
		}
	}
	return opts, nil
}

// openAppender opens the partition for appending at the leader epoch the
// flags ask for: a leader keeps writing at the partition's current epoch;
// an older one is fenced (FENCED_LEADER_EPOCH): like INVALID_PRODUCER_EPOCH
// that is the broker's answer, not trouble, so it exits 1 (README, "Exit
// codes").
func openAppender(c *cli.Context, dir string, opts produce.Options) (*produce.Appender, error) {
	app, err := produce.OpenContext(c.Context, dir, opts)
	if err != nil {
		var ite *produce.InvalidTailError
		if errors.As(err, &ite) {
			return nil, findingsError("produce: %w", err)
		}
		return nil, produceFail(err)
	}
	if latest := app.LatestLeaderEpoch(); latest > opts.PartitionLeaderEpoch {
		if c.IsSet(prodLeaderFlag.Name) {
			app.Close()
			return nil, findingsError("produce: --leader-epoch %d is below the partition's latest leader epoch %d (fenced: FENCED_LEADER_EPOCH)", opts.PartitionLeaderEpoch, latest)
		}
		if err := app.SetLeaderEpoch(latest); err != nil {
			app.Close()
			return nil, troubleError("produce: %w", err)
		}
	}
	if t := app.Truncated; t != nil {
		fmt.Fprintf(c.App.ErrWriter, "klog: produce: cut %d bytes at position %d of %s (%s)\n", t.Bytes, t.Pos, t.Segment, t.Reason)
	}
	return app, nil
}
