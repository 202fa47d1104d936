package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/urfave/cli/v2"
)

var (
	prodLogFlag      = &cli.StringFlag{Name: "log", Usage: "partition directory to append to (created with 00000000000000000000.log on first use)", Required: true}
	prodInputFlag    = &cli.StringFlag{Name: "input", Value: "lines", Usage: "lines: one value per line; json: one object per line {key, value, headers, timestamp}"}
	prodKeySepFlag   = &cli.StringFlag{Name: "key-separator", Usage: "with --input lines, split each line into key and value at the first S"}
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
	prodLeaderFlag   = &cli.IntFlag{Name: "leader-epoch", Usage: "partition leader epoch written in the batches and leader-epoch-checkpoint (default: the partition's latest, 0 for a new one)"}
)

var produceCommand = &cli.Command{
	Name:  "produce",
	Usage: "append records from stdin to a partition directory as a broker does",
	Description: `Reads records from stdin and appends v2 batches at the partition's log end
offset, maintaining .index/.timeindex, rolling segments, continuing producer
sequences and writing transaction markers, .txnindex entries and producer
snapshots as a Kafka broker does. The directory is locked while appending.
On exit the partition is left as a broker's clean shutdown leaves it: the
active segment's .timeindex ends with its largest timestamp, a producer
snapshot is written at the log end offset, and leader-epoch-checkpoint holds
the leader epochs of the batches (--leader-epoch).

With --acks 1 or all, one line per batch: baseOffset, lastOffset,
logAppendTime (-1 for CreateTime) and logStartOffset. --acks 0 prints nothing.`,
	Flags: []cli.Flag{prodLogFlag, prodInputFlag, prodKeySepFlag, prodRecordsFlag, prodBytesFlag, prodCodecFlag,
		prodTSTypeFlag, prodPIDFlag, prodEpochFlag, prodTxnFlag, prodEndTxnFlag, prodCoordFlag, prodAcksFlag, prodJSONFlag,
		prodSegmentFlag, prodIntervalFlag, prodFsyncFlag, prodTruncFlag, prodWaitFlag, prodLeaderFlag},
	Action: runProduce,
}

