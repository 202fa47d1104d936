package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

// The views for people: klog segments, klog stats, klog find. Tables on
// stdout by default, --json for scripts (one object per row or result).
// None of them is kafka-dump-log compatible output.

var (
	viewsJSONFlag     = &cli.BoolFlag{Name: "json", Usage: "write JSON, one object per line (per segment, or per result), instead of tables"}
	statsTopFlag      = &cli.IntFlag{Name: "top", Value: 10, Usage: "producers shown in the table, by batches (0: all); --json lists all"}
	statsWhatIfFlag   = &cli.StringFlag{Name: "what-if", Usage: "also recompress every v2 batch's records with these `CODECS` (e.g. zstd,lz4,gzip,snappy,none) at Kafka's default levels: stored bytes, ratio against today, CPU per MiB"}
	statsSampleFlag   = &cli.Float64Flag{Name: "sample", Value: 1, Usage: "with --what-if: recompress this `FRACTION` of the batches (0 < f <= 1; deterministic)"}
	findOffsetFlag    = &cli.StringFlag{Name: "offset", Usage: "find the record with this offset (or the next one present): N, -N (N before the log end offset) or earliest"}
	findTimestampFlag = &cli.StringFlag{Name: "timestamp", Usage: "find the first record with a timestamp >= `T` (epoch ms, RFC 3339 such as 2023-11-14T22:13:20Z, or -1h for an hour ago)"}
	findMaxDataFlag   = &cli.IntFlag{Name: "max-data-bytes", Value: 512, Usage: "cut keys and values longer than this in the table (0: no limit); --json prints them whole"}
)

var segmentsCommand = &cli.Command{
	Name:      "segments",
	Usage:     "one row per segment: offsets, batches, records, bytes, timestamps, codecs, index entries and health, gaps and overlaps",
	ArgsUsage: "DIR...",
	Description: `DIR is a partition directory, or a log directory (every partition in it).
Each .log is scanned (batch headers and CRCs; legacy compressed wrappers are
decompressed to count their records) and each .index/.timeindex is checked as
klog verify does. Index entries count the real entries, not the zero tail of
a preallocated index. "vs previous" shows offsets absent between a segment and
the ones before it (normal after compaction) or offsets it shares with them.

--json writes one object per segment: type ("segment"), dir, topic,
partition, log, baseOffset, firstOffset, lastOffset, batches, records,
sizeBytes, validBytes, minTimestamp, maxTimestamp, minTime, maxTime, codecs,
indexEntries, timeIndexEntries, indexProblems, timeIndexProblems,
indexHealth, gapBefore, overlapBefore, tail, tailBytes, problems.

Exit status: 0 clean; 1 findings: a batch whose CRC does not match or whose
magic is not 0 to 2, records that do not decode (an unknown codec, a stream
that does not decompress, a count the records do not fill), a torn last
batch or bytes that do not start one (not a zero-filled preallocated tail),
an index problem, segments that overlap;
the tables are printed in full first, then one line on stderr names the
first finding (file, byte position, offset) and counts them; 2 usage or I/O
trouble.`,
	Flags:  []cli.Flag{viewsJSONFlag, formatFlag, noProgressFlag, maxBatchFlag},
	Action: runSegments,
}

var statsCommand = &cli.Command{
	Name:      "stats",
	Usage:     "batch size and records-per-batch distributions, codec mix and compression ratio, producers, control/transactional share, bytes per hour",
	ArgsUsage: "PATH...",
	Description: `PATH is a segment file (read as a log whatever its name), a partition
directory or a log directory. All batches are read once, in bounded memory:
percentiles come from exact counts in a log-linear histogram (exact below 32,
otherwise at most 6.25% above the true value); min, max and mean are exact.
Compressed batches are decompressed to measure the ratio (record bytes /
stored bytes, per codec). Hours are UTC buckets of each batch's max timestamp.

--json writes one object: type ("stats"), files, batches, records, bytes,
minTimestamp, maxTimestamp, minTime, maxTime, batchBytes and recordsPerBatch
({count, min, p50, p90, p99, max, mean}), codecs ([{codec, batches, records,
batchBytes, storedBytes, recordBytes, ratio, undecodable}]), producers
({distinct, distinctEpochs, noProducerBatches, otherBatches, truncated,
list: [{producerId, epochs, batches, records}]}), controlBatches,
controlRecords, controlBatchShare, controlRecordShare, transactionalBatches,
transactionalRecords, transactionalBatchShare, transactionalRecordShare,
hours ([{hour, hourMs, batches, bytes}]), noTimestampBatches,
noTimestampBytes, otherHoursBatches, otherHoursBytes, problems, problemCount.

--what-if CODECS recompresses the records of every v2 batch (or a --sample
fraction of them, chosen deterministically) with each codec at Kafka's
default levels and reports stored bytes, the ratio against today and
compression/decompression CPU time per MiB of records (KIP-640's question).
It prints a table after the stats, or with --json a second object: type
("whatif"), files, sample, batches, sampledBatches, legacyBatches,
undecodableBatches, todayBytes, recordBytes, todayCodecs, codecs
([{codec, storedBytes, ratio, savedBytes, compressMsPerMiB,
decompressMsPerMiB, errors}]).

Exit status: 0 clean; 1 data problems were met (a batch whose CRC does not
match or whose magic is not 0 to 2, unreadable batches, records that do not
decode or decompress, a torn last batch, bytes after the last batch); the report is
printed in full first, then one line on stderr names the first problem
(file, byte position, offset) and counts them; 2 usage or I/O trouble.`,
	Flags:  []cli.Flag{viewsJSONFlag, formatFlag, statsTopFlag, statsWhatIfFlag, statsSampleFlag, noProgressFlag, maxBatchFlag},
	Action: runStats,
}

