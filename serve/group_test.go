package serve

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
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
	if _, err := dump.Run(logs, dump.Options{Decoder: internaltopic.Offsets, MaxBytes: -1}, &out, &errb); err != nil {
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
	klogtest.CopyPartition(t, filepath.Join("..", "testdata", "segments", "kafka-written", "coordinator", "__consumer_offsets-0"), filepath.Join(dir, "__consumer_offsets-0"))
	s, _ := startServer(t, Config{LogDir: dir})
	got := s.groups.fetchOffsets("group-1")
	if got[offsetstore.TopicPartition{Topic: "orders", Partition: 0}].Offset != 42 || got[offsetstore.TopicPartition{Topic: "orders", Partition: 0}].LeaderEpoch != 5 ||
		got[offsetstore.TopicPartition{Topic: "orders", Partition: 0}].Metadata != "meta" || got[offsetstore.TopicPartition{Topic: "payments", Partition: 1}].Offset != 7 {
		t.Errorf("group-1 offsets: %+v", got)
	}
	if len(s.groups.fetchOffsets("old")) != 0 {
		t.Errorf("a tombstoned commit survived")
	}
	if s.topic(OffsetsTopic) != nil {
		t.Errorf("__consumer_offsets served as a topic")
	}
}

// groupWire speaks the classic group protocol for one member on its own
// connection.
type groupWire struct {
	*wire
	group string
}

func (w groupWire) join(member string, instance *string) *kmsg.JoinGroupResponse {
	w.t.Helper()
	w.send(joinReq(w.group, member, instance))
	return w.joinAnswer()
}

func joinReq(group, member string, instance *string) *kmsg.JoinGroupRequest {
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.MemberID, jg.InstanceID, jg.ProtocolType = 5, group, member, instance, "consumer"
	jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 6000, 8000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0}}, {Name: "roundrobin", Metadata: []byte{1}}}
	return jg
}

// joinAnswer reads the answer to a JoinGroup sent earlier.
func (w groupWire) joinAnswer() *kmsg.JoinGroupResponse {
	w.t.Helper()
	body, err := w.readFrame()
	if err != nil {
		w.t.Fatalf("JoinGroup: %v", err)
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = 5
	if err := resp.ReadFrom(body); err != nil {
		w.t.Fatal(err)
	}
	return resp
}

func (w groupWire) heartbeat(member string, instance *string, gen int32) int16 {
	w.t.Helper()
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.InstanceID, hb.Generation = 3, w.group, member, instance, gen
	return w.do(hb).(*kmsg.HeartbeatResponse).ErrorCode
}

func (w groupWire) sync(member string, instance *string, gen int32, assign map[string]string) *kmsg.SyncGroupResponse {
	w.t.Helper()
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.MemberID, sg.InstanceID, sg.Generation = 3, w.group, member, instance, gen
	for m, a := range assign {
		sg.GroupAssignment = append(sg.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m, MemberAssignment: []byte(a)})
	}
	return w.do(sg).(*kmsg.SyncGroupResponse)
}

