package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The drain benchmark: one partition of KLOG_SERVE_BENCH_MB MiB (default
// 1024) of 1,000-byte records in 16-record batches, drained
//   - in process by package fetch's consumer (`klog fetch`'s drain),
//   - by a franz-go consumer through klog serve,
//   - by the same franz-go consumer from kfake holding the same records.
// Run all three in one invocation and compare (README "serve"):
//   go test ./serve -run '^$' -bench BenchmarkDrain -benchtime 3x

const (
	benchValue = 1000
	benchBatch = 16
)

var benchOnce struct {
	sync.Once
	dir     string
	records int64
	bytes   int64
	err     error
}

func benchSize() int64 {
	mb := int64(1024)
	if v, err := strconv.ParseInt(os.Getenv("KLOG_SERVE_BENCH_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	return mb << 20
}

// benchLogDir writes the partition once per process (in a temporary
// directory removed by TestMain-less cleanup at exit of the benchmark).
func benchLogDir(b *testing.B) (dir string, records, size int64) {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "klog-serve-bench-")
		if err != nil {
			benchOnce.err = err
			return
		}
		a, err := produce.Open(filepath.Join(dir, "bench-0"), produce.Options{Sync: produce.SyncNever})
		if err != nil {
			benchOnce.err = err
			return
		}
		value := make([]byte, benchValue)
		for i := range value {
			value[i] = byte('a' + i%26)
		}
		recs := make([]format.Record, benchBatch)
		var n int64
		for benchOnce.bytes < benchSize() {
			for i := range recs {
				recs[i] = format.Record{Key: []byte(strconv.FormatInt(n+int64(i), 10)), Value: value, Timestamp: 1700000000000 + n}
			}
			res, err := a.Append(&produce.Batch{Records: recs, ProducerID: -1})
			if err != nil {
				benchOnce.err = err
				return
			}
			n += benchBatch
			benchOnce.bytes += res.Size
		}
		benchOnce.err = a.Close()
		benchOnce.dir, benchOnce.records = dir, n
	})
	if benchOnce.err != nil {
		b.Fatal(benchOnce.err)
	}
	return benchOnce.dir, benchOnce.records, benchOnce.bytes
}

// drainKgo consumes records [0, n) of topic "bench" from addr.
func drainKgo(b *testing.B, addr string, n int64) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"bench": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var got int64
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			b.Fatalf("drained %d of %d records", got, n)
		}
		for _, e := range fs.Errors() {
			b.Fatal(e.Err)
		}
		got += int64(fs.NumRecords())
	}
}

func BenchmarkDrain(b *testing.B) {
	dir, n, size := benchLogDir(b)
	b.Run("fetch-in-process", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			c, err := fetch.NewConsumer(filepath.Join(dir, "bench-0"), fetch.ConsumerConfig{StartOffset: -1, HighWatermark: -1,
				OffsetsFile: filepath.Join(b.TempDir(), "o")})
			if err != nil {
				b.Fatal(err)
			}
			var got int64
			for got < n {
				recs, _, err := c.Poll(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				got += int64(len(recs))
			}
			c.Close()
		}
	})
	b.Run("serve-kgo", func(b *testing.B) {
		_, addr := startServer(b, Config{LogDir: dir})
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			drainKgo(b, addr, n)
		}
	})
	b.Run("kfake-kgo", func(b *testing.B) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "bench"))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		addr := c.ListenAddrs()[0]
		loadKfake(b, addr, dir)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			drainKgo(b, addr, n)
		}
	})
}

// loadKfake produces the partition's records into kfake, batch by batch as
// they are on disk (same keys, values, timestamps, batch sizes).
func loadKfake(b *testing.B, addr, dir string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(1<<16))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	c, err := fetch.NewConsumer(filepath.Join(dir, "bench-0"), fetch.ConsumerConfig{StartOffset: -1, HighWatermark: -1,
		OffsetsFile: filepath.Join(b.TempDir(), "o")})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for c.Lag() > 0 || c.Position() == 0 {
		recs, _, err := c.Poll(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			cl.Produce(ctx, &kgo.Record{Key: append([]byte(nil), r.Key...), Value: append([]byte(nil), r.Value...),
				Timestamp: time.UnixMilli(r.Timestamp)}, func(_ *kgo.Record, err error) {
				if err != nil {
					b.Error(err)
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}
