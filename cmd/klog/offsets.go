package main

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/partition"
	"github.com/urfave/cli/v2"
)

var (
	offsetsTimeFlag = &cli.StringFlag{Name: "time", Value: "latest", Usage: "latest (the high watermark), earliest, max-timestamp, or a timestamp in ms"}
	offsetsIsoFlag  = &cli.StringFlag{Name: "isolation", Value: "read_uncommitted", Usage: "read_uncommitted or read_committed (latest is then the last stable offset)"}
)

var offsetsCommand = &cli.Command{
	Name:      "offsets",
	Usage:     "print topic:partition:offset per partition, like kafka-get-offsets",
	ArgsUsage: "DIR...",
	Description: `DIR is a partition directory or a log directory. The offset is the high
watermark by default (from the log dir's replication-offset-checkpoint, else
the log end offset), or what Kafka's ListOffsets answers for --time.`,
	Flags:  []cli.Flag{offsetsTimeFlag, offsetsIsoFlag},
	Action: runOffsets,
}

func runOffsets(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("offsets: no DIR given")
	}
	if err := checkArgs(args); err != nil {
		return err
	}
	var ts int64
	switch t := c.String(offsetsTimeFlag.Name); t {
	case "latest", "-1":
		ts = fetch.LatestTimestamp
	case "earliest", "-2":
		ts = fetch.EarliestTimestamp
	case "max-timestamp", "-3":
		ts = fetch.MaxTimestampTimestamp
	default:
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil || v < 0 {
			return usageError("offsets: --time must be latest, earliest, max-timestamp or a timestamp in ms")
		}
		ts = v
	}
	iso := fetch.ReadUncommitted
	if s := c.String(offsetsIsoFlag.Name); s == "read_committed" {
		iso = fetch.ReadCommitted
	} else if s != "read_uncommitted" {
		return usageError("offsets: --isolation must be read_uncommitted or read_committed")
	}
	var dirs []string
	for _, a := range args {
		if partition.IsPartitionDir(a) {
			dirs = append(dirs, a)
			continue
		}
		ld, err := partition.OpenLogDir(a)
		if err != nil {
			return fail("offsets", err)
		}
		dirs = append(dirs, ld.Partitions...)
	}
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	unreadable := 0
	for _, d := range dirs {
		l, err := fetch.Open(d)
		if err != nil {
			// Report it and go on with the other partitions.
			out.Flush()
			fmt.Fprintln(c.App.ErrWriter, "klog: offsets: "+err.Error())
			unreadable++
			continue
		}
		off, _, ok, err := l.OffsetForTime(ts, iso, -1)
		if err != nil {
			return fail("offsets", err)
		}
		topic, part, _ := partition.ParseDirName(filepath.Base(filepath.Clean(d)))
		if ok {
			fmt.Fprintf(out, "%s:%d:%d\n", topic, part, off)
		} else {
			fmt.Fprintf(out, "%s:%d:\n", topic, part)
		}
	}
	if unreadable > 0 {
		return &exitError{code: ExitTrouble}
	}
	return nil
}