var findCommand = &cli.Command{
	Name:      "find",
	Usage:     "show how the broker finds an offset or a timestamp; with --key or --where, find records across partitions",
	ArgsUsage: "DIR | --key K|--where EXPR PATH...",
	Description: `DIR is a partition directory; give exactly one of --offset and --timestamp.

With --key K or --where EXPR, find searches every partition of the PATHs
(partition or log directories) in parallel and prints each record found: a
line (TOPIC-PARTITION offset: timestamp: keySize: valueSize: headers: key:
value:), a kcat -f or rpk --format string (-f, --format with a %), or with
--json the common record object with dir, topic, partition, path, position and,
with --key-format/--value-format, keyFormat, decodedKey, keySchema, keyError,
keyNote (and value*). --offset N, earliest, s@T or @T and --timestamp T set
where each partition starts (through its indexes, as kcat's -o does), --end N
or e@T where it stops, -c N after how many records. Schemas come from
--schemas (a _schemas partition, schema files or a directory, a registry URL)
or the log dir's _schemas-0. Exit status: 0 records found; 1 none, or a batch
that fails its CRC or cannot be read on the way (said on stderr); 2 usage or
I/O trouble.

--offset N: the segment with the largest base offset <= N, the .index entry
the broker's lookup picks (largest offset <= N, else position 0), the scan
from there to the first batch whose last offset is >= N, and the first record
with offset >= N in it (later segments are read when N is above a segment's
data, as the broker's read does).

--timestamp T: as ListOffsets does (the same lookup as klog offsets --time),
the first segment whose largest timestamp is >= T is the only one searched: a
segment's largest timestamp is its last time index entry, or, when the time
index has no entry, the .log file's modification time (the table and
byModTime say when that decided). In it the .timeindex entry with the largest
timestamp <= T (else the segment start), the .index lookup of that entry's
offset, and the scan to the first record (transaction markers included) with
timestamp >= T. The index files are taken as found, as a broker that started
cleanly takes them.

Only the index files and the batches from the looked-up position to the
answer are read. Each index entry used is checked: it must point at the start
of a batch whose last offset is the entry's offset.

--json writes one object: type ("find"), dir, query ("offset" or
"timestamp"), target, found, exact, lookups ([{log, baseOffset, sizeBytes,
maxTimestamp, largestTimestamp, byModTime, skipped, timeIndexEntry {slot, timestamp, time, offset}, indexEntry
{slot, offset, position, ok}, startPosition, rescanned, batchesScanned,
bytesRead, found}]), batch ({position, baseOffset, lastOffset, sizeBytes,
magic, recordCount, compression, timestampType, maxTimestamp, producerId,
isControl}), record ({offset, timestamp, time, keySize, valueSize, key,
value, keyBase64, valueBase64, headerKeys}), problems, logBytesRead,
indexBytesRead.

Exit status: 0 answered (including "no record at or after T"); 1 an index
or time index entry used does not match the log, or a batch read on the way
fails its CRC, has a magic other than 0 to 2 or cannot be read, or a record
on the way cannot be decoded, or the walk reaches a torn last batch (the
answer is still given, from a scan of the segment start when the index
entry is unusable; one line on stderr then names the first finding and
counts them), or an offset out of range (below
the first segment, or at or past the log end: Kafka's OFFSET_OUT_OF_RANGE);
2 usage or I/O trouble.`,
	Flags: append([]cli.Flag{findOffsetFlag, findTimestampFlag, viewsJSONFlag, formatFlag, findMaxDataFlag, maxBatchFlag, keyEncFlag, valueEncFlag,
		findKeyFlag, findEndFlag, findJobsFlag}, payloadFlags...),
	Action: runFind,
}

