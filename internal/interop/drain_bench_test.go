package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/serve"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The librdkafka drain benchmark (issue 29): one partition of
// KLOG_INTEROP_BENCH_MB MiB (default 256) of 1,000-byte records in
// 16-record batches, drained by a confluent-kafka-go (librdkafka 2.11)
// consumer at its default settings from `klog serve` and from franz-go's
// kfake holding the same records, alternating, b.N rounds:
//
//	cd internal/interop && go test -run '^$' -bench LibrdkafkaDrain -benchtime 5x
//
// It reports each server's median MB/s from creating the consumer to its
// Close and serve/kfake, and data-serve/kfake: the same from the first
// message to the last (without librdkafka's start, about 500 ms before its
// ListOffsets, and its Close, which waits for the Fetch parked at the high
// watermark: up to fetch.wait.max.ms). With
// KLOG_INTEROP_REQLOG=FILE serve's request log of the last serve drain is
// written to FILE, each line prefixed by the nanoseconds (since the drain's
// start) at which serve finished the request, and the benchmark logs where
// the drain's time went: the Fetch count, the time serve held them, and the
// gaps between a response and the next Fetch (the client's time).

const (
	drainValue = 1000
	drainBatch = 16
)

func drainBenchSize() int64 {
	mb := int64(256)
	if v, err := strconv.ParseInt(os.Getenv("KLOG_INTEROP_BENCH_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	return mb << 20
}

// drainRecords calls fn for each batch of the benchmark's partition, the
// same records for both servers: until fn's sizes add up to size, or n
// records when n > 0.
func drainRecords(size, n int64, fn func(recs []format.Record) int64) (records int64) {
	value := make([]byte, drainValue)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	recs := make([]format.Record, drainBatch)
	for written := int64(0); n > 0 && records < n || n <= 0 && written < size; {
		for i := range recs {
			recs[i] = format.Record{Key: []byte(strconv.FormatInt(records+int64(i), 10)), Value: value, Timestamp: 1700000000000 + records}
		}
		written += fn(recs)
		records += drainBatch
	}
	return records
}

// timedLog is a request log that stamps each line with when it was written.
type timedLog struct {
	mu    sync.Mutex
	start time.Time
	lines [][]byte
	at    []time.Duration
}

func (l *timedLog) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	l.lines = append(l.lines, append([]byte(nil), p...))
	l.at = append(l.at, now.Sub(l.start))
	l.mu.Unlock()
	return len(p), nil
}

func (l *timedLog) reset() {
	l.mu.Lock()
	l.start, l.lines, l.at = time.Now(), nil, nil
	l.mu.Unlock()
}

// summary says where a drain's time went by serve's request log: per API
// the requests and the time serve held them, and for Fetch the gaps from a
// response to the next Fetch's arrival on the same connection.
func (l *timedLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	type api struct {
		n  int
		ms float64
	}
	apis := map[string]*api{}
	lastEnd := map[string]time.Duration{}
	var gaps []time.Duration
	var fetchBytes int64
	for i, line := range l.lines {
		var r struct {
			APIName     string  `json:"apiName"`
			Connection  string  `json:"connection"`
			TotalTimeMs float64 `json:"totalTimeMs"`
			Bytes       int64   `json:"responseBytes"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		a := apis[r.APIName]
		if a == nil {
			a = new(api)
			apis[r.APIName] = a
		}
		a.n++
		a.ms += r.TotalTimeMs
		if r.APIName != "Fetch" {
			continue
		}
		fetchBytes += r.Bytes
		start := l.at[i] - time.Duration(r.TotalTimeMs*float64(time.Millisecond))
		if e, ok := lastEnd[r.Connection]; ok {
			gaps = append(gaps, start-e)
		}
		lastEnd[r.Connection] = l.at[i]
	}
	var b bytes.Buffer
	names := make([]string, 0, len(apis))
	for k := range apis {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s: %d requests, %.1f ms held; ", k, apis[k].n, apis[k].ms)
	}
	if len(gaps) > 0 {
		sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
		var sum time.Duration
		for _, g := range gaps {
			sum += g
		}
		fmt.Fprintf(&b, "Fetch responses %d bytes on average; gaps response→next Fetch: sum %v, p50 %v, p90 %v, max %v",
			fetchBytes/int64(len(gaps)+1), sum.Round(time.Millisecond), gaps[len(gaps)/2], gaps[len(gaps)*9/10], gaps[len(gaps)-1])
	}
	return b.String()
}

func (l *timedLog) writeFile(path string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b bytes.Buffer
	for i, line := range l.lines {
		fmt.Fprintf(&b, "%d %s", l.at[i].Nanoseconds(), line)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func BenchmarkLibrdkafkaDrain(b *testing.B) {
	dir := b.TempDir()
	a, err := produce.Open(filepath.Join(dir, "bench-0"), produce.Options{Sync: produce.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	n := drainRecords(drainBenchSize(), 0, func(recs []format.Record) int64 {
		res, err := a.Append(&produce.Batch{Records: recs})
		if err != nil {
			b.Fatal(err)
		}
		size += res.Size
		return res.Size
	})
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}

	log := &timedLog{start: time.Now()}
	addr := startDrainServe(b, dir, serve.Config{RequestLog: log})
	kf := startDrainKfake(b, size, n)
	// The bound of any server for this client: the same drain answered
	// from memory with serve's own responses (klogtest.IdealServer), warmed
	// by one drain first.
	ideal := klogtest.ListenIdealServer(b)
	ideal.Serve(startDrainServe(b, dir, serve.Config{AdvertisedHost: ideal.Host, AdvertisedPort: ideal.Port}))
	drainLibrdkafka(b, ideal.Addr, n)
	if ideal.Fetches.Load() == 0 {
		b.Fatal("no Fetch reached the ideal server: the client went around it")
	}
	ideal.Misses.Store(0)

	times := map[string][]float64{}
	var summary string
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, sv := range []struct{ name, addr string }{{"serve", addr}, {"kfake", kf}, {"ideal", ideal.Addr}} {
			if sv.name == "serve" {
				log.reset()
			}
			t0 := time.Now()
			first, last := drainLibrdkafka(b, sv.addr, n)
			if os.Getenv("KLOG_INTEROP_PHASES") != "" {
				b.Logf("%s: first message %v, last %v, closed %v", sv.name, first.Sub(t0).Round(time.Millisecond),
					last.Sub(t0).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
			}
			times[sv.name] = append(times[sv.name], float64(size)/time.Since(t0).Seconds()/1e6)
			times[sv.name+"-data"] = append(times[sv.name+"-data"], float64(size)/last.Sub(first).Seconds()/1e6)
			if sv.name == "serve" {
				summary = log.summary()
				if p := os.Getenv("KLOG_INTEROP_REQLOG"); p != "" && i == b.N-1 {
					if err := log.writeFile(p); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	b.StopTimer()
	med := func(k string) float64 {
		v := append([]float64(nil), times[k]...)
		sort.Float64s(v)
		return v[len(v)/2]
	}
	b.ReportMetric(med("serve"), "serve-MB/s")
	b.ReportMetric(med("kfake"), "kfake-MB/s")
	b.ReportMetric(med("serve")/med("kfake"), "serve/kfake")
	b.ReportMetric(med("serve-data")/med("kfake-data"), "data-serve/kfake")
	b.ReportMetric(med("ideal"), "ideal-MB/s")
	b.ReportMetric(med("ideal")/med("kfake"), "ideal/kfake")
	b.ReportMetric(med("serve")/med("ideal"), "serve/ideal")
	// Fetches the ideal server passed on after its warm-up (librdkafka
	// asking at other offsets than in the warm-up drain): 0 is a pure
	// bound, a few make it a slightly slower one.
	b.ReportMetric(float64(ideal.Misses.Load())/float64(b.N), "ideal-misses/drain")
	b.Logf("last serve drain (%.0f ms): %s", float64(size)/med("serve")/1e3, summary)
}

// startDrainServe serves dir with cfg until b ends and returns the address.
func startDrainServe(b *testing.B, dir string, cfg serve.Config) string {
	cfg.LogDir, cfg.StateDir = dir, b.TempDir()
	return startServe(b, cfg)
}

// startDrainKfake produces the benchmark's records into a one-broker kfake
// cluster with kgo, batches cut at the size of the disk's batches.
func startDrainKfake(b *testing.B, size, n int64) string {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	batchBytes := int32(size/(n/drainBatch)) + 64
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(batchBytes), kgo.MaxBufferedRecords(1<<16),
		kgo.ProducerLinger(50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	drainRecords(size, n, func(recs []format.Record) int64 {
		for _, r := range recs {
			cl.Produce(ctx, &kgo.Record{Key: append([]byte(nil), r.Key...), Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)},
				func(_ *kgo.Record, err error) {
					if err != nil {
						b.Error(err)
					}
				})
		}
		return int64(batchBytes)
	})
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	return addr
}

// drainLibrdkafka consumes records [0, n) of "bench" partition 0 from addr
// with librdkafka's default fetch settings (KLOG_INTEROP_RDDEBUG sets its
// debug contexts, e.g. "fetch,protocol"; KLOG_INTEROP_RDCONF more settings,
// "k=v,k=v", e.g. fetch.queue.backoff.ms=10). It returns when the first
// message arrived.
func drainLibrdkafka(b *testing.B, addr string, n int64) (first, last time.Time) {
	cfg := &kafka.ConfigMap{"bootstrap.servers": addr, "group.id": "drain", "enable.auto.commit": false,
		"go.logs.channel.enable": false}
	if d := os.Getenv("KLOG_INTEROP_RDDEBUG"); d != "" {
		cfg.SetKey("debug", d)
	}
	if kv := os.Getenv("KLOG_INTEROP_RDCONF"); kv != "" {
		if err := cfg.Set(kv); err != nil {
			for _, f := range strings.Split(kv, ",") {
				if err := cfg.Set(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	c, err := kafka.NewConsumer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	topic := "bench"
	if err := c.Assign([]kafka.TopicPartition{{Topic: &topic, Partition: 0, Offset: kafka.OffsetBeginning}}); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for got := int64(0); got < n; {
		if time.Now().After(deadline) {
			b.Fatalf("drained %d of %d records", got, n)
		}
		switch e := c.Poll(100).(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				b.Fatal(e.TopicPartition.Error)
			}
			if got == 0 {
				first = time.Now()
			}
			got++
			if got == n {
				last = time.Now()
			}
		case kafka.Error:
			b.Fatal(e)
		}
	}
	return first, last
}
