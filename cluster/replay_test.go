package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/serve"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

const (
	dirB3a = "Xq0Zb8wXRyGQ9yq7bNKhNQ"
	dirB3b = "kC9UhbFDQmi0tCI0QxUL3w"
)

// replicaN appends n records (values "<from+i>") to a partition at epoch 3.
func replicaN(t *testing.T, dir string, from, n int) {
	t.Helper()
	tid, _ := format.ParseTopicID(idOrders)
	a, err := produce.Open(dir, produce.Options{TopicID: tid, PartitionLeaderEpoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Value: []byte(strconv.Itoa(from + i)), Timestamp: 1700000000000}
	}
	if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func partitionLed(p, leader, epoch int, replicas, isr string) string {
	return `{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":` + strconv.Itoa(p) + `,"topicId":"` + idOrders + `","replicas":` + replicas +
		`,"isr":` + isr + `,"removingReplicas":[],"addingReplicas":[],"leader":` + strconv.Itoa(leader) + `,"leaderEpoch":` + strconv.Itoa(epoch) +
		`,"partitionEpoch":1,"directories":[]}}`
}

// threeBrokers is a three-broker cluster's disks: orders has partitions
// 0 ([1,2], leader 1: broker 1 holds 10 records, its follower 2 holds 7,
// the high watermark 7), 1 ([2,3], leader 2, 5 records each) and 2 ([3,1],
// leader 3 at epoch 5 in the image, 6 records of epoch 3 each). Broker 3 has two log dirs (JBOD): orders-1 in
// one, orders-2 in the other, and a -future copy of orders-2 under way;
// broker 2 a -delete directory. Group g committed orders-0 at 3 and
// orders-1 at 5 in broker 1's __consumer_offsets. With image, broker 1
// holds the metadata log.
func threeBrokers(t *testing.T, image bool) []string {
	b1, b2 := brokerLogDir(t, 1, dirB1), brokerLogDir(t, 2, dirB2)
	b3a, b3b := brokerLogDir(t, 3, dirB3a), brokerLogDir(t, 3, dirB3b)
	replicaN(t, filepath.Join(b1, "orders-0"), 0, 7)
	replicaN(t, filepath.Join(b2, "orders-0"), 0, 7)
	replicaN(t, filepath.Join(b1, "orders-0"), 7, 3)
	replicaN(t, filepath.Join(b2, "orders-1"), 100, 5)
	replicaN(t, filepath.Join(b3a, "orders-1"), 100, 5)
	replicaN(t, filepath.Join(b3b, "orders-2"), 200, 6)
	replicaN(t, filepath.Join(b1, "orders-2"), 200, 6)
	replicaN(t, filepath.Join(b3a, "orders-2.0123456789abcdef0123456789abcdef-future"), 200, 2)
	os.MkdirAll(filepath.Join(b2, "orders-7.fedcba9876543210fedcba9876543210-delete"), 0o755)
	hw := func(p int32, off int64) format.OffsetEntry {
		return format.OffsetEntry{Topic: "orders", Partition: p, Offset: off}
	}
	writeHW(t, b1, hw(0, 7), hw(2, 6))
	writeHW(t, b2, hw(0, 7), hw(1, 5))
	writeHW(t, b3a, hw(1, 5))
	writeHW(t, b3b, hw(2, 6))
	st := offsetstore.Open(b1, produce.Options{})
	if err := st.Commit("g", []offsetstore.Commit{
		{TopicPartition: offsetstore.TopicPartition{Topic: "orders", Partition: 0}, Committed: offsetstore.Committed{Offset: 3, LeaderEpoch: 3, CommitTimestamp: 1700000000000}},
		{TopicPartition: offsetstore.TopicPartition{Topic: "orders", Partition: 1}, Committed: offsetstore.Committed{Offset: 5, LeaderEpoch: 3, CommitTimestamp: 1700000000000}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if image {
		metadataLog(t, b1, registerBroker(1, dirB1), registerBroker(2, dirB2),
			`{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":3,"isMigratingZkBroker":false,"incarnationId":"`+dirB3a+
				`","brokerEpoch":1,"endPoints":[],"features":[],"rack":"r3","fenced":false,"inControlledShutdown":false,"logDirs":["`+dirB3a+`","`+dirB3b+`"]}}`,
			`{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"`+idOrders+`"}}`,
			partitionLed(0, 1, 3, "[1,2]", "[1,2]"), partitionLed(1, 2, 3, "[2,3]", "[2,3]"), partitionLed(2, 3, 5, "[3,1]", "[3]"))
	}
	return []string{b1, b2, b3a, b3b}
}

// startReplay plans and serves a replay of dirs on 127.0.0.1, one
// listener per broker; it returns the plan and the brokers' addresses.
func startReplay(t *testing.T, dirs []string) (*ReplayPlan, map[int32]string) {
	t.Helper()
	plan, err := PlanReplay(context.Background(), discover(t, dirs...), ReplayOptions{Base: serve.Config{StateDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := serve.NewReplay(plan.Config)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[int32]string{}
	done := make(chan error, len(r.Servers()))
	for i, s := range r.Servers() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[plan.Config.Brokers[i].ID] = ln.Addr().String()
		go func() { done <- s.Serve(ln) }()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		for range r.Servers() {
			if err := <-done; !errors.Is(err, serve.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		}
	})
	return plan, addrs
}

// kcatMetadata is kcat -L -J's answer.
type kcatMetadata struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Leader    int32 `json:"leader"`
			Replicas  []struct {
				ID int32 `json:"id"`
			} `json:"replicas"`
			ISRs []struct {
				ID int32 `json:"id"`
			} `json:"isrs"`
		} `json:"partitions"`
	} `json:"topics"`
}

func ids(v []struct {
	ID int32 `json:"id"`
}) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(int(x.ID)))
	}
	return strings.Join(s, ",")
}

