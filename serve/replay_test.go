package serve

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// replayConfig is a two-broker replay of the none fixture: none-0 on
// broker 1, its only replica; none-1 on broker 2, its leader, with broker 1
// a follower whose copy is not on the disks.
func replayConfig(t testing.TB) ReplayConfig {
	b1, b2 := t.TempDir(), t.TempDir()
	src := filepath.Join("..", "testdata", "segments", fixtureTopics["none-0"])
	klogtest.CopyPartition(t, src, filepath.Join(b1, "none-0"))
	klogtest.CopyPartition(t, src, filepath.Join(b2, "none-1"))
	return ReplayConfig{
		Brokers: []ReplayBroker{
			{ID: 1, LogDirs: []string{b1}, Replicas: []ReplayReplica{{"none", 0, filepath.Join(b1, "none-0")}}},
			{ID: 2, LogDirs: []string{b2}, Replicas: []ReplayReplica{{"none", 1, filepath.Join(b2, "none-1")}}},
		},
		Topics: []ReplayTopic{{Name: "none", Partitions: []ReplayPartition{
			{Partition: 0, Leader: 1, LeaderEpoch: 0, Replicas: []int32{1}, ISR: []int32{1}},
			{Partition: 1, Leader: 2, LeaderEpoch: 0, Replicas: []int32{2, 1}, ISR: []int32{2}},
		}}},
		Coordinator: 1, ControllerID: 1,
		Base: Config{StateDir: t.TempDir()},
	}
}

// TestNewReplayRefuses: what a replay cannot be is refused before any
// broker starts.
func TestNewReplayRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		edit func(*ReplayConfig)
		want string
	}{
		"writable":        {func(rc *ReplayConfig) { rc.Base.Writable = true }, "read-only"},
		"no state":        {func(rc *ReplayConfig) { rc.Base.StateDir = "" }, "state directory"},
		"broker twice":    {func(rc *ReplayConfig) { rc.Brokers[1].ID = 1 }, "broker 1 listed twice"},
		"unknown replica": {func(rc *ReplayConfig) { rc.Brokers[1].Replicas[0].Partition = 5 }, "is not a partition"},
		"coordinator":     {func(rc *ReplayConfig) { rc.Coordinator = 9 }, "coordinator 9"},
		"partitions gap":  {func(rc *ReplayConfig) { rc.Topics[0].Partitions[1].Partition = 3 }, "not 0..1"},
		"held twice": {func(rc *ReplayConfig) {
			rc.Brokers[0].Replicas = append(rc.Brokers[0].Replicas, rc.Brokers[0].Replicas[0])
		}, "twice"},
		"no log dir":       {func(rc *ReplayConfig) { rc.Brokers[0].LogDirs = nil }, "no log dir"},
		"no broker at all": {func(rc *ReplayConfig) { rc.Brokers = nil }, "at least one broker"},
	} {
		rc := replayConfig(t)
		c.edit(&rc)
		r, err := NewReplay(rc)
		if err == nil {
			r.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// FuzzReplayHandlers: every handler of a replayed broker (which answers
// Metadata from the cluster's view, and refuses what another broker
// leads) answers any request without a panic.
func FuzzReplayHandlers(f *testing.F) {
	for _, s := range seedRequests(f) {
		f.Add(s)
	}
	r, err := NewReplay(replayConfig(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	a, b := net.Pipe()
	b.Close()
	f.Cleanup(func() { a.Close() })
	cn := &conn{s: r.Servers()[0], c: discardConn{a}, r: bufio.NewReader(a), name: "fuzz"}
	f.Fuzz(func(t *testing.T, frame []byte) { fuzzHandle(cn, frame) })
}

// TestTxnOffsetCommitReplay: in a replay, the coordinator (broker 1)
// checks a transaction's offsets for a partition another broker leads
// (none-1, on broker 2) as it checks its own partitions' (none-0): by the
// cluster's view, as OffsetCommit does, not by the replicas on its disks
// (UNKNOWN_TOPIC_OR_PARTITION); both then get the coordinator's answer
// for a producer it does not know. A partition the cluster does not have
// is UNKNOWN_TOPIC_OR_PARTITION for both.
func TestTxnOffsetCommitReplay(t *testing.T) {
	r, err := NewReplay(replayConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go r.Servers()[0].Serve(ln)
	w := dial(t, ln.Addr().String())
	parts := []int32{0, 1, 2}
	txn := &kmsg.TxnOffsetCommitRequest{Version: 3, TransactionalID: "x", Group: "g", ProducerID: 7, Generation: -1,
		Topics: []kmsg.TxnOffsetCommitRequestTopic{{Topic: "none"}}}
	plain := &kmsg.OffsetCommitRequest{Version: 7, Group: "g", Generation: -1, Topics: []kmsg.OffsetCommitRequestTopic{{Topic: "none"}}}
	for _, n := range parts {
		txn.Topics[0].Partitions = append(txn.Topics[0].Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: n, Offset: 1, LeaderEpoch: -1})
		plain.Topics[0].Partitions = append(plain.Topics[0].Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: n, Offset: 1, LeaderEpoch: -1})
	}
	tr := w.do(txn).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions
	pr := w.do(plain).(*kmsg.OffsetCommitResponse).Topics[0].Partitions
	want := map[int32][2]int16{
		0: {kerr.InvalidProducerIDMapping.Code, 0},
		1: {kerr.InvalidProducerIDMapping.Code, 0},
		2: {kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code},
	}
	for i, n := range parts {
		if got := [2]int16{tr[i].ErrorCode, pr[i].ErrorCode}; got != want[n] {
			t.Errorf("none-%d: TxnOffsetCommit %s, OffsetCommit %s; want %s, %s", n,
				codeName(got[0]), codeName(got[1]), codeName(want[n][0]), codeName(want[n][1]))
		}
	}
}
