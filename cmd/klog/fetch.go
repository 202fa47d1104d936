package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/produce"
	"github.com/urfave/cli/v2"
)

var (
	fetchLogFlag      = &cli.StringFlag{Name: "log", Usage: "the partition directory, as the DIR argument gives it"}
	fetchOffsetFlag   = &cli.StringFlag{Name: "offset", Aliases: []string{"o"}, Usage: "fetch offset: N, -N (the last N before the high watermark), earliest or latest (kcat's beginning, end), stored (--group's commit), s@T or @T (the first offset at time T) (default: the log start, or the group's committed offset)"}
	fetchMaxFlag      = &cli.IntFlag{Name: "max-bytes", Value: fetch.DefaultMaxBytes, Usage: "response max bytes (fetch.max.bytes)"}
	fetchPartMaxFlag  = &cli.IntFlag{Name: "partition-max-bytes", Value: fetch.DefaultPartitionMaxBytes, Usage: "partition max bytes (max.partition.fetch.bytes)"}
	fetchIsoFlag      = &cli.StringFlag{Name: "isolation", Value: "read_uncommitted", Usage: "read_uncommitted or read_committed"}
	fetchReplicaFlag  = &cli.BoolFlag{Name: "replica", Usage: "fetch as a follower (bounded by the log end offset, not the high watermark)"}
	fetchHWFlag       = &cli.Int64Flag{Name: "high-watermark", Value: -1, Usage: "high watermark (default: replication-offset-checkpoint in the log dir, else the log end offset)"}
	fetchMinBytesFlag = &cli.IntFlag{Name: "min-bytes", Value: 1, Usage: "long poll until this many bytes are available"}
	fetchMaxWaitFlag  = &cli.DurationFlag{Name: "max-wait", Value: 0, Usage: "long poll for at most this long (fetch.max.wait.ms)"}
	fetchMinOneFlag   = &cli.BoolFlag{Name: "min-one-message", Value: true, Usage: "KIP-74: return the first batch whole even past max bytes (false: the old stall)"}
	fetchJSONFlag     = &cli.BoolFlag{Name: "json", Aliases: []string{"J"}, Usage: "one JSON object per fetch, shaped like a broker request-log line"}
	fetchFollowFlag   = &cli.BoolFlag{Name: "follow", Usage: "run a consumer: poll to the high watermark, commit, keep long-polling"}
	fetchGroupFlag    = &cli.StringFlag{Name: "group", Aliases: []string{"G"}, Usage: "consumer group whose committed offset --follow resumes from and commits to (__consumer_offsets in the log dir, as klog serve --writable keeps them)"}
	fetchStateFlag    = &cli.StringFlag{Name: "state", Usage: "with --group, keep the group's offsets in this directory's __consumer_offsets instead of the log dir's (a read-only klog serve's --state)"}
	fetchTimeoutFlag  = &cli.DurationFlag{Name: "timeout", Usage: "with --follow, stop after this long (default: until interrupted)"}
	fetchDataFlag     = &cli.BoolFlag{Name: "print-data-log", Value: true, Usage: "print keys and values"}
	fetchConsumerFlag = &cli.BoolFlag{Name: "consumer", Usage: "print what a consumer's poll hands the application (as --follow does for one poll), not the response"}
	fetchResetFlag    = &cli.StringFlag{Name: "reset", Value: "earliest", Usage: "with --follow, auto.offset.reset: where to start without a committed offset, and where to go when the position is out of range: earliest, latest or none"}
)

var fetchCommand = &cli.Command{
	Name:      "fetch",
	Usage:     "serve one fetch from a partition directory as a broker would, or run a consumer",
	ArgsUsage: "DIR",
	Description: `Applies the broker's read rules to the partition directory DIR (--log DIR
says the same): the fetch offset, max bytes (the response may end inside a
batch), KIP-74, the high watermark or last stable offset bound, aborted
transactions for read_committed, long polls.
Prints a summary line and the records of the response, each one a consumer
would not hand the application marked "dropped: below-fetch-offset",
"aborted" or "control"; --json prints one request-log-shaped object per
fetch. --consumer prints only what a consumer hands over (kcat, librdkafka,
franz-go), as --follow does for one poll. --follow --group G runs a consumer that prints position and
lag after each poll and commits to __consumer_offsets (the store klog serve
uses: a group committed through serve resumes here, and the reverse; --state
names a read-only serve's state directory). --offset N overrides the committed offset;
--reset earliest|latest|none (auto.offset.reset) says where to start without
one and where to go when the position is out of range (retention deleted
it); --json prints one object per record and per poll.`,
	Flags: append([]cli.Flag{fetchLogFlag, fetchOffsetFlag, fetchMaxFlag, fetchPartMaxFlag, fetchIsoFlag, fetchReplicaFlag,
		fetchHWFlag, fetchMinBytesFlag, fetchMaxWaitFlag, fetchMinOneFlag, fetchJSONFlag, fetchFollowFlag, fetchGroupFlag,
		fetchStateFlag, fetchTimeoutFlag, fetchDataFlag, keyEncFlag, valueEncFlag, fetchResetFlag, fetchConsumerFlag},
		recordPayloadFlags...),
	Action: runFetch,
}

