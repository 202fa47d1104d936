package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/tiered"
	"github.com/urfave/cli/v2"
)

var tieredLsCommand = &cli.Command{
	Name:  "ls",
	Usage: "list the remote segments of each partition with their state, offsets, size, leader epochs and objects",
	Description: tieredInputs + `

One table per partition: a row per remote segment (from the metadata and
from the store), its state (COPY_SEGMENT_STARTED ... DELETE_SEGMENT_FINISHED,
or NO_METADATA for objects no record names), offsets, segmentSizeInBytes,
leader epochs, how many of the layout's objects the store holds, and the
first finding about it (names and sizes only: klog tiered verify reads the
bytes). --json writes "remoteSegment", "remoteFinding" and
"remotePartition" objects (README, "klog tiered").

Exit status: 0 listed; 2 usage or I/O trouble, or nothing found.`,
	Flags:  tieredFlags(viewsJSONFlag, formatFlag),
	Action: runTieredLs,
}

var tieredVerifyCommand = &cli.Command{
	Name:  "verify",
	Usage: "verify every batch of the remote segments (CRC, framing, records) and the store against the metadata and the local log",
	Description: tieredInputs + `

Each remote .log is streamed (ranged reads, a bounded read-ahead, --jobs
segments at once) through verify's checks of a .log; the store is compared
with the folded metadata: missing objects of COPY_SEGMENT_FINISHED
segments, orphans, deleted segments still stored, sizes, offsets,
timestamps and leader epochs against the batches, gaps and overlaps
between remote segments and against the local log start. Each finding
names the object key, byte position and offset, and proposes a repair;
klog applies none.

Exit status: 0 clean; 1 findings (the report is printed in full, then one
line on stderr names the first); 2 usage or I/O trouble.`,
	Flags:  tieredFlags(viewsJSONFlag, tieredJobsFlag, tieredNoReadFlag, maxBatchFlag),
	Action: runTieredVerify,
}

func runTieredLs(c *cli.Context) error {
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	s, err := readTieredSetup(c)
	if err != nil {
		return err
	}
	sum, first, err := tieredRun(c, s, false, func(w io.Writer, rep *tiered.PartitionReport) error {
		if format == "json" {
			return inspect.WriteTieredJSON(w, rep)
		}
		return inspect.WriteTieredSegments(styled(c, w, format), rep)
	})
	return tieredExit(c, sum, first, err, false)
}

func runTieredVerify(c *cli.Context) error {
	s, err := readTieredSetup(c)
	if err != nil {
		return err
	}
	js := c.Bool(viewsJSONFlag.Name)
	sum, first, err := tieredRun(c, s, !c.Bool(tieredNoReadFlag.Name), func(w io.Writer, rep *tiered.PartitionReport) error {
		if js {
			return inspect.WriteTieredJSON(w, rep)
		}
		return inspect.WriteTieredFindings(w, rep)
	})
	if err == nil {
		if js {
			err = ndjson.WriteTyped(c.App.Writer, "remoteSummary", sum)
		} else {
			for i := range sum.Unplaced {
				fmt.Fprintln(c.App.Writer, string(sum.Unplaced[i].Kind)+": "+sum.Unplaced[i].Message)
			}
			fmt.Fprintf(c.App.Writer, "%d partitions, %d remote segments, %d objects (%d bytes), %d metadata records: %d findings\n",
				sum.Partitions, sum.Segments, sum.Objects, sum.Bytes, sum.MetadataRecords, sum.Findings)
		}
	}
	return tieredExit(c, sum, first, err, true)
}

var tieredDumpCommand = &cli.Command{
	Name:      "dump",
	Usage:     "print remote segment files exactly as kafka-dump-log prints the local ones",
	ArgsUsage: "KEY...",
	Description: tieredInputs + `

KEY is an object key of a remote segment (relative to --remote). Its file
is printed under Kafka's name for it (00000000000000000008.log, .index,
.timeindex, .snapshot, .txnindex, leader-epoch-checkpoint), byte for byte
as Kafka 4.3.1's kafka-dump-log prints that file: an Aiven .log is read
through its chunks, an Aiven .indexes prints every index it holds, and an
.index or .timeindex is checked against the remote .log as kafka-dump-log
checks it against the local one. Nothing is copied to disk.

Exit status: as klog dump.`,
	Flags:  tieredFlags(deepFlag, printDataFlag, skipMetaFlag, verifyIdxFlag, sanityFlag, maxMsgFlag, maxBatchFlag, jsonFlag, keyEncFlag, valueEncFlag),
	Action: runTieredDump,
}

