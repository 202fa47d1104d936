package serve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestElectLeadersAndReassignmentsKadm: kadm's leader elections and
// partition reassignments on one broker, answered as the KRaft controller
// answers them: nothing needs electing where this broker leads, a
// partition the log dir does not hold (multi-1) has no leader to elect, a
// reassignment to this broker is the assignment it has, any other is
// INVALID_REPLICA_ASSIGNMENT, a cancel finds none in progress, and none is
// ever listed.
func TestElectLeadersAndReassignmentsKadm(t *testing.T) {
	const node = 4
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0", "multi-0", "multi-2"), NodeID: node})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	var some kadm.TopicsSet
	some.Add("none", 0, 5)
	some.Add("multi", 0, 1)
	some.Add("ghost", 0)
	for _, c := range []struct {
		how  kadm.ElectLeadersHow
		set  kadm.TopicsSet
		want map[string]map[int32]error
	}{
		{kadm.ElectPreferredReplica, some, map[string]map[int32]error{
			"none":  {0: kerr.ElectionNotNeeded, 5: kerr.UnknownTopicOrPartition},
			"multi": {0: kerr.ElectionNotNeeded, 1: kerr.PreferredLeaderNotAvailable},
			"ghost": {0: kerr.UnknownTopicOrPartition},
		}},
		{kadm.ElectLiveReplica, some, map[string]map[int32]error{
			"none":  {0: kerr.ElectionNotNeeded, 5: kerr.UnknownTopicOrPartition},
			"multi": {0: kerr.ElectionNotNeeded, 1: kerr.EligibleLeadersNotAvailable},
			"ghost": {0: kerr.UnknownTopicOrPartition},
		}},
		// Every partition: those that need no election are left out.
		{kadm.ElectPreferredReplica, nil, map[string]map[int32]error{
			"none":  {},
			"multi": {1: kerr.PreferredLeaderNotAvailable},
		}},
	} {
		res, err := adm.ElectLeaders(ctx, c.how, c.set)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(c.want) {
			t.Errorf("election %d of %v: topics %v, want %v", c.how, c.set, res, c.want)
		}
		for topic, ps := range c.want {
			if len(res[topic]) != len(ps) {
				t.Errorf("election %d, %s: %v, want %v", c.how, topic, res[topic], ps)
			}
			for n, want := range ps {
				if got := res[topic][n]; !errors.Is(got.Err, want) {
					t.Errorf("election %d, %s-%d: %v, want %v", c.how, topic, n, got.Err, want)
				}
			}
		}
	}

	for _, c := range []struct {
		name    string
		topic   string
		part    int32
		brokers []int32
		want    error // nil: NONE
	}{
		{"to this broker", "none", 0, []int32{node}, nil},
		{"to another broker", "none", 0, []int32{node + 1}, kerr.InvalidReplicaAssignment},
		{"twice to this one", "none", 0, []int32{node, node}, kerr.InvalidReplicaAssignment},
		{"to nobody", "none", 0, []int32{}, kerr.InvalidReplicaAssignment},
		{"a cancel", "none", 0, nil, kerr.NoReassignmentInProgress},
		{"a partition held elsewhere", "multi", 1, []int32{node}, kerr.InvalidReplicaAssignment},
		{"an unknown topic", "ghost", 0, []int32{node}, kerr.UnknownTopicOrPartition},
	} {
		var req kadm.AlterPartitionAssignmentsReq
		req.Assign(c.topic, c.part, c.brokers)
		res, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := res[c.topic][c.part]
		if (c.want == nil) != (got.Err == nil) || c.want != nil && !errors.Is(got.Err, c.want) {
			t.Errorf("%s: %v (%s), want %v", c.name, got.Err, got.ErrMessage, c.want)
		}
	}
	listed, err := adm.ListPartitionReassignments(ctx, some)
	if err != nil || len(listed) != 0 {
		t.Errorf("reassignments listed: %v, %v; want none", listed, err)
	}
	// Nothing moved: every partition held is still led by this broker.
	md, err := adm.Metadata(ctx, "none", "multi")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range md.Topics.Sorted() {
		for _, p := range d.Partitions.Sorted() {
			if held := d.Topic == "none" || p.Partition != 1; held && (p.Leader != node || len(p.Replicas) != 1 || p.Replicas[0] != node) {
				t.Errorf("%s-%d after the reassignments: leader %d replicas %v", d.Topic, p.Partition, p.Leader, p.Replicas)
			}
		}
	}
}
