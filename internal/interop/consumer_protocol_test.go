package interop

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/serve"
)

// serveLogDir serves a new writable log dir on loopback (a short
// heartbeat interval, so that rebalances take a test less than seconds)
// and returns it and its address.
func serveLogDir(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	return dir, startServe(t, serve.Config{LogDir: dir, Writable: true, ConsumerHeartbeatInterval: 300 * time.Millisecond})
}

// startServe serves cfg on a loopback listener until tb ends (a clean
// shutdown checked) and returns its address.
func startServe(tb testing.TB, cfg serve.Config) string {
	tb.Helper()
	s, err := serve.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, serve.ErrServerClosed) {
			tb.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// createAndFill creates topic with n partitions through librdkafka's
// AdminClient and produces count records round the partitions, values
// "0".."count-1".
func createAndFill(t *testing.T, addr, topic string, n, from, count int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if from == 0 {
		ad, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": addr})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ad.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: topic, NumPartitions: n, ReplicationFactor: 1}})
		ad.Close()
		if err != nil || res[0].Error.Code() != kafka.ErrNoError {
			t.Fatalf("CreateTopics: %v %v", err, res)
		}
	}
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": addr, "linger.ms": 5})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	deliveries := make(chan kafka.Event, count)
	for i := from; i < from+count; i++ {
		tp := topic
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &tp, Partition: int32(i % n)}, Value: []byte(strconv.Itoa(i))}, deliveries); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < count; i++ {
		select {
		case e := <-deliveries:
			if m := e.(*kafka.Message); m.TopicPartition.Error != nil {
				t.Fatalf("delivery: %v", m.TopicPartition.Error)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d delivered", i, count)
		}
	}
}

// holdings tracks each member's partitions from its rebalance events and
// wakes a waiter on every change.
type holdings struct {
	mu      sync.Mutex
	by      map[string]map[int32]bool
	ever    map[string]map[int32]bool // every partition a member was given
	changed chan struct{}
}

func newHoldings() *holdings {
	return &holdings{by: map[string]map[int32]bool{}, ever: map[string]map[int32]bool{}, changed: make(chan struct{}, 1)}
}

func (h *holdings) set(name string, ps []kafka.TopicPartition, add bool) {
	h.mu.Lock()
	if h.by[name] == nil {
		h.by[name], h.ever[name] = map[int32]bool{}, map[int32]bool{}
	}
	for _, p := range ps {
		if add {
			h.by[name][p.Partition], h.ever[name][p.Partition] = true, true
		} else {
			delete(h.by[name], p.Partition)
		}
	}
	h.mu.Unlock()
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// waitSplit waits until the named members hold partitions 0..n-1 between
// them, each once, each member at least one.
func (h *holdings) waitSplit(t *testing.T, names []string, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		h.mu.Lock()
		seen, ok := map[int32]bool{}, true
		for _, name := range names {
			ok = ok && len(h.by[name]) > 0
			for p := range h.by[name] {
				ok = ok && !seen[p]
				seen[p] = true
			}
		}
		ok = ok && len(seen) == n
		h.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-h.changed:
		case <-deadline:
			h.mu.Lock()
			defer h.mu.Unlock()
			t.Fatalf("%v never split %d partitions: %v", names, n, h.by)
		}
	}
}