func runFetch(c *cli.Context) error {
	dir, err := partitionDirArg(c, "fetch", fetchLogFlag.Name, "", "fetch reads a partition directory, not stdin")
	if err != nil {
		return err
	}
	if err := int32Flags(c, fetchMaxFlag.Name, fetchPartMaxFlag.Name, fetchMinBytesFlag.Name); err != nil {
		return err
	}
	iso, err := parseIsolation(c.String(fetchIsoFlag.Name))
	if err != nil {
		return usageError("fetch: --isolation: %v", err)
	}
	offset, err := fetchOffsetArg(c)
	if err != nil {
		return err
	}
	recOpts, err := recordOptions(c, c.Bool(fetchDataFlag.Name))
	if err != nil {
		return err
	}
	view, err := payloadView(c, []string{dir}, c.Bool(fetchJSONFlag.Name))
	if err != nil {
		return err
	}
	defer whereFailed(c, view)
	sayDecodeFailures(c, view)
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	switch {
	case c.Bool(fetchFollowFlag.Name):
		err = follow(c, dir, iso, offset, view, out)
	case c.Bool(fetchConsumerFlag.Name):
		err = consumerPoll(c, dir, iso, offset, recOpts, view, out)
	default:
		err = oneFetch(c, dir, iso, offset, recOpts, view, out)
	}
	return decodeFindings(view, err)
}

// oneFetch serves one fetch and prints the response.
func oneFetch(c *cli.Context, dir string, iso fetch.Isolation, offset *offsetSpec, recOpts ndjson.Options, view *payload.View, out *bufio.Writer) error {
	l, err := openFetchLog(dir, c.Int64(fetchHWFlag.Name))
	if err != nil {
		return fail("fetch", err)
	}
	fo := fetch.Out{Data: c.Bool(fetchDataFlag.Name), View: view, Topic: l.Topic(), Partition: l.Partition()}
	if _, ok := l.CheckpointHighWatermark(); !ok && c.Int64(fetchHWFlag.Name) < 0 && !c.Bool(fetchReplicaFlag.Name) {
		fmt.Fprintf(c.App.ErrWriter, "klog: fetch: no high watermark for %s in replication-offset-checkpoint; using the log end offset %d\n", dir, l.LogEndOffset())
	}
	// The flags carry the consumer defaults: what they say is used as
	// given, 0 included (KIP-74: the first batch whole).
	req := fetch.Request{
		FetchOffset: -1, MaxBytes: int32(c.Int(fetchMaxFlag.Name)),
		PartitionMaxBytes: int32(c.Int(fetchPartMaxFlag.Name)), MinBytes: int32(c.Int(fetchMinBytesFlag.Name)),
		MaxWait: c.Duration(fetchMaxWaitFlag.Name), Isolation: iso, Replica: c.Bool(fetchReplicaFlag.Name),
		NoMinOneMessage: !c.Bool(fetchMinOneFlag.Name),
	}
	if offset != nil {
		if req.FetchOffset, err = resolveFetchOffset(l, *offset, req.Replica, iso, c.String(fetchGroupFlag.Name)); err != nil {
			return fail("fetch", err)
		}
	}
	if req.FetchOffset < 0 {
		req.FetchOffset = l.LogStartOffset()
	}
	start := time.Now()
	f, err := fetch.LongPoll(c.Context, l, req, nil)
	took := time.Since(start)
	var oor *fetch.OutOfRangeError
	if err != nil && !errors.As(err, &oor) {
		return fail("fetch", err)
	}
	var derr error // a batch or record of the response that cannot be read
	if c.Bool(fetchJSONFlag.Name) {
		var werr error
		if derr, werr = f.WriteJSON(out, req, err, took, recOpts, fo); werr != nil {
			return troubleError("fetch: %w", werr)
		}
	} else {
		derr = f.WriteText(out, err, iso, fo)
	}
	if oor != nil {
		out.Flush()
		return findingsError("fetch: OFFSET_OUT_OF_RANGE: %w", oor)
	}
	if derr != nil {
		// The broker would send these bytes as they are; the consumer's
		// CRC check or record decoding rejects them: a finding (exit 1),
		// named by segment and byte position.
		out.Flush()
		return findingsError("fetch: %s: %w", f.Segment, derr)
	}
	out.Flush()
	return corruptTail("fetch", l)
}

