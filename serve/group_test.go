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
	if !strings.Contains(out.String(), `"group":"g-range","topic":"multi","partition":0}`) || !strings.Contains(out.String(), `{"version":"3","data":{"offset":59,`) {
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
