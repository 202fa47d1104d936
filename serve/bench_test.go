package serve

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// benchPartitionBytes is the consumers' max.partition.fetch.bytes
// (KLOG_SERVE_BENCH_PART_MB; default 1 MiB, the consumer default).
func benchPartitionBytes() int32 {
	if v, err := strconv.ParseInt(os.Getenv("KLOG_SERVE_BENCH_PART_MB"), 10, 32); err == nil && v > 0 {
		return int32(v) << 20
	}
	return fetch.DefaultPartitionMaxBytes
}

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

// batchCounter counts the batches a kgo consumer reads.
type batchCounter struct{ batches, records atomic.Int64 }

func (c *batchCounter) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	c.batches.Add(1)
	c.records.Add(int64(m.NumRecords))
}

// drainKgo consumes records [0, n) of topic "bench" from addr and reports
// the records per batch it saw (the same on disk and in kfake).
func drainKgo(b *testing.B, addr string, n int64) {
	var bc batchCounter
	defer func() {
		if nb := bc.batches.Load(); nb > 0 {
			b.ReportMetric(float64(bc.records.Load())/float64(nb), "recs/batch")
		}
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"bench": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.WithHooks(&bc), kgo.FetchMaxPartitionBytes(benchPartitionBytes()))
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
				OffsetsFile: filepath.Join(b.TempDir(), "o"), PartitionMaxBytes: benchPartitionBytes()})
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
	// The client's ceiling: kgo decoding the same fetch responses with no
	// network and no server (package fetch reads the frames beforehand).
	b.Run("kgo-decode-only", func(b *testing.B) {
		frames := decodeFrames(b, dir, n)
		dec := kgo.DefaultDecompressor()
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			decodeAll(b, frames, dec, n)
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

// BenchmarkDrainAlternating drains the same partition in process, through
// klog serve and from kfake in turn, b.N rounds, and reports each one's
// median MB/s and the ratios of the medians: alternating keeps the
// machine's changing load from favouring whichever ran first. The fourth
// drain, "wire", is the transport alone (wireBaseline): what the round
// trips of this consumer cost with an infinitely fast server; the fifth,
// "decode", is kgo decoding the same responses with no network.
func BenchmarkDrainAlternating(b *testing.B) {
	dir, n, size := benchLogDir(b)
	_, serveAddr := startServer(b, Config{LogDir: dir})
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	kfakeAddr := c.ListenAddrs()[0]
	loadKfake(b, kfakeAddr, dir, int32(size/(n/benchBatch)))
	inProcess := func() {
		cons, err := fetch.NewConsumer(filepath.Join(dir, "bench-0"), fetch.ConsumerConfig{StartOffset: -1, HighWatermark: -1,
			OffsetsFile: filepath.Join(b.TempDir(), "o"), PartitionMaxBytes: benchPartitionBytes()})
		if err != nil {
			b.Fatal(err)
		}
		defer cons.Close()
		for got := int64(0); got < n; {
			recs, _, err := cons.Poll(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			got += int64(len(recs))
		}
	}
	wire := startWireBaseline(b, dir)
	frames, dec := decodeFrames(b, dir, n), kgo.DefaultDecompressor()
	rates := map[string][]float64{}
	run := func(name string, f func()) {
		start := time.Now()
		f()
		rates[name] = append(rates[name], float64(size)/time.Since(start).Seconds()/1e6)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run("fetch", inProcess)
		run("serve", func() { drainKgo(b, serveAddr, n) })
		run("kfake", func() { drainKgo(b, kfakeAddr, n) })
		run("wire", func() { wire.drain(b, size) })
		run("decode", func() { decodeAll(b, frames, dec, n) })
	}
	b.StopTimer()
	med := func(xs []float64) float64 {
		ys := append([]float64(nil), xs...)
		sort.Float64s(ys)
		return ys[len(ys)/2]
	}
	for _, k := range []string{"fetch", "serve", "kfake", "wire", "decode"} {
		b.ReportMetric(med(rates[k]), k+"-MB/s")
	}
	b.ReportMetric(med(rates["serve"])/med(rates["fetch"]), "serve/fetch")
	b.ReportMetric(med(rates["serve"])/med(rates["kfake"]), "serve/kfake")
	b.ReportMetric(med(rates["wire"])/med(rates["kfake"]), "wire/kfake")
}

// wireBaseline is the transport alone, the ceiling of any server for this
// consumer: the same 1 MiB request/response round trips over loopback TCP,
// each response a size prefix and then the next partition-max-bytes of the
// segment by sendfile, read by the client into a fresh buffer as kgo reads
// a response, with no protocol, no lookup and no decoding.
type wireBaseline struct {
	addr string
}

func startWireBaseline(b *testing.B, dir string) *wireBaseline {
	segs, err := filepath.Glob(filepath.Join(dir, "bench-0", "*.log"))
	if err != nil || len(segs) == 0 {
		b.Fatal("no segments", err)
	}
	sort.Strings(segs)
	// starts[i] is the partition byte position where segs[i] begins.
	starts := make([]int64, len(segs)+1)
	for i, p := range segs {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		starts[i+1] = starts[i] + st.Size()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	serve := func(c net.Conn) {
		defer c.Close()
		var req [16]byte
		for {
			if _, err := io.ReadFull(c, req[:]); err != nil {
				return
			}
			pos, n := int64(binary.BigEndian.Uint64(req[:])), int64(binary.BigEndian.Uint64(req[8:]))
			i := sort.Search(len(segs), func(i int) bool { return starts[i+1] > pos })
			if i == len(segs) {
				return
			}
			n = min(n, starts[i+1]-pos)
			f, err := os.Open(segs[i])
			if err != nil {
				return
			}
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(n))
			_, err1 := f.Seek(pos-starts[i], io.SeekStart)
			_, err2 := c.Write(hdr[:])
			_, err3 := c.(*net.TCPConn).ReadFrom(&io.LimitedReader{R: f, N: n})
			f.Close()
			if err1 != nil || err2 != nil || err3 != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return &wireBaseline{addr: ln.Addr().String()}
}

// drain asks for [0, size) in partition-max-bytes responses, one at a time.
func (w *wireBaseline) drain(b *testing.B, size int64) {
	c, err := net.Dial("tcp", w.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	part := int64(benchPartitionBytes())
	var req [16]byte
	var hdr [4]byte
	for pos := int64(0); pos < size; {
		binary.BigEndian.PutUint64(req[:], uint64(pos))
		binary.BigEndian.PutUint64(req[8:], uint64(part))
		if _, err := c.Write(req[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		pos += int64(len(buf))
	}
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

// BenchmarkFetchLocate is the server's work per fetch before the send:
// locating 1 MiB of the partition from a fetch offset (translate through the
// offset index, the KIP-74 limit), as consecutive fetches of a draining
// consumer ask. SetBytes is the bytes each read locates.
func BenchmarkFetchLocate(b *testing.B) {
	dir, n, _ := benchLogDir(b)
	s, _ := startServer(b, Config{LogDir: dir})
	sp := s.lookup("bench", 0)
	req := fetch.Request{HighWatermark: -1, PartitionMaxBytes: fetch.DefaultPartitionMaxBytes, MaxBytes: fetch.DefaultMaxBytes, Locate: true}
	b.SetBytes(int64(fetch.DefaultPartitionMaxBytes))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := sp.read(req)
		if err != nil {
			b.Fatal(err)
		}
		if f.Size == 0 {
			b.Fatalf("nothing at offset %d", req.FetchOffset)
		}
		// The next fetch starts inside the batch the range ends in, as
		// the consumer's next fetch offset does.
		req.FetchOffset += f.Size / (benchValue + 70)
		if req.FetchOffset >= n {
			req.FetchOffset = 0
		}
	}
}

// decodeFrames reads the fetch responses' record bytes beforehand (package
// fetch, partition max bytes as the consumers ask): kgo's decoding of them
// with no network and no server is the client's ceiling.
func decodeFrames(b *testing.B, dir string, n int64) []kmsg.FetchResponseTopicPartition {
	l, err := fetch.Open(filepath.Join(dir, "bench-0"))
	if err != nil {
		b.Fatal(err)
	}
	var frames []kmsg.FetchResponseTopicPartition
	for off := int64(0); off < n; {
		f, err := l.Read(fetch.Request{FetchOffset: off, HighWatermark: -1, PartitionMaxBytes: benchPartitionBytes()})
		if err != nil {
			b.Fatal(err)
		}
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.HighWatermark, rp.LastStableOffset, rp.RecordBatches = f.HighWatermark, f.LastStableOffset, append([]byte(nil), f.Frame...)
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: off, Topic: "bench"}, &rp, kgo.DefaultDecompressor(), nil)
		if len(fp.Records) == 0 {
			b.Fatalf("no records at %d", off)
		}
		frames = append(frames, rp)
		off = next
	}
	return frames
}

// decodeAll decodes every frame as kgo decodes a fetch response.
func decodeAll(b *testing.B, frames []kmsg.FetchResponseTopicPartition, dec kgo.Decompressor, n int64) {
	var got int64
	off := int64(0)
	for j := range frames {
		fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: off, Topic: "bench"}, &frames[j], dec, nil)
		got += int64(len(fp.Records))
		off = next
	}
	if got != n {
		b.Fatalf("decoded %d records of %d", got, n)
	}
}
