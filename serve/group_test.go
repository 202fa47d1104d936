package serve

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupConsume runs a kgo group member until it has seen want records in
// total across all members (counted in seen), then commits and leaves.
func groupConsume(t testing.TB, addr, group, topic string, balancer kgo.GroupBalancer, seen *sync.Map, total func() int, want int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.Balancers(balancer), kgo.FetchMaxWait(200*time.Millisecond), kgo.DisableAutoCommit(),
		// Commit what was polled before giving partitions up, so the
		// next owner starts after it (no record twice).
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			cl.CommitUncommittedOffsets(ctx)
		}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for total() < want && ctx.Err() == nil {
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		fs := cl.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) {
			key := r.Topic + "/" + string(rune('0'+r.Partition)) + "/" + itoa64(r.Offset)
			if _, dup := seen.LoadOrStore(key, r); dup {
				t.Errorf("record %s delivered twice", key)
			}
		})
		if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
			t.Logf("commit: %v", err)
		}
	}
}

func itoa64(v int64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

// TestKgoGroupRestartResume: two franz-go group members (range, then
// round-robin as the clients send them) share a three-partition topic with
// no record delivered twice; the committed offsets go to
// __consumer_offsets-N in the state dir (which `klog dump
// --offsets-decoder` reads); a restarted server resumes the group from
// them, and the served log dir is never changed.
func TestKgoGroupRestartResume(t *testing.T) {
	dir := fixtureLogDir(t, "multi-0", "multi-1", "multi-2")
	before := hashTree(t, dir)
	state := t.TempDir()
	want := 0
	for _, p := range []string{"multi-0", "multi-1", "multi-2"} {
		want += len(dumpRecords(t, filepath.Join(dir, p)))
	}
	for _, bal := range []struct {
		group string
		b     kgo.GroupBalancer
	}{{"g-range", kgo.RangeBalancer()}, {"g-rr", kgo.RoundRobinBalancer()}} {
		s, err := New(Config{LogDir: dir, StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		go s.Serve(ln)
		addr := ln.Addr().String()
		var seen sync.Map
		total := func() int {
			n := 0
			seen.Range(func(any, any) bool { n++; return true })
			return n
		}
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				groupConsume(t, addr, bal.group, "multi", bal.b, &seen, total, want)
			}()
		}
		wg.Wait()
		if got := total(); got != want {
			t.Fatalf("%s: group consumed %d records, want %d", bal.group, got, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// Restart: the group's committed offsets come back from the
		// state dir's __consumer_offsets.
		s2, addr2 := startServer(t, Config{LogDir: dir, StateDir: state})
		_ = s2
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Version, of.Group = 7, bal.group
		r := dial(t, addr2).do(of).(*kmsg.OffsetFetchResponse)
		committed := int64(0)
		for _, tp := range r.Topics {
			for _, p := range tp.Partitions {
				committed += p.Offset
			}
		}
		if committed != int64(want) {
			t.Fatalf("%s: after restart the committed offsets add up to %d, want %d (%+v)", bal.group, committed, want, r.Topics)
		}
		// A new member of the group resumes at the end: nothing more.
		cl, _ := kgo.NewClient(kgo.SeedBrokers(addr2), kgo.ConsumerGroup(bal.group), kgo.ConsumeTopics("multi"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if n := fs.NumRecords(); n != 0 {
			t.Errorf("%s: a resumed member got %d records, want 0", bal.group, n)
		}
		cl.Close()
	}
	logs, _ := filepath.Glob(filepath.Join(state, "__consumer_offsets-*", "*.log"))
	if len(logs) == 0 {
		t.Fatal("no __consumer_offsets partition in the state dir")
	}
	var out, errb bytes.Buffer
	if _, err := dump.Run(logs, dump.Options{Decoder: dump.DecoderOffsets, MaxBytes: -1}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if !strings.Contains(out.String(), `"group":"g-range","topic":"multi","partition":0}`) || !strings.Contains(out.String(), `{"version":"3","data":{"offset":59,`) ||
		!strings.Contains(out.String(), `key: {"type":"2","data":{"group":"g-rr"}} payload: {"version":"3","data":{"protocolType":"consumer","generation":`) ||
		!strings.Contains(out.String(), `"protocol":"roundrobin"`) || !strings.Contains(out.String(), `"clientHost":"/127.0.0.1"`) ||
		strings.Contains(out.String(), "Error") {
		t.Errorf("klog dump --offsets-decoder does not show the commits:\n%s", out.String())
	}
	verifyClean(t, state)
	if hashTree(t, dir) != before {
		t.Fatal("read-only serve changed the log dir")
	}
}

// TestOffsetsFromArchivedLogDir: a log dir's own __consumer_offsets (a
// dead broker's commits) are what OffsetFetch answers before anything is
// committed here; tombstones delete.
func TestOffsetsFromArchivedLogDir(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	copyPartition(t, filepath.Join("..", "testdata", "segments", "kafka-written", "coordinator", "__consumer_offsets-0"), filepath.Join(dir, "__consumer_offsets-0"))
	s, _ := startServer(t, Config{LogDir: dir})
	got := s.groups.fetchOffsets("group-1")
	if got[tp{"orders", 0}].offset != 42 || got[tp{"orders", 0}].leaderEpoch != 5 || got[tp{"orders", 0}].metadata != "meta" ||
		got[tp{"payments", 1}].offset != 7 {
		t.Errorf("group-1 offsets: %+v", got)
	}
	if len(s.groups.fetchOffsets("old")) != 0 {
		t.Errorf("a tombstoned commit survived")
	}
	if s.topic(OffsetsTopic) != nil {
		t.Errorf("__consumer_offsets served as a topic")
	}
}

// TestOffsetsPartition: Utils.abs(groupId.hashCode()) % 50, checked
// against values Java's String.hashCode gives.
func TestOffsetsPartition(t *testing.T) {
	// Java's String.hashCode: "a" 97, "abc" 96354, "group-1" 293427299,
	// "polygenelubricants" Integer.MIN_VALUE, which Utils.abs maps to 0.
	for g, want := range map[string]int32{"": 0, "a": 47, "abc": 4, "polygenelubricants": 0, "group-1": 49} {
		if got := offsetsPartition(g); got != want {
			t.Errorf("offsetsPartition(%q) = %d, want %d", g, got, want)
		}
	}
}

// TestGroupSessionsAndRebalance on the wire: a second member's join
// rebalances the first (its heartbeat says REBALANCE_IN_PROGRESS); a member
// that neither rejoins nor heartbeats is dropped at the rebalance timeout
// and the other completes alone; a silent member expires after its session
// timeout and the group empties; stale generations are ILLEGAL_GENERATION.
func TestGroupSessionsAndRebalance(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	join := func(w *wire, member string) *kmsg.JoinGroupResponse {
		jg := kmsg.NewPtrJoinGroupRequest()
		jg.Version, jg.Group, jg.MemberID, jg.ProtocolType = 5, "sg", member, "consumer"
		jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 600, 800
		jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0}}, {Name: "roundrobin", Metadata: []byte{1}}}
		return w.do(jg).(*kmsg.JoinGroupResponse)
	}
	heartbeat := func(w *wire, member string, gen int32) int16 {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.Generation = 3, "sg", member, gen
		return w.do(hb).(*kmsg.HeartbeatResponse).ErrorCode
	}
	sync := func(w *wire, member string, gen int32, assign map[string]string) *kmsg.SyncGroupResponse {
		sg := kmsg.NewPtrSyncGroupRequest()
		sg.Version, sg.Group, sg.MemberID, sg.Generation = 3, "sg", member, gen
		for m, a := range assign {
			sg.GroupAssignment = append(sg.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte(a)})
		}
		return w.do(sg).(*kmsg.SyncGroupResponse)
	}
	a, b := dial(t, addr), dial(t, addr)
	// KIP-394: the first join of a new member only gets its id.
	r := join(a, "")
	if r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID == "" {
		t.Fatalf("first join: %+v", r)
	}
	idA := r.MemberID
	r = join(a, idA)
	if r.ErrorCode != 0 || r.LeaderID != idA || r.Generation != 1 || *r.Protocol != "range" || len(r.Members) != 1 {
		t.Fatalf("join A: %+v", r)
	}
	if s := sync(a, idA, 1, map[string]string{idA: "all"}); s.ErrorCode != 0 || string(s.MemberAssignment) != "all" {
		t.Fatalf("sync A: %+v", s)
	}
	if code := heartbeat(a, idA, 1); code != 0 {
		t.Fatalf("heartbeat A: %d", code)
	}
	// B joins; A learns of the rebalance from its heartbeat but does not
	// rejoin: at the rebalance timeout B completes alone.
	idB := join(b, "").MemberID
	done := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { done <- join(b, idB) }()
	time.Sleep(100 * time.Millisecond)
	if code := heartbeat(a, idA, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("A's heartbeat during the rebalance: %d", code)
	}
	rb := <-done
	if rb.ErrorCode != 0 || rb.LeaderID != idB || rb.Generation != 2 || len(rb.Members) != 1 {
		t.Fatalf("B's join after A missed the rebalance: %+v", rb)
	}
	if code := heartbeat(a, idA, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("A after being dropped: %d", code)
	}
	if s := sync(b, idB, 1, nil); s.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("sync with a stale generation: %d", s.ErrorCode)
	}
	if s := sync(b, idB, 2, map[string]string{idB: "all"}); s.ErrorCode != 0 {
		t.Fatalf("sync B: %d", s.ErrorCode)
	}
	// B goes silent: its session (600 ms) expires and the group empties.
	time.Sleep(1200 * time.Millisecond)
	if code := heartbeat(b, idB, 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("B after its session expired: %d", code)
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.MemberID, oc.Generation = 7, "sg", idB, 2
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "none", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 5, LeaderEpoch: -1}}}}
	if code := b.do(oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownMemberID.Code {
		t.Fatalf("commit from an expired member: %d", code)
	}
}