// TestReplayThreeBrokers: a three-broker cluster replayed from its disks
// (broker 3 with two log dirs), read by kcat -L through each broker and
// by a franz-go group consumer resuming from the offsets the group had
// committed: it sees the cluster as it was (the leaders, replicas and
// ISR of the metadata image, the records up to each leader's high
// watermark).
func TestReplayThreeBrokers(t *testing.T) {
	t.Parallel()
	plan, addrs := startReplay(t, threeBrokers(t, true))
	if !plan.FromImage || len(plan.Config.Brokers) != 3 || len(plan.Config.Brokers[2].LogDirs) != 2 || *plan.Config.Brokers[2].Rack != "r3" {
		t.Fatalf("plan %+v\n%s", plan.Config.Brokers, strings.Join(plan.Notes, "\n"))
	}
	notes := strings.Join(plan.Notes, "\n")
	for _, want := range []string{"-future: not served", "-delete): not served", "broker 1 coordinates every group"} {
		if !strings.Contains(notes, want) && !strings.Contains(notes, strings.ReplaceAll(want, ": not", "): not")) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	want := "brokers 1,2,3; orders-0 leader 1 replicas 1,2 isr 1,2; orders-1 leader 2 replicas 2,3 isr 2,3; orders-2 leader 3 replicas 3,1 isr 3"
	if kcat := lookClient(t, "kcat", "-V"); kcat != "" {
		for id, addr := range addrs {
			out, err := exec.Command(kcat, "-b", addr, "-L", "-J", "-m", "10").Output()
			if err != nil {
				t.Fatalf("kcat -L through broker %d: %v", id, err)
			}
			var md kcatMetadata
			if err := json.Unmarshal(out, &md); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var bs []string
			for _, b := range md.Brokers {
				bs = append(bs, strconv.Itoa(int(b.ID)))
				if b.Name != addrs[b.ID] {
					t.Errorf("broker %d at %s, listening on %s", b.ID, b.Name, addrs[b.ID])
				}
			}
			sort.Strings(bs)
			got := "brokers " + strings.Join(bs, ",")
			for _, tp := range md.Topics {
				for _, p := range tp.Partitions {
					got += "; " + tp.Topic + "-" + strconv.Itoa(int(p.Partition)) + " leader " + strconv.Itoa(int(p.Leader)) +
						" replicas " + ids(p.Replicas) + " isr " + ids(p.ISRs)
				}
			}
			if got != want {
				t.Errorf("kcat -L through broker %d:\n got %s\nwant %s", id, got, want)
			}
		}
	}

	// A group consumer resumes where g committed: orders-0 from 3 to the
	// high watermark 7, orders-1 nothing new, orders-2 all 6 records.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs[2]), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	for len(got) < 10 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %v: %v", got, err)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("fetch: %v", e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, strconv.Itoa(int(r.Partition))+"@"+strconv.FormatInt(r.Offset, 10)+"="+string(r.Value))
		})
	}
	sort.Strings(got)
	wantRecs := "0@3=3 0@4=4 0@5=5 0@6=6 2@0=200 2@1=201 2@2=202 2@3=203 2@4=204 2@5=205"
	if strings.Join(got, " ") != wantRecs {
		t.Errorf("consumed %v\nwant %s", got, wantRecs)
	}
}