// TestLibrdkafkaConsumerProtocol: librdkafka 2.11 (confluent-kafka-go)
// with group.protocol=consumer (KIP-848): three members consume a topic
// of six partitions through serve exactly once between them; one leaves
// and the other two take its partitions and consume what follows, still
// exactly once; klog groups reads the group serve wrote to
// __consumer_offsets.
func TestLibrdkafkaConsumerProtocol(t *testing.T) {
	dir, addr := serveLogDir(t)
	createAndFill(t, addr, "six", 6, 0, 300)
	h := newHoldings()
	var mu sync.Mutex
	seen := map[string]string{}
	got := make(chan struct{}, 1024)
	stop := map[string]chan struct{}{}
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c"} {
		c, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": addr, "group.id": "rk", "group.protocol": "consumer",
			"client.id": name, "auto.offset.reset": "earliest", "enable.auto.commit": false})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Subscribe("six", func(c *kafka.Consumer, e kafka.Event) error {
			switch e := e.(type) {
			case kafka.AssignedPartitions:
				h.set(name, e.Partitions, true)
			case kafka.RevokedPartitions:
				// What was consumed is committed before the partitions
				// go (the next owner starts after it).
				if _, err := c.Commit(); err != nil && err.(kafka.Error).Code() != kafka.ErrNoOffset {
					t.Errorf("%s: commit on revoke: %v", name, err)
				}
				h.set(name, e.Partitions, false)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stop[name] = make(chan struct{})
		wg.Add(1)
		go func(quit chan struct{}) {
			defer wg.Done()
			defer c.Close() // leaves the group (epoch -1) after revoking
			n := 0
			for {
				select {
				case <-quit:
					return
				default:
				}
				ev := c.Poll(100)
				switch e := ev.(type) {
				case *kafka.Message:
					mu.Lock()
					if prev, dup := seen[string(e.Value)]; dup {
						t.Errorf("record %s (partition %d) delivered to %s and %s", e.Value, e.TopicPartition.Partition, prev, name)
					}
					seen[string(e.Value)] = name
					mu.Unlock()
					got <- struct{}{}
					if n++; n%10 == 0 {
						c.Commit()
					}
				case kafka.Error:
					t.Errorf("%s: %v", name, e)
				}
			}
		}(stop[name])
	}
	defer func() {
		for _, q := range stop {
			select {
			case <-q:
			default:
				close(q)
			}
		}
		wg.Wait()
	}()
	waitRecords := func(n int) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			mu.Lock()
			have := len(seen)
			mu.Unlock()
			if have >= n {
				return
			}
			select {
			case <-got:
			case <-deadline:
				t.Fatalf("consumed %d of %d records", have, n)
			}
		}
	}
	h.waitSplit(t, []string{"a", "b", "c"}, 6)
	waitRecords(300)

	h.mu.Lock()
	var left []int32
	for p := range h.by["c"] {
		left = append(left, p)
	}
	h.mu.Unlock()
	close(stop["c"])
	h.waitSplit(t, []string{"a", "b"}, 6)
	createAndFill(t, addr, "six", 6, 300, 300)
	waitRecords(600)
	mu.Lock()
	if len(seen) != 600 {
		t.Errorf("consumed %d records, want 600", len(seen))
	}
	mu.Unlock()
	h.mu.Lock()
	for _, p := range left {
		if !h.by["a"][p] && !h.by["b"][p] {
			t.Errorf("c's partition %d was not taken over", p)
		}
	}
	h.mu.Unlock()

	// klog groups: the group as serve wrote it.
	dirs, err := cluster.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cluster.Groups(context.Background(), dirs, cluster.GroupsOptions{NoLag: true})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.GroupByID("rk")
	if g == nil || g.Type != cluster.GroupConsumer || len(g.Members) != 2 || g.GroupEpoch < 4 {
		t.Fatalf("klog groups: %+v", g)
	}
	held := 0
	for _, m := range g.Members {
		for _, a := range m.Assignment {
			if a.Topic != "six" {
				t.Errorf("member %s assigned %q", m.MemberID, a.Topic)
			}
			held += len(a.Partitions)
		}
	}
	if held != 6 {
		t.Errorf("klog groups: the members hold %d partitions, want 6: %+v", held, g.Members)
	}
}

// TestLibrdkafkaUnsupportedAssignor: a member asking for a server-side
// assignor serve does not have gets UNSUPPORTED_ASSIGNOR at once, as a
// fatal consumer error, not a hang.
func TestLibrdkafkaUnsupportedAssignor(t *testing.T) {
	_, addr := serveLogDir(t)
	createAndFill(t, addr, "one", 1, 0, 1)
	c, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": addr, "group.id": "ua", "group.protocol": "consumer",
		"group.remote.assignor": "sticky"})
	if err != nil {
		t.Fatal(err)
	}
	// librdkafka 2.11's Close never returns after this fatal error (it
	// sends nothing more: no leave, no request at all), so it is not
	// waited for; the server's shutdown ends its connections.
	defer func() { go c.Close() }()
	if err := c.Subscribe("one", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		switch e := c.Poll(100).(type) {
		case kafka.Error:
			if e.Code() == kafka.ErrUnsupportedAssignor {
				return
			}
			t.Logf("consumer error: %v", e)
			if e.IsFatal() {
				t.Fatalf("fatal error %v (code %d), want UNSUPPORTED_ASSIGNOR", e, e.Code())
			}
		case *kafka.Message:
			t.Fatalf("consumed with an assignor serve does not have: %v", e)
		}
	}
	t.Fatal("no UNSUPPORTED_ASSIGNOR error")
}

