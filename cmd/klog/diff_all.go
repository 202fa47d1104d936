package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

// allLogDirs reports whether every argument is a directory that is not a
// partition directory: klog diff then compares the replicas of every
// partition the log dirs share.
func allLogDirs(args []string) bool {
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() || partition.IsPartitionDir(a) {
			return false
		}
	}
	return true
}

// runDiffAll is klog diff over log dirs: every partition that more than
// one of them holds (replicas matched by topic id) is compared.
func runDiffAll(c *cli.Context, args []string, format string, opts inspect.DiffOptions) error {
	if c.IsSet(diffLeaderFlag.Name) {
		return usageError("diff: --leader names a replica; over log dirs each partition's leader is inferred")
	}
	dirs, err := cluster.Discover(args)
	if err != nil {
		return fail("diff", err)
	}
	diffs, err := cluster.DiffAll(c.Context, dirs, opts)
	if err != nil {
		return viewError("diff", err)
	}
	diverged, findings := 0, 0
	var first *verify.Problem
	err = writeView(c.App.Writer, func(w io.Writer) error {
		for _, d := range diffs {
			n, f, _ := d.Report.Findings()
			findings += n
			if first == nil {
				first = f
			}
			if d.Report.Diverged {
				diverged++
			}
			if err := writePartitionDiff(c, w, d, format); err != nil {
				return err
			}
		}
		if format != "json" {
			_, err := fmt.Fprintf(w, "\n%d partitions held by more than one log dir, %d diverged\n", len(diffs), diverged)
			return err
		}
		return nil
	})
	if err != nil {
		return viewError("diff", err)
	}
	if err := viewExit(c, false, findings, first); err != nil || diverged == 0 {
		return err
	}
	return findingsError("")
}

func writePartitionDiff(c *cli.Context, w io.Writer, d *cluster.PartitionDiff, format string) error {
	if format == "json" {
		return writeJSONLine(w, "partitionDiff", d)
	}
	var brokers []string
	for _, b := range d.Brokers {
		brokers = append(brokers, strconv.Itoa(int(b)))
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\n%s-%d (topic id %s), brokers %s:\n", d.Topic, d.Partition, d.TopicID, strings.Join(brokers, ", "))
	if err := bw.Flush(); err != nil {
		return err
	}
	return inspect.WriteDiffText(styled(c, w, format), d.Report)
}
