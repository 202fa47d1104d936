package serve

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cgWire speaks ConsumerGroupHeartbeat v1 for the members of one group.
type cgWire struct {
	*wire
	group string
	topic [16]byte // the topic the tests' owned partitions are of
}

// hb is one heartbeat: owned nil is "unchanged", topics nil likewise.
func (w cgWire) hb(member string, epoch int32, inst *string, topics []string, owned []int32) *kmsg.ConsumerGroupHeartbeatResponse {
	w.t.Helper()
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.MemberEpoch, r.InstanceID, r.RebalanceTimeoutMillis = 1, w.group, member, epoch, inst, -1
	r.SubscribedTopicNames = topics
	if epoch == 0 {
		r.RebalanceTimeoutMillis = 30000
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	if owned != nil {
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if len(owned) > 0 {
			r.Topics = append(r.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: w.topic, Partitions: owned})
		}
	}
	return w.do(r).(*kmsg.ConsumerGroupHeartbeatResponse)
}

// parts is the response's assignment of the test topic (nil: none sent).
func parts(t testing.TB, r *kmsg.ConsumerGroupHeartbeatResponse) []int32 {
	t.Helper()
	if r.ErrorCode != 0 {
		msg := ""
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		t.Fatalf("heartbeat: %s: %s", kerr.ErrorForCode(r.ErrorCode), msg)
	}
	if r.Assignment == nil {
		return nil
	}
	out := []int32{}
	for _, tp := range r.Assignment.Topics {
		out = append(out, tp.Partitions...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// startConsumerGroupServer serves a writable log dir with topic t of n
// partitions on a fake clock; fenced reports the members the coordinator
// fenced by a timeout.
func startConsumerGroupServer(t *testing.T, n int32) (*Server, cgWire, *fakeClock, chan string) {
	t.Helper()
	fenced := make(chan string, 16)
	clock := newFakeClock()
	cfg := Config{LogDir: t.TempDir(), Writable: true, Clock: clock}
	cfg.hooks.consumerFenced = func(_, m string) { fenced <- m }
	s, addr := startServer(t, cfg)
	clock.settle = func() { s.groups.do(func() {}) }
	tp, err := s.createTopicParts("t", n)
	if err != nil {
		t.Fatal(err)
	}
	return s, cgWire{dial(t, addr), "cg", tp.id}, clock, fenced
}

// TestConsumerGroupReconciliation: a second member's partitions come to
// it only after the first member's heartbeat no longer lists them (the
// first keeps its epoch while it revokes); no partition is ever in two
// members' assignments; a leaving member's partitions go to the other; a
// silent member is fenced at its session timeout, on the server's clock.
func TestConsumerGroupReconciliation(t *testing.T) {
	_, w, clock, fenced := startConsumerGroupServer(t, 6)
	all := []int32{0, 1, 2, 3, 4, 5}
	a := w.hb("A", 0, nil, []string{"t"}, nil)
	if got := parts(t, a); a.MemberEpoch != 1 || !slices.Equal(got, all) || *a.MemberID != "A" || a.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("A joins: epoch %d, %v, id %v, interval %d", a.MemberEpoch, got, *a.MemberID, a.HeartbeatIntervalMillis)
	}
	if r := w.hb("A", 1, nil, nil, all); r.MemberEpoch != 1 || parts(t, r) != nil {
		t.Fatalf("A stable: epoch %d, assignment %v", r.MemberEpoch, parts(t, r))
	}
	// B joins: epoch 2 for the group; everything is still A's.
	b := w.hb("B", 0, nil, []string{"t"}, nil)
	if got := parts(t, b); b.MemberEpoch != 2 || len(got) != 0 {
		t.Fatalf("B joins: epoch %d, %v", b.MemberEpoch, got)
	}
	// A is asked to revoke half and stays at epoch 1 while it does.
	r := w.hb("A", 1, nil, nil, all)
	keep := parts(t, r)
	if r.MemberEpoch != 1 || len(keep) != 3 {
		t.Fatalf("A told to revoke: epoch %d, keeps %v", r.MemberEpoch, keep)
	}
	// B gets nothing while A still lists the partitions.
	if r := w.hb("B", 2, nil, nil, []int32{}); len(parts(t, r)) != 0 && parts(t, r) != nil {
		t.Fatalf("B got %v before A released them", parts(t, r))
	}
	if r := w.hb("A", 1, nil, nil, all); r.MemberEpoch != 1 {
		t.Fatalf("A still owning: epoch %d", r.MemberEpoch)
	}
	// A's heartbeat without them: epoch 2; then B gets the rest.
	if r := w.hb("A", 1, nil, nil, keep); r.MemberEpoch != 2 {
		t.Fatalf("A after revoking: epoch %d", r.MemberEpoch)
	}
	rb := w.hb("B", 2, nil, nil, []int32{})
	gotB := parts(t, rb)
	if rb.MemberEpoch != 2 || len(gotB) != 3 {
		t.Fatalf("B after A released: epoch %d, %v", rb.MemberEpoch, gotB)
	}
	union := append(slices.Clone(keep), gotB...)
	slices.Sort(union)
	if !slices.Equal(union, all) {
		t.Fatalf("A %v and B %v do not split the topic", keep, gotB)
	}
	d := w.do(&kmsg.ConsumerGroupDescribeRequest{Version: 1, Groups: []string{"cg"}}).(*kmsg.ConsumerGroupDescribeResponse)
	if g := d.Groups[0]; g.ErrorCode != 0 || g.State != "Stable" || g.Epoch != 2 || g.AssignmentEpoch != 2 || g.AssignorName != "uniform" || len(g.Members) != 2 ||
		g.Members[0].Assignment.TopicPartitions[0].Topic != "t" || g.Members[1].MemberType != 1 {
		t.Fatalf("describe: %+v", g)
	}
	// A leaves: B takes everything at once (nobody holds the rest).
	if r := w.hb("A", leaveEpoch, nil, nil, nil); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("A leaves: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	rb = w.hb("B", 2, nil, nil, gotB)
	if got := parts(t, rb); rb.MemberEpoch != 3 || !slices.Equal(got, all) {
		t.Fatalf("B after A left: epoch %d, %v", rb.MemberEpoch, got)
	}
	// B's session: alive just before 45 s, fenced after.
	clock.Advance(44 * time.Second)
	if r := w.hb("B", 3, nil, nil, all); r.ErrorCode != 0 {
		t.Fatalf("B within its session: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	clock.Advance(45 * time.Second)
	select {
	case m := <-fenced:
		if m != "B" {
			t.Fatalf("fenced %s", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B was not fenced at its session timeout")
	}
	if r := w.hb("B", 3, nil, nil, all); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("B after its session: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := w.hb("B", 0, nil, []string{"t"}, nil); r.MemberEpoch != 5 || !slices.Equal(parts(t, r), all) {
		t.Fatalf("B rejoins: epoch %d, %v", r.MemberEpoch, parts(t, r))
	}
}

// TestConsumerGroupRebalanceTimeout: a member that does not revoke within
// its rebalance timeout is fenced, and its partitions go to the other.
func TestConsumerGroupRebalanceTimeout(t *testing.T) {
	_, w, clock, fenced := startConsumerGroupServer(t, 4)
	all := []int32{0, 1, 2, 3}
	w.hb("A", 0, nil, []string{"t"}, nil)
	w.hb("B", 0, nil, []string{"t"}, nil)
	if r := w.hb("A", 1, nil, nil, all); r.MemberEpoch != 1 || len(parts(t, r)) != 2 {
		t.Fatalf("A told to revoke: epoch %d, %v", r.MemberEpoch, parts(t, r))
	}
	clock.Advance(29 * time.Second)
	w.hb("B", 2, nil, nil, []int32{}) // B keeps its session
	if r := w.hb("A", 1, nil, nil, all); r.ErrorCode != 0 {
		t.Fatalf("A within its rebalance timeout: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	clock.Advance(2 * time.Second)
	select {
	case m := <-fenced:
		if m != "A" {
			t.Fatalf("fenced %s", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("A was not fenced at its rebalance timeout")
	}
	if r := w.hb("A", 1, nil, nil, all); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("A after being fenced: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := w.hb("B", 2, nil, nil, []int32{}); !slices.Equal(parts(t, r), all) {
		t.Fatalf("B after A was fenced: %v", parts(t, r))
	}
}

// TestConsumerGroupEpochs: an epoch ahead of the coordinator's, or behind
// it by more than a lost answer, is FENCED_MEMBER_EPOCH; the previous
// epoch with only assigned partitions is accepted.
func TestConsumerGroupEpochs(t *testing.T) {
	_, w, _, _ := startConsumerGroupServer(t, 2)
	w.hb("A", 0, nil, []string{"t"}, nil)
	for _, tc := range []struct {
		name  string
		epoch int32
		owned []int32
		want  int16
	}{
		{"ahead", 2, []int32{0, 1}, kerr.FencedMemberEpoch.Code},
		{"current", 1, []int32{0, 1}, 0},
		{"rejoin owning partitions", 0, []int32{0}, kerr.InvalidRequest.Code},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := w.hb("A", tc.epoch, nil, nil, tc.owned); r.ErrorCode != tc.want {
				t.Errorf("%v, want %v", kerr.ErrorForCode(r.ErrorCode), kerr.ErrorForCode(tc.want))
			}
		})
	}
	// Fenced, A comes back under its own id at epoch 0 and gets its
	// partitions again.
	if r := w.hb("A", 0, nil, []string{"t"}, nil); r.MemberEpoch != 1 || !slices.Equal(parts(t, r), []int32{0, 1}) {
		t.Fatalf("A rejoins after being fenced: %d %v", r.MemberEpoch, parts(t, r))
	}
	// B joins (epoch 2); A moves to epoch 2 after revoking; its answer
	// "lost", A heartbeats at 1 with what it kept: accepted.
	w.hb("B", 0, nil, []string{"t"}, nil)
	keep := parts(t, w.hb("A", 1, nil, nil, []int32{0, 1}))
	if r := w.hb("A", 1, nil, nil, keep); r.MemberEpoch != 2 {
		t.Fatalf("A after revoking: %d", r.MemberEpoch)
	}
	if r := w.hb("A", 1, nil, nil, keep); r.ErrorCode != 0 || r.MemberEpoch != 2 {
		t.Fatalf("A at its previous epoch: %v %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	if r := w.hb("A", 1, nil, nil, []int32{0, 1}); r.ErrorCode != kerr.FencedMemberEpoch.Code {
		t.Fatalf("A at its previous epoch owning more: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestConsumerGroupHeartbeatValidation: requests Kafka refuses are refused
// with its codes, before the coordinator sees them.
func TestConsumerGroupHeartbeatValidation(t *testing.T) {
	_, w, _, _ := startConsumerGroupServer(t, 1)
	empty, bad, unknown, regex := "", "(", "sticky", "t|u"
	join := func(f func(r *kmsg.ConsumerGroupHeartbeatRequest)) *kmsg.ConsumerGroupHeartbeatRequest {
		r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		r.Version, r.Group, r.MemberID, r.RebalanceTimeoutMillis = 1, "cv", "m", 1000
		r.SubscribedTopicNames, r.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		f(r)
		return r
	}
	for _, tc := range []struct {
		name string
		req  *kmsg.ConsumerGroupHeartbeatRequest
		want int16
	}{
		{"v1 empty member id", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }), kerr.InvalidRequest.Code},
		{"empty group", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "" }), kerr.InvalidRequest.Code},
		{"empty instance id", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = &empty }), kerr.InvalidRequest.Code},
		{"empty rack", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RackID = &empty }), kerr.InvalidRequest.Code},
		{"join without rebalance timeout", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }), kerr.InvalidRequest.Code},
		{"join owning partitions", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{Partitions: []int32{0}}}
		}), kerr.InvalidRequest.Code},
		{"join with null owned", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = nil }), kerr.InvalidRequest.Code},
		{"join without subscription", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }), kerr.InvalidRequest.Code},
		{"static leave without instance", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -2 }), kerr.InvalidRequest.Code},
		{"epoch below -2", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -3 }), kerr.InvalidRequest.Code},
		{"bad regex", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicRegex = &bad }), kerr.InvalidRegularExpression.Code},
		{"unknown assignor", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = &unknown }), kerr.UnsupportedAssignor.Code},
		{"unknown member", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = 3 }), kerr.GroupIDNotFound.Code},
		{"v0 without member id", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Version, r.MemberID = 0, "" }), 0},
		{"subscription too large", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames = slices.Repeat([]string{strings.Repeat("t", 200)}, 200)
		}), kerr.InvalidRequest.Code},
		{"too many topic names", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames = slices.Repeat([]string{"t"}, maxSubscribedTopics+1)
		}), kerr.InvalidRequest.Code},
		{"regex", join(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Group, r.SubscribedTopicNames, r.SubscribedTopicRegex = "cr", nil, &regex
		}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.do(tc.req).(*kmsg.ConsumerGroupHeartbeatResponse)
			if r.ErrorCode != tc.want {
				t.Fatalf("%v, want %v", kerr.ErrorForCode(r.ErrorCode), kerr.ErrorForCode(tc.want))
			}
			if tc.want != 0 && (r.ErrorMessage == nil || *r.ErrorMessage == "") {
				t.Errorf("no error message")
			}
			if tc.want == 0 && (r.MemberID == nil || *r.MemberID == "" || r.Assignment == nil || len(r.Assignment.Topics) != 1) {
				t.Errorf("joined without an id or the topic: %+v", r)
			}
		})
	}
}