func runTieredDump(c *cli.Context) error {
	keys := c.Args().Slice()
	if len(keys) == 0 {
		return usageError("tiered dump: no KEY given (an object key of a remote segment)")
	}
	if err := int32Flags(c, maxMsgFlag.Name); err != nil {
		return err
	}
	s, err := readTieredSetup(c)
	if err != nil {
		return err
	}
	opts := dump.Options{Deep: c.Bool(deepFlag.Name), PrintData: c.Bool(printDataFlag.Name), SkipRecordMetadata: c.Bool(skipMetaFlag.Name),
		MaxBytes: -1, JSON: c.Bool(jsonFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name), VerifyIndexOnly: c.Bool(verifyIdxFlag.Name),
		IndexSanityOnly: c.Bool(sanityFlag.Name), MaxMessageSize: c.Int(maxMsgFlag.Name)}
	if opts.KeyEncoding, err = ndjson.ParseEncoding(c.String(keyEncFlag.Name)); err != nil {
		return usageError("tiered dump: --key-encoding: %v", err)
	}
	if opts.ValueEncoding, err = ndjson.ParseEncoding(c.String(valueEncFlag.Name)); err != nil {
		return usageError("tiered dump: --value-encoding: %v", err)
	}
	var res dump.Result
	for _, key := range keys {
		seg, files, err := tiered.SegmentOf(c.Context, s.remote, s.loc.Prefix+key)
		if err != nil {
			return fail("tiered dump", err)
		}
		var m *tiered.Manifest
		if seg.Layout == tiered.LayoutAiven {
			if m, err = s.remote.ReadManifest(c.Context, seg.Key(tiered.SuffixManifest)); err != nil {
				return fail("tiered dump", err)
			}
		}
		opts.Open = func(name string) (dump.File, error) { return s.remote.OpenFile(c.Context, seg, m, name) }
		r, err := dump.RunContext(c.Context, files, opts, c.App.Writer, c.App.ErrWriter)
		res.Files += r.Files
		res.Findings += r.Findings
		res.Troubles = append(res.Troubles, r.Troubles...)
		if err != nil {
			return dumpExit(c, opts, res, err)
		}
	}
	return dumpExit(c, opts, res, nil)
}

var (
	tieredOffsetFlag     = &cli.StringFlag{Name: "offset", Usage: "the offset to find, or to fetch from: `N`, -N (the last N), earliest (the remote tier's start), latest (the local log end), s@T or @T (the first record at T); default: --timestamp, or the earliest"}
	tieredTimestampFlag  = &cli.StringFlag{Name: "timestamp", Usage: "the first record with a timestamp >= `T` (epoch ms or RFC 3339)"}
	tieredMaxRecordsFlag = &cli.IntFlag{Name: "max-records", Value: 100, Usage: "records to fetch at most (0: all)"}
)

var tieredFindCommand = &cli.Command{
	Name:  "find",
	Usage: "which tier, segment, object and byte position hold an offset or the first record at a timestamp",
	Description: tieredInputs + `

--topic and --partition name one partition. An offset at or past the local
log start is found in the local log; below it, in the finished remote
segment the leader-epoch chains serve (its offset index, then the
batches). A timestamp is looked up as RemoteLogManager does: the remote
segments in offset order, skipping those whose maxTimestampMs is below it,
then the local log.

Exit status: 0 found; 1 in neither tier; 2 usage or I/O trouble.`,
	Flags:  tieredFlags(tieredOffsetFlag, tieredTimestampFlag, viewsJSONFlag, maxBatchFlag),
	Action: runTieredFind,
}

