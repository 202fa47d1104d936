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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/partition"
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
//   go test ./serve -run '^$' -bench BenchmarkDrainAlternating -benchtime 5x

const (
	benchValue = 1000
	benchBatch = 16
)

// benchPartitionSizes are the consumers' max.partition.fetch.bytes the
// drains run with (KLOG_SERVE_BENCH_PART_MB, a comma-separated list of MiB;
// default 1 and 16: kgo's default, and what an operator draining an
// archive sets).
func benchPartitionSizes() []int32 {
	var sizes []int32
	for _, f := range strings.Split(os.Getenv("KLOG_SERVE_BENCH_PART_MB"), ",") {
		if v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil && v > 0 && v < 2048 {
			sizes = append(sizes, int32(v)<<20)
		}
	}
	if len(sizes) == 0 {
		sizes = []int32{fetch.DefaultPartitionMaxBytes, 16 << 20}
	}
	return sizes
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
		res, err := a.Append(&produce.Batch{Records: recs})
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

// drainStats is what kgo's hooks saw of one drain: the batches and records
// it decoded, and its fetch round trips with the time each response took to
// arrive (kgo's timeToRead: from the start of its read, right after the
// request went out, to the last byte: the server's latency plus the
// transfer).
type drainStats struct {
	batches, records, fetches, readNs atomic.Int64
}

func (c *drainStats) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	c.batches.Add(1)
	c.records.Add(int64(m.NumRecords))
}

func (c *drainStats) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, timeToRead time.Duration, _ error) {
	if key == 1 { // Fetch
		c.fetches.Add(1)
		c.readNs.Add(int64(timeToRead))
	}
}

// drainKgo consumes records [0, n) of topic "bench" from addr with a
// consumer asking part bytes a fetch, and returns what its hooks saw.
func drainKgo(b *testing.B, addr string, n int64, part int32) *drainStats {
	st := new(drainStats)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"bench": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.WithHooks(st), kgo.FetchMaxPartitionBytes(part))
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
	// Both servers must hand kgo the batches as they are on disk.
	// (kgo's producer cut a few of kfake's batches one record short.)
	if nb := st.batches.Load(); nb == 0 || float64(st.records.Load())/float64(nb) < benchBatch*0.95 {
		b.Fatalf("%d records in %d batches, want about %d a batch", st.records.Load(), nb, benchBatch)
	}
	return st
}

// inProcessDrain drains records [0, n) with package fetch's consumer, as
// `klog fetch` reads the partition: the in-process baseline.
func inProcessDrain(b *testing.B, dir string, n int64, part int32) {
	c, err := fetch.NewConsumer(filepath.Join(dir, "bench-0"), fetch.ConsumerConfig{MaxBytes: fetch.DefaultMaxBytes,
		PartitionMaxBytes: part})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for got := int64(0); got < n; {
		recs, _, err := c.Poll(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		got += int64(len(recs))
	}
}

// startKfake loads the partition's batches into a one-broker kfake cluster.
func startKfake(b *testing.B, dir string, n, size int64) string {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	// The same batches: kgo cuts a batch at this many bytes, which holds
	// the benchBatch records a disk batch holds.
	loadKfake(b, addr, dir, int32(size/(n/benchBatch)))
	return addr
}

func partName(part int32) string { return "part=" + strconv.Itoa(int(part>>20)) + "MiB" }

func BenchmarkDrain(b *testing.B) {
	dir, n, size := benchLogDir(b)
	_, serveAddr := startServer(b, Config{LogDir: dir})
	kfakeAddr := startKfake(b, dir, n, size)
	for _, part := range benchPartitionSizes() {
		b.Run(partName(part)+"/fetch-in-process", func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				inProcessDrain(b, dir, n, part)
			}
		})
		// The client's ceiling: kgo decoding the same fetch responses
		// with no network and no server.
		b.Run(partName(part)+"/kgo-decode-only", func(b *testing.B) {
			frames, dec := decodeFrames(b, dir, n, part), kgo.DefaultDecompressor()
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				decodeAll(b, frames, dec, n)
			}
		})
		b.Run(partName(part)+"/serve-kgo", func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				drainKgo(b, serveAddr, n, part)
			}
		})
		b.Run(partName(part)+"/kfake-kgo", func(b *testing.B) {
			b.SetBytes(size)
			for i := 0; i < b.N; i++ {
				drainKgo(b, kfakeAddr, n, part)
			}
		})
	}
}