// viewError maps a dump error to an exit code: everything a view returns
// is I/O or usage trouble.
func viewError(cmd string, err error) error {
	return fail(cmd, err)
}

func runSegments(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("segments: no DIR given")
	}
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	// Each path on its own: one that does not exist or cannot be listed is
	// reported and the others are still read (exit 2 at the end).
	var dirs []string
	unreadable := 0
	for _, a := range args {
		ds, err := inspect.PartitionDirs([]string{a})
		if err != nil {
			fmt.Fprintln(c.App.ErrWriter, "klog: segments: "+err.Error())
			unreadable++
			continue
		}
		dirs = append(dirs, ds...)
	}
	if len(dirs) == 0 {
		if unreadable > 0 {
			return troubleError("")
		}
		return usageError("segments: no partition directory found in %s", strings.Join(args, ", "))
	}
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	bar := newProgress(c, "reading", format == "json", func() int64 { return logBytes(dirs) })
	defer bar.finish()
	findings, tables := 0, 0
	var first *verify.Problem
	for _, d := range dirs {
		ps, err := inspect.Segments(c.Context, d, inspect.SegmentsOptions{MaxBatchBytes: c.Int(maxBatchFlag.Name), OnBytes: bar.addFunc()})
		if err != nil {
			if c.Context.Err() != nil {
				return err
			}
			// Report it and go on with the other partitions.
			bar.clear()
			out.Flush()
			fmt.Fprintln(c.App.ErrWriter, "klog: segments: "+err.Error())
			unreadable++
			continue
		}
		n, f := ps.Findings()
		if first == nil {
			first = f
		}
		findings += n
		// The bar shares the terminal: clear it before the partition's
		// lines, and let them out now, so that none lands after it.
		bar.clear()
		if err := writeSegments(c, out, format, ps, tables > 0); err != nil {
			return viewError("segments", err)
		}
		tables++
	}
	if err := out.Flush(); err != nil {
		return viewError("segments", err)
	}
	return viewExit(c, unreadable > 0, findings, first)
}

