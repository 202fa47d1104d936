package serve

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// cgMembers tracks what each member of a client-side group holds, from
// the clients' assignment callbacks, and wakes a waiter on every change.
type cgMembers struct {
	mu      sync.Mutex
	holds   map[string]map[int32]bool
	ever    map[string]map[int32]bool
	changed chan struct{}
}

func newCGMembers() *cgMembers {
	return &cgMembers{holds: map[string]map[int32]bool{}, ever: map[string]map[int32]bool{}, changed: make(chan struct{}, 1)}
}

func (m *cgMembers) update(name string, add bool, ps map[string][]int32) {
	m.mu.Lock()
	if m.holds[name] == nil {
		m.holds[name], m.ever[name] = map[int32]bool{}, map[int32]bool{}
	}
	for _, list := range ps {
		for _, p := range list {
			if add {
				m.holds[name][p], m.ever[name][p] = true, true
			} else {
				delete(m.holds[name], p)
			}
		}
	}
	m.mu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds over the members' holdings.
func (m *cgMembers) waitFor(t *testing.T, what string, cond func(holds map[string]map[int32]bool) bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		m.mu.Lock()
		ok := cond(m.holds)
		m.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-m.changed:
		case <-deadline:
			m.mu.Lock()
			defer m.mu.Unlock()
			t.Fatalf("%s: never happened; holdings %v", what, m.holds)
		}
	}
}

// splitsAll: the named members together hold partitions 0..n-1, each one
// once, each member at least one.
func splitsAll(names []string, n int) func(map[string]map[int32]bool) bool {
	return func(holds map[string]map[int32]bool) bool {
		seen := map[int32]bool{}
		for _, name := range names {
			if len(holds[name]) == 0 {
				return false
			}
			for p := range holds[name] {
				if seen[p] {
					return false
				}
				seen[p] = true
			}
		}
		return len(seen) == n
	}
}

// TestKgoConsumerProtocol: three franz-go members with the consumer group
// protocol (KIP-848, kgo.ServerSideBalancer) consume a topic of six
// partitions through serve exactly once between them; when one leaves,
// the other two take its partitions and consume the rest, still exactly
// once.
func TestKgoConsumerProtocol(t *testing.T) {
	s, addr := startServer(t, Config{LogDir: t.TempDir(), Writable: true, ConsumerHeartbeatInterval: 300 * time.Millisecond})
	if _, err := s.createTopicParts("t6", 6); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pr, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t6"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	produce := func(from, n int) {
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			recs = append(recs, &kgo.Record{Partition: int32(i % 6), Value: []byte(fmt.Sprint(i))})
		}
		if err := pr.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, 300)

	members := newCGMembers()
	var mu sync.Mutex
	seen := map[string]string{} // record value -> member
	got := make(chan struct{}, 1024)
	clients := map[string]*kgo.Client{}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("kg"), kgo.ConsumeTopics("t6"), kgo.ServerSideBalancer(),
			kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { members.update(name, true, ps) }),
			kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
				// Commit what was polled before giving partitions up, so
				// the next owner starts after it.
				if err := cl.CommitUncommittedOffsets(ctx); err != nil {
					t.Errorf("%s: commit on revoke: %v", name, err)
				}
				members.update(name, false, ps)
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { members.update(name, false, ps) }))
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = cl
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				fs := cl.PollFetches(ctx)
				if fs.IsClientClosed() || ctx.Err() != nil {
					return
				}
				fs.EachError(func(topic string, p int32, err error) { t.Logf("%s: %s/%d: %v", name, topic, p, err) })
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					if prev, dup := seen[string(r.Value)]; dup {
						t.Errorf("record %s (partition %d) delivered to %s and %s", r.Value, r.Partition, prev, name)
					}
					seen[string(r.Value)] = name
					mu.Unlock()
					got <- struct{}{}
				})
				if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
					t.Logf("%s: commit: %v", name, err)
				}
			}
		}()
	}
	defer func() {
		cancel()
		for _, cl := range clients {
			cl.Close()
		}
		wg.Wait()
	}()
	waitRecords := func(n int) {
		t.Helper()
		for {
			mu.Lock()
			have := len(seen)
			mu.Unlock()
			if have >= n {
				return
			}
			select {
			case <-got:
			case <-ctx.Done():
				t.Fatalf("consumed %d of %d records", have, n)
			}
		}
	}
	members.waitFor(t, "three members splitting six partitions", splitsAll([]string{"a", "b", "c"}, 6))
	waitRecords(300)

	// c leaves; a and b take its partitions and consume the rest.
	members.mu.Lock()
	var left []int32
	for p := range members.holds["c"] {
		left = append(left, p)
	}
	members.mu.Unlock()
	clients["c"].Close()
	members.waitFor(t, "a and b splitting six partitions", splitsAll([]string{"a", "b"}, 6))
	produce(300, 300)
	waitRecords(600)
	mu.Lock()
	if len(seen) != 600 {
		t.Errorf("consumed %d records, want 600", len(seen))
	}
	mu.Unlock()
	members.mu.Lock()
	for _, p := range left {
		if !members.holds["a"][p] && !members.holds["b"][p] {
			t.Errorf("c's partition %d was not taken over", p)
		}
	}
	members.mu.Unlock()
	d := describeConsumerGroupOnLoop(s, "kg")
	if d.state != "Stable" || len(d.members) != 2 || d.assignor != "uniform" {
		t.Errorf("the group after c left: %+v", d)
	}
}

func describeConsumerGroupOnLoop(s *Server, name string) cgDescription {
	var d cgDescription
	s.groups.do(func() { d = s.groups.describeConsumerGroup(name) })
	return d
}

// TestConfluentPythonAsksForTheConsumerProtocol: librdkafka 2.0.2
// (confluent-kafka-python) predates KIP-848: asked for
// group.protocol=consumer it refuses at once (no such property), never
// a hang; the same client with the classic protocol consumes through the
// classic coordinator.
func TestConfluentPythonAsksForTheConsumerProtocol(t *testing.T) {
	py := needClient(t, systemPython, "-c", "import confluent_kafka")
	s, addr := startServer(t, Config{LogDir: t.TempDir(), Writable: true})
	if _, err := s.createTopicParts("one", 1); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("one"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte("v1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	script := `import sys, time, confluent_kafka as ck
addr = sys.argv[1]
start = time.monotonic()
try:
    ck.Consumer({'bootstrap.servers': addr, 'group.id': 'py848', 'group.protocol': 'consumer'})
    print('constructed')
except ck.KafkaException as e:
    print('refused', e.args[0].code() == ck.KafkaError._INVALID_ARG, time.monotonic() - start < 1)
c = ck.Consumer({'bootstrap.servers': addr, 'group.id': 'py848', 'auto.offset.reset': 'earliest'})
c.subscribe(['one'])
m = None
for _ in range(300):
    m = c.poll(0.2)
    if m is not None and not m.error():
        break
print('consumed', m.value().decode() if m is not None and not m.error() else None)
c.close()
`
	out := runClient(t, "", py, "-c", script, addr)
	if out != "refused True True\nconsumed v1\n" {
		t.Fatalf("confluent-kafka-python:\n%s", out)
	}
}
