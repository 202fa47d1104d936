package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/ndjson"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Fixtures: Kafka-written partitions from ../testdata/segments (see its
// FIXTURES-README.md for provenance), copied into a log dir as topics.
var fixtureTopics = map[string]string{
	"none-0":     "kafka-written/v2-none",
	"gzip-0":     "kafka-written/v2-gzip",
	"snappy-0":   "kafka-written/v2-snappy",
	"lz4-0":      "kafka-written/v2-lz4",
	"zstd-0":     "kafka-written/v2-zstd",
	"txn-0":      "kafka-written/v2-transactions",
	"producer-0": "kafka-written/unifiedlog-producer/topic-0",
	"legacy-0":   "kafka-written/unifiedlog-v1/topic-0",
	"multi-0":    "kafka-written/v2-none",
	"multi-1":    "kafka-written/v2-gzip",
	"multi-2":    "kafka-written/v2-lz4",
}

// fixtureLogDir builds a log dir holding the named fixture topics.
func fixtureLogDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	if len(names) == 0 {
		for n := range fixtureTopics {
			names = append(names, n)
		}
	}
	for _, n := range names {
		klogtest.CopyPartition(t, filepath.Join("..", "testdata", "segments", fixtureTopics[n]), filepath.Join(dir, n))
	}
	return dir
}

// hashTree hashes every file's path, mode and bytes under dir.
func hashTree(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		io.WriteString(h, rel+"\x00"+info.Mode().String()+"\x00")
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// startServer serves cfg on 127.0.0.1:0 and returns the address.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if !cfg.Writable && cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("serve: %v, want ErrServerClosed", err)
		}
	})
	return s, ln.Addr().String()
}

// rec is a record as compared across readers.
type rec struct {
	Offset    int64
	Timestamp int64
	Key       string // hex; "null" for a null key
	Value     string // hex; "null" for a null value
	Headers   int
}

// dumpRecords reads a partition's records with `klog dump --json
// --deep-iteration --print-data-log` (hex keys and values), leaving out
// control batches.
func dumpRecords(t testing.TB, partDir string) []rec {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(partDir, "*.log"))
	sort.Strings(logs)
	var out bytes.Buffer
	var errb bytes.Buffer
	if _, err := dump.Run(logs, dump.Options{JSON: true, Deep: true, PrintData: true, MaxBytes: -1,
		KeyEncoding: ndjson.EncodingHex, ValueEncoding: ndjson.EncodingHex}, &out, &errb); err != nil {
		t.Fatalf("dump: %v %s", err, errb.String())
	}
	var recs []rec
	control := false
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		switch m["type"] {
		case "batch":
			control, _ = m["isControl"].(bool)
		case "record":
			if control {
				continue
			}
			r := rec{Offset: int64(m["offset"].(float64)), Timestamp: int64(m["timestamp"].(float64))}
			if k, ok := m["key"].(string); ok {
				r.Key = k
			} else {
				r.Key = "null"
			}
			if v, ok := m["value"].(string); ok {
				r.Value = v
			} else {
				r.Value = "null"
			}
			if h, ok := m["headers"].([]any); ok {
				r.Headers = len(h)
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// fetchRecords reads a partition with package fetch's consumer (the
// records `klog fetch` prints) at an isolation level.
func fetchRecords(t testing.TB, partDir string, iso fetch.Isolation) []rec {
	t.Helper()
	c, err := fetch.NewConsumer(partDir, fetch.ConsumerConfig{Isolation: iso, MaxBytes: fetch.DefaultMaxBytes,
		PartitionMaxBytes: fetch.DefaultPartitionMaxBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []rec
	for r, err := range c.Records(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fromParts(r.Offset, r.Timestamp, r.Key, r.Value, len(r.Headers)))
	}
	return out
}

func fromParts(off, ts int64, k, v []byte, h int) rec {
	r := rec{Offset: off, Timestamp: ts, Key: hex.EncodeToString(k), Value: hex.EncodeToString(v), Headers: h}
	if v == nil {
		r.Value = "null"
	}
	if k == nil {
		r.Key = "null"
	}
	return r
}

func fromKgo(r *kgo.Record) rec {
	return fromParts(r.Offset, r.Timestamp.UnixMilli(), r.Key, r.Value, len(r.Headers))
}

// consumeKgo reads a topic partition from the start with a kgo partition
// consumer until want records arrived (or the high watermark is reached
// with none expected).
func consumeKgo(t testing.TB, addr, topic string, part int32, iso kgo.IsolationLevel, want int, opts ...kgo.Opt) []rec {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.FetchIsolationLevel(iso),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []rec
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: got %d records of %d before timeout", topic, len(out), want)
		}
		for _, e := range fs.Errors() {
			t.Fatalf("%s: fetch error: %v", topic, e.Err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, fromKgo(r)) })
	}
	return out
}

