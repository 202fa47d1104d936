package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
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

func benchSize() int64 {
	mb := int64(1024)
	if v, err := strconv.ParseInt(os.Getenv("KLOG_SERVE_BENCH_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	return mb << 20
}

// benchLogDir writes the partition: returns the log dir, the record count
// and the bytes written.
func benchLogDir(b *testing.B) (dir string, records, size int64) {
	dir = b.TempDir()
	a, err := produce.Open(filepath.Join(dir, "bench-0"), produce.Options{Sync: produce.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, benchValue)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	recs := make([]format.Record, benchBatch)
	for size < benchSize() {
		for i := range recs {
			recs[i] = format.Record{Key: []byte(strconv.FormatInt(records+int64(i), 10)), Value: value, Timestamp: 1700000000000 + records}
		}
		res, err := a.Append(&produce.Batch{Records: recs, ProducerID: -1})
		if err != nil {
			b.Fatal(err)
		}
		records += benchBatch
		size += res.Size
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	return dir, records, size
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
		cfg := Config{LogDir: dir}
		if p := os.Getenv("KLOG_SERVE_BENCH_LOG"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			cfg.RequestLog = f
		}
		_, addr := startServer(b, cfg)
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
		// The same batches: kgo cuts a batch at this many bytes, which
		// holds the benchBatch records a disk batch holds.
		loadKfake(b, addr, dir, int32(size/(n/benchBatch)))
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			drainKgo(b, addr, n)
		}
	})
}

// loadKfake produces the partition's records into kfake, batch by batch as
// they are on disk (same keys, values, timestamps, batch sizes).
func loadKfake(b *testing.B, addr, dir string, batchBytes int32) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(batchBytes+64), kgo.MaxBufferedRecords(1<<16),
		kgo.ProducerLinger(50*time.Millisecond))
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
