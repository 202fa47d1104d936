package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/verify"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()},
}

// verifyClean runs `klog verify` on a log dir and fails on any finding.
func verifyClean(t testing.TB, dir string) {
	t.Helper()
	rep, err := verifytest.Run(context.Background(), []string{dir}, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Err != "" {
			t.Errorf("verify: %s: %s", f.Path, f.Err)
		}
		for _, p := range f.Problems {
			if !p.Info {
				t.Errorf("verify: %s: %s at %d (offset %d): %s", f.Path, p.Kind, p.Position, p.Offset, p.Message)
			}
		}
	}
}

// batchCodecs lists the compression of every batch `klog dump --json`
// shows in a partition.
func batchCodecs(t testing.TB, partDir string) []string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(partDir, "*.log"))
	sort.Strings(logs)
	var out, errb bytes.Buffer
	if _, err := dump.Run(logs, dump.Options{JSON: true, MaxBytes: -1}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var cs []string
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		var m struct{ Type, Compression string }
		if json.Unmarshal(line, &m) == nil && m.Type == "batch" {
			cs = append(cs, m.Compression)
		}
	}
	return cs
}

// TestKgoProduce: franz-go producers (idempotent with acks=all, plain with
// acks 0, 1 and all) × every codec write through klog serve --writable;
// `klog dump` then shows exactly the records sent, in batches compressed
// with the producer's codec, a consumer reads them back through the
// server, and `klog verify` is clean.
func TestKgoProduce(t *testing.T) {
	dir := t.TempDir()
	type kase struct {
		topic string
		opts  []kgo.Opt
		codec string
	}
	var cases []kase
	for _, c := range codecs {
		cases = append(cases, kase{"idem-" + c.name, []kgo.Opt{kgo.ProducerBatchCompression(c.codec)}, c.name})
		for _, acks := range []struct {
			name string
			acks kgo.Acks
		}{{"0", kgo.NoAck()}, {"1", kgo.LeaderAck()}, {"all", kgo.AllISRAcks()}} {
			cases = append(cases, kase{"acks" + acks.name + "-" + c.name,
				[]kgo.Opt{kgo.ProducerBatchCompression(c.codec), kgo.RequiredAcks(acks.acks), kgo.DisableIdempotentWrite()}, c.name})
		}
	}
	for _, c := range cases {
		os.MkdirAll(filepath.Join(dir, c.topic+"-0"), 0o755)
	}
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	const n = 300
	for _, c := range cases {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(c.topic),
			kgo.ProducerLinger(5 * time.Millisecond)}, c.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		for i := 0; i < n; i++ {
			r := &kgo.Record{Key: []byte("key-" + strconv.Itoa(i)), Value: bytes.Repeat([]byte("value "+strconv.Itoa(i)+" "), 8),
				Timestamp: time.UnixMilli(1700000000000 + int64(i))}
			cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				if err != nil {
					t.Errorf("%s: produce: %v", c.topic, err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatalf("%s: flush: %v", c.topic, err)
		}
		cancel()
		cl.Close()
	}
	// acks=0 is fire and forget: wait until the server has appended all.
	for _, c := range cases {
		waitHW(t, s, c.topic, n)
	}
	for _, c := range cases {
		t.Run(c.topic, func(t *testing.T) {
			pd := filepath.Join(dir, c.topic+"-0")
			got := dumpRecords(t, pd)
			if len(got) != n {
				t.Fatalf("dump shows %d records, want %d", len(got), n)
			}
			for i, r := range got {
				want := fromParts(int64(i), 1700000000000+int64(i), []byte("key-"+strconv.Itoa(i)),
					bytes.Repeat([]byte("value "+strconv.Itoa(i)+" "), 8), 0)
				if r != want {
					t.Fatalf("record %d = %+v, want %+v", i, r, want)
				}
			}
			for _, codec := range batchCodecs(t, pd) {
				if codec != c.codec {
					t.Fatalf("a batch is %s, the producer sent %s", codec, c.codec)
				}
			}
			sameRecs(t, "consumer after produce", consumeKgo(t, addr, c.topic, 0, kgo.ReadCommitted(), n), got)
		})
	}
	verifyClean(t, dir)
}

// TestProduceChecks: the broker's checks on the way in. A bad CRC is
// CORRUPT_MESSAGE; an idempotent producer's retried batch is answered with
// its first offset and not written twice; a gap in sequences is
// OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is INVALID_PRODUCER_EPOCH;
// a batch older than the duplicate cache is DUPLICATE_SEQUENCE_NUMBER.
func TestProduceChecks(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	w := dial(t, addr)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	ipr := w.do(ip).(*kmsg.InitProducerIDResponse)
	if ipr.ErrorCode != 0 || ipr.ProducerID < 0 {
		t.Fatalf("InitProducerId: %+v", ipr)
	}
	pid := ipr.ProducerID
	send := func(b []byte) (int16, int64) {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		p := w.do(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		return p.ErrorCode, p.BaseOffset
	}
	corrupt := rawBatch(t, 0)
	corrupt[len(corrupt)-1] ^= 0xff
	steps := []struct {
		name   string
		batch  []byte
		code   int16
		offset int64
	}{
		{"bad crc", corrupt, kerr.CorruptMessage.Code, -1},
		{"plain", rawBatch(t, 0), 0, 0},
		{"seq 0", rawBatch(t, 0, pid, 0), 0, 1},
		{"seq 1", rawBatch(t, 1, pid, 0), 0, 2},
		{"retry of seq 1", rawBatch(t, 1, pid, 0), 0, 2},
		{"gap", rawBatch(t, 5, pid, 0), kerr.OutOfOrderSequenceNumber.Code, -1},
		{"seq 2", rawBatch(t, 2, pid, 0), 0, 3},
		{"seq 3", rawBatch(t, 3, pid, 0), 0, 4},
		{"seq 4", rawBatch(t, 4, pid, 0), 0, 5},
		{"seq 5", rawBatch(t, 5, pid, 0), 0, 6},
		{"seq 6", rawBatch(t, 6, pid, 0), 0, 7},
		// ProducerAppendInfo.checkSequence: a batch older than the five
		// the state keeps is out of order (Kafka no longer answers
		// DUPLICATE_SEQUENCE_NUMBER).
		{"seq 0 again, past the cache", rawBatch(t, 0, pid, 0), kerr.OutOfOrderSequenceNumber.Code, -1},
		{"new epoch from 0", rawBatch(t, 0, pid, 1), 0, 8},
		{"old epoch", rawBatch(t, 7, pid, 0), kerr.InvalidProducerEpoch.Code, -1},
		// A producer the log knows nothing of (its batches gone with
		// retention, or never here) may start at any sequence.
		{"new producer not from 0", rawBatch(t, 3, pid+1000, 0), 0, 9},
		{"new producer, next", rawBatch(t, 4, pid+1000, 0), 0, 10},
		{"new producer, gap", rawBatch(t, 6, pid+1000, 0), kerr.OutOfOrderSequenceNumber.Code, -1},
	}
	for _, st := range steps {
		code, off := send(st.batch)
		if code != st.code || (code == 0 && off != st.offset) {
			t.Errorf("%s: error %d offset %d, want %d offset %d", st.name, code, off, st.code, st.offset)
		}
	}
	if got := len(dumpRecords(t, filepath.Join(dir, "t-0"))); got != 11 {
		t.Errorf("log holds %d records, want 11", got)
	}
}

// TestProduceLogAppendTime: a LogAppendTime batch gets the broker's time
// as its max timestamp (CRC recomputed, verify clean) and in the answer.
func TestProduceLogAppendTime(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	clock := newFakeClock()
	now := clock.Now()
	_, addr := startServer(t, Config{LogDir: dir, Writable: true, Clock: clock})
	b := rawBatch(t, 0)
	b[22] |= 0x08 // attributes: LogAppendTime (DefaultRecordBatch.TIMESTAMP_TYPE_MASK)
	binary.BigEndian.PutUint32(b[17:], format.ChecksumC(b[21:]))
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: b}}}}
	p := dial(t, addr).do(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LogAppendTime != now.UnixMilli() {
		t.Fatalf("produce: error %d log append time %d", p.ErrorCode, p.LogAppendTime)
	}
	var out, errb bytes.Buffer
	logs, _ := filepath.Glob(filepath.Join(dir, "t-0", "*.log"))
	dump.Run(logs, dump.Options{MaxBytes: -1}, &out, &errb)
	if !strings.Contains(out.String(), "LogAppendTime: 1800000000000") || !strings.Contains(out.String(), "isvalid: true") {
		t.Errorf("dump:\n%s", out.String())
	}
	verifyClean(t, dir)
}

