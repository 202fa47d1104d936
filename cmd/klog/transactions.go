package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/klog-dev/klog/cluster"
	"github.com/urfave/cli/v2"
)

var (
	txnIDFlag         = &cli.StringSliceFlag{Name: "transactional-id", Usage: "list only this transactional `ID` (repeatable)"}
	txnTopicFlag      = &cli.StringFlag{Name: "topic", Usage: "search only this topic's partitions for open transactions"}
	txnPartitionFlag  = &cli.IntFlag{Name: "partition", Value: -1, Usage: "with --topic: only this partition"}
	txnHangingFlag    = &cli.BoolFlag{Name: "find-hanging", Usage: "print only kafka-transactions.sh find-hanging's table of the hanging transactions"}
	txnTimeoutFlag    = &cli.IntFlag{Name: "max-transaction-timeout", Value: 15, Usage: "find-hanging's `MINUTES`: an open transaction is a candidate once its last batch is older"}
	txnNowFlag        = &cli.StringFlag{Name: "now", Usage: "the time durations are measured to, `T` (epoch ms, RFC 3339, -1h; default: the clock): for a copy of a cluster's disks, its time"}
	txnPartitionsFlag = &cli.IntFlag{Name: "state-partitions", Usage: "transaction.state.log.num.partitions (default: the metadata image's, else 50)"}
	txnJSONFlag       = &cli.BoolFlag{Name: "json", Usage: "write one JSON object per transactional id and open transaction, then a summary"}
)

var transactionsCommand = &cli.Command{
	Name:      "transactions",
	Usage:     "transactions offline: every transactional id from __transaction_state, the transactions open in the data and the hanging ones (kafka-transactions.sh find-hanging), statistics",
	ArgsUsage: "DIR...",
	Description: `Each DIR is a log dir (or a partition directory). Every __transaction_state-N
in them is loaded as the transaction coordinator loads it: the last record of
each transactional id, a tombstone removing it. Every other partition's
producers are read as the broker loads them (the latest producer snapshot at
or below the log end, then the batches after it): a producer with a
transaction start offset has an open transaction, and the earliest one pins
the partition's last stable offset.

Hanging, as find-hanging defines it: an open transaction whose last batch is
older than --max-transaction-timeout minutes (before --now), whose producer id
is no transactional id's current one, or whose transactional id's transaction
is not Ongoing, PrepareCommit or PrepareAbort with this partition in it (the
coordinator will never write its marker). When the producer id matches no
transactional id and not every __transaction_state partition is on these
disks, the verdict is unknown.

Statistics: the transactions the data's markers end (committed and aborted,
their records and bytes, first batch to marker), and those
__transaction_state records as completed (start to completion).

Output: describe's columns for the transactional ids, find-hanging's for the
open transactions (klog's columns after them), ToolsUtils.prettyPrintTable's
layout (fitted to a narrower terminal or $COLUMNS); --find-hanging find-hanging's table alone; --json one object per
transactional id (type "transaction") and open transaction
("openTransaction"), then a summary ("transactions").

Exit status: 0 no hanging transaction; 1 a hanging transaction, or records
that could not be read (everything is printed first); 2 usage or I/O
trouble.`,
	Flags: []cli.Flag{txnIDFlag, txnTopicFlag, txnPartitionFlag, txnHangingFlag, txnTimeoutFlag, txnNowFlag, txnPartitionsFlag,
		txnJSONFlag, maxBatchFlag},
	Action: runTransactions,
}

func transactionsOptions(c *cli.Context) (cluster.TransactionsOptions, error) {
	opts := cluster.TransactionsOptions{TransactionalIDs: c.StringSlice(txnIDFlag.Name), Topic: c.String(txnTopicFlag.Name),
		Partition: int32(c.Int(txnPartitionFlag.Name)), MaxBatchBytes: c.Int(maxBatchFlag.Name)}
	if p := c.Int(txnPartitionFlag.Name); p < -1 || p > math.MaxInt32 || (p >= 0 && opts.Topic == "") {
		return opts, usageError("transactions: --partition needs --topic and a partition number, got %d", p)
	}
	if m := c.Int(txnTimeoutFlag.Name); m < 0 || m > math.MaxInt32 {
		return opts, usageError("transactions: --max-transaction-timeout must be a number of minutes, got %d", m)
	}
	opts.MaxTimeout = time.Duration(c.Int(txnTimeoutFlag.Name)) * time.Minute
	if opts.MaxTimeout == 0 {
		opts.MaxTimeout = time.Millisecond // 0 minutes: every open transaction is a candidate
	}
	if n := c.Int(txnPartitionsFlag.Name); n < 0 || n > math.MaxInt32 {
		return opts, usageError("transactions: --state-partitions must be a partition count, got %d", n)
	}
	opts.StatePartitions = int32(c.Int(txnPartitionsFlag.Name))
	if s := c.String(txnNowFlag.Name); s != "" {
		ms, err := parseTime(s)
		if err != nil {
			return opts, usageError("transactions: --now: %v", err)
		}
		opts.Now = ms
	}
	return opts, nil
}

func runTransactions(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("transactions: no DIR given")
	}
	opts, err := transactionsOptions(c)
	if err != nil {
		return err
	}
	dirs, err := cluster.Discover(args)
	if err != nil {
		return fail("transactions", err)
	}
	rep, err := cluster.Transactions(c.Context, dirs, opts)
	if err != nil {
		return fail("transactions", err)
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if c.Bool(txnJSONFlag.Name) {
			return cluster.WriteTransactionsJSON(w, rep)
		}
		return cluster.WriteTransactions(styled(c, w, "table"), rep, c.Bool(txnHangingFlag.Name))
	}); err != nil {
		return fail("transactions", err)
	}
	if rep.ProblemCount > 0 {
		p := rep.Problems[0]
		fmt.Fprintf(c.App.ErrWriter, "klog: transactions: %d problems; the first: %s at position %d, offset %d: %s\n", rep.ProblemCount, p.File, p.Position, p.Offset, p.Message)
	}
	if rep.HangingCount > 0 || rep.ProblemCount > 0 {
		return findingsError("")
	}
	return nil
}