func runProduce(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usageError("produce: unexpected arguments %q (records come from stdin)", c.Args().Slice())
	}
	codec, ok := format.ParseCompression(c.String(prodCodecFlag.Name))
	if !ok {
		return usageError("produce: unknown --compression %q", c.String(prodCodecFlag.Name))
	}
	var tsType format.TimestampType
	switch c.String(prodTSTypeFlag.Name) {
	case "create", "CreateTime":
		tsType = format.CreateTime
	case "log-append", "LogAppendTime":
		tsType = format.LogAppendTime
	default:
		return usageError("produce: --timestamp-type must be create or log-append")
	}
	acks := c.String(prodAcksFlag.Name)
	if acks != "0" && acks != "1" && acks != "all" && acks != "-1" {
		return usageError("produce: --acks must be 0, 1 or all")
	}
	input := c.String(prodInputFlag.Name)
	if input != "lines" && input != "json" {
		return usageError("produce: --input must be lines or json")
	}
	opts := produce.Options{
		SegmentBytes:       c.Int64(prodSegmentFlag.Name),
		IndexIntervalBytes: c.Int64(prodIntervalFlag.Name),
		TruncateInvalid:    c.Bool(prodTruncFlag.Name),
		Wait:               c.Bool(prodWaitFlag.Name),
	}
	switch c.String(prodFsyncFlag.Name) {
	case "batch":
		opts.Sync = produce.SyncBatch
	case "end":
		opts.Sync = produce.SyncAtClose
	case "never":
		opts.Sync = produce.SyncNever
	default:
		return usageError("produce: --fsync must be batch, end or never")
	}
	epochSet := c.IsSet(prodLeaderFlag.Name)
	if e := c.Int(prodLeaderFlag.Name); e < 0 || e > math.MaxInt32 {
		return usageError("produce: --leader-epoch must be between 0 and %d", math.MaxInt32)
	}
	opts.PartitionLeaderEpoch = int32(c.Int(prodLeaderFlag.Name))
	pid := c.Int64(prodPIDFlag.Name)
	if c.Bool(prodTxnFlag.Name) && pid < 0 {
		return usageError("produce: --transactional needs --producer-id")
	}
	app, err := produce.Open(c.String(prodLogFlag.Name), opts)
	if err != nil {
		var ite *produce.InvalidTailError
		if errors.As(err, &ite) {
			return &exitError{code: ExitFindings, msg: "produce: " + err.Error()}
		}
		return fail("produce", err)
	}
	// A leader keeps writing at the partition's current epoch; an older one
	// is fenced (FENCED_LEADER_EPOCH).
	if latest := app.LatestLeaderEpoch(); latest > opts.PartitionLeaderEpoch {
		if epochSet {
			app.Close()
			return &exitError{code: ExitTrouble, msg: fmt.Sprintf("produce: --leader-epoch %d is below the partition's latest leader epoch %d (a broker fences it)", opts.PartitionLeaderEpoch, latest)}
		}
		if err := app.SetLeaderEpoch(latest); err != nil {
			app.Close()
			return &exitError{code: ExitTrouble, msg: "produce: " + err.Error()}
		}
	}
	if t := app.Truncated; t != nil {
		fmt.Fprintf(c.App.ErrWriter, "klog: produce: cut %d bytes at position %d of %s (%s)\n", t.Bytes, t.Pos, t.Segment, t.Reason)
	}
	out := bufio.NewWriter(c.App.Writer)
	report := func(r produce.Result) {
		if acks == "0" {
			return
		}
		if c.Bool(prodJSONFlag.Name) {
			fmt.Fprintf(out, `{"baseOffset":%d,"lastOffset":%d,"logAppendTime":%d,"logStartOffset":%d}`+"\n",
				r.BaseOffset, r.LastOffset, r.LogAppendTime, r.LogStartOffset)
			out.Flush()
			return
		}
		fmt.Fprintf(out, "baseOffset: %d lastOffset: %d logAppendTime: %d logStartOffset: %d\n",
			r.BaseOffset, r.LastOffset, r.LogAppendTime, r.LogStartOffset)
		out.Flush() // a response is sent when the batch is appended, not at exit
	}
	runErr := func() error {
		if et := c.String(prodEndTxnFlag.Name); et != "" {
			if et != "commit" && et != "abort" {
				return usageError("produce: --end-txn must be commit or abort")
			}
			if pid < 0 {
				return usageError("produce: --end-txn needs --producer-id")
			}
			r, err := app.EndTxn(pid, int16(c.Int(prodEpochFlag.Name)), et == "commit", int32(c.Int(prodCoordFlag.Name)))
			if err != nil {
				return &exitError{code: exitCode(err), msg: err.Error()}
			}
			report(r)
			return nil
		}
		batch := &produce.Batch{Compression: codec, TimestampType: tsType, ProducerID: pid,
			ProducerEpoch: int16(c.Int(prodEpochFlag.Name)), Transactional: c.Bool(prodTxnFlag.Name)}
		maxRecs, maxBytes := c.Int(prodRecordsFlag.Name), c.Int(prodBytesFlag.Name)
		if maxRecs <= 0 {
			maxRecs = 1
		}
		pending := 0
		flush := func() error {
			if len(batch.Records) == 0 {
				return nil
			}
			r, err := app.Append(batch)
			if err != nil {
				return &exitError{code: exitCode(err), msg: err.Error()}
			}
			report(r)
			batch.Records = batch.Records[:0]
			pending = 0
			return nil
		}
		in := bufio.NewReaderSize(c.App.Reader, 1<<20)
		sep := c.String(prodKeySepFlag.Name)
		for lineNo := 1; ; lineNo++ {
			line, err := in.ReadBytes('\n')
			if len(line) == 0 && err == io.EOF {
				break
			}
			if err != nil && err != io.EOF {
				return &exitError{code: ExitTrouble, msg: "produce: reading stdin: " + err.Error()}
			}
			line = trimNewline(line)
			var rec format.Record
			if input == "json" {
				if len(strings.TrimSpace(string(line))) == 0 {
					continue
				}
				if rec, err = parseJSONRecord(line); err != nil {
					return usageError("produce: stdin line %d: %v", lineNo, err)
				}
			} else {
				rec.Value = line
				if sep != "" {
					if i := strings.Index(string(line), sep); i >= 0 {
						rec.Key, rec.Value = line[:i], line[i+len(sep):]
					}
				}
			}
			batch.Records = append(batch.Records, rec)
			pending += len(rec.Key) + len(rec.Value)
			if len(batch.Records) >= maxRecs || pending >= maxBytes {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	}()
	out.Flush()
	if err := app.Close(); err != nil && runErr == nil {
		runErr = fail("produce", err)
	}
	return runErr
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	// ReadBytes gave a fresh slice; make it non-nil even when empty: an
	// empty line is an empty value, as kafka-console-producer sends it,
	// not a null (a tombstone).
	if b == nil {
		return []byte{}
	}
	return b
}

type jsonHeader struct {
	Key           string          `json:"key"`
	Value         json.RawMessage `json:"value"`
	ValueEncoding string          `json:"valueEncoding"`
}

type jsonRecord struct {
	Key           json.RawMessage `json:"key"`
	Value         json.RawMessage `json:"value"`
	KeyEncoding   string          `json:"keyEncoding"`
	ValueEncoding string          `json:"valueEncoding"`
	Headers       []jsonHeader    `json:"headers"`
	Timestamp     *int64          `json:"timestamp"`
}

// parseJSONRecord reads one --input json line: the same convention as dump's
// JSON (strings, null, or base64 with keyEncoding/valueEncoding).
func parseJSONRecord(line []byte) (format.Record, error) {
	var jr jsonRecord
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&jr); err != nil {
		return format.Record{}, err
	}
	var rec format.Record
	var err error
	if rec.Key, err = jsonBytes(jr.Key, jr.KeyEncoding); err != nil {
		return rec, fmt.Errorf("key: %w", err)
	}
	if rec.Value, err = jsonBytes(jr.Value, jr.ValueEncoding); err != nil {
		return rec, fmt.Errorf("value: %w", err)
	}
	for _, h := range jr.Headers {
		v, err := jsonBytes(h.Value, h.ValueEncoding)
		if err != nil {
			return rec, fmt.Errorf("header %q: %w", h.Key, err)
		}
		rec.Headers = append(rec.Headers, format.Header{Key: []byte(h.Key), Value: v})
	}
	if jr.Timestamp != nil {
		if *jr.Timestamp < 0 {
			return rec, errors.New("timestamp must not be negative")
		}
		rec.Timestamp = *jr.Timestamp
	}
	return rec, nil
}

func jsonBytes(raw json.RawMessage, enc string) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New("must be a string or null")
	}
	switch enc {
	case "", "utf8", "text":
		if s == "" {
			return []byte{}, nil
		}
		return []byte(s), nil
	case "base64":
		return base64.StdEncoding.DecodeString(s)
	}
	return nil, errors.New("unknown encoding " + strconv.Quote(enc))
}