// TestWritableCheckpointsHW: a log dir with a replication-offset-checkpoint
// gets the high watermarks the server served when it stops, so a later
// read-only serve sees the records: the partition produced to, and the one
// whose checkpoint was behind its log end (a writable partition is its only
// replica: its high watermark is its log end, as a broker's leader with no
// other replica in sync advances it).
func TestWritableCheckpointsHW(t *testing.T) {
	dir := fixtureLogDir(t, "none-0", "gzip-0")
	cp := "0\n2\nnone 0 59\ngzip 0 40\n"
	os.WriteFile(filepath.Join(dir, "replication-offset-checkpoint"), []byte(cp), 0o644)
	s, err := New(Config{LogDir: dir, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 7, -1, 1000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "none", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: rawBatch(t, 0)}}}}
	if code := dial(t, ln.Addr().String()).do(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("produce: %d", code)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "replication-offset-checkpoint"))
	if string(got) != "0\n2\nnone 0 60\ngzip 0 59\n" {
		t.Fatalf("checkpoint after serving:\n%s", got)
	}
	_, addr := startServer(t, Config{LogDir: dir})
	if n := len(consumeKgo(t, addr, "none", 0, kgo.ReadUncommitted(), 60)); n != 60 {
		t.Fatalf("read-only serve after produce: %d records", n)
	}
}
