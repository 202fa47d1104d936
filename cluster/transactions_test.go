package cluster

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	it "github.com/klog-dev/klog/internaltopic"
)

func txnJSON(id string, pid int64, status int, parts string) kv {
	return kv{`{"type":"0","data":{"transactionalId":"` + id + `"}}`,
		`{"version":"1","data":{"producerId":` + strconv.FormatInt(pid, 10) + `,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":` +
			strconv.Itoa(status) + `,"transactionPartitions":[` + parts + `],"transactionLastUpdateTimestampMs":1700000900000,"transactionStartTimestampMs":1700000000000}}`}
}

// TestTransactions: the coordinator's transactional ids, the data's open
// transactions with find-hanging's verdicts, and the statistics.
func TestTransactions(t *testing.T) {
	t.Parallel()
	ld := t.TempDir()
	newSeg(t).coord(it.TransactionLog, -1,
		txnJSON("tx-a", 100, 1, `{"topic":"orders","partitionIds":[0]}`),
		txnJSON("tx-b", 101, 4, ""),
		txnJSON("tx-c", 102, 1, `{"topic":"orders","partitionIds":[1]}`),
		txnJSON("tx-d", 106, 5, ""),
		kv{`{"type":"0","data":{"transactionalId":"tx-d"}}`, ""},
	).write(filepath.Join(ld, TransactionStateTopic+"-0"))
	const old, recent = int64(1700000000000), int64(1700003500000)
	// orders-0: tx-a open since an old batch (the coordinator will end
	// it), producer 101's transaction committed.
	newSeg(t).at(old).data(3, 101, 0, true).data(2, 100, 0, true).at(old+500).marker(101, 0, true).write(filepath.Join(ld, "orders-0"))
	// orders-1: producer 103 is no transactional id's: hanging.
	newSeg(t).data(4, -1, -1, false).at(old).data(1, 103, 0, true).write(filepath.Join(ld, "orders-1"))
	// orders-2: tx-c's producer, but tx-c does not include orders-2:
	// hanging; producer 104's aborted.
	newSeg(t).at(old).data(2, 104, 0, true).marker(104, 0, false).data(1, 102, 0, true).write(filepath.Join(ld, "orders-2"))
	// orders-3: open, but recently: no candidate.
	newSeg(t).at(recent).data(1, 105, 0, true).write(filepath.Join(ld, "orders-3"))

	now := time.UnixMilli(1700003600000) // an hour after old
	rep, err := Transactions(context.Background(), discover(t, ld), TransactionsOptions{Now: now.UnixMilli(), StatePartitions: 1, Partition: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ProblemCount != 0 || len(rep.Transactions) != 3 || rep.States["Ongoing"] != 2 || rep.States["CompleteCommit"] != 1 ||
		rep.CoordinatorCommits != 1 || rep.CoordinatorAborts != 1 {
		t.Fatalf("report %+v, problems %v", rep, rep.Problems)
	}
	type verdict struct {
		part             int32
		pid              int64
		hanging, pins    bool
		id, state        string
		start, lso, from int64
	}
	var got []verdict
	for _, o := range rep.Open {
		got = append(got, verdict{o.Partition, o.ProducerID, o.Hanging, o.PinsLSO, o.TransactionalID, o.CoordinatorState, o.StartOffset, o.LastStableOffset, o.StartTimestamp})
	}
	want := []verdict{
		{0, 100, false, true, "tx-a", "Ongoing", 3, 3, old + 3},
		{1, 103, true, true, "", "", 4, 4, old},
		{2, 102, true, true, "tx-c", "Ongoing", 3, 3, old + 3},
		{3, 105, false, true, "", "", 0, 0, recent},
	}
	if len(got) != len(want) {
		t.Fatalf("open %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("open[%d] = %+v, want %+v (%s)", i, got[i], want[i], rep.Open[i].Reason)
		}
	}
	if rep.HangingCount != 2 || rep.OpenCount != 4 {
		t.Errorf("%d hanging of %d open", rep.HangingCount, rep.OpenCount)
	}
	d := rep.Data
	if d.Committed != 1 || d.CommittedRecords != 3 || d.Aborted != 1 || d.AbortedRecords != 2 || d.Durations.Count != 2 || d.CommittedBytes == 0 {
		t.Errorf("data stats %+v", d)
	}
	// find-hanging's own table.
	var b bytes.Buffer
	if err := WriteTransactions(&b, rep, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "Topic \tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset\tLastTimestamp\tDuration(min)\t" ||
		!strings.HasPrefix(lines[1], "orders\t1        \t103       \t0            \t-1              \t4          \t1700000000000\t60           \t") {
		t.Errorf("find-hanging table:\n%s", b.String())
	}
	// Without every __transaction_state partition, a producer no id
	// matches cannot be judged.
	rep, err = Transactions(context.Background(), discover(t, ld), TransactionsOptions{Now: now.UnixMilli(), StatePartitions: 50, Partition: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HangingCount != 1 || !rep.Open[1].Unknown {
		t.Errorf("with 1 of 50 partitions: %d hanging, open[1] %+v", rep.HangingCount, rep.Open[1])
	}
}
