package replicate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

func newCluster(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Topic == "" {
		cfg.Topic = "orders"
	}
	if len(cfg.Brokers) == 0 {
		cfg.Brokers = []int32{1, 2, 3}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func rows(ms []Moment) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Label + " | " + itoa(m.LeaderLEO) + " | " + strings.Join(m.Followers, " | ") + " | " + itoa(m.HW) + " | " + m.Visible + "\n")
	}
	return b.String()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestReferenceTable reproduces the four moments of the reference text:
// record 7 appended; A's fetch returns it; A asks for 8 and B for 7; B asks
// for 8 and the high watermark reaches 8.
func TestReferenceTable(t *testing.T) {
	c := newCluster(t, Config{})
	if err := c.Preload(7); err != nil {
		t.Fatal(err)
	}
	call := c.Produce([][]byte{[]byte("record-7")}, AcksAll)
	for i := 0; i < 3; i++ {
		if err := c.Step(); err != nil {
			t.Fatal(err)
		}
		if call.Done && i < 2 {
			t.Fatalf("acks=all answered at step %d, before the HW passed the record", i+1)
		}
	}
	want := "Record 7 appended on the leader | 8 | 7 | 7 | 7 | offsets 0 to 6\n" +
		"A's fetch for offset 7 returns record 7 | 8 | 7 (writing it) | 7 | 7 | offsets 0 to 6\n" +
		"A asks for offset 8, B asks for offset 7 | 8 | 8 | 7 | 7 | offsets 0 to 6\n" +
		"B asks for offset 8 | 8 | 8 | 8 | 8 | offsets 0 to 7\n"
	if got := rows(c.Moments()); got != want {
		t.Errorf("moments:\n%s\nwant:\n%s", got, want)
	}
	if !call.Done || call.Err != nil || call.BaseOffset != 7 {
		t.Errorf("acks=all call %+v", call)
	}
	checkReplicas(t, c)
}

