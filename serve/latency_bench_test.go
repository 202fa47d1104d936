package serve

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduceToConsume is produce-to-consume latency (issue 29): a kgo
// producer (acks=all, kgo's default) produces one small record at a time
// with ProduceSync and a kgo consumer long-polling the partition (kgo's
// default fetch.max.wait 5 s, min bytes 1) receives it; each iteration does
// this once through a writable klog serve and once through kfake, in turn.
// It reports for each server the p50 and p99 from the produce call to the
// consumer's PollFetches returning the record, the p50 from ProduceSync's
// return (negative when the consumer had it first: a one-replica high
// watermark moves at the append, before the produce response is written),
// ProduceSync's own p50, and serve/kfake of the p50s:
//
//	go test ./serve -run '^$' -bench ProduceToConsume -benchtime 2000x
func BenchmarkProduceToConsume(b *testing.B) {
	dir := b.TempDir()
	a, err := produce.Open(filepath.Join(dir, "lat-0"), produce.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	_, serveAddr := startServer(b, Config{LogDir: dir, Writable: true})
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "lat"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(kf.Close)

	paths := []*latencyPath{newLatencyPath(b, "serve", serveAddr), newLatencyPath(b, "kfake", kf.ListenAddrs()[0])}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range paths {
			p.once(b, i)
		}
	}
	b.StopTimer()
	for _, p := range paths {
		b.ReportMetric(p.call.quantile(0.5), p.name+"-p50-µs")
		b.ReportMetric(p.call.quantile(0.99), p.name+"-p99-µs")
		b.ReportMetric(p.ack.quantile(0.5), p.name+"-after-ack-p50-µs")
		b.ReportMetric(p.prodLat.quantile(0.5), p.name+"-produce-p50-µs")
	}
	b.ReportMetric(paths[0].call.quantile(0.5)/paths[1].call.quantile(0.5), "p50-serve/kfake")
	b.ReportMetric(paths[0].call.quantile(0.99)/paths[1].call.quantile(0.99), "p99-serve/kfake")
}

type latencies []time.Duration

// quantile is q's latency in µs.
func (l latencies) quantile(q float64) float64 {
	if len(l) == 0 {
		return 0
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(q*float64(len(s)-1))].Nanoseconds()) / 1e3
}

// latencyPath is a producer and a long-polling consumer of topic "lat"
// partition 0 on one server.
type latencyPath struct {
	name               string
	prod               *kgo.Client
	got                chan received
	call, ack, prodLat latencies
}

type received struct {
	key string
	at  time.Time
}

func newLatencyPath(b *testing.B, name, addr string) *latencyPath {
	p := &latencyPath{name: name, got: make(chan received, 16)}
	var err error
	p.prod, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("lat"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.prod.Close)
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"lat": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cons.PollFetches(ctx)
			now := time.Now()
			if ctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				select {
				case p.got <- received{string(r.Key), now}:
				case <-ctx.Done():
				}
			})
		}
	}()
	b.Cleanup(func() {
		cancel()
		<-done
		cons.Close()
	})
	// A first record through both clients: connections made, the consumer
	// polling at the end of the partition.
	p.send(b, "warm")
	return p
}

// send produces one record keyed key and waits for the consumer to have
// it: when the produce call started, when ProduceSync returned, and when
// the consumer received it.
func (p *latencyPath) send(b *testing.B, key string) (start, acked, got time.Time) {
	start = time.Now()
	if err := p.prod.ProduceSync(context.Background(), &kgo.Record{Key: []byte(key), Value: []byte("v")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	acked = time.Now()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case r := <-p.got:
			if r.key == key {
				return start, acked, r.at
			}
		case <-timeout:
			b.Fatalf("%s: record %s never consumed", p.name, key)
		}
	}
}

func (p *latencyPath) once(b *testing.B, i int) {
	start, acked, got := p.send(b, strconv.Itoa(i))
	p.call = append(p.call, got.Sub(start))
	p.ack = append(p.ack, got.Sub(acked))
	p.prodLat = append(p.prodLat, acked.Sub(start))
}