// fetchOffsetArg is --offset, nil when not given.
func fetchOffsetArg(c *cli.Context) (*offsetSpec, error) {
	if !c.IsSet(fetchOffsetFlag.Name) {
		return nil, nil
	}
	o, err := parseOffset(c.String(fetchOffsetFlag.Name))
	switch {
	case err != nil:
		return nil, usageError("fetch: --offset: %v", err)
	case o.kind == offsetTimeEnd:
		return nil, usageError("fetch: --offset: e@T ends a range; a fetch starts at an offset (s@T, @T)")
	case o.kind == offsetStored && c.String(fetchGroupFlag.Name) == "":
		return nil, usageError("fetch: --offset: %v", errStoredNeedsGroup)
	}
	return &o, nil
}

// openFetchLog opens the partition model; hw >= 0 is --high-watermark, the
// high watermark the reads are bounded by instead of the checkpoint's.
func openFetchLog(dir string, hw int64) (*partition.Log, error) {
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		return nil, err
	}
	if hw >= 0 {
		l.SetHighWatermark(hw)
	}
	return l, nil
}

// resolveFetchOffset reads --offset against the log as a consumer sees it:
// earliest is the log start offset; latest is the high watermark (the
// --high-watermark flag, else the checkpoint's, else the log end offset),
// the last stable offset for read_committed, the log end offset for a
// replica; -N is N offsets before latest.
func resolveFetchOffset(l *partition.Log, o offsetSpec, replica bool, iso fetch.Isolation, group string) (int64, error) {
	off, err := l.Offsets()
	if err != nil {
		return 0, err
	}
	end := off.HighWatermark
	switch {
	case replica:
		end = off.LogEndOffset
	case iso == fetch.ReadCommitted:
		end = off.LastStableOffset
	}
	return o.resolveLog(l, off.LogStartOffset, end, group)
}

// consumerPoll is --consumer: one poll of a consumer from the fetch offset
// (the log start without --offset), printed as --follow prints a poll: the
// records the application gets, then the position.
func consumerPoll(c *cli.Context, dir string, iso fetch.Isolation, offset *offsetSpec, recOpts ndjson.Options, view *payload.View, out *bufio.Writer) error {
	switch {
	case c.Bool(fetchReplicaFlag.Name):
		return usageError("fetch: --consumer reads as a consumer, not as a replica (--replica)")
	case c.IsSet(fetchGroupFlag.Name) && (offset == nil || offset.kind != offsetStored):
		return usageError("fetch: --consumer is one poll from --offset (stored: the group's commit); a group's consumer is --follow --group")
	}
	l, err := openFetchLog(dir, c.Int64(fetchHWFlag.Name))
	if err != nil {
		return fail("fetch", err)
	}
	start := l.LogStartOffset()
	if offset != nil {
		if start, err = resolveFetchOffset(l, *offset, false, iso, c.String(fetchGroupFlag.Name)); err != nil {
			return fail("fetch", err)
		}
	}
	cons, err := fetch.NewLogConsumer(l, fetch.ConsumerConfig{StartOffset: &start, Reset: fetch.ResetNone,
		MaxBytes: int32(c.Int(fetchMaxFlag.Name)), PartitionMaxBytes: int32(c.Int(fetchPartMaxFlag.Name)),
		MinBytes: int32(c.Int(fetchMinBytesFlag.Name)), MaxWait: c.Duration(fetchMaxWaitFlag.Name), Isolation: iso,
		NoMinOneMessage: !c.Bool(fetchMinOneFlag.Name)})
	if err != nil {
		return fail("fetch", err)
	}
	defer cons.Close()
	recs, f, err := cons.Poll(c.Context)
	fw := &fetch.FollowWriter{Out: out, JSON: c.Bool(fetchJSONFlag.Name), Opts: recOpts, View: view, Topic: l.Topic(), Partition: l.Partition()}
	fw.Records(recs)
	if err != nil {
		out.Flush()
		return followError(err, f)
	}
	fw.Position(cons)
	return nil
}

