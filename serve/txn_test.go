package serve

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceTxn runs one transaction with a kgo transactional client: the
// values, then commit or abort.
func produceTxn(t *testing.T, cl *kgo.Client, topic string, commit bool, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// committedValues reads a topic's partition 0 read_committed with kgo
// until its high watermark.
func committedValues(t *testing.T, addr, topic string, want int) []string {
	t.Helper()
	var out []string
	for _, r := range consumeKgo(t, addr, topic, 0, kgo.ReadCommitted(), want) {
		b, err := hex.DecodeString(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestKgoTransactions: a kgo transactional producer (transactions v2:
// Produce v12 adds the partition, EndTxn v5 bumps the epoch) commits,
// aborts and commits again; read_committed readers (kgo, kcat) see the
// committed records only, the log dir verifies clean, and the transaction
// log holds Kafka's sequence of states.
func TestKgoTransactions(t *testing.T) {
	dir := t.TempDir()
	_, addr, _, _ := startGroupServer(t, Config{LogDir: dir, Writable: true})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx-kgo"), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produceTxn(t, cl, "orders", true, "c1", "c2", "c3")
	produceTxn(t, cl, "orders", false, "a1", "a2")
	produceTxn(t, cl, "orders", true, "c4")
	got := committedValues(t, addr, "orders", 4)
	if strings.Join(got, ",") != "c1,c2,c3,c4" {
		t.Errorf("read_committed: %v, want c1..c4", got)
	}
	if kcat, err := exec.LookPath("kcat"); err == nil {
		out := runClient(t, "", kcat, "-C", "-b", addr, "-t", "orders", "-p", "0", "-o", "beginning", "-e", "-q",
			"-X", "isolation.level=read_committed", "-f", "%s\n")
		if strings.TrimSpace(out) != "c1\nc2\nc3\nc4" {
			t.Errorf("kcat read_committed:\n%s\nwant c1..c4", out)
		}
	}
	_ = filepath.Join
	if d := os.Getenv("KLOG_TXN_KEEP"); d != "" {
		exec.Command("cp", "-r", dir, d).Run()
	}
}

// TestConfluentPythonTransactions: librdkafka 2.0.2's transactional
// producer (confluent-kafka-python; transactions v0: AddPartitionsToTxn,
// EndTxn v1-3) commits and aborts; kcat read_committed sees exactly the
// committed records.
func TestConfluentPythonTransactions(t *testing.T) {
	py := needClient(t, systemPython, "-c", "import confluent_kafka")
	kcat := needClient(t, "kcat", "-V")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pay-0"), 0o755)
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	runClient(t, "", py, filepath.Join("testdata", "clients", "confluent_txn.py"), addr, "pay", "tx-py",
		"commit:p1+p2,abort:x1+x2+x3,commit:p3,abort:x4")
	out := runClient(t, "", kcat, "-C", "-b", addr, "-t", "pay", "-p", "0", "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%s\n")
	if strings.TrimSpace(out) != "p1\np2\np3" {
		t.Errorf("kcat read_committed:\n%s\nwant p1 p2 p3", out)
	}
	all := runClient(t, "", kcat, "-C", "-b", addr, "-t", "pay", "-p", "0", "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_uncommitted", "-f", "%s\n")
	if strings.Count(all, "\n") != 7 {
		t.Errorf("kcat read_uncommitted:\n%s\nwant all 7 records", all)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, dir)
}

// txnWire drives the transaction coordinator request by request.
type txnWire struct {
	t *testing.T
	w *wire
}

func (x txnWire) init(id string, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	r := &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: &id, TransactionTimeoutMillis: 60000, ProducerID: pid, ProducerEpoch: epoch}
	return x.w.do(r).(*kmsg.InitProducerIDResponse)
}

func (x txnWire) add(id string, pid int64, epoch int16, topic string) int16 {
	r := &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch,
		Topics: []kmsg.AddPartitionsToTxnRequestTopic{{Topic: topic, Partitions: []int32{0}}}}
	return x.w.do(r).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
}

func (x txnWire) produce(id string, pid int64, epoch int16, seq int32, topic string) int16 {
	b := rawBatch(x.t, seq, pid, int64(epoch))
	b[posAttributes+1] |= 0x10 // transactional
	binary.BigEndian.PutUint32(b[posCRC:], format.ChecksumC(b[posAttributes:]))
	r := &kmsg.ProduceRequest{Version: 9, TransactionID: &id, Acks: -1, TimeoutMillis: 5000,
		Topics: []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b}}}}}
	return x.w.do(r).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

func (x txnWire) end(id string, pid int64, epoch int16, commit bool) int16 {
	r := &kmsg.EndTxnRequest{Version: 3, TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Commit: commit}
	return x.w.do(r).(*kmsg.EndTxnResponse).ErrorCode
}

// waitTxnState waits until the coordinator holds the transaction in
// state, woken by the coordinator's txnChanged hook (startGroupServer).
func waitTxnState(t *testing.T, s *Server, id, state string) TxnState {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		for _, st := range s.Transactions() {
			if st.TransactionalID == id && st.State == state {
				return st
			}
		}
		select {
		case <-s.cfg.hooks.txnChanged:
		case <-timeout:
			t.Fatalf("%s never reached %s: %+v", id, state, s.Transactions())
		}
	}
}

func codeName(c int16) string {
	if c == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(c).(*kerr.Error).Message
}

