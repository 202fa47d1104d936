package serve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stableMember joins group, consumes topic until it has records and
// commits them: once it has records, the group is Stable with it.
func stableMember(t *testing.T, addr, group, topic string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ClientID("admin-test"), kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			cl.Close()
			t.Fatal(err)
		}
		if fs.NumRecords() > 0 {
			break
		}
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		cl.Close()
		t.Fatal(err)
	}
	return cl
}

// TestAdminGroupsKadm: kadm lists and describes a group served by the
// coordinator, computes its lag, is refused the deletion of a live
// group's offsets and of the group itself, and deletes both once the
// member has left; the deletion is on disk (a restarted server does not
// have the group).
func TestAdminGroupsKadm(t *testing.T) {
	dir := fixtureLogDir(t, "multi-0", "multi-1", "multi-2", "none-0")
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	member := stableMember(t, addr, "g1", "multi")
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	// A simple group: offsets committed by the administrator.
	var commits kadm.Offsets
	commits.Add(kadm.Offset{Topic: "none", Partition: 0, At: 1, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "simple", commits); err != nil {
		t.Fatal(err)
	}

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed["g1"]; !ok || g.State != "Stable" || g.ProtocolType != "consumer" {
		t.Errorf("ListGroups g1: %+v (all %v)", g, listed.Groups())
	}
	if g, ok := listed["simple"]; !ok || g.State != "Empty" || g.ProtocolType != "" {
		t.Errorf("ListGroups simple: %+v", g)
	}
	if f, err := adm.ListGroups(ctx, "Empty"); err != nil || len(f) != 1 || f["simple"].Group != "simple" {
		t.Errorf("ListGroups filtered by Empty: %v, %v", f, err)
	}
	if f, err := adm.ListGroupsByType(ctx, []string{"consumer"}); err != nil || len(f) != 0 {
		t.Errorf("ListGroups of type consumer: %v, %v", f, err)
	}
	if f, err := adm.ListGroupsByType(ctx, []string{"Classic"}); err != nil || len(f) != 2 {
		t.Errorf("ListGroups of type classic: %v, %v", f, err)
	}

	described, err := adm.DescribeGroups(ctx, "g1", "missing")
	if err != nil {
		t.Fatal(err)
	}
	g1 := described["g1"]
	if g1.Err != nil || g1.State != "Stable" || g1.Protocol != "cooperative-sticky" || len(g1.Members) != 1 {
		t.Fatalf("DescribeGroups g1: %+v", g1)
	}
	m := g1.Members[0]
	ca, ok := m.Assigned.AsConsumer()
	if !ok || m.ClientID != "admin-test" || len(ca.Topics) != 1 || ca.Topics[0].Topic != "multi" || len(ca.Topics[0].Partitions) != 3 {
		t.Errorf("member %+v assignment %+v", m, ca)
	}
	if d := described["missing"]; !errors.Is(d.Err, kerr.GroupIDNotFound) {
		t.Errorf("DescribeGroups missing: %+v", d)
	}

	lag, err := adm.Lag(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, "multi")
	if err != nil {
		t.Fatal(err)
	}
	fetched, err := adm.FetchOffsets(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range lag["g1"].Lag.Sorted() {
		n++
		e, _ := ends.Lookup(l.Topic, l.Partition)
		c, ok := fetched.Lookup(l.Topic, l.Partition)
		want := e.Offset
		if ok {
			want = e.Offset - c.At
		}
		if l.Err != nil || l.Lag != want || l.Member == nil || l.Member.ClientID != "admin-test" {
			t.Errorf("lag %s/%d: %+v, want %d", l.Topic, l.Partition, l, want)
		}
	}
	if n != 3 {
		t.Errorf("lag of %d partitions, want 3", n)
	}

	// A live group's subscribed topic keeps its offsets, and the group
	// stays.
	var del kadm.TopicsSet
	del.Add("multi", 0, 1, 2)
	res, err := adm.DeleteOffsets(ctx, "g1", del)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Error(); !errors.Is(err, kerr.GroupSubscribedToTopic) {
		t.Errorf("DeleteOffsets of a subscribed topic: %v", err)
	}
	dg, err := adm.DeleteGroup(ctx, "g1")
	if !errors.Is(err, kerr.NonEmptyGroup) && !errors.Is(dg.Err, kerr.NonEmptyGroup) {
		t.Errorf("DeleteGroup of a live group: %+v, %v", dg, err)
	}

	member.Close() // leaves the group
	res, err = adm.DeleteOffsets(ctx, "g1", del)
	if err != nil || res.Error() != nil {
		t.Fatalf("DeleteOffsets after the member left: %v %v", err, res.Error())
	}
	if f, err := adm.FetchOffsets(ctx, "g1"); err != nil || len(f) != 0 {
		t.Errorf("offsets after OffsetDelete: %v %v", f, err)
	}
	for _, g := range []string{"simple", "g1"} {
		if dg, err := adm.DeleteGroup(ctx, g); err != nil || dg.Err != nil {
			t.Fatalf("DeleteGroup %s: %+v %v", g, dg, err)
		}
	}
	if dg, err := adm.DeleteGroup(ctx, "simple"); !errors.Is(err, kerr.GroupIDNotFound) && !errors.Is(dg.Err, kerr.GroupIDNotFound) {
		t.Errorf("DeleteGroup twice: %+v %v", dg, err)
	}
	adm.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The tombstones are on disk: a new server has neither the simple
	// group nor g1's offsets.
	_, addr2 := startServer(t, Config{LogDir: dir, Writable: true})
	adm2 := kadm.NewClient(mustKgo(t, addr2))
	defer adm2.Close()
	listed, err = adm2.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 0 {
		t.Errorf("deleted group listed after restart: %v", listed.Groups())
	}
	if f, err := adm2.FetchOffsets(ctx, "g1"); err != nil || len(f) != 0 {
		t.Errorf("g1's offsets after restart: %v %v", f, err)
	}
}

func mustKgo(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