// follow runs a consumer until the context ends: poll, print, commit.
func follow(c *cli.Context, dir string, iso fetch.Isolation, offset *offsetSpec, view *payload.View, out *bufio.Writer) error {
	signalEndsFollow(c)
	l, err := openFetchLog(dir, c.Int64(fetchHWFlag.Name))
	if err != nil {
		return fail("fetch", err)
	}
	var start *int64
	if offset != nil && offset.kind != offsetStored { // stored: the group's commit, the consumer's own start
		off, err := resolveFetchOffset(l, *offset, false, iso, c.String(fetchGroupFlag.Name))
		if err != nil {
			return fail("fetch", err)
		}
		if off >= 0 {
			start = &off
		}
	}
	wait := c.Duration(fetchMaxWaitFlag.Name)
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	reset, err := fetch.ParseOffsetReset(c.String(fetchResetFlag.Name))
	if err != nil {
		return usageError("fetch: --reset: %v", err)
	}
	store, err := groupOffsets(c, dir)
	if err != nil {
		return err
	}
	if store != nil {
		defer store.Close()
	}
	cons, err := fetch.NewLogConsumer(l, fetch.ConsumerConfig{
		Group: c.String(fetchGroupFlag.Name), Offsets: store, StartOffset: start, Reset: reset,
		MaxBytes: int32(c.Int(fetchMaxFlag.Name)), PartitionMaxBytes: int32(c.Int(fetchPartMaxFlag.Name)),
		MinBytes: int32(max(1, c.Int(fetchMinBytesFlag.Name))), MaxWait: wait, Isolation: iso,
		NoMinOneMessage: !c.Bool(fetchMinOneFlag.Name),
	})
	if err != nil {
		return fail("fetch", err)
	}
	defer cons.Close()
	ctx := c.Context
	if d := c.Duration(fetchTimeoutFlag.Name); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	recOpts, err := recordOptions(c, c.Bool(fetchDataFlag.Name))
	if err != nil {
		return err
	}
	fw := &fetch.FollowWriter{Out: out, JSON: c.Bool(fetchJSONFlag.Name), Opts: recOpts, View: view, Topic: l.Topic(), Partition: l.Partition()}
	for ctx.Err() == nil && !view.Full() {
		recs, f, err := cons.Poll(ctx)
		fw.Records(recs)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			out.Flush()
			return followError(err, f)
		}
		fw.Position(cons)
		out.Flush()
		if c.String(fetchGroupFlag.Name) != "" {
			if err := cons.Commit(); err != nil {
				return fail("fetch: commit", err)
			}
		}
	}
	return nil
}

// groupOffsets opens the committed-offset store of --group: the log dir's
// __consumer_offsets, or --state's (nil without --group).
func groupOffsets(c *cli.Context, dir string) (*offsetstore.Store, error) {
	state := c.String(fetchStateFlag.Name)
	if c.String(fetchGroupFlag.Name) == "" {
		if state != "" {
			return nil, usageError("fetch: --state goes with --group")
		}
		return nil, nil
	}
	store, _, err := offsetstore.OpenFor(filepath.Dir(filepath.Clean(dir)), state, produce.Options{})
	if err != nil {
		return nil, fail("fetch: --group", err)
	}
	return store, nil
}

// followError is how a poll's error ends fetch --follow: a record the
// consumer rejects (a CRC, a size over the limit, bytes that do not
// decode) is a finding, named by its segment; anything else is what
// exitCode makes of it.
func followError(err error, f *fetch.Fetched) error {
	var cre *format.CorruptRecordError
	var rex *fetch.RecordExceedsMaxBytesError
	var pe *format.PosError // a record that cannot be decoded
	if errors.As(err, &rex) || f == nil || f.Segment == "" {
		if errors.As(err, &cre) || errors.As(err, &rex) || errors.As(err, &pe) {
			return findingsError("fetch: %w", err)
		}
		return fail("fetch", err)
	}
	if errors.As(err, &cre) || errors.As(err, &pe) {
		return findingsError("fetch: %s: %w", f.Segment, err)
	}
	return failWith(err, "fetch: %s: %v", f.Segment, err)
}