// groupEpoch is the consumer group's epoch as klog groups reads it from
// what serve wrote.
func groupEpoch(t *testing.T, dir, group string) int32 {
	t.Helper()
	dirs, err := cluster.Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cluster.Groups(context.Background(), dirs, cluster.GroupsOptions{NoLag: true})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.GroupByID(group)
	if g == nil {
		t.Fatalf("klog groups has no group %s", group)
	}
	return g.GroupEpoch
}

// TestLibrdkafkaStaticMemberRestart: librdkafka 2.11 static members
// (group.instance.id) with group.protocol=consumer: a member that closes
// leaves with epoch -2 and keeps its partitions (the other member is not
// given them); restarted as a new process (a new member id) with the same
// instance id, it gets them back without a new group epoch, that is,
// without a rebalance.
func TestLibrdkafkaStaticMemberRestart(t *testing.T) {
	dir, addr := serveLogDir(t)
	createAndFill(t, addr, "stat4", 4, 0, 4)
	h := newHoldings()
	start := func(name, instance string) *kafka.Consumer {
		c, err := kafka.NewConsumer(&kafka.ConfigMap{"bootstrap.servers": addr, "group.id": "rs", "group.protocol": "consumer",
			"group.instance.id": instance, "client.id": name, "auto.offset.reset": "earliest"})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Subscribe("stat4", func(_ *kafka.Consumer, e kafka.Event) error {
			switch e := e.(type) {
			case kafka.AssignedPartitions:
				h.set(name, e.Partitions, true)
			case kafka.RevokedPartitions:
				h.set(name, e.Partitions, false)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// Each consumer is polled on its own goroutine until it is stopped.
	var wg sync.WaitGroup
	closed := map[*kafka.Consumer]chan struct{}{}
	run := func(c *kafka.Consumer) chan struct{} {
		quit, done := make(chan struct{}), make(chan struct{})
		closed[c] = done
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			defer c.Close()
			for {
				select {
				case <-quit:
					return
				default:
				}
				if e, ok := c.Poll(100).(kafka.Error); ok {
					t.Errorf("%v", e)
				}
			}
		}()
		return quit
	}
	a := start("a", "inst-a")
	stopA := run(a)
	stopB := run(start("b", "inst-b"))
	defer func() { close(stopB); wg.Wait() }()
	h.waitSplit(t, []string{"a", "b"}, 4)
	h.mu.Lock()
	var heldA []int32
	for p := range h.by["a"] {
		heldA = append(heldA, p)
	}
	h.ever["b"] = map[int32]bool{} // from here on
	h.mu.Unlock()
	epoch := groupEpoch(t, dir, "rs")

	close(stopA) // Close: a static leave, epoch -2
	<-closed[a]
	h.waitSplit(t, []string{"b"}, 4-len(heldA))
	stopA2 := run(start("a2", "inst-a"))
	defer close(stopA2)
	h.waitSplit(t, []string{"a2", "b"}, 4)
	h.mu.Lock()
	for _, p := range heldA {
		if !h.by["a2"][p] {
			t.Errorf("partition %d was a's, the restarted a holds %v", p, h.by["a2"])
		}
		if h.ever["b"][p] {
			t.Errorf("b was given a's partition %d while a was away", p)
		}
	}
	h.mu.Unlock()
	if e := groupEpoch(t, dir, "rs"); e != epoch {
		t.Errorf("group epoch %d after the static member's return, %d before: a rebalance", e, epoch)
	}
}