// fetchReq is a one-partition Fetch of orders.
func fetchReq(version int16, replica, part int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes = version, replica, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = part, offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// TestReplayFetchRules: a follower's fetch (replica id 2) is answered by
// the leader up to its log end, not the high watermark, and refused by
// others; a consumer's Fetch v11+ is answered by a follower holding the
// replica, an older one and ListOffsets only by the leader; a broker
// without the replica answers NOT_LEADER_OR_FOLLOWER.
func TestReplayFetchRules(t *testing.T) {
	t.Parallel()
	_, addrs := startReplay(t, threeBrokers(t, true))
	// kgo sends a request at the highest version both sides have: a
	// request's version is pinned by the client's maximum.
	cl := func(id int32, version int16) *kgo.Client {
		v := kversion.Stable()
		v.SetMaxKeyVersion(1, version)
		c, err := kgo.NewClient(kgo.SeedBrokers(addrs[id]), kgo.MaxVersions(v))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fetchFrom := func(id int32, req *kmsg.FetchRequest) (int16, int64, int) {
		t.Helper()
		resp, err := cl(id, req.Version).Broker(int(id)).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
		n := 0
		for b, err := range format.NewScanner(bytes.NewReader(p.RecordBatches), int64(len(p.RecordBatches)), format.ScanOptions{}).All() {
			if err != nil {
				t.Fatal(err)
			}
			n += int(b.RecordCount)
		}
		return p.ErrorCode, p.HighWatermark, n
	}
	cases := []struct {
		name    string
		broker  int32
		req     *kmsg.FetchRequest
		code    int16
		hw      int64
		records int
	}{
		{"follower fetch from the leader reads to the log end", 1, fetchReq(12, 2, 0, 7), 0, 7, 3},
		{"consumer fetch from the leader stops at the high watermark", 1, fetchReq(12, -1, 0, 0), 0, 7, 7},
		{"follower fetch from a follower", 2, fetchReq(12, 1, 0, 0), kerr.NotLeaderForPartition.Code, -1, 0},
		{"consumer v11 fetch from a follower", 2, fetchReq(11, -1, 0, 0), 0, 7, 7},
		{"consumer v10 fetch from a follower", 2, fetchReq(10, -1, 0, 0), kerr.NotLeaderForPartition.Code, -1, 0},
		{"a broker without the replica", 3, fetchReq(12, -1, 0, 0), kerr.NotLeaderForPartition.Code, -1, 0},
		{"JBOD: broker 3's second log dir", 3, fetchReq(12, -1, 2, 0), 0, 6, 6},
	}
	for _, c := range cases {
		code, hw, n := fetchFrom(c.broker, c.req)
		if code != c.code || (code == 0 && (hw != c.hw || n != c.records)) {
			t.Errorf("%s: error %d, high watermark %d, %d records; want %d, %d, %d", c.name, code, hw, n, c.code, c.hw, c.records)
		}
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version, lo.ReplicaID = 4, -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "orders"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp = 0, -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	// OffsetForLeaderEpoch: the leader answers, fenced against the
	// image's epoch (orders-2's is 5, its data's 3).
	for _, c := range []struct {
		broker, part, current, requested int32
		code                             int16
		end                              int64
	}{
		{1, 0, 3, 3, 0, 10}, {2, 0, 3, 3, kerr.NotLeaderForPartition.Code, -1}, {1, 0, 2, 2, kerr.FencedLeaderEpoch.Code, -1},
		{3, 2, 5, 3, 0, 6}, {3, 2, 6, 3, kerr.UnknownLeaderEpoch.Code, -1},
	} {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.Version, req.ReplicaID = 4, -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = c.part, c.current, c.requested
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := cl(c.broker, 12).Broker(int(c.broker)).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
		if p.ErrorCode != c.code || (c.code == 0 && p.EndOffset != c.end) {
			t.Errorf("OffsetForLeaderEpoch %+v: error %d end %d", c, p.ErrorCode, p.EndOffset)
		}
	}
	for id, want := range map[int32]int16{1: 0, 2: kerr.NotLeaderForPartition.Code} {
		resp, err := cl(id, 12).Broker(int(id)).Request(ctx, lo)
		if err != nil {
			t.Fatal(err)
		}
		if p := resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]; p.ErrorCode != want || (want == 0 && p.Offset != 7) {
			t.Errorf("ListOffsets latest of orders-0 through broker %d: error %d offset %d", id, p.ErrorCode, p.Offset)
		}
	}
}

// TestReplayWithoutImage: without __cluster_metadata each partition is led
// by its most complete replica (the highest leader epoch, then log end),
// the ISR the replicas at its log end, and the plan says so.
func TestReplayWithoutImage(t *testing.T) {
	t.Parallel()
	plan, addrs := startReplay(t, threeBrokers(t, false))
	if plan.FromImage || !strings.Contains(strings.Join(plan.Notes, "\n"), "no __cluster_metadata on these disks") {
		t.Errorf("notes:\n%s", strings.Join(plan.Notes, "\n"))
	}
	c, err := kgo.NewClient(kgo.SeedBrokers(addrs[3]))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	resp, err := req.RequestWith(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			got = append(got, fmt.Sprintf("%s-%d leader %d epoch %d replicas %v isr %v", *tp.Topic, p.Partition, p.Leader, p.LeaderEpoch, p.Replicas, p.ISR))
		}
	}
	want := "orders-0 leader 1 epoch 3 replicas [1 2] isr [1]; orders-1 leader 2 epoch 3 replicas [2 3] isr [2 3]; orders-2 leader 1 epoch 3 replicas [1 3] isr [1 3]"
	if strings.Join(got, "; ") != want || len(resp.Brokers) != 3 {
		t.Errorf("metadata %d brokers:\n got %s\nwant %s", len(resp.Brokers), strings.Join(got, "; "), want)
	}
}
