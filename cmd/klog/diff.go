package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/partition"
	"github.com/urfave/cli/v2"
)

var (
	diffLeaderFlag   = &cli.StringFlag{Name: "leader", Usage: "the leader's `DIR` (one of the arguments; default: the replica with the highest latest leader epoch, then the longest log)"}
	diffRecordsFlag  = &cli.BoolFlag{Name: "records", Usage: "decode the listed batches and show their records (offset, timestamp, key, value): what a truncation loses"}
	diffMaxExtraFlag = &cli.IntFlag{Name: "max-extra-batches", Value: 1000, Usage: "batches listed per replica (the counts cover all)"}
	diffMaxRecsFlag  = &cli.IntFlag{Name: "max-extra-records", Value: 10_000, Usage: "with --records: records listed per replica (and at most 64 MiB of their keys, values and headers)"}
)

var diffCommand = &cli.Command{
	Name:      "diff",
	Usage:     "compare replicas of one partition: common prefix, first divergence, batches only some hold, and each follower's truncation on rejoin",
	ArgsUsage: "DIR DIR [DIR...]",
	Description: `Each DIR is the same partition's directory from a different broker.
Batches are compared by offsets, partition leader epoch, size and stored CRC,
without decompressing anything (--records decodes the listed batches to show
their records). The common prefix is the last offset every
replica holds identically; the first divergence is the first offset where
two replicas hold different batches. For the leader (--leader, or inferred)
each other replica's truncation offset is Kafka's leader-epoch rule
(KIP-101/KIP-279, the rule klog replicate applies), from the
leader-epoch-checkpoint or, when there is none, the batches' partition leader
epochs: what a follower truncates when it rejoins, i.e. the acks=1 records an
unclean election loses.

Given log dirs instead (several brokers'), every partition more than one
of them holds is compared, its replicas matched by topic id (replicas of one
name with different topic ids are different topics'), each with its leader
inferred; --json writes one "partitionDiff" object per partition (topic,
partition, topicId, brokers, dirs, diff).

--json writes one "diff" object; the fields are listed in the README.

Exit status: 0 identical, or replicas only behind the leader; 1 diverged,
or a replica's data has findings (a batch header its scan rejects, a torn
last batch, a leader-epoch-checkpoint that does not parse, with --records a
listed batch whose records do not decode; the comparison is
printed in full, then one line on stderr names the first finding and counts
them); 2 usage or I/O trouble (a read error).`,
	Flags:  []cli.Flag{diffLeaderFlag, diffRecordsFlag, diffMaxExtraFlag, diffMaxRecsFlag, viewsJSONFlag, formatFlag, maxBatchFlag, keyEncFlag, valueEncFlag},
	Action: runDiff,
}

func runDiff(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return usageError("diff: give at least two replica DIRs (got %d)", len(args))
	}
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	logDirs := allLogDirs(args)
	for _, a := range args {
		if !logDirs && !partition.IsPartitionDir(a) {
			return usageError("diff: %s is not a partition directory", a)
		}
	}
	leader := -1
	if l := c.String(diffLeaderFlag.Name); l != "" {
		for i, a := range args {
			if filepath.Clean(a) == filepath.Clean(l) {
				leader = i
			}
		}
		if leader < 0 {
			return usageError("diff: --leader %s is not one of the DIR arguments", l)
		}
	}
	if c.Int(diffMaxExtraFlag.Name) < 1 {
		return usageError("diff: --max-extra-batches must be at least 1")
	}
	if c.Int(diffMaxRecsFlag.Name) < 1 {
		return usageError("diff: --max-extra-records must be at least 1")
	}
	recOpts, err := recordOptions(c, true)
	if err != nil {
		return err
	}
	opts := inspect.DiffOptions{Leader: leader, MaxExtraBatches: c.Int(diffMaxExtraFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name),
		Records: c.Bool(diffRecordsFlag.Name), MaxExtraRecords: c.Int(diffMaxRecsFlag.Name), RecordJSON: recOpts}
	if logDirs {
		return runDiffAll(c, args, format, opts)
	}
	rep, err := inspect.Diff(args, opts)
	if err != nil {
		return viewError("diff", err)
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if format == "json" {
			return inspect.WriteDiffJSON(w, rep)
		}
		return inspect.WriteDiffText(styled(c, w, format), rep)
	}); err != nil {
		return viewError("diff", err)
	}
	n, first, trouble := rep.Findings()
	if trouble {
		for _, r := range rep.Replicas {
			if len(r.Problems) > 0 {
				fmt.Fprintln(c.App.ErrWriter, "klog: diff: "+r.Dir+": "+r.Problems[0])
				break
			}
		}
	}
	if err := viewExit(c, trouble, n, first); err != nil || !rep.Diverged {
		return err
	}
	return findingsError("")
}