// BenchmarkDrainAlternating drains the same partition in process, through
// klog serve and from kfake in turn, b.N rounds at each consumer fetch size,
// and reports each one's median MB/s and the ratios of the medians:
// alternating keeps the machine's changing load from favouring whichever
// ran first. Five more figures bound what any server could reach:
//   - ideal: the same consumer against a server answering every fetch from
//     memory with serve's own bytes (klogtest.IdealServer): all that any server can
//     do for this client on this machine;
//   - wire: the consumer's round trips over loopback TCP with no protocol
//     (each response by sendfile into a fresh buffer, as kgo reads one);
//   - decode: kgo decoding the same responses with no network;
//   - ceiling: wire and decode in series, per round, since kgo keeps one
//     fetch in flight and decodes a response before asking for the next;
//   - wire-reuse: the round trips into one reused buffer and no decoding:
//     the fastest any consumer can take these bytes over loopback.
//
// kgo's hooks split each server's round trips into the time the response
// took to arrive and the rest (the client's). ideal/kfake below 2 means no
// server can be 2x kfake for this consumer, ideal/fetch below 0.5 that none
// can give it half the in-process drain's speed; wire-reuse/fetch below 0.5
// would mean no consumer over TCP could.
func BenchmarkDrainAlternating(b *testing.B) {
	dir, n, size := benchLogDir(b)
	_, serveAddr := startServer(b, Config{LogDir: dir})
	kfakeAddr := startKfake(b, dir, n, size)
	wire := startWireBaseline(b, dir)
	// The ideal server's backend is a second server over the same log dir
	// that names the ideal server as its broker: kgo's fetches go where
	// Metadata says.
	ideal := klogtest.ListenIdealServer(b)
	_, idealBackend := startServer(b, Config{LogDir: dir, AdvertisedHost: ideal.Host, AdvertisedPort: ideal.Port})
	ideal.Serve(idealBackend)
	for _, part := range benchPartitionSizes() {
		b.Run(partName(part), func(b *testing.B) {
			frames, dec := decodeFrames(b, dir, n, part), kgo.DefaultDecompressor()
			ideal.Fetches.Store(0)
			drainKgo(b, ideal.Addr, n, part) // warm the ideal server
			if ideal.Fetches.Load() == 0 {
				b.Fatal("no Fetch reached the ideal server: the client went around it")
			}
			ideal.Misses.Store(0)
			ideal.Fetches.Store(0)
			rates := map[string][]float64{}
			run := func(name string, f func()) float64 {
				start := time.Now()
				f()
				r := float64(size) / time.Since(start).Seconds() / 1e6
				rates[name] = append(rates[name], r)
				return r
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run("fetch", func() { inProcessDrain(b, dir, n, part) })
				for _, sv := range []struct{ name, addr string }{{"serve", serveAddr}, {"kfake", kfakeAddr}, {"ideal", ideal.Addr}} {
					var st *drainStats
					start := time.Now()
					run(sv.name, func() { st = drainKgo(b, sv.addr, n, part) })
					f := float64(st.fetches.Load())
					read := float64(st.readNs.Load()) / f / 1e3
					rates[sv.name+"-read"] = append(rates[sv.name+"-read"], read)
					rates[sv.name+"-client"] = append(rates[sv.name+"-client"], float64(time.Since(start).Nanoseconds())/f/1e3-read)
				}
				w := run("wire", func() { wire.drain(b, size, part, false) })
				d := run("decode", func() { decodeAll(b, frames, dec, n) })
				rates["ceiling"] = append(rates["ceiling"], 1/(1/w+1/d))
				run("wire-reuse", func() { wire.drain(b, size, part, true) })
			}
			b.StopTimer()
			med := func(k string) float64 {
				ys := append([]float64(nil), rates[k]...)
				sort.Float64s(ys)
				return ys[len(ys)/2]
			}
			if m := ideal.Misses.Load(); m > 0 || ideal.Fetches.Load() == 0 {
				b.Fatalf("the ideal server passed %d of %d fetches on to serve", m, ideal.Fetches.Load())
			}
			for _, k := range []string{"fetch", "serve", "kfake", "ideal", "wire", "decode", "ceiling", "wire-reuse"} {
				b.ReportMetric(med(k), k+"-MB/s")
			}
			// Per fetch round trip, kgo's own view: µs until the response
			// was in (server plus transfer) and µs everything else took
			// (decoding, polling, the next request).
			for _, k := range []string{"serve", "kfake", "ideal"} {
				b.ReportMetric(med(k+"-read"), k+"-read-µs/fetch")
				b.ReportMetric(med(k+"-client"), k+"-client-µs/fetch")
			}
			b.ReportMetric(med("serve")/med("fetch"), "serve/fetch")
			b.ReportMetric(med("serve")/med("kfake"), "serve/kfake")
			b.ReportMetric(med("serve")/med("ideal"), "serve/ideal")
			b.ReportMetric(med("ideal")/med("kfake"), "ideal/kfake")
			b.ReportMetric(med("ideal")/med("fetch"), "ideal/fetch")
			b.ReportMetric(med("ceiling")/med("kfake"), "ceiling/kfake")
			b.ReportMetric(med("wire-reuse")/med("fetch"), "wire-reuse/fetch")
		})
	}
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
	return &wireBaseline{addr: klogtest.AcceptLoop(b, serve)}
}