var tieredFetchCommand = &cli.Command{
	Name:  "fetch",
	Usage: "read records from an offset or a timestamp across both tiers, remote first",
	Description: tieredInputs + `

--topic and --partition name one partition. Records below the local log
start come from the remote segments, the rest from the local log, as one
stream: one NDJSON "record" object per record (ndjson/schema.json), with
"tier" (remote or local) and "segment" (the object key or the file).

Exit status: 0 read; 1 the start is in neither tier; 2 usage or I/O trouble.`,
	Flags:  tieredFlags(tieredOffsetFlag, tieredTimestampFlag, tieredMaxRecordsFlag, printDataFlag, keyEncFlag, valueEncFlag, maxBatchFlag),
	Action: runTieredFetch,
}

func runTieredFind(c *cli.Context) error {
	s, err := readTieredSetup(c)
	if err != nil {
		return err
	}
	t, err := tieredTiers(c.Context, c, s)
	if err != nil {
		return err
	}
	p, err := tieredLookup(c, t)
	if err != nil {
		return err
	}
	if c.Bool(viewsJSONFlag.Name) {
		return ndjson.WriteTyped(c.App.Writer, "position", p)
	}
	where := p.Key
	if p.SegmentID != "" {
		where += " (segment " + p.SegmentID + ")"
	}
	_, err = fmt.Fprintf(c.App.Writer, "offset %d (timestamp %d) is in the %s tier: %s at position %d, batch %d-%d\n",
		p.Offset, p.Timestamp, p.Tier, where, p.Pos, p.BatchBaseOffset, p.BatchLastOffset)
	return err
}

// tieredLookup finds --offset or --timestamp.
func tieredLookup(c *cli.Context, t *tiered.Tiers) (tiered.Position, error) {
	tg, err := tieredTargetOf(c, t)
	if err != nil {
		return tiered.Position{}, err
	}
	return tieredFind(c, t, tg)
}

// tieredTarget is what --offset or --timestamp asks for: an offset, or
// (byTime) the first record at or after a timestamp.
type tieredTarget struct {
	offset, ts int64
	byTime     bool
	atEnd      bool   // offset is the local log end (latest)
	what       string // for the not-found message
}

// tieredTargetOf reads --offset (every form parseOffset reads, resolved
// across both tiers) or --timestamp. earliest is the remote tier's start
// (the local log's when no remote segment is finished), latest the local
// log end, -N the last N offsets before it (never below earliest), s@T
// and @T the lookup by timestamp --timestamp does.
func tieredTargetOf(c *cli.Context, t *tiered.Tiers) (tieredTarget, error) {
	cmd := commandPath(c)
	ts := c.String(tieredTimestampFlag.Name)
	switch byOff := c.IsSet(tieredOffsetFlag.Name); {
	case byOff && ts != "":
		return tieredTarget{}, usageError("%s: --offset and --timestamp exclude each other", cmd)
	case ts != "":
		v, err := parseTime(ts)
		if err != nil {
			return tieredTarget{}, usageError("%s: --timestamp: %v", cmd, err)
		}
		return tieredTarget{ts: v, byTime: true, what: "no record at or after timestamp " + ts}, nil
	case !byOff:
		return tieredTarget{}, usageError("%s: give --offset or --timestamp", cmd)
	}
	raw := c.String(tieredOffsetFlag.Name)
	o, err := parseOffset(raw)
	switch {
	case err != nil:
		return tieredTarget{}, usageError("%s: --offset: %v", cmd, err)
	case o.kind == offsetTimeEnd:
		return tieredTarget{}, usageError("%s: --offset: e@T ends a range; give the start (s@T, @T)", cmd)
	case o.kind == offsetStored:
		return tieredTarget{}, usageError("%s: --offset: stored is a group's committed offset, which the tiers do not hold", cmd)
	case o.kind == offsetTime:
		return tieredTarget{ts: o.n, byTime: true, what: "no record at or after timestamp " + strconv.FormatInt(o.n, 10) + " (--offset " + raw + ")"}, nil
	case o.kind == offsetAbsolute:
		return tieredTarget{offset: o.n, what: "offset " + raw}, nil
	}
	start := t.RemoteStart()
	if start < 0 && t.Local != nil && len(t.Local.Logs) > 0 {
		start = t.Local.StartOffset
	}
	end := int64(-1)
	if o.kind != offsetEarliest {
		if t.Local == nil || len(t.Local.Logs) == 0 {
			return tieredTarget{}, usageError("%s: --offset %s: %s has no local log, whose end %s counts from", cmd, raw, t.Partition(), o)
		}
		l, err := partition.OpenLog(t.Local.Dir, partition.LogOptions{})
		if err != nil {
			return tieredTarget{}, fail(cmd, err)
		}
		off, err := l.Offsets()
		if err != nil {
			return tieredTarget{}, fail(cmd, err)
		}
		end = off.LogEndOffset
		if start < 0 {
			start = end
		}
	}
	if start < 0 {
		return tieredTarget{}, findingsError("%s: %s: --offset %s: %w (%s)", cmd, t.Partition(), raw, tiered.ErrNotFound, tierStarts(t))
	}
	off := o.resolve(start, end)
	return tieredTarget{offset: off, atEnd: off == end, what: "offset " + strconv.FormatInt(off, 10) + " (--offset " + raw + ")"}, nil
}