func (w groupWire) commit(member string, gen int32, offset int64) int16 {
	w.t.Helper()
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.MemberID, oc.Generation = 7, w.group, member, gen
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "none", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: offset, LeaderEpoch: -1}}}}
	return w.do(oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// TestGroupSessionsAndRebalance on the wire, on the coordinator's clock:
// a second member's join rebalances the first (its heartbeat says
// REBALANCE_IN_PROGRESS); a member that heartbeats but does not join again
// is dropped at the rebalance timeout and the other completes alone; a
// silent member expires at its session timeout and the group empties;
// stale generations are ILLEGAL_GENERATION.
func TestGroupSessionsAndRebalance(t *testing.T) {
	_, addr, clock, events := startGroupServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	a, b := groupWire{dial(t, addr), "sg"}, groupWire{dial(t, addr), "sg"}
	// KIP-394: the first join of a new member only gets its id.
	r := a.join("", nil)
	if r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID == "" {
		t.Fatalf("first join: %+v", r)
	}
	idA := r.MemberID
	r = a.join(idA, nil)
	if r.ErrorCode != 0 || r.LeaderID != idA || r.Generation != 1 || *r.Protocol != "range" || len(r.Members) != 1 {
		t.Fatalf("join A: %+v", r)
	}
	if s := a.sync(idA, nil, 1, map[string]string{idA: "all"}); s.ErrorCode != 0 || string(s.MemberAssignment) != "all" {
		t.Fatalf("sync A: %+v", s)
	}
	if code := a.heartbeat(idA, nil, 1); code != 0 {
		t.Fatalf("heartbeat A: %d", code)
	}
	// B joins and is parked: A must join again.
	idB := b.join("", nil).MemberID
	drainEvents(events)
	b.send(joinReq("sg", idB, nil))
	if e := waitEvent(t, events, "parked", 11); e.member != idB {
		t.Fatalf("parked %+v, want B's join", e)
	}
	// A learns of the rebalance from its heartbeats but does not join:
	// at the rebalance timeout (8 s) B completes alone.
	if code := a.heartbeat(idA, nil, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("A's heartbeat during the rebalance: %d", code)
	}
	clock.Advance(5 * time.Second)
	if code := a.heartbeat(idA, nil, 1); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("A's heartbeat 5 s into the rebalance: %d", code)
	}
	clock.Advance(3 * time.Second)
	rb := b.joinAnswer()
	if rb.ErrorCode != 0 || rb.LeaderID != idB || rb.Generation != 2 || len(rb.Members) != 1 {
		t.Fatalf("B's join after A missed the rebalance: %+v", rb)
	}
	if code := a.heartbeat(idA, nil, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("A after being dropped: %d", code)
	}
	if s := b.sync(idB, nil, 1, nil); s.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("sync with a stale generation: %d", s.ErrorCode)
	}
	if s := b.sync(idB, nil, 2, map[string]string{idB: "all"}); s.ErrorCode != 0 {
		t.Fatalf("sync B: %d", s.ErrorCode)
	}
	// Just before its session timeout (6 s) B is alive; just after, gone.
	clock.Advance(5999 * time.Millisecond)
	if code := b.commit(idB, 2, 5); code != 0 {
		t.Fatalf("commit from B: %d", code)
	}
	clock.Advance(5999 * time.Millisecond) // the commit restarted the session
	if code := b.heartbeat(idB, nil, 2); code != 0 {
		t.Fatalf("B's heartbeat within its session: %d", code)
	}
	clock.Advance(6 * time.Second)
	if code := b.heartbeat(idB, nil, 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("B after its session expired: %d", code)
	}
	if code := b.commit(idB, 2, 6); code != kerr.UnknownMemberID.Code {
		t.Fatalf("commit from an expired member: %d", code)
	}
}

// TestParkedJoinReleasedOnHangUp: a parked JoinGroup whose client hangs up
// is released at once (the member leaves), so the rest of the group does
// not wait the rebalance timeout for it; its connection's goroutine ends.
func TestParkedJoinReleasedOnHangUp(t *testing.T) {
	s, addr, _, events := startGroupServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	a, b := groupWire{dial(t, addr), "hg"}, groupWire{dial(t, addr), "hg"}
	idA := a.join("", nil).MemberID
	if r := a.join(idA, nil); r.ErrorCode != 0 || r.Generation != 1 {
		t.Fatalf("join A: %+v", r)
	}
	a.sync(idA, nil, 1, map[string]string{idA: "x"})
	idB := b.join("", nil).MemberID
	drainEvents(events)
	b.send(joinReq("hg", idB, nil))
	waitEvent(t, events, "parked", 11)
	b.c.Close()
	if e := waitEvent(t, events, "released", 11); e.member != idB {
		t.Fatalf("released %+v, want B's join", e)
	}
	// A joins again: B is gone, so the generation is A's alone and the
	// answer comes without the clock moving.
	r := a.join(idA, nil)
	if r.ErrorCode != 0 || r.Generation != 2 || len(r.Members) != 1 || r.Members[0].MemberID != idA {
		t.Fatalf("A's join after B hung up: %+v", r)
	}
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	if n > 2 {
		t.Errorf("%d connections open after B hung up", n)
	}
}