func checkReplicas(t *testing.T, c *Cluster) {
	t.Helper()
	hw := c.HighWatermark()
	leader, _ := os.ReadFile(filepath.Join(c.Leader().Dir, "00000000000000000000.log"))
	for _, b := range c.Brokers() {
		rep, err := verifytest.Run(context.Background(), []string{filepath.Dir(b.Dir)}, verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Findings() != 0 {
			for _, f := range rep.Files {
				if !f.OK {
					t.Errorf("broker %d: %s: %+v", b.ID, f.Path, f.Problems)
				}
			}
		}
		if b == c.Leader() || b.app == nil {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(b.Dir, "00000000000000000000.log"))
		n := prefixUpTo(t, leader, hw)
		if len(data) < n || !bytes.Equal(data[:n], leader[:n]) {
			t.Errorf("broker %d: segment differs from the leader's below the HW %d", b.ID, hw)
		}
	}
}

// prefixUpTo is the byte length of the batches below offset hw.
func prefixUpTo(t *testing.T, seg []byte, hw int64) int {
	p := 0
	for p+61 <= len(seg) {
		base := int64(0)
		for _, x := range seg[p : p+8] {
			base = base<<8 | int64(x)
		}
		if base >= hw {
			break
		}
		n := 12 + int(uint32(seg[p+8])<<24|uint32(seg[p+9])<<16|uint32(seg[p+10])<<8|uint32(seg[p+11]))
		p += n
	}
	return p
}

func TestAcks(t *testing.T) {
	c := newCluster(t, Config{MinInsyncReplicas: 2})
	c0 := c.Produce([][]byte{[]byte("zero")}, AcksNone)
	if c0.Done {
		t.Errorf("acks=0 got a response")
	}
	var last RPC
	for _, r := range c.RPCs() {
		if r.APIKeyName == "PRODUCE" {
			last = r
		}
	}
	if last.Response != "" {
		t.Errorf("acks=0 request-log response %v, want \"\"", last.Response)
	}
	c1 := c.Produce([][]byte{[]byte("one")}, AcksLeader)
	if !c1.Done || c.HighWatermark() > c1.LastOffset {
		t.Errorf("acks=1 should be answered at once, before the HW moves (HW %d)", c.HighWatermark())
	}
	call := c.Produce([][]byte{[]byte("all")}, AcksAll)
	steps := 0
	for !call.Done && steps < 10 {
		c.Step()
		steps++
		if call.Done && c.HighWatermark() <= call.LastOffset {
			t.Errorf("acks=all answered before the HW passed it")
		}
	}
	if !call.Done || call.Err != nil {
		t.Fatalf("acks=all never answered: %+v", call)
	}
	// Stop both followers: after replica.lag.time.max the ISR shrinks to the
	// leader and acks=all fails with NOT_ENOUGH_REPLICAS.
	c.Stop(2)
	c.Stop(3)
	for i := 0; i < int(30*time.Second/(10*time.Millisecond))+2; i++ {
		c.Step()
	}
	if isr := c.ISR(); len(isr) != 1 {
		t.Fatalf("ISR %v after the followers stopped", isr)
	}
	bad := c.Produce([][]byte{[]byte("x")}, AcksAll)
	if !errors.Is(bad.Err, ErrNotEnoughReplicas) {
		t.Errorf("want NOT_ENOUGH_REPLICAS, got %v", bad.Err)
	}
	// Restarted followers catch up and rejoin the ISR.
	c.Restart(2)
	c.Restart(3)
	for i := 0; i < 5; i++ {
		c.Step()
	}
	if isr := c.ISR(); len(isr) != 3 {
		t.Errorf("ISR %v after the followers came back", isr)
	}
	checkReplicas(t, c)
}

// TestSlowFollower: broker 3 fetches only every 50 ticks; the consumer's
// position stalls at the high watermark while the leader appends, then
// takes the held records in one burst when broker 3 catches up.
func TestSlowFollower(t *testing.T) {
	c := newCluster(t, Config{FollowerDelay: map[int32]time.Duration{3: 500 * time.Millisecond}})
	if err := c.Preload(7); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ { // let broker 3 reach its first slow turn
		c.Step()
	}
	cons, err := fetch.NewConsumer(c.Leader().Dir, fetch.ConsumerConfig{MaxBytes: fetch.DefaultMaxBytes, PartitionMaxBytes: fetch.DefaultPartitionMaxBytes})
	if err != nil {
		t.Fatal(err)
	}
	var positions []int64
	var bursts []int
	for i := 0; i < 110; i++ {
		if i < 20 {
			c.Produce([][]byte{[]byte("r")}, AcksLeader)
		}
		c.Step()
		recs, err := c.Consume(cons)
		if err != nil {
			t.Fatal(err)
		}
		positions = append(positions, cons.Position())
		bursts = append(bursts, len(recs))
	}
	maxBurst := 0
	stalled := 0
	for i, n := range bursts {
		maxBurst = max(maxBurst, n)
		if i > 0 && positions[i] == positions[i-1] && i < 20 {
			stalled++
		}
	}
	if stalled < 10 || maxBurst < 10 {
		t.Errorf("want the consumer to stall then take a burst: positions %v bursts %v", positions, bursts)
	}
	if cons.Position() != 27 {
		t.Errorf("consumer ends at %d, want 27", cons.Position())
	}
	checkReplicas(t, c)
}

// TestLeaderCrash: an acks=all record survives the leader's crash; an acks=1
// record appended after the HW, held only by the old leader, is lost.
func TestLeaderCrash(t *testing.T) {
	c := newCluster(t, Config{})
	c.Preload(3)
	all := c.Produce([][]byte{[]byte("acked-by-all")}, AcksAll)
	for i := 0; i < 3 && !all.Done; i++ {
		c.Step()
	}
	if !all.Done {
		t.Fatal("acks=all not answered")
	}
	one := c.Produce([][]byte{[]byte("acked-by-leader")}, AcksLeader)
	if !one.Done {
		t.Fatal("acks=1 not answered")
	}
	old := c.Leader().ID
	next, err := c.CrashLeader()
	if err != nil {
		t.Fatal(err)
	}
	if next.LEO() != all.LastOffset+1 {
		t.Errorf("new leader LEO %d, want %d: it must hold the acks=all record and not the acks=1 one", next.LEO(), all.LastOffset+1)
	}
	// New records go to the new leader; the old one comes back and
	// truncates its diverging acks=1 record.
	c.Produce([][]byte{[]byte("after-election")}, AcksLeader)
	if err := c.Restart(old); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		c.Step()
	}
	l, err := partition.OpenLog(c.Broker(old).Dir, partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(c.HighWatermark())
	cons, _ := fetch.NewLogConsumer(l, fetch.ConsumerConfig{MaxBytes: fetch.DefaultMaxBytes, PartitionMaxBytes: fetch.DefaultPartitionMaxBytes})
	var values []string
	for r, err := range cons.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, string(r.Value))
	}
	got := strings.Join(values, ",")
	if !strings.Contains(got, "acked-by-all") || strings.Contains(got, "acked-by-leader") || !strings.Contains(got, "after-election") {
		t.Errorf("old leader's log after rejoining: %s", got)
	}
	checkReplicas(t, c)
}

// TestReplicasShareTopicID: every replica's partition.metadata records the
// same topic id, as a cluster's brokers do; a second run over the same
// directories keeps it, and a given id that contradicts it is refused.
func TestReplicasShareTopicID(t *testing.T) {
	dir := t.TempDir()
	read := func() [16]byte {
		t.Helper()
		var first [16]byte
		for i, id := range []int32{1, 2, 3} {
			tid, ok, err := partition.ReadTopicID(filepath.Join(dir, "broker-"+itoa(int64(id)), "orders-0"))
			if err != nil || !ok || tid == ([16]byte{}) {
				t.Fatalf("broker %d: %x, %v, %v", id, tid, ok, err)
			}
			if i == 0 {
				first = tid
			} else if tid != first {
				t.Fatalf("broker %d records %x, broker 1 %x", id, tid, first)
			}
		}
		return first
	}
	c := newCluster(t, Config{Dir: dir})
	c.Close()
	id := read()
	c = newCluster(t, Config{Dir: dir})
	c.Close()
	if again := read(); again != id {
		t.Fatalf("second run: %x, first %x", again, id)
	}
	var me *partition.TopicIDMismatchError
	if _, err := New(Config{Dir: dir, Topic: "orders", Brokers: []int32{1, 2, 3}, TopicID: [16]byte{1}}); !errors.As(err, &me) {
		t.Fatalf("contradicting TopicID: %v", err)
	}
}