// tieredFind looks tg up in the tiers.
func tieredFind(c *cli.Context, t *tiered.Tiers, tg tieredTarget) (tiered.Position, error) {
	var p tiered.Position
	var err error
	if tg.byTime {
		p, err = t.FindTimestamp(c.Context, tg.ts)
	} else {
		p, err = t.FindOffset(c.Context, tg.offset)
	}
	if errors.Is(err, tiered.ErrNotFound) {
		// Say what was asked and where each tier starts: "not in either
		// tier" alone left the operator to find out that offset 3 was
		// deleted by retention or that a timestamp is past the last record.
		return p, findingsError("%s: %s: %s: %w (%s)", commandPath(c), t.Partition(), tg.what, err, tierStarts(t))
	}
	if err != nil {
		return p, fail(commandPath(c), err)
	}
	return p, nil
}

// tierStarts says where each tier of t starts: "the remote tier starts at
// offset 8, the local log at 29".
func tierStarts(t *tiered.Tiers) string {
	remote := "no finished remote segment"
	if rs := t.RemoteStart(); rs >= 0 {
		remote = "the remote tier starts at offset " + strconv.FormatInt(rs, 10)
	}
	local := "no local log"
	if t.Local != nil && t.Local.StartOffset >= 0 {
		local = "the local log at " + strconv.FormatInt(t.Local.StartOffset, 10)
	}
	return remote + ", " + local
}