// TestStaticMemberRestart (KIP-345): a static member that restarts (a new
// connection, no member id, the same group.instance.id) gets a new member
// id in the same generation with its old assignment, and nobody
// rebalances; the old member id is fenced.
func TestStaticMemberRestart(t *testing.T) {
	_, addr, clock, events := startGroupServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	i1, i2 := "instance-1", "instance-2"
	a, b := groupWire{dial(t, addr), "st"}, groupWire{dial(t, addr), "st"}
	// Static members need no KIP-394 round trip.
	ra := a.join("", &i1)
	if ra.ErrorCode != 0 || ra.Generation != 1 {
		t.Fatalf("join a: %+v", ra)
	}
	idA := ra.MemberID
	a.sync(idA, &i1, 1, map[string]string{idA: "p0"})
	drainEvents(events)
	b.send(joinReq("st", "", &i2))
	waitEvent(t, events, "parked", 11)
	a.send(joinReq("st", idA, &i1))
	ra, rb := a.joinAnswer(), b.joinAnswer()
	if ra.Generation != 2 || rb.Generation != 2 || ra.LeaderID != idA || len(ra.Members) != 2 {
		t.Fatalf("generation 2: %+v / %+v", ra, rb)
	}
	idB := rb.MemberID
	drainEvents(events)
	b.send(&kmsg.SyncGroupRequest{Version: 3, Group: "st", MemberID: idB, InstanceID: &i2, Generation: 2})
	waitEvent(t, events, "parked", 14)
	if s := a.sync(idA, &i1, 2, map[string]string{idA: "p0", idB: "p1"}); string(s.MemberAssignment) != "p0" {
		t.Fatalf("a's assignment: %+v", s)
	}
	if body, err := b.readFrame(); err != nil {
		t.Fatal(err)
	} else {
		sr := kmsg.NewPtrSyncGroupResponse()
		sr.Version = 3
		if sr.ReadFrom(body) != nil || string(sr.MemberAssignment) != "p1" {
			t.Fatalf("b's assignment: %+v", sr)
		}
	}
	// b restarts: the old process is gone, a new one joins with no id.
	b.c.Close()
	clock.Advance(3 * time.Second)
	b2 := groupWire{dial(t, addr), "st"}
	rb2 := b2.join("", &i2)
	if rb2.ErrorCode != 0 || rb2.Generation != 2 || rb2.MemberID == idB || rb2.LeaderID != idA {
		t.Fatalf("b's restart: %+v", rb2)
	}
	if s := b2.sync(rb2.MemberID, &i2, 2, nil); s.ErrorCode != 0 || string(s.MemberAssignment) != "p1" {
		t.Fatalf("b's assignment after its restart: %+v", s)
	}
	if code := a.heartbeat(idA, &i1, 2); code != 0 {
		t.Fatalf("a's heartbeat after b's restart: %d (a rebalance?)", code)
	}
	if code := b2.heartbeat(idB, &i2, 2); code != kerr.FencedInstanceID.Code {
		t.Fatalf("the old member id of instance-2: %d, want FENCED_INSTANCE_ID", code)
	}
}

// TestCommitWrittenOutsideTheLoop: while a commit's record is being
// written (the writer held here), the coordinator answers the member's
// heartbeats and fetches, which do not see the commit yet; the commit is
// answered once its record is on disk, stamped with the coordinator's
// clock.
func TestCommitWrittenOutsideTheLoop(t *testing.T) {
	var held atomic.Bool
	hold := make(chan struct{})
	writing := make(chan struct{}, 8)
	clock := newFakeClock()
	state := t.TempDir()
	cfg := Config{LogDir: fixtureLogDir(t, "none-0"), StateDir: state, Clock: clock, hooks: hooks{
		writing: func() {
			if held.Load() {
				writing <- struct{}{}
				<-hold
			}
		},
	}}
	s, addr := startServer(t, cfg)
	clock.settle = func() { s.groups.do(func() {}) }
	a, other := groupWire{dial(t, addr), "cw"}, groupWire{dial(t, addr), "cw"}
	idA := a.join("", nil).MemberID
	a.join(idA, nil)
	a.sync(idA, nil, 1, map[string]string{idA: "all"})
	held.Store(true)
	clock.Advance(1500 * time.Millisecond)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.MemberID, oc.Generation = 7, "cw", idA, 1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "none", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 17, LeaderEpoch: -1}}}}
	a.send(oc)
	<-writing
	if code := other.heartbeat(idA, nil, 1); code != 0 {
		t.Fatalf("a heartbeat while a commit is written: %d", code)
	}
	fetchOffset := func() int64 {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Version, of.Group = 5, "cw"
		of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "none", Partitions: []int32{0}}}
		return other.do(of).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0].Offset
	}
	if got := fetchOffset(); got != -1 {
		t.Fatalf("OffsetFetch during the write: %d, want -1 (not on disk yet)", got)
	}
	close(hold)
	body, err := a.readFrame()
	if err != nil {
		t.Fatal(err)
	}
	cr := kmsg.NewPtrOffsetCommitResponse()
	cr.Version = 7
	if err := cr.ReadFrom(body); err != nil || cr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("the commit's answer: %v %+v", err, cr)
	}
	if got := fetchOffset(); got != 17 {
		t.Fatalf("OffsetFetch after the write: %d, want 17", got)
	}
	st := offsetstore.NewState()
	if err := st.Load(state); err != nil {
		t.Fatal(err)
	}
	if c := st.Offsets["cw"][offsetstore.TopicPartition{Topic: "none", Partition: 0}]; c.Offset != 17 || c.CommitTimestamp != clock.Now().UnixMilli() {
		t.Fatalf("stored commit %+v, want offset 17 at %d (the coordinator's clock)", c, clock.Now().UnixMilli())
	}
}