// writeSegments writes one partition's segments in format and flushes
// them; more says a partition was written before.
func writeSegments(c *cli.Context, out *bufio.Writer, format string, ps *inspect.PartitionSegments, more bool) error {
	var err error
	switch {
	case format == "json":
		err = inspect.WriteSegmentsJSON(out, ps)
	case format == "tsv":
		// One table for the whole run: the header once, each partition
		// after its "# DIR" comment line, no blank line between.
		w := styled(c, out, format).(*dump.StyledWriter)
		w.Style.SameHeader = more
		err = inspect.WriteSegmentsTable(w, ps)
	default:
		if more {
			out.WriteString("\n")
		}
		err = inspect.WriteSegmentsTable(styled(c, out, format), ps)
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// viewExit ends a view whose output is complete: after it, one line on
// stderr names the first finding (file, byte position, offset) and counts
// them; the exit code is 1 for findings, 2 when a path could not be read.
func viewExit(c *cli.Context, trouble bool, findings int, first *verify.Problem) error {
	if findings > 0 && first != nil {
		fmt.Fprintln(c.App.ErrWriter, "klog: "+c.Command.Name+": "+findingsLine(findings, first))
	}
	switch {
	case trouble:
		return troubleError("")
	case findings > 0:
		return findingsError("")
	}
	return nil
}

// findingsLine is "3 findings; the first: FILE at position P, offset O:
// KIND: MESSAGE" ("offset unknown" when the finding has none, "(no byte
// position)" for a file's modification time, no KIND where the view's
// finding is not one of verify's kinds).
func findingsLine(n int, p *verify.Problem) string {
	var b strings.Builder
	if n == 1 {
		b.WriteString("1 finding: ")
	} else {
		b.WriteString(strconv.Itoa(n) + " findings; the first: ")
	}
	b.WriteString(p.Path)
	if p.Position >= 0 {
		b.WriteString(" at position " + strconv.FormatInt(p.Position, 10))
	} else {
		b.WriteString(" (no byte position)")
	}
	if p.Offset >= 0 {
		b.WriteString(", offset " + strconv.FormatInt(p.Offset, 10))
	} else {
		b.WriteString(", offset unknown")
	}
	b.WriteString(": ")
	if p.Kind != "" {
		b.WriteString(string(p.Kind) + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

func runStats(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("stats: no PATH given")
	}
	if c.Int(statsTopFlag.Name) < 0 {
		return usageError("stats: --top must not be negative")
	}
	whatIfCodecs, err := statsWhatIfCodecs(c)
	if err != nil {
		return err
	}
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	bar := newProgress(c, "reading", format == "json", func() int64 {
		files, _ := inspect.StatsFiles(args) // errors are CollectStats's to report
		return sizeOf(files)
	})
	rep, err := inspect.CollectStats(c.Context, args, inspect.StatsOptions{MaxBatchBytes: c.Int(maxBatchFlag.Name), OnBytes: bar.addFunc()})
	bar.finish()
	if err != nil {
		return viewError("stats", err)
	}
	var whatIf *inspect.WhatIfReport
	if whatIfCodecs != nil {
		files, err := inspect.StatsFiles(args)
		if err != nil {
			return viewError("stats", err)
		}
		whatIf, err = inspect.WhatIf(c.Context, files, inspect.WhatIfOptions{Codecs: whatIfCodecs, Sample: c.Float64(statsSampleFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name)})
		if err != nil {
			return viewError("stats", err)
		}
	}
	if rep.Files == 0 {
		for _, u := range rep.Unreadable {
			fmt.Fprintln(c.App.ErrWriter, "klog: stats: "+u)
		}
		return usageError("stats: no segment found in %s", strings.Join(args, ", "))
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if format == "json" {
			if err := inspect.WriteStatsJSON(w, rep); err != nil || whatIf == nil {
				return err
			}
			return inspect.WriteWhatIfJSON(w, whatIf)
		}
		if err := inspect.WriteStatsTable(styled(c, w, format), rep, c.Int(statsTopFlag.Name)); err != nil || whatIf == nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		return inspect.WriteWhatIfTable(styled(c, w, format), whatIf)
	}); err != nil {
		return viewError("stats", err)
	}
	for _, u := range rep.Unreadable {
		fmt.Fprintln(c.App.ErrWriter, "klog: stats: "+u)
	}
	var first *verify.Problem
	if len(rep.Problems) > 0 {
		first = &rep.Problems[0]
	}
	return viewExit(c, len(rep.Unreadable) > 0, rep.ProblemCount, first)
}

func runFind(c *cli.Context) error {
	if searching(c) {
		return runSearch(c)
	}
	args := c.Args().Slice()
	if len(args) != 1 {
		return usageError("find: give exactly one partition DIR (got %d arguments)", len(args))
	}
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	var q inspect.FindQuery
	switch byOff, byTS := c.IsSet(findOffsetFlag.Name), c.IsSet(findTimestampFlag.Name); {
	case byOff == byTS:
		return usageError("find: give exactly one of --offset and --timestamp")
	case byOff:
		o, err := parseOffset(c.String(findOffsetFlag.Name))
		if err != nil {
			return usageError("find: --offset: %v", err)
		}
		q.Offset = o.n
		if o.kind != offsetAbsolute {
			if q.Offset, err = o.resolveIn(args[0], ""); err != nil {
				return viewError("find", err)
			}
		}
	default:
		ts, err := parseTime(c.String(findTimestampFlag.Name))
		if err != nil {
			return usageError("find: --timestamp: %v", err)
		}
		q.Timestamp, q.ByTimestamp = ts, true
	}
	if c.Int(findMaxDataFlag.Name) < 0 {
		return usageError("find: --max-data-bytes must not be negative")
	}
	if !partition.IsPartitionDir(args[0]) {
		return usageError("find: %s is not a partition directory", args[0])
	}
	d, err := partition.Open(args[0])
	if err != nil {
		return viewError("find", err)
	}
	recOpts, err := recordOptions(c, true)
	if err != nil {
		return err
	}
	res, err := inspect.FindContext(c.Context, d, q, inspect.FindOptions{MaxBatchBytes: c.Int(maxBatchFlag.Name), Record: recOpts})
	if err != nil {
		if errors.Is(err, inspect.ErrOffsetOutOfRange) {
			if format == "json" {
				// An answer, as fetch --json prints its OFFSET_OUT_OF_RANGE
				// response: a script reads found false, not an empty stdout.
				none := &inspect.FindResult{Type: "find", Dir: args[0], Query: "offset", Target: q.Offset,
					Lookups: []inspect.FindLookup{}, Problems: []verify.Problem{}}
				if werr := writeView(c.App.Writer, func(w io.Writer) error { return inspect.WriteFindJSON(w, none) }); werr != nil {
					return viewError("find", werr)
				}
			}
			return fail("find", err)
		}
		return viewError("find", err)
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if format == "json" {
			return inspect.WriteFindJSON(w, res)
		}
		return inspect.WriteFindTable(styled(c, w, format), res, c.Int(findMaxDataFlag.Name))
	}); err != nil {
		return viewError("find", err)
	}
	var first *verify.Problem
	if len(res.Problems) > 0 {
		first = &res.Problems[0]
	}
	return viewExit(c, false, len(res.Problems), first)
}

// writeView renders through a buffered writer and reports its flush error.
func writeView(w io.Writer, render func(io.Writer) error) error {
	out := bufio.NewWriter(w)
	if err := render(out); err != nil {
		return err
	}
	return out.Flush()
}