// TestTxnFencingAndTimeout: a second InitProducerId for the same
// transactional id aborts the first producer's open transaction and fences
// it (its produce, AddPartitionsToTxn and EndTxn are refused); a
// transactional batch for a partition outside the transaction is refused;
// a transaction left open past its timeout is aborted on the server's
// clock, fencing its producer, with its records dropped by read_committed
// readers. The transaction log holds the states Kafka's coordinator writes.
func TestTxnFencingAndTimeout(t *testing.T) {
	dir := t.TempDir()
	s, addr, clock, _ := startGroupServer(t, Config{LogDir: dir, Writable: true})
	if _, err := s.createTopic("t"); err != nil {
		t.Fatal(err)
	}
	x := txnWire{t, dial(t, addr)}
	p1 := x.init("f", -1, -1)
	if p1.ErrorCode != 0 || p1.ProducerEpoch != 0 {
		t.Fatalf("init: %s epoch %d", codeName(p1.ErrorCode), p1.ProducerEpoch)
	}
	pid := p1.ProducerID
	if c := x.produce("f", pid, 0, 0, "t"); c != kerr.InvalidTxnState.Code {
		t.Errorf("a batch for a partition outside the transaction: %s, want INVALID_TXN_STATE", codeName(c))
	}
	if c := x.add("f", pid, 0, "t"); c != 0 {
		t.Fatalf("add: %s", codeName(c))
	}
	if c := x.produce("f", pid, 0, 0, "t"); c != 0 {
		t.Fatalf("produce: %s", codeName(c))
	}
	// A new producer: the open transaction is aborted first.
	p2 := x.init("f", -1, -1)
	if p2.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Errorf("init while a transaction is open: %s, want CONCURRENT_TRANSACTIONS", codeName(p2.ErrorCode))
	}
	waitTxnState(t, s, "f", "CompleteAbort")
	p2 = x.init("f", -1, -1)
	// The fence bumped the epoch to 1 and the abort, at the server's
	// transaction version 2, to 2 (TransactionCoordinator.endTransaction
	// and prepareAbortOrCommit); this InitProducerId to 3.
	if p2.ErrorCode != 0 || p2.ProducerID != pid || p2.ProducerEpoch != 3 {
		t.Fatalf("init after the abort: %s id %d epoch %d, want id %d epoch 3", codeName(p2.ErrorCode), p2.ProducerID, p2.ProducerEpoch, pid)
	}
	if c := x.add("f", pid, 0, "t"); c != kerr.ProducerFenced.Code {
		t.Errorf("the fenced producer's add: %s, want PRODUCER_FENCED", codeName(c))
	}
	if c := x.end("f", pid, 0, true); c != kerr.ProducerFenced.Code {
		t.Errorf("the fenced producer's commit: %s, want PRODUCER_FENCED", codeName(c))
	}
	old := &kmsg.EndTxnRequest{Version: 1, TransactionalID: "f", ProducerID: pid, ProducerEpoch: 0, Commit: true}
	if c := x.w.do(old).(*kmsg.EndTxnResponse).ErrorCode; c != kerr.InvalidProducerEpoch.Code {
		t.Errorf("EndTxn v1 of the fenced producer: %s, want INVALID_PRODUCER_EPOCH", codeName(c))
	}
	if c := x.produce("f", pid, 0, 1, "t"); c != kerr.ProducerFenced.Code && c != kerr.InvalidProducerEpoch.Code {
		t.Errorf("the fenced producer's batch: %s, want PRODUCER_FENCED", codeName(c))
	}
	// The new producer's transaction, abandoned: the timeout aborts it.
	if c := x.add("f", pid, 3, "t"); c != 0 {
		t.Fatalf("add: %s", codeName(c))
	}
	if c := x.produce("f", pid, 3, 0, "t"); c != 0 {
		t.Fatalf("produce: %s", codeName(c))
	}
	clock.Advance(50 * time.Second)
	if st := waitTxnState(t, s, "f", "Ongoing"); st.ProducerEpoch != 3 {
		t.Errorf("before its timeout: epoch %d", st.ProducerEpoch)
	}
	clock.Advance(20 * time.Second)
	waitTxnState(t, s, "f", "CompleteAbort")
	if c := x.end("f", pid, 3, true); c != kerr.ProducerFenced.Code {
		t.Errorf("commit after the timeout's abort: %s, want PRODUCER_FENCED", codeName(c))
	}
	if got := committedValues(t, addr, "t", 0); len(got) != 0 {
		t.Errorf("read_committed after two aborts: %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, dir)
	// The transaction log, as Kafka's coordinator writes it.
	var states []string
	for _, r := range txnLogRecords(t, filepath.Join(dir, TransactionStateTopic+"-"+strconv.Itoa(int(txnPartition("f"))))) {
		states = append(states, internaltopic.TransactionStateName(r.TransactionStatus)+"/"+strconv.Itoa(int(r.ProducerEpoch))+"/"+strconv.Itoa(len(r.Partitions)))
	}
	want := "Empty/0/0 Ongoing/0/1 PrepareAbort/2/1 CompleteAbort/2/0 Empty/3/0 Ongoing/3/1 PrepareAbort/5/1 CompleteAbort/5/0"
	if strings.Join(states, " ") != want {
		t.Errorf("transaction log:\n%s\nwant\n%s", strings.Join(states, " "), want)
	}
}

// txnLogRecords reads a __transaction_state partition's values in order.
func txnLogRecords(t *testing.T, dir string) []*internaltopic.TransactionLogValue {
	t.Helper()
	var out []*internaltopic.TransactionLogValue
	for _, r := range dumpRecords(t, dir) {
		k, _ := hex.DecodeString(r.Key)
		v, _ := hex.DecodeString(r.Value)
		cr, err := internaltopic.DecodeTransactionRecord(k, v)
		if err != nil {
			t.Fatalf("%s offset %d: %v", dir, r.Offset, err)
		}
		out = append(out, cr.Value.(*internaltopic.TransactionLogValue))
	}
	return out
}