// TestConsumerGroupStaticMember: a static member's -2 keeps its partitions
// (nobody else gets them); its instance id cannot be taken while it is in
// use (UNRELEASED_INSTANCE_ID) or by another member id after
// (FENCED_INSTANCE_ID); a new member id with the instance id takes over
// its assignment without a new group epoch.
func TestConsumerGroupStaticMember(t *testing.T) {
	_, w, _, _ := startConsumerGroupServer(t, 4)
	inst := "i-1"
	all := []int32{0, 1, 2, 3}
	if r := w.hb("S1", 0, &inst, []string{"t"}, nil); r.MemberEpoch != 1 || !slices.Equal(parts(t, r), all) {
		t.Fatalf("S1 joins: %d %v", r.MemberEpoch, parts(t, r))
	}
	if r := w.hb("S2", 0, &inst, []string{"t"}, nil); r.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("S2 with S1's instance id: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := w.hb("S2", 1, &inst, nil, all); r.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("S2 heartbeating as S1's instance: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := w.hb("S1", staticLeaveEpoch, &inst, nil, nil); r.ErrorCode != 0 || r.MemberEpoch != -2 {
		t.Fatalf("S1's static leave: %v %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	// A dynamic member joining meanwhile gets nothing: S1 holds all.
	if r := w.hb("D", 0, nil, []string{"t"}, nil); r.MemberEpoch != 2 || len(parts(t, r)) != 0 {
		t.Fatalf("D joins while S1 is away: %d %v", r.MemberEpoch, parts(t, r))
	}
	// S1 comes back as S3: S1's assignment, no new group epoch.
	r := w.hb("S3", 0, &inst, []string{"t"}, nil)
	got := parts(t, r)
	if r.MemberEpoch != 2 || len(got) != 2 {
		t.Fatalf("S3 takes over: epoch %d, %v", r.MemberEpoch, got)
	}
	d := w.do(&kmsg.ConsumerGroupDescribeRequest{Groups: []string{"cg"}}).(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
	if d.Epoch != 2 || len(d.Members) != 2 || d.Members[1].MemberID != "S3" || *d.Members[1].InstanceID != inst {
		t.Fatalf("describe after the takeover: %+v", d)
	}
}

// TestConsumerGroupAndClassicGroup: a group id held by one protocol is
// refused to the other as Kafka answers (the consumer protocol:
// GROUP_ID_NOT_FOUND; JoinGroup: INCONSISTENT_GROUP_PROTOCOL); an empty
// group of either kind gives way.
func TestConsumerGroupAndClassicGroup(t *testing.T) {
	_, w, _, _ := startConsumerGroupServer(t, 1)
	classic := groupWire{w.wire, "classic"}
	id := classic.join("", nil).MemberID
	if r := classic.join(id, nil); r.ErrorCode != 0 {
		t.Fatalf("classic join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	w.group = "classic"
	if r := w.hb("A", 0, nil, []string{"t"}, nil); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer protocol into a classic group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	w.group = "modern"
	w.hb("A", 0, nil, []string{"t"}, nil)
	jr := joinReq("modern", "", nil)
	jr.Version = 9
	if r := w.do(jr).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join into a consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	dg := w.do(&kmsg.DescribeGroupsRequest{Version: 6, Groups: []string{"modern"}}).(*kmsg.DescribeGroupsResponse).Groups[0]
	if dg.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("DescribeGroups of a consumer group: %v", kerr.ErrorForCode(dg.ErrorCode))
	}
	lg := w.do(&kmsg.ListGroupsRequest{Version: 5}).(*kmsg.ListGroupsResponse)
	types := map[string]string{}
	for _, g := range lg.Groups {
		types[g.Group] = g.GroupType + "/" + g.GroupState
	}
	if types["modern"] != "consumer/Stable" || types["classic"] != "classic/CompletingRebalance" {
		t.Fatalf("ListGroups: %v", types)
	}
	// Empty, the consumer group gives way to a classic join.
	w.hb("A", leaveEpoch, nil, nil, nil)
	jr.Version = 3 // no KIP-394 round trip
	if r := w.do(jr).(*kmsg.JoinGroupResponse); r.ErrorCode != 0 {
		t.Fatalf("classic join into an empty consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestConsumerGroupOffsets: OffsetCommit v9 and OffsetFetch v9 take the
// member epoch as the generation (STALE_MEMBER_EPOCH at another);
// OffsetCommit below v9 from a member is UNSUPPORTED_VERSION; a commit
// without a member is refused while the group has members.
func TestConsumerGroupOffsets(t *testing.T) {
	s, w, _, _ := startConsumerGroupServer(t, 2)
	w.hb("A", 0, nil, []string{"t"}, nil)
	commit := func(version int16, member string, epoch int32) int16 {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.MemberID, oc.Generation = version, "cg", member, epoch
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 1, Offset: 7, LeaderEpoch: -1}}}}
		return w.do(oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	for _, tc := range []struct {
		name    string
		version int16
		member  string
		epoch   int32
		want    int16
	}{
		{"stale", 9, "A", 0, kerr.StaleMemberEpoch.Code},
		{"unknown member", 9, "B", 1, kerr.UnknownMemberID.Code},
		{"no member while it has members", 9, "", -1, kerr.UnknownMemberID.Code},
		{"v8", 8, "A", 1, kerr.UnsupportedVersion.Code},
		{"current", 9, "A", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := commit(tc.version, tc.member, tc.epoch); code != tc.want {
				t.Errorf("%v, want %v", kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
			}
		})
	}
	fetch := func(member *string, epoch int32) *kmsg.OffsetFetchResponseGroup {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.Version = 9
		of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "cg", MemberID: member, MemberEpoch: epoch,
			Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{1}}}}}
		return &w.do(of).(*kmsg.OffsetFetchResponse).Groups[0]
	}
	a := "A"
	if g := fetch(&a, 0); g.ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Errorf("fetch at a stale epoch: %v", kerr.ErrorForCode(g.ErrorCode))
	}
	for _, g := range []*kmsg.OffsetFetchResponseGroup{fetch(&a, 1), fetch(nil, -1)} {
		if g.ErrorCode != 0 || g.Topics[0].Partitions[0].Offset != 7 {
			t.Errorf("fetch: %v offset %d", kerr.ErrorForCode(g.ErrorCode), g.Topics[0].Partitions[0].Offset)
		}
	}
	// The records are Kafka's, in the order its coordinator writes them.
	w.hb("A", leaveEpoch, nil, nil, nil)
	var types []int16
	for _, r := range groupRecords(t, s.cfg.LogDir, "cg") {
		types = append(types, r.Type)
	}
	// Join: subscription, epoch, target, target epoch, current
	// assignment; the commit; the leave: three tombstones and the epoch.
	want := []int16{5, 3, 7, 6, 8, 1, 8, 7, 5, 3}
	if !slices.Equal(types, want) {
		t.Fatalf("record types %v, want %v", types, want)
	}
}