func runTieredFetch(c *cli.Context) error {
	s, err := readTieredSetup(c)
	if err != nil {
		return err
	}
	t, err := tieredTiers(c.Context, c, s)
	if err != nil {
		return err
	}
	from := int64(0)
	if c.IsSet(tieredOffsetFlag.Name) || c.String(tieredTimestampFlag.Name) != "" {
		tg, err := tieredTargetOf(c, t)
		if err != nil {
			return err
		}
		from = tg.offset
		// latest is the local log end, where no record is yet: an
		// empty read, as fetch --offset latest, not "in neither tier".
		if !tg.atEnd {
			p, err := tieredFind(c, t, tg)
			if err != nil {
				return err
			}
			from = p.Offset
		}
	}
	opts, err := recordOptions(c, c.Bool(printDataFlag.Name))
	if err != nil {
		return err
	}
	w := ndjson.NewWriter(c.App.Writer, opts)
	limit, n := c.Int(tieredMaxRecordsFlag.Name), 0
	err = t.Records(c.Context, from, func(r tiered.Record) bool {
		w.Record(r.Batch, r.Record, func(l []byte) []byte { return ndjson.Str(ndjson.Str(l, "tier", r.Tier), "segment", r.Key) })
		n++
		return limit <= 0 || n < limit
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fail("tiered fetch", err)
	}
	return nil
}

var (
	tieredRetMsFlag       = &cli.Int64Flag{Name: "retention-ms", Value: 604800000, Usage: "retention.ms (-1: no time limit)"}
	tieredRetBytesFlag    = &cli.Int64Flag{Name: "retention-bytes", Value: -1, Usage: "retention.bytes (-1: no size limit)"}
	tieredLocalMsFlag     = &cli.Int64Flag{Name: "local-retention-ms", Value: -2, Usage: "local.retention.ms (-2: retention.ms)"}
	tieredLocalBytesFlag  = &cli.Int64Flag{Name: "local-retention-bytes", Value: -2, Usage: "local.retention.bytes (-2: retention.bytes)"}
	tieredRetentionNowFlg = &cli.StringFlag{Name: "now", Usage: "the broker's clock `T` (epoch ms or RFC 3339; default: now)"}
)

var tieredRetentionCommand = &cli.Command{
	Name:  "retention",
	Usage: "retention over both tiers: which remote and local segments the broker deletes now, and when the rest goes",
	Description: tieredInputs + `

--topic and --partition name one partition. Remote segments follow
RemoteLogManager's expiration task: those wholly below the log start
offset, then retention.ms (by their maxTimestampMs), then retention.bytes
over the remote segments plus the local ones not yet copied, each rule
deleting only a prefix. Local segments go by local.retention.ms (their
largest timestamp) and local.retention.bytes once they are in the remote
tier; the active segment never goes.

Exit status: 0 answered; 2 usage or I/O trouble.`,
	Flags:  tieredFlags(tieredRetMsFlag, tieredRetBytesFlag, tieredLocalMsFlag, tieredLocalBytesFlag, tieredRetentionNowFlg, viewsJSONFlag, formatFlag),
	Action: runTieredRetention,
}

func runTieredRetention(c *cli.Context) error {
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	// Kafka refuses these values (LogConfig's validators): an answer under
	// retention.ms -5 would be one no broker gives.
	for _, b := range []struct {
		f   *cli.Int64Flag
		min int64
	}{{tieredRetMsFlag, -1}, {tieredLocalMsFlag, -2}, {tieredLocalBytesFlag, -2}} {
		if v := c.Int64(b.f.Name); v < b.min {
			return usageError("tiered retention: --%s %d is below %d (%s)", b.f.Name, v, b.min, b.f.Usage)
		}
	}
	// And the local limit against the total, as a topic with
	// remote.storage.enable is checked (LogConfig's
	// validateRemoteStorageRetentionTime and ...Size).
	for _, p := range [][2]*cli.Int64Flag{{tieredRetMsFlag, tieredLocalMsFlag}, {tieredRetBytesFlag, tieredLocalBytesFlag}} {
		total, local := c.Int64(p[0].Name), c.Int64(p[1].Name)
		switch {
		case total == -1 || local == -2:
		case local == -1:
			return usageError("tiered retention: --%s -1 with --%s %d: Kafka refuses a local limit of -1 when the total is set", p[1].Name, p[0].Name, total)
		case local > total:
			return usageError("tiered retention: --%s %d is more than --%s %d: Kafka refuses a local limit above the total", p[1].Name, local, p[0].Name, total)
		}
	}
	s, err := readTieredSetup(c)
	if err != nil {
		return err
	}
	t, err := tieredTiers(c.Context, c, s)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	if v := c.String(tieredRetentionNowFlg.Name); v != "" {
		if now, err = parseTime(v); err != nil {
			return usageError("tiered retention: --now: %v", err)
		}
	}
	rep := t.Retention(tiered.RetentionConfig{RetentionMs: c.Int64(tieredRetMsFlag.Name), RetentionBytes: c.Int64(tieredRetBytesFlag.Name),
		LocalRetentionMs: c.Int64(tieredLocalMsFlag.Name), LocalRetentionBytes: c.Int64(tieredLocalBytesFlag.Name)}, now)
	return writeView(c.App.Writer, func(w io.Writer) error {
		if format == "json" {
			return inspect.WriteTieredRetentionJSON(w, rep)
		}
		return inspect.WriteTieredRetention(styled(c, w, format), rep)
	})
}
