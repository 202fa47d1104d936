package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/serve"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func runClient(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
	}
}

// servedLogDir is a log dir with topic orders: 3 partitions of 40
// records, written by klog's appender.
func servedLogDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p := 0; p < 3; p++ {
		a, err := produce.Open(filepath.Join(dir, "orders-"+strconv.Itoa(p)), produce.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			recs := make([]format.Record, 10)
			for j := range recs {
				recs[j] = format.Record{Key: []byte("k"), Value: []byte("v" + strconv.Itoa(i*10+j)), Timestamp: 1700000000000}
			}
			if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func serveDir(t *testing.T, dir string) (addr string, stop func()) {
	t.Helper()
	s, err := serve.New(serve.Config{LogDir: dir, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil && !errors.Is(err, serve.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}
}

// TestGroupsThroughServe: groups and offsets committed through klog serve
// by franz-go (a consumer group, and kadm's explicit commits), kcat and
// librdkafka (confluent-kafka) are read back from __consumer_offsets with
// the offsets and lag kadm.Lag reports through serve for the same groups
// (DescribeGroups, OffsetFetch, ListOffsets), and with the commits klog
// dump --offsets-decoder (kafka-dump-log's text) prints for the same
// records.
func TestGroupsThroughServe(t *testing.T) {
	t.Parallel()
	dir := servedLogDir(t)
	addr, stop := serveDir(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// A franz-go consumer group: consume 50 records, commit them.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("g-kgo"), kgo.ConsumeTopics("orders"),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for n < 50 {
		fs := cl.PollRecords(ctx, 50-n)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	adm := kadm.NewClient(mustClient(t, addr))
	defer adm.Close()
	// kadm's explicit commits, with metadata.
	var commits kadm.Offsets
	commits.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 11, LeaderEpoch: -1, Metadata: "from kadm"})
	commits.Add(kadm.Offset{Topic: "orders", Partition: 2, At: 39, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g-admin", commits); err != nil {
		t.Fatal(err)
	}
	groups := []string{"g-kgo", "g-admin"}
	// kcat's high-level consumer (librdkafka) commits what it consumed.
	if kcat := lookClient(t, "kcat", "-V"); kcat != "" {
		runClient(t, kcat, "-b", addr, "-G", "g-kcat", "-o", "beginning", "-c", "30", "-q", "-e", "orders")
		groups = append(groups, "g-kcat")
	}
	// confluent-kafka (librdkafka through Python) commits synchronously.
	if py := lookClient(t, "/usr/bin/python3", "-c", "import confluent_kafka"); py != "" {
		runClient(t, py, "../serve/testdata/clients/confluent.py", "consume", addr, "orders", "g-confluent", "20", "read_uncommitted")
		groups = append(groups, "g-confluent")
	}
	// More records after the commits, so that there is lag.
	pr := mustClient(t, addr)
	for i := 0; i < 7; i++ {
		if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("late")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pr.Close()

	// kadm's view through serve: kadm.Lag describes each group, fetches
	// its commits and lists the partitions' offsets.
	type row struct{ offset, end, lag int64 }
	want := map[string]row{}
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		l := lags[g]
		if err := l.Error(); err != nil {
			t.Fatalf("kadm.Lag %s: %v", g, err)
		}
		for _, ps := range l.Lag {
			for _, m := range ps {
				if m.Commit.At < 0 {
					// A partition of the topic the group never
					// committed: kadm lists it, klog groups does not
					// (kafka-consumer-groups prints "-").
					continue
				}
				if m.Err != nil {
					t.Fatalf("kadm.Lag %s %s-%d: %v", g, m.Topic, m.Partition, m.Err)
				}
				want[g+"/"+m.Topic+"/"+strconv.Itoa(int(m.Partition))] = row{m.Commit.At, m.End.Offset, m.Lag}
			}
		}
	}
	stop()

	rep := groupsOf(t, GroupsOptions{}, dir)
	got := map[string]row{}
	for _, g := range rep.Groups {
		for _, o := range g.Offsets {
			got[g.GroupID+"/"+o.Topic+"/"+strconv.Itoa(int(o.Partition))] = row{o.Offset, *o.LogEndOffset, *o.Lag}
		}
	}
	if len(want) < 4 || len(got) != len(want) {
		t.Fatalf("offsets from disk %v, kadm through serve %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: from disk %+v, kadm through serve %+v", k, got[k], w)
		}
	}
	if rep.ProblemCount != 0 {
		t.Errorf("problems: %v", rep.Problems)
	}
	// The same commits as klog dump --offsets-decoder prints them.
	dumped, members := map[string]int64{}, map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(dir, OffsetsTopic+"-*", "*.log"))
	for _, l := range logs {
		var out bytes.Buffer
		if _, err := dump.Run([]string{l}, dump.Options{Decoder: internaltopic.Offsets, MaxBytes: -1}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		decoderCommitted(t, l, &out, dumped, members)
	}
	if len(dumped) != len(got) {
		t.Errorf("klog dump --offsets-decoder shows %d commits, klog groups %d", len(dumped), len(got))
	}
	for k, off := range dumped {
		if got[k].offset != off {
			t.Errorf("%s: klog groups %d, klog dump --offsets-decoder %d", k, got[k].offset, off)
		}
	}
	for _, g := range rep.Groups {
		if n, ok := members[g.GroupID]; ok && n != len(g.Members) {
			t.Errorf("%s: %d members, klog dump --offsets-decoder's last group record has %d", g.GroupID, len(g.Members), n)
		}
	}
	// The group serve's coordinator stored last: as Kafka does when the
	// last member leaves, the group again, Empty, with no member, at the
	// generation after the one it was consuming in.
	g := rep.GroupByID("g-kgo")
	if g.ProtocolType != "consumer" || g.State != "Empty" || g.Generation < 2 || g.CoordinatorPartition != g.Partition || len(g.Members) != 0 {
		t.Errorf("g-kgo: %+v", g)
	}
	if o := rep.GroupByID("g-admin").Offsets[0]; o.Metadata != "from kadm" {
		t.Errorf("g-admin's commit metadata %q", o.Metadata)
	}
}

func mustClient(t *testing.T, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// lookClient is needClient that returns "" instead of skipping, so that
// one test covers the clients present (all of them under CI).
func lookClient(t *testing.T, name string, check ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil && len(check) > 0 {
		err = exec.Command(path, check...).Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI (.ci/run installs it): %v", name, err)
		}
		t.Logf("%s not available, not tested: %v", name, err)
		return ""
	}
	return path
}

// TestTransactionsThroughServe: transactions committed, aborted and left
// open through klog serve by franz-go's transactional producer are read
// back by klog transactions from __transaction_state and the data, with
// the states klog dump --transaction-log-decoder (kafka-dump-log's text)
// prints for the same records.
func TestTransactionsThroughServe(t *testing.T) {
	t.Parallel()
	dir := servedLogDir(t)
	addr, stop := serveDir(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	produceTxn := func(id string, partition int32, n int, end *kgo.TransactionEndTry) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(id), kgo.DefaultProduceTopic("orders"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: partition, Value: []byte(id)}).FirstErr(); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
		if end != nil {
			if err := cl.EndTransaction(ctx, *end); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
	}
	commit, abort := kgo.TryCommit, kgo.TryAbort
	produceTxn("tx-commit", 0, 3, &commit)
	produceTxn("tx-abort", 1, 2, &abort)
	produceTxn("tx-open", 2, 4, nil) // the client goes without ending it
	stop()

	rep, err := Transactions(ctx, discover(t, dir), TransactionsOptions{Now: time.Now().UnixMilli(), Partition: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ProblemCount != 0 {
		t.Errorf("problems: %v", rep.Problems)
	}
	states := map[string]string{}
	for _, tx := range rep.Transactions {
		states[tx.TransactionalID] = tx.State
	}
	want := map[string]string{"tx-commit": "CompleteCommit", "tx-abort": "CompleteAbort", "tx-open": "Ongoing"}
	for id, w := range want {
		if states[id] != w {
			t.Errorf("%s: state %q, want %q (all: %v)", id, states[id], w, states)
		}
	}
	// The data: tx-open's 4 records in orders-2 are the one open
	// transaction, pinning the LSO at its first offset (40), not hanging
	// (its coordinator knows it); one commit and one abort, with their
	// records.
	if len(rep.Open) != 1 {
		t.Fatalf("open transactions %+v", rep.Open)
	}
	o := rep.Open[0]
	if o.Topic != "orders" || o.Partition != 2 || o.TransactionalID != "tx-open" || o.CoordinatorState != "Ongoing" ||
		o.StartOffset != 40 || !o.PinsLSO || o.LastStableOffset != 40 || o.HighWatermark != 44 || o.Hanging {
		t.Errorf("open transaction %+v", o)
	}
	if d := rep.Data; d.Committed != 1 || d.CommittedRecords != 3 || d.Aborted != 1 || d.AbortedRecords != 2 {
		t.Errorf("data stats %+v", d)
	}
	// The last state of each id as klog dump --transaction-log-decoder
	// prints it (TransactionState's ids: Ongoing 1, CompleteCommit 4,
	// CompleteAbort 5).
	name := map[float64]string{0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit", 5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence"}
	dumped := map[string]string{}
	logs, _ := filepath.Glob(filepath.Join(dir, TransactionStateTopic+"-*", "*.log"))
	for _, l := range logs {
		var out bytes.Buffer
		if _, err := dump.Run([]string{l}, dump.Options{Decoder: internaltopic.TransactionLog, MaxBytes: -1}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			ki, pi := strings.Index(line, " key: {"), strings.Index(line, " payload: ")
			if !strings.HasPrefix(line, "| offset: ") || ki < 0 || pi < ki {
				continue
			}
			var key struct {
				Data struct{ TransactionalID string }
			}
			var val struct {
				Data struct{ TransactionStatus float64 }
			}
			if err := json.Unmarshal([]byte(line[ki+len(" key: "):pi]), &key); err != nil {
				t.Fatalf("%s: %v: %s", l, err, line)
			}
			if err := json.Unmarshal([]byte(line[pi+len(" payload: "):]), &val); err != nil {
				t.Fatalf("%s: %v: %s", l, err, line)
			}
			dumped[key.Data.TransactionalID] = name[val.Data.TransactionStatus]
		}
	}
	for id := range want {
		if dumped[id] != states[id] {
			t.Errorf("%s: klog transactions %q, klog dump --transaction-log-decoder %q", id, states[id], dumped[id])
		}
	}
}