// groupRecords decodes a group's records from its __consumer_offsets
// partition under dir.
func groupRecords(t *testing.T, dir, group string) []internaltopic.CoordinatorRecord {
	t.Helper()
	pdir := filepath.Join(dir, OffsetsTopic+"-"+strconv.Itoa(int(offsetstore.Partition(group))))
	d, err := partition.Open(pdir)
	if err != nil {
		t.Fatal(err)
	}
	var out []internaltopic.CoordinatorRecord
	for _, seg := range d.Segments {
		data, err := os.ReadFile(seg.Log)
		if err != nil {
			t.Fatal(err)
		}
		var rr format.RecordReader
		var rec format.Record
		for b, err := range format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{}).All() {
			if err != nil {
				t.Fatal(err)
			}
			if err := rr.Reset(b); err != nil {
				t.Fatal(err)
			}
			for rr.Next(&rec) == nil {
				r, err := internaltopic.DecodeGroupRecord(rec.Key, rec.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// TestConsumerGroupRecordsShowMembers: the records replay to the group's
// state: members' epochs, current and target assignments.
func TestConsumerGroupRecordsShowMembers(t *testing.T) {
	s, w, _, _ := startConsumerGroupServer(t, 4)
	w.hb("A", 0, nil, []string{"t"}, nil)
	w.hb("A", 1, nil, nil, []int32{0, 1, 2, 3})
	w.hb("B", 0, nil, []string{"t"}, nil)
	w.hb("A", 1, nil, nil, []int32{0, 1, 2, 3})
	epoch, targetEpoch := int32(-1), int32(-1)
	current := map[string]*internaltopic.CurrentMemberAssignmentValue{}
	target := map[string]int{}
	for _, r := range groupRecords(t, s.cfg.LogDir, "cg") {
		switch v := r.Value.(type) {
		case *internaltopic.ConsumerGroupMetadataValue:
			epoch = v.Epoch
		case *internaltopic.TargetAssignmentMetadataValue:
			targetEpoch = v.AssignmentEpoch
		case *internaltopic.TargetAssignmentMemberValue:
			target[r.Key.(*internaltopic.MemberKey).MemberID] = len(v.TopicPartitions[0].Partitions)
		case *internaltopic.CurrentMemberAssignmentValue:
			current[r.Key.(*internaltopic.MemberKey).MemberID] = v
		}
	}
	a := current["A"]
	if epoch != 2 || targetEpoch != 2 || target["A"] != 2 || target["B"] != 2 || a == nil || a.MemberEpoch != 1 ||
		a.State != memberUnrevokedPartitions || len(a.AssignedPartitions[0].Partitions) != 2 || len(a.PartitionsPendingRevocation[0].Partitions) != 2 ||
		a.AssignedPartitions[0].TopicID != s.topic("t").id {
		t.Fatalf("replayed: epoch %d target epoch %d targets %v A %+v", epoch, targetEpoch, target, a)
	}
	if b := current["B"]; b == nil || b.MemberEpoch != 2 || b.State != memberUnreleasedPartitions {
		t.Fatalf("B: %+v", b)
	}
}

// TestAssignors: every subscribed partition has one owner subscribed to
// its topic, counts are even where subscriptions allow, the uniform
// assignor keeps partitions where they were, range gives contiguous
// ranges.
func TestAssignors(t *testing.T) {
	t.Parallel()
	x, y := [16]byte{1}, [16]byte{2}
	topics := map[[16]byte]int32{x: 6, y: 3}
	both := map[[16]byte]bool{x: true, y: true}
	onlyX := map[[16]byte]bool{x: true}
	check := func(t *testing.T, ms []memberSubscription, out map[string]assignment) map[string]int {
		t.Helper()
		seen := map[topicPart]string{}
		counts := map[string]int{}
		for _, m := range ms {
			for id, ps := range out[m.id] {
				if !m.topics[id] {
					t.Errorf("%s got a topic it does not subscribe to", m.id)
				}
				for _, p := range ps {
					if o, dup := seen[topicPart{id, p}]; dup {
						t.Errorf("partition %v-%d to %s and %s", id[0], p, o, m.id)
					}
					seen[topicPart{id, p}] = m.id
				}
			}
			counts[m.id] = out[m.id].count()
		}
		for id, n := range topics {
			for p := int32(0); p < n; p++ {
				if _, ok := seen[topicPart{id, p}]; !ok {
					t.Errorf("partition %v-%d unassigned", id[0], p)
				}
			}
		}
		return counts
	}
	t.Run("uniform balanced and sticky", func(t *testing.T) {
		ms := []memberSubscription{{"a", both}, {"b", both}}
		first := uniformAssign(ms, topics, nil)
		if c := check(t, ms, first); c["a"]+c["b"] != 9 || c["a"]-c["b"] > 1 || c["b"]-c["a"] > 1 {
			t.Fatalf("counts %v", c)
		}
		ms3 := append(ms, memberSubscription{"c", both})
		second := uniformAssign(ms3, topics, first)
		c := check(t, ms3, second)
		if c["a"] != 3 || c["b"] != 3 || c["c"] != 3 {
			t.Fatalf("counts with c: %v", c)
		}
		for _, m := range []string{"a", "b"} {
			for id, ps := range second[m] {
				for _, p := range ps {
					if !first[m].has(id, p) {
						t.Errorf("%s got %v-%d, which it did not have: moved more than needed", m, id[0], p)
					}
				}
			}
		}
	})
	t.Run("uniform heterogeneous", func(t *testing.T) {
		ms := []memberSubscription{{"a", onlyX}, {"b", both}}
		c := check(t, ms, uniformAssign(ms, topics, nil))
		if c["a"] < 4 || c["b"] < 4 {
			t.Fatalf("counts %v (a can only take x's 6, b the rest)", c)
		}
	})
	t.Run("range", func(t *testing.T) {
		ms := []memberSubscription{{"a", both}, {"b", both}}
		out := rangeAssign(ms, topics)
		check(t, ms, out)
		if !slices.Equal(out["a"][x], []int32{0, 1, 2}) || !slices.Equal(out["b"][x], []int32{3, 4, 5}) ||
			!slices.Equal(out["a"][y], []int32{0, 1}) || !slices.Equal(out["b"][y], []int32{2}) {
			t.Fatalf("range: %v", out)
		}
	})
}

// TestConsumerGroupMaxSize: a group at group.consumer.max.size refuses
// another member (GROUP_MAX_SIZE_REACHED) but not its own members.
func TestConsumerGroupMaxSize(t *testing.T) {
	clock := newFakeClock()
	s, addr := startServer(t, Config{LogDir: t.TempDir(), Writable: true, Clock: clock, ConsumerGroupMaxSize: 2})
	if _, err := s.createTopicParts("t", 1); err != nil {
		t.Fatal(err)
	}
	w := cgWire{dial(t, addr), "cg", s.topic("t").id}
	w.hb("A", 0, nil, []string{"t"}, nil)
	w.hb("B", 0, nil, []string{"t"}, nil)
	if r := w.hb("C", 0, nil, []string{"t"}, nil); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("a third member: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := w.hb("B", 2, nil, nil, []int32{}); r.ErrorCode != 0 {
		t.Fatalf("a member of the full group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestConsumerGroupRestart: a restarted server loads its consumer groups
// from __consumer_offsets (epochs, members, assignments): a member goes on
// heartbeating at its epoch and keeps its partitions, and a member that
// does not come back is fenced at its session timeout.
func TestConsumerGroupRestart(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	s, err := New(Config{LogDir: dir, Writable: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	tp, err := s.createTopicParts("t", 4)
	if err != nil {
		t.Fatal(err)
	}
	w := cgWire{dial(t, ln.Addr().String()), "cg", tp.id}
	w.hb("A", 0, nil, []string{"t"}, nil)
	w.hb("B", 0, nil, []string{"t"}, nil)
	keep := parts(t, w.hb("A", 1, nil, nil, []int32{0, 1, 2, 3}))
	w.hb("A", 1, nil, nil, keep)
	gotB := parts(t, w.hb("B", 2, nil, nil, []int32{}))
	if len(keep) != 2 || len(gotB) != 2 {
		t.Fatalf("before the restart: A %v, B %v", keep, gotB)
	}
	w.c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	fenced := make(chan string, 4)
	cfg := Config{LogDir: dir, Writable: true, Clock: clock}
	cfg.hooks.consumerFenced = func(_, m string) { fenced <- m }
	s2, addr := startServer(t, cfg)
	clock.settle = func() { s2.groups.do(func() {}) }
	w = cgWire{dial(t, addr), "cg", tp.id}
	d := describeConsumerGroupOnLoop(s2, "cg")
	if d.epoch != 2 || d.assignmentEpoch != 2 || len(d.members) != 2 || d.members[0].epoch != 2 || d.members[1].epoch != 2 {
		t.Fatalf("loaded: %+v", d)
	}
	// The first heartbeat learns the topics again (a new group epoch);
	// A's partitions stay (the answer carries no change).
	r := w.hb("A", 2, nil, []string{"t"}, keep)
	if r.ErrorCode != 0 || r.MemberEpoch != 3 || r.Assignment != nil {
		t.Fatalf("A after the restart: %v epoch %d %v", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch, parts(t, r))
	}
	if d := describeConsumerGroupOnLoop(s2, "cg"); !slices.Equal(d.members[0].assigned[tp.id], keep) {
		t.Fatalf("A holds %v, want %v", d.members[0].assigned, keep)
	}
	clock.Advance(30 * time.Second)
	w.hb("A", 3, nil, nil, keep)
	clock.Advance(16 * time.Second)
	select {
	case m := <-fenced:
		if m != "B" {
			t.Fatalf("fenced %s, want B (it never came back)", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B was not fenced after the restart")
	}
	select {
	case m := <-fenced:
		t.Fatalf("fenced %s too", m)
	default:
	}
}

// TestConsumerGroupTopicGrows: partitions added to a subscribed topic bump
// the group epoch at the next heartbeat and are assigned.
func TestConsumerGroupTopicGrows(t *testing.T) {
	s, w, _, _ := startConsumerGroupServer(t, 2)
	w.hb("A", 0, nil, []string{"t"}, nil)
	if r := w.hb("A", 1, nil, nil, []int32{0, 1}); r.MemberEpoch != 1 {
		t.Fatalf("A: %d", r.MemberEpoch)
	}
	if err := s.addPartitions("t", 4); err != nil {
		t.Fatal(err)
	}
	if r := w.hb("A", 1, nil, nil, []int32{0, 1}); r.MemberEpoch != 2 || !slices.Equal(parts(t, r), []int32{0, 1, 2, 3}) {
		t.Fatalf("A after the topic grew: %d %v", r.MemberEpoch, parts(t, r))
	}
}

// TestConsumerGroupRegex: a regex subscription takes the topics whose
// whole name matches, and a topic created later that matches.
func TestConsumerGroupRegex(t *testing.T) {
	s, w, _, _ := startConsumerGroupServer(t, 1)
	for _, n := range []string{"ta", "tb", "xta"} {
		if _, err := s.createTopicParts(n, 1); err != nil {
			t.Fatal(err)
		}
	}
	re := "t[a-z]"
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.RebalanceTimeoutMillis, r.SubscribedTopicRegex = 1, "rg", "A", 1000, &re
	r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp := w.do(r).(*kmsg.ConsumerGroupHeartbeatResponse)
	got := map[[16]byte]bool{}
	for _, tp := range resp.Assignment.Topics {
		got[tp.TopicID] = true
	}
	if resp.ErrorCode != 0 || len(got) != 2 || !got[s.topic("ta").id] || !got[s.topic("tb").id] {
		t.Fatalf("regex assignment: %v %+v", kerr.ErrorForCode(resp.ErrorCode), resp.Assignment)
	}
	if _, err := s.createTopicParts("tc", 1); err != nil {
		t.Fatal(err)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = 1, "rg", "A", resp.MemberEpoch, -1
	if resp := w.do(hb).(*kmsg.ConsumerGroupHeartbeatResponse); resp.MemberEpoch != 2 || resp.Assignment == nil || len(resp.Assignment.Topics) != 3 {
		t.Fatalf("after tc was created: %d %+v", resp.MemberEpoch, resp.Assignment)
	}
}
