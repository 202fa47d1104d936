package serve

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAdminTransactionsKadm: kadm lists and describes a transaction left
// open, one committed, one aborted and one only initialized, with the
// state and producer-id filters as Kafka's coordinator applies them;
// unknown state names and the duration filter (on the server's clock) on
// the wire; DescribeProducers shows the open transaction's first offset.
func TestAdminTransactionsKadm(t *testing.T) {
	dir := t.TempDir()
	s, addr, clock, events := startGroupServer(t, Config{LogDir: dir, Writable: true})
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the coordinator's park reports are not what is tested
		for {
			select {
			case <-events:
			case <-stop:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := clock.Now().UnixMilli()
	producer := func(id string) *kgo.Client {
		cl := mustKgo(t, addr, kgo.TransactionalID(id), kgo.TransactionTimeout(30*time.Second), kgo.AllowAutoTopicCreation(),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		t.Cleanup(cl.Close)
		return cl
	}
	// Each producer's id and epoch as its client has them, taken while its
	// transaction is open; ending one bumps the epoch (transactions v2,
	// KIP-890).
	pids := map[string][2]int64{}
	var rec *kgo.Record
	for _, p := range []struct {
		id  string
		end int // 1 commit, -1 abort, 0 leave open
	}{{"tx-commit", 1}, {"tx-abort", -1}, {"tx-open", 0}} {
		cl := producer(p.id)
		// kgo runs a transaction as v2 once it knows the broker
		// finalizes transaction.version 2 (ApiVersions).
		if err := cl.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(p.id)}).First()
		if err != nil {
			t.Fatal(err)
		}
		pid, epoch, err := cl.ProducerID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.end == 0 {
			rec = r
			pids[p.id] = [2]int64{pid, int64(epoch)}
			continue
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(p.end == 1)); err != nil {
			t.Fatal(err)
		}
		pids[p.id] = [2]int64{pid, int64(epoch) + 1}
	}
	x := txnWire{t, dial(t, addr)}
	if r := x.init("tx-empty", -1, -1); r.ErrorCode != 0 {
		t.Fatalf("init tx-empty: %s", codeName(r.ErrorCode))
	}
	waitTxnState(t, s, "tx-commit", "CompleteCommit")
	waitTxnState(t, s, "tx-abort", "CompleteAbort")

	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	list := func(pids []int64, states []string) map[string]string {
		t.Helper()
		l, err := adm.ListTransactions(ctx, pids, states)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, lt := range l {
			out[lt.TxnID] = lt.State
			if p, ok := s.txnPID(lt.TxnID); !ok || p != lt.ProducerID || lt.Coordinator != s.cfg.NodeID {
				t.Errorf("%s: producer %d on %d, the coordinator holds %d", lt.TxnID, lt.ProducerID, lt.Coordinator, p)
			}
		}
		return out
	}
	all := map[string]string{"tx-commit": "CompleteCommit", "tx-abort": "CompleteAbort", "tx-open": "Ongoing", "tx-empty": "Empty"}
	for _, c := range []struct {
		name   string
		pids   []int64
		states []string
		want   map[string]string
	}{
		{"no filter", nil, nil, all},
		{"state", nil, []string{"Ongoing"}, map[string]string{"tx-open": "Ongoing"}},
		{"states", nil, []string{"CompleteAbort", "CompleteCommit"}, map[string]string{"tx-commit": "CompleteCommit", "tx-abort": "CompleteAbort"}},
		{"producer", []int64{pids["tx-commit"][0]}, nil, map[string]string{"tx-commit": "CompleteCommit"}},
		{"producer and state", []int64{pids["tx-open"][0], pids["tx-abort"][0]}, []string{"Ongoing"}, map[string]string{"tx-open": "Ongoing"}},
		{"neither", []int64{pids["tx-open"][0]}, []string{"CompleteCommit"}, map[string]string{}},
		{"unknown producer", []int64{-7}, nil, map[string]string{}},
	} {
		if got := list(c.pids, c.states); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	d, err := adm.DescribeTransactions(ctx, "tx-commit", "tx-abort", "tx-open", "tx-empty", "tx-never")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]kadm.DescribedTransaction{
		"tx-commit": {State: "CompleteCommit", StartTimestamp: t0},
		"tx-abort":  {State: "CompleteAbort", StartTimestamp: t0},
		"tx-open":   {State: "Ongoing", StartTimestamp: t0, Topics: kadm.TopicsSet{"orders": {0: {}}}},
	} {
		got := d[id]
		if got.Err != nil || got.State != want.State || got.StartTimestamp != want.StartTimestamp || got.TimeoutMillis != 30000 ||
			got.ProducerID != pids[id][0] || int64(got.ProducerEpoch) != pids[id][1] || !sameTopics(got.Topics, want.Topics) {
			t.Errorf("%s: %+v, want %+v with producer %v, timeout 30000", id, got, want, pids[id])
		}
	}
	if e := d["tx-empty"]; e.Err != nil || e.State != "Empty" || e.StartTimestamp != -1 || len(e.Topics) != 0 {
		t.Errorf("tx-empty: %+v", e)
	}
	if e := d["tx-never"]; !errors.Is(e.Err, kerr.TransactionalIDNotFound) {
		t.Errorf("tx-never: %v, want TRANSACTIONAL_ID_NOT_FOUND", e.Err)
	}

	// On the wire: what kadm does not send.
	w := dial(t, addr)
	dr := w.do(&kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{""}}).(*kmsg.DescribeTransactionsResponse)
	if len(dr.TransactionStates) != 1 || dr.TransactionStates[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("describe of the empty id: %+v, want INVALID_REQUEST", dr.TransactionStates)
	}
	clock.Advance(5 * time.Second) // every transaction started at t0; tx-empty never did (-1)
	for _, c := range []struct {
		name     string
		version  int16
		states   []string
		duration int64
		want     []string
		unknown  []string
	}{
		{"unknown state", 1, []string{"Nope", "Ongoing"}, -1, []string{"tx-open"}, []string{"Nope"}},
		{"only unknown states", 1, []string{"Nope"}, -1, nil, []string{"Nope"}},
		{"running longer than 4999 ms", 1, nil, 4999, []string{"tx-abort", "tx-commit", "tx-empty", "tx-open"}, nil},
		{"running longer than 5000 ms", 1, nil, 5000, []string{"tx-empty"}, nil},
		{"v0 has no duration filter", 0, nil, 5000, []string{"tx-abort", "tx-commit", "tx-empty", "tx-open"}, nil},
	} {
		r := &kmsg.ListTransactionsRequest{Version: c.version, StateFilters: c.states, DurationFilterMillis: c.duration}
		resp := w.do(r).(*kmsg.ListTransactionsResponse)
		var got []string
		for _, ts := range resp.TransactionStates {
			got = append(got, ts.TransactionalID)
		}
		sort.Strings(got)
		if resp.ErrorCode != 0 || !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(resp.UnknownStateFilters, c.unknown) {
			t.Errorf("%s: %s %v unknown %v, want %v unknown %v", c.name, codeName(resp.ErrorCode), got, resp.UnknownStateFilters, c.want, c.unknown)
		}
	}

	// DescribeProducers: the open transaction's producer, from its
	// first offset; the ended ones have none open.
	var ts kadm.TopicsSet
	ts.Add("orders", 0)
	dp, err := adm.DescribeProducers(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[int64]int64{}
	for _, ap := range dp["orders"].Partitions[0].ActiveProducers {
		starts[ap.ProducerID] = ap.CurrentTxnStartOffset
	}
	if got := starts[pids["tx-open"][0]]; got != rec.Offset {
		t.Errorf("open transaction's start offset %d, want %d (%v)", got, rec.Offset, starts)
	}
	for _, id := range []string{"tx-commit", "tx-abort"} {
		if got, ok := starts[pids[id][0]]; !ok || got != -1 {
			t.Errorf("%s: start offset %d (listed %v), want -1", id, got, ok)
		}
	}
}

// sameTopics compares two topic sets (nil and empty alike).
func sameTopics(a, b kadm.TopicsSet) bool {
	return reflect.DeepEqual(a.Sorted(), b.Sorted())
}

// txnPID is the producer id the coordinator holds for a transactional id.
func (s *Server) txnPID(id string) (int64, bool) {
	for _, st := range s.Transactions() {
		if st.TransactionalID == id {
			return st.ProducerID, true
		}
	}
	return 0, false
}