// TestLeaderSyncWhileAnOlderGenerationIsStored: the leader's assignments
// of a generation are stored even while the record of the one before is
// still being written (a rebalance came in between); both SyncGroups of
// the new generation are answered once it is on disk.
func TestLeaderSyncWhileAnOlderGenerationIsStored(t *testing.T) {
	var held atomic.Bool
	hold := make(chan struct{})
	writing := make(chan struct{}, 8)
	clock := newFakeClock()
	events := make(chan groupEvent, 64)
	s, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), Clock: clock, hooks: hooks{
		parked: func(key int16, g, m string) { events <- groupEvent{"parked", key, g, m} },
		writing: func() {
			if held.Load() {
				writing <- struct{}{}
				<-hold
			}
		},
	}})
	clock.settle = func() { s.groups.do(func() {}) }
	i1, i2 := "i1", "i2"
	a, b := groupWire{dial(t, addr), "ls"}, groupWire{dial(t, addr), "ls"}
	idA := a.join("", &i1).MemberID
	held.Store(true)
	a.send(&kmsg.SyncGroupRequest{Version: 3, Group: "ls", MemberID: idA, InstanceID: &i1, Generation: 1,
		GroupAssignment: []kmsg.SyncGroupRequestGroupAssignment{{MemberID: idA, MemberAssignment: []byte("g1")}}})
	<-writing // generation 1's record, held
	drainEvents(events)
	b.send(joinReq("ls", "", &i2))
	waitEvent(t, events, "parked", 11)
	if body, err := a.readFrame(); err != nil {
		t.Fatal(err)
	} else if sr := (&kmsg.SyncGroupResponse{Version: 3}); sr.ReadFrom(body) != nil || sr.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("a's sync of generation 1 during the rebalance: %+v", sr)
	}
	a.send(joinReq("ls", idA, &i1))
	ra, rb := a.joinAnswer(), b.joinAnswer()
	if ra.Generation != 2 || rb.Generation != 2 {
		t.Fatalf("generation 2: %+v %+v", ra, rb)
	}
	idB := rb.MemberID
	drainEvents(events)
	b.send(&kmsg.SyncGroupRequest{Version: 3, Group: "ls", MemberID: idB, InstanceID: &i2, Generation: 2})
	waitEvent(t, events, "parked", 14)
	a.send(&kmsg.SyncGroupRequest{Version: 3, Group: "ls", MemberID: idA, InstanceID: &i1, Generation: 2,
		GroupAssignment: []kmsg.SyncGroupRequestGroupAssignment{{MemberID: idA, MemberAssignment: []byte("a2")}, {MemberID: idB, MemberAssignment: []byte("b2")}}})
	waitEvent(t, events, "parked", 14)
	held.Store(false)
	close(hold)
	for w, want := range map[groupWire]string{a: "a2", b: "b2"} {
		body, err := w.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		sr := &kmsg.SyncGroupResponse{Version: 3}
		if sr.ReadFrom(body) != nil || sr.ErrorCode != 0 || string(sr.MemberAssignment) != want {
			t.Fatalf("generation 2's assignment: %+v, want %s", sr, want)
		}
	}
}
