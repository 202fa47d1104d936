package cluster

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// The transactions as kafka-transactions.sh prints them
// (ToolsUtils.prettyPrintTable: each column padded to its widest value,
// then a tab): describe's columns for the transactional ids, find-hanging's
// for the open transactions, with klog's own columns after them.

// prettyTable is ToolsUtils.prettyPrintTable, fitted into width
// (writeTable).
func prettyTable(w *bufio.Writer, width int, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = len([]rune(h))
	}
	for _, r := range rows {
		for i := range headers {
			widths[i] = max(widths[i], len([]rune(r[i])))
		}
	}
	var kafka []string
	line := func(r []string) {
		var b strings.Builder
		for i := range headers {
			b.WriteString(pad(r[i], widths[i]) + "\t")
		}
		kafka = append(kafka, b.String())
	}
	line(headers)
	for _, r := range rows {
		line(r)
	}
	writeTable(w, width, kafka, headers, rows)
}

// describeHeaders are DescribeTransactionsCommand's, the coordinator being
// the __transaction_state partition, then klog's.
var describeHeaders = []string{"CoordinatorPartition", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
	"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions", "LastUpdateTimeMs"}

// hangingHeaders are FindHangingTransactionsCommand's, then klog's.
var hangingHeaders = []string{"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset", "LastTimestamp",
	"Duration(min)", "TransactionalId", "CoordinatorState", "PinsLSO", "Hanging"}

func (t *Transaction) row(nowMs int64) []string {
	start, dur := "None", "None"
	if t.StartTimestamp >= 0 && (t.State == "Ongoing" || t.State == "PrepareCommit" || t.State == "PrepareAbort" || t.State == "PrepareEpochFence") {
		start, dur = strconv.FormatInt(t.StartTimestamp, 10), strconv.FormatInt(nowMs-t.StartTimestamp, 10)
	}
	var tps []string
	for _, p := range t.TopicPartitions {
		for _, n := range p.Partitions {
			tps = append(tps, p.Topic+"-"+strconv.Itoa(int(n)))
		}
	}
	return []string{strconv.Itoa(int(t.CoordinatorPartition)), t.TransactionalID, strconv.FormatInt(t.ProducerID, 10),
		strconv.Itoa(int(t.ProducerEpoch)), t.State, strconv.Itoa(int(t.TimeoutMs)), start, dur, strings.Join(tps, ","),
		strconv.FormatInt(t.LastUpdateTimestamp, 10)}
}

func (o *OpenTransaction) row() []string {
	hanging := "no"
	switch {
	case o.Hanging:
		hanging = "yes"
	case o.Unknown:
		hanging = "unknown"
	}
	pins := "no"
	if o.PinsLSO {
		pins = "yes"
	}
	return []string{o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.ProducerID, 10), strconv.Itoa(int(o.ProducerEpoch)),
		strconv.Itoa(int(o.CoordinatorEpoch)), strconv.FormatInt(o.StartOffset, 10), strconv.FormatInt(o.LastTimestamp, 10),
		strconv.FormatInt(o.DurationMs/60000, 10), orMissing(o.TransactionalID), orMissing(o.CoordinatorState), pins, hanging}
}

// WriteTransactions writes the transactional ids (describe's columns),
// the open transactions (find-hanging's), and the statistics. hangingOnly
// prints find-hanging's table alone, of the hanging transactions.
func WriteTransactions(w io.Writer, rep *TransactionsReport, hangingOnly bool) error {
	width := tableWidth(w)
	bw := bufio.NewWriter(w)
	if hangingOnly {
		var rows [][]string
		for _, o := range rep.Open {
			if o.Hanging {
				rows = append(rows, o.row()[:8])
			}
		}
		prettyTable(bw, width, hangingHeaders[:8], rows)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "%d transactional ids", len(rep.Transactions))
	var states []string
	for s, n := range rep.States {
		states = append(states, s+" "+strconv.Itoa(n))
	}
	sort.Strings(states)
	if len(states) > 0 {
		fmt.Fprintf(bw, " (%s)", strings.Join(states, ", "))
	}
	fmt.Fprintf(bw, " in %d of %d %s partitions:\n", len(rep.StatePartitionsRead), rep.TransactionStatePartitions, TransactionStateTopic)
	if len(rep.Transactions) > 0 {
		var rows [][]string
		for _, t := range rep.Transactions {
			rows = append(rows, t.row(rep.NowMs))
		}
		prettyTable(bw, width, describeHeaders, rows)
	}
	fmt.Fprintf(bw, "\n%d open transactions in %d partitions, %d hanging (open longer than %d min, as find-hanging judges at %s):\n",
		rep.OpenCount, rep.PartitionsRead, rep.HangingCount, rep.MaxTimeoutMs/60000, timeText(rep.NowMs))
	if len(rep.Open) > 0 {
		var rows [][]string
		for _, o := range rep.Open {
			rows = append(rows, o.row())
		}
		prettyTable(bw, width, hangingHeaders, rows)
		for _, o := range rep.Open {
			if o.Hanging || o.Unknown {
				fmt.Fprintf(bw, "  %s-%d producer %d: %s\n", o.Topic, o.Partition, o.ProducerID, o.Reason)
			}
		}
	}
	d := rep.Data
	fmt.Fprintf(bw, "\nIn the data: %d committed (%d records, %d bytes), %d aborted (%d records, %d bytes)", d.Committed, d.CommittedRecords,
		d.CommittedBytes, d.Aborted, d.AbortedRecords, d.AbortedBytes)
	if d.Durations.Count > 0 {
		fmt.Fprintf(bw, "; first batch to marker: min %d ms, mean %d ms, max %d ms", d.Durations.Min, d.Durations.Sum/d.Durations.Count, d.Durations.Max)
	}
	fmt.Fprintf(bw, "\nIn %s: %d completed as committed, %d as aborted", TransactionStateTopic, rep.CoordinatorCommits, rep.CoordinatorAborts)
	if c := rep.CoordinatorDurations; c.Count > 0 {
		fmt.Fprintf(bw, "; start to completion: min %d ms, mean %d ms, max %d ms", c.Min, c.Sum/c.Count, c.Max)
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// WriteTransactionsJSON writes one object per transactional id (type
// "transaction"), one per open transaction ("openTransaction"), then the
// summary ("transactions").
func WriteTransactionsJSON(w io.Writer, rep *TransactionsReport) error {
	for _, t := range rep.Transactions {
		if err := writeTyped(w, "transaction", t); err != nil {
			return err
		}
	}
	for _, o := range rep.Open {
		if err := writeTyped(w, "openTransaction", o); err != nil {
			return err
		}
	}
	return writeTyped(w, "transactions", struct {
		*TransactionsReport
		Transactions int `json:"transactionalIds"`
	}{rep, len(rep.Transactions)})
}
