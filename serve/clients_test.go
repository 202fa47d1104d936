package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/klog-dev/klog/partition"
	kafkago "github.com/segmentio/kafka-go"
)

// TestKafkaGoReaderGroup: a kafka-go Reader with a GroupID (FindCoordinator
// v0 before ApiVersions, JoinGroup v2, SyncGroup v0, OffsetFetch v1,
// OffsetCommit v2 whatever is advertised) reads exactly the records
// `klog dump` shows.
func TestKafkaGoReaderGroup(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	_, addr := startServer(t, Config{LogDir: dir})
	want := dumpRecords(t, filepath.Join(dir, "none-0"))
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, GroupID: "kg", Topic: "none",
		MaxWait: 200 * time.Millisecond, StartOffset: kafkago.FirstOffset, CommitInterval: 0})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []rec
	for len(got) < len(want) {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		got = append(got, fromParts(m.Offset, m.Time.UnixMilli(), m.Key, m.Value, len(m.Headers)))
		if err := r.CommitMessages(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// kafka-go hands an empty value as nil: it cannot tell an empty value
	// from a null one, so compare with that distinction dropped.
	sameRecs(t, "kafka-go reader", emptyAsNull(got), emptyAsNull(want))
}

func emptyAsNull(rs []rec) []rec {
	out := append([]rec(nil), rs...)
	for i := range out {
		if out[i].Value == "" {
			out[i].Value = "null"
		}
		if out[i].Key == "" {
			out[i].Key = "null"
		}
	}
	return out
}

// TestKafkaGoWriter: kafka-go's Writer (Produce v8; acks none by default,
// and all) appends what it sent.
func TestKafkaGoWriter(t *testing.T) {
	dir := t.TempDir()
	for _, topic := range []string{"kg-none-0", "kg-all-0"} {
		os.MkdirAll(filepath.Join(dir, topic), 0o755)
	}
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	for _, c := range []struct {
		topic string
		acks  kafkago.RequiredAcks
	}{{"kg-none", kafkago.RequireNone}, {"kg-all", kafkago.RequireAll}} {
		w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: c.topic, RequiredAcks: c.acks, BatchTimeout: 5 * time.Millisecond}
		var msgs []kafkago.Message
		for i := 0; i < 50; i++ {
			msgs = append(msgs, kafkago.Message{Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i)),
				Time: time.UnixMilli(1700000000000 + int64(i))})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			t.Fatalf("%s: %v", c.topic, err)
		}
		cancel()
		w.Close()
		waitHW(t, s, c.topic, 50)
		got := dumpRecords(t, filepath.Join(dir, c.topic+"-0"))
		if len(got) != 50 {
			t.Fatalf("%s: %d records", c.topic, len(got))
		}
		for i, r := range got {
			if want := fromParts(int64(i), 1700000000000+int64(i), []byte("k"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)), 0); r != want {
				t.Fatalf("%s: record %d = %+v, want %+v", c.topic, i, r, want)
			}
		}
	}
	verifyClean(t, dir)
}

// waitHW waits until a writable partition's high watermark reaches n
// (acks=0 producers do not wait for the append), woken by the partition
// model's waiter at each append.
func waitHW(t testing.TB, s *Server, topic string, n int64) {
	t.Helper()
	l := s.lookup(topic, 0).log
	w := partition.NewWaiter()
	defer w.Stop()
	w.Add(l)
	timeout := time.After(30 * time.Second)
	for l.HighWatermark() < n {
		select {
		case <-w.C():
		case <-timeout:
			t.Fatalf("%s: high watermark %d never reached %d", topic, l.HighWatermark(), n)
		}
	}
}

// saramaHandler collects records.
type saramaHandler struct {
	mu   sync.Mutex
	recs []rec
	want int
	done chan struct{}
	once sync.Once
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		h.recs = append(h.recs, fromParts(m.Offset, m.Timestamp.UnixMilli(), m.Key, m.Value, len(m.Headers)))
		n := len(h.recs)
		h.mu.Unlock()
		sess.MarkMessage(m, "")
		if n >= h.want {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

// TestSaramaGroup: IBM/sarama's consumer group reads exactly the records
// `klog dump` shows.
func TestSaramaGroup(t *testing.T) {
	dir := fixtureLogDir(t, "gzip-0")
	_, addr := startServer(t, Config{LogDir: dir})
	want := dumpRecords(t, filepath.Join(dir, "gzip-0"))
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = 200 * time.Millisecond
	g, err := sarama.NewConsumerGroup([]string{addr}, "sg", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := &saramaHandler{want: len(want), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{"gzip"}, h); err != nil && ctx.Err() == nil {
				t.Errorf("consume: %v", err)
				return
			}
		}
	}()
	select {
	case <-h.done:
	case <-ctx.Done():
		t.Fatalf("sarama: %d of %d records before timeout", len(h.recs), len(want))
	}
	cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	sameRecs(t, "sarama group", h.recs, want)
}
