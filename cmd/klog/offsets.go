package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/partition"
	"github.com/urfave/cli/v2"
)

var (
	offsetsTimeFlag    = &cli.StringFlag{Name: "time", Value: "latest", Usage: "earliest, latest (the high watermark), max-timestamp, or a timestamp `T` (epoch ms or RFC 3339)"}
	offsetsIsoFlag     = &cli.StringFlag{Name: "isolation", Value: "read_uncommitted", Usage: "read_uncommitted or read_committed (latest is then the last stable offset)"}
	offsetsJSONFlag    = &cli.BoolFlag{Name: "json", Usage: "one JSON object per partition: type, topic, partition, dir, offset, timestamp, leaderEpoch"}
	offsetsRebuildFlag = &cli.BoolFlag{Name: "rebuild-indexes", Usage: "answer as a broker that recovered the log (indexes rebuilt from the .log files) instead of one that started cleanly"}
)

var offsetsCommand = &cli.Command{
	Name:      "offsets",
	Usage:     "print topic:partition:offset per partition, like kafka-get-offsets",
	ArgsUsage: "DIR...",
	Description: `DIR is a partition directory or a log directory. The offset is what a broker's
ListOffsets answers a consumer (Kafka 4.3.1, UnifiedLog.fetchOffsetByTimestamp):

  earliest       the log start offset
  latest         the high watermark (the log dir's replication-offset-checkpoint,
                 else the log end offset), or with --isolation read_committed
                 the last stable offset
  max-timestamp  the offset of the record with the largest timestamp
  T              the first offset whose record timestamp is >= T

Timestamps are found through the time indexes as the broker finds them: the
first segment whose largest timestamp (its last .timeindex entry, or the .log
file's modification time when the time index has no entry) is >= T is the only
one searched. Transaction markers count as records. An answer at or past the
high watermark (the last stable offset for read_committed), or no answer, is
printed as an empty offset (-1 in --json).

Exit status: 0 answered; 1 a partition's lookup met a record that does not
decode (a broker answers CORRUPT_MESSAGE; it is named on stderr and the
other partitions are answered); 2 usage or I/O trouble (a path that is not
there, a partition that cannot be read).`,
	Flags:  []cli.Flag{offsetsTimeFlag, offsetsIsoFlag, offsetsJSONFlag, offsetsRebuildFlag},
	Action: runOffsets,
}

// offsetsJSON is one line of `klog offsets --json`; its tags are the schema.
type offsetsJSON struct {
	Type string `json:"type"` // "offsets"
	// Topic and Partition come from the directory name (topic-N); a
	// directory named otherwise has topic "" and partition -1, as in
	// segments and tail, and Dir says which it is.
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Dir       string `json:"dir"`
	// Offset is -1 when there is no answer; Timestamp is -1 for earliest
	// and latest and when there is no answer; LeaderEpoch -1 when none.
	Offset      int64 `json:"offset"`
	Timestamp   int64 `json:"timestamp"`
	LeaderEpoch int32 `json:"leaderEpoch"`
}

// parseOffsetsTime reads --time.
func parseOffsetsTime(s string) (int64, error) {
	switch s {
	case "latest", "-1":
		return partition.LatestTimestamp, nil
	case "earliest", "-2":
		return partition.EarliestTimestamp, nil
	case "max-timestamp", "-3":
		return partition.MaxTimestamp, nil
	}
	return parseTime(s)
}

// offsetsDirs expands each path on its own: one that holds no partition
// directory (an empty or unrelated directory) is an error, never a silent
// exit 0 (README, "What a file is"), and a missing or unreadable one is
// said; the other paths are still answered. unreadable counts the paths
// said on stderr (exit 2 at the end).
func offsetsDirs(c *cli.Context, args []string) (dirs []string, unreadable int) {
	for _, a := range args {
		ds, err := partition.PartitionDirs([]string{a})
		if err != nil {
			fmt.Fprintln(c.App.ErrWriter, "klog: offsets: "+err.Error())
			unreadable++
			continue
		}
		if len(ds) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "klog: offsets: %s: no partition directory found (give a partition directory or a log directory)\n", a)
			unreadable++
		}
		dirs = append(dirs, ds...)
	}
	return dirs, unreadable
}

func runOffsets(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("offsets: no DIR given")
	}
	target, err := parseOffsetsTime(c.String(offsetsTimeFlag.Name))
	if err != nil {
		return usageError("offsets: --time must be earliest, latest, max-timestamp or a timestamp: %v", err)
	}
	iso, err := parseIsolation(c.String(offsetsIsoFlag.Name))
	if err != nil {
		return usageError("offsets: --isolation: %v", err)
	}
	mode := partition.IndexesAsFound
	if c.Bool(offsetsRebuildFlag.Name) {
		mode = partition.IndexesRebuilt
	}
	dirs, unreadable := offsetsDirs(c, args)
	corrupt := 0
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for _, d := range dirs {
		l, err := partition.OpenLog(d, partition.LogOptions{Mode: mode})
		if err != nil {
			// Report it and go on with the other partitions.
			out.Flush()
			fmt.Fprintln(c.App.ErrWriter, "klog: offsets: "+err.Error())
			unreadable++
			continue
		}
		r, err := fetch.ListOffsets(l, target, iso)
		if err != nil {
			// No answer for this partition: say so and answer the
			// others. A record the lookup cannot decode is the data's
			// fault (exit 1, the broker's CORRUPT_MESSAGE), a read error
			// trouble (exit 2).
			out.Flush()
			fmt.Fprintln(c.App.ErrWriter, "klog: offsets: "+d+": "+err.Error())
			if exitCode(err) == ExitFindings {
				corrupt++
			} else {
				unreadable++
			}
			continue
		}
		if err := writeOffsets(out, enc, c.Bool(offsetsJSONFlag.Name), d, r); err != nil {
			return fail("offsets", err)
		}
		if err := corruptTail("offsets", l); err != nil {
			// Answered from the batches before them; the bytes after
			// them are the data's fault.
			out.Flush()
			fmt.Fprintln(c.App.ErrWriter, "klog: "+err.Error())
			corrupt++
		}
	}
	if unreadable > 0 {
		return troubleError("")
	}
	if corrupt > 0 {
		return findingsError("")
	}
	return nil
}

// writeOffsets prints the answer for partition directory d.
func writeOffsets(out *bufio.Writer, enc *json.Encoder, asJSON bool, d string, r partition.TimestampAndOffset) error {
	topic, part, named := partition.NameOf(d)
	if !named {
		// Not topic-N: no topic to name, never partition 0.
		topic, part = "", -1
	}
	if asJSON {
		o := offsetsJSON{Type: "offsets", Topic: topic, Partition: part, Dir: d, Offset: -1, Timestamp: -1, LeaderEpoch: -1}
		if r.Found {
			o.Offset, o.Timestamp, o.LeaderEpoch = r.Offset, r.Timestamp, r.LeaderEpoch
		}
		return enc.Encode(&o)
	}
	off := ""
	if r.Found {
		off = strconv.FormatInt(r.Offset, 10)
	}
	if !named {
		// The line must still say which partition it answers for.
		topic = d
	}
	fmt.Fprintf(out, "%s:%d:%s\n", topic, part, off)
	return nil
}