// drain asks for [0, size) in part-byte responses, one at a time, each
// read into a fresh buffer as kgo reads a response, or with reuse into one
// buffer (no allocation, no page faults: the transport alone).
func (w *wireBaseline) drain(b *testing.B, size int64, part int32, reuse bool) {
	c, err := net.Dial("tcp", w.addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var req [16]byte
	var hdr [4]byte
	var kept []byte
	for pos := int64(0); pos < size; {
		binary.BigEndian.PutUint64(req[:], uint64(pos))
		binary.BigEndian.PutUint64(req[8:], uint64(part))
		if _, err := c.Write(req[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			b.Fatal(err)
		}
		n := int(binary.BigEndian.Uint32(hdr[:]))
		var buf []byte
		if reuse && cap(kept) >= n {
			buf = kept[:n]
		} else {
			buf = make([]byte, n)
			if reuse {
				kept = buf
			}
		}
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
	c, err := fetch.NewConsumer(filepath.Join(dir, "bench-0"), fetch.ConsumerConfig{MaxBytes: fetch.DefaultMaxBytes,
		PartitionMaxBytes: fetch.DefaultPartitionMaxBytes})
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
	req := fetch.Request{PartitionMaxBytes: fetch.DefaultPartitionMaxBytes, MaxBytes: fetch.DefaultMaxBytes, Locate: true}
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
func decodeFrames(b *testing.B, dir string, n int64, part int32) []kmsg.FetchResponseTopicPartition {
	l, err := partition.OpenLog(filepath.Join(dir, "bench-0"), partition.LogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var frames []kmsg.FetchResponseTopicPartition
	for off := int64(0); off < n; {
		f, err := fetch.Read(l, fetch.Request{FetchOffset: off, MaxBytes: fetch.DefaultMaxBytes, PartitionMaxBytes: part}, nil)
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

// BenchmarkSendRange is the send of a fetch's 1 MiB range of a segment to a
// loopback consumer that reads each response into a new buffer, as kgo
// does: serve's sendFile (a write from a mapping of the range) and the
// reference, sendfile(2) from the file (what serve did before, and
// Kafka's FileChannel.transferTo), alternating each iteration over the same
// 64 MiB of page-cached segment; it reports each one's MB/s (medians) and
// their ratio:
//
//	go test ./serve -run '^$' -bench SendRange -benchtime 20x
func BenchmarkSendRange(b *testing.B) {
	const rng, ranges = 1 << 20, 64
	seg, _ := writeSegment(b, rng*ranges)
	client, server := loopbackPair(b)
	cn := &conn{c: server}
	sendfile := func(pos int64) error {
		f, err := os.Open(seg)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Seek(pos, io.SeekStart); err != nil {
			return err
		}
		_, err = server.(*net.TCPConn).ReadFrom(&io.LimitedReader{R: f, N: rng})
		return err
	}
	read := make(chan error, 1)
	drain := func(send func(pos int64) error) float64 {
		start := time.Now()
		go func() {
			for i := 0; i < ranges; i++ {
				buf := make([]byte, rng)
				if _, err := io.ReadFull(client, buf); err != nil {
					read <- err
					return
				}
			}
			read <- nil
		}()
		for i := int64(0); i < ranges; i++ {
			if err := send(i * rng); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-read; err != nil {
			b.Fatal(err)
		}
		return float64(rng*ranges) / time.Since(start).Seconds() / 1e6
	}
	var mapped, ref []float64
	b.SetBytes(2 * rng * ranges)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mapped = append(mapped, drain(func(pos int64) error { return cn.sendFile(seg, pos, rng) }))
		ref = append(ref, drain(sendfile))
	}
	b.StopTimer()
	med := func(v []float64) float64 {
		v = append([]float64(nil), v...)
		sort.Float64s(v)
		return v[len(v)/2]
	}
	b.ReportMetric(med(mapped), "sendFile-MB/s")
	b.ReportMetric(med(ref), "sendfile(2)-MB/s")
	b.ReportMetric(med(mapped)/med(ref), "sendFile/sendfile(2)")
}
