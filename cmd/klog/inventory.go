package main

import (
	"fmt"
	"io"

	"github.com/klog-dev/klog/cluster"
	"github.com/urfave/cli/v2"
)

var lsTopicFlag = &cli.StringSliceFlag{Name: "topic", Usage: "only this topic's partitions (repeatable)"}

var lsCommand = &cli.Command{
	Name:      "ls",
	Usage:     "inventory of one or several brokers' log dirs: brokers, log dirs, topics and partitions with offsets, each partition's replicas and its most complete copy",
	ArgsUsage: "DIR...",
	Description: `Each DIR is a log dir (a broker's log.dirs, JBOD, or several brokers'), or a
partition directory. A log dir's broker is its meta.properties node.id (or
broker.id), with its directory.id and cluster.id. For every partition: topic
id (partition.metadata), segments, size, log start, log end, high watermark,
last stable offset, LEO-HW (what it holds that is not committed) and leader
epoch, read from the partition model; -future replicas (a move between log
dirs) with their lag behind the current one, -delete and -stray directories,
and files a broker does not keep in a log dir.

Replicas of one partition in several log dirs are matched by topic id
(replicas of one name recording different ids are different topics'). The
most complete copy is the replica with the highest latest leader epoch, then
the highest log end offset, as klog diff infers a leader; each other
replica's "behind" is what an unclean election of it would lose at least
(klog diff over the same DIRs compares every partition's replicas batch by
batch). With a __cluster_metadata-0 among the DIRs, each partition also
shows the image's leader, replicas and ISR, and the disks are checked
against the image as klog verify does.

Text: the log dirs, then one table row per replica (--format tsv for awk);
--json one object, a superset of kafka-log-dirs.sh --describe's: version,
brokers [{broker, logDirs [{logDir, error, partitions [{partition, size,
offsetLag, isFuture, ...}]}]}], and topics, metadataImage, imageFindings,
problems (the fields are listed in the README).

Exit status: 0 read; 1 a partition could not be read whole (a torn or
corrupt active segment, an unreadable checkpoint) or the disks differ from
the metadata image (everything is printed first); 2 usage or I/O trouble.`,
	Flags:  []cli.Flag{lsTopicFlag, viewsJSONFlag, formatFlag, maxBatchFlag},
	Action: runLs,
}

func runLs(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("ls: no DIR given")
	}
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	dirs, err := cluster.Discover(args)
	if err != nil {
		return fail("ls", err)
	}
	inv, err := cluster.TakeInventory(c.Context, dirs, cluster.InventoryOptions{Topics: c.StringSlice(lsTopicFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name)})
	if err != nil {
		return fail("ls", err)
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if format == "json" {
			return cluster.WriteInventoryJSON(w, inv)
		}
		return cluster.WriteInventory(styled(c, w, format), inv)
	}); err != nil {
		return fail("ls", err)
	}
	findings := 0
	for _, f := range inv.ImageFindings {
		if !f.Info {
			findings++
		}
	}
	if inv.ProblemCount > 0 {
		p := inv.Problems[0]
		fmt.Fprintf(c.App.ErrWriter, "klog: ls: %d problems; the first: %s: %s\n", inv.ProblemCount, p.File, p.Message)
	}
	if findings > 0 {
		fmt.Fprintf(c.App.ErrWriter, "klog: ls: the disks differ from the metadata image in %d places (listed after the table)\n", findings)
	}
	if inv.ProblemCount > 0 || findings > 0 {
		return findingsError("")
	}
	return nil
}