func sameRecs(t testing.TB, what string, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			t.Errorf("%s: record %d = %+v, want %+v", what, i, got[i], want[i])
			return
		}
	}
}

// rawBatch is a one-record v2 batch as a client would send it (base
// offset 0); pid < 0 makes it non-idempotent.
func rawBatch(t testing.TB, seq int32, pidEpoch ...int64) []byte {
	t.Helper()
	h := &format.Batch{Magic: format.MagicV2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}
	if len(pidEpoch) == 2 {
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = pidEpoch[0], int16(pidEpoch[1]), seq
	}
	recs := []format.Record{{Key: []byte("k"), Value: []byte("v"), Timestamp: 1700000000000}}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	b, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeClock is a Clock that moves only when a test advances it. Advance
// fires the due timers in time order, each at its own instant, and after
// each one waits for the server to have done what the timer handed it
// (settle), so timers a firing schedules inside the window fire too.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	settle func()
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMilli(1_800_000_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Advance moves the clock by d, firing what falls due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.stopped && !t.at.After(target) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			break
		}
		next.stopped = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
		if c.settle != nil {
			c.settle()
		}
		c.mu.Lock()
	}
	c.now = target
	live := c.timers[:0]
	for _, t := range c.timers {
		if !t.stopped {
			live = append(live, t)
		}
	}
	c.timers = live
	c.mu.Unlock()
}

// groupEvent is a coordinator hook's report.
type groupEvent struct {
	what          string // "parked", "released"
	key           int16
	group, member string
}

// startGroupServer serves dir on a fake clock and reports the
// coordinator's parks and releases on the returned channel.
func startGroupServer(t testing.TB, cfg Config) (*Server, string, *fakeClock, <-chan groupEvent) {
	t.Helper()
	clock := newFakeClock()
	events := make(chan groupEvent, 64)
	cfg.Clock = clock
	cfg.hooks = hooks{
		parked:   func(key int16, g, m string) { events <- groupEvent{"parked", key, g, m} },
		released: func(key int16, g, m string) { events <- groupEvent{"released", key, g, m} },
		// waitTxnState's wake-up (capacity 1: a pending signal stays).
		txnChanged: make(chan struct{}, 1),
	}
	s, addr := startServer(t, cfg)
	clock.settle = func() { s.groups.do(func() {}) }
	return s, addr, clock, events
}

// drainEvents forgets the reports so far: those of requests already
// answered (a hook runs on the loop before the answer it precedes).
func drainEvents(events <-chan groupEvent) {
	for {
		select {
		case <-events:
		default:
			return
		}
	}
}

// waitEvent waits for the coordinator to report what (for key), skipping
// other reports.
func waitEvent(t testing.TB, events <-chan groupEvent, what string, key int16) groupEvent {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			if e.what == what && e.key == key {
				return e
			}
		case <-timeout:
			t.Fatalf("the coordinator never reported %s for key %d", what, key)
		}
	}
}
