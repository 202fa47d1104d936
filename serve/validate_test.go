package serve

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/hostile"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// buildBatch is a v2 batch of n one-byte records at timestamp ts, as a
// client sends it (base offset 0), with attrs (compression, control).
func buildBatch(t testing.TB, n int, ts int64, attrs int16) []byte {
	t.Helper()
	h := &format.Batch{Magic: format.MagicV2, Attributes: attrs, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1}
	var recs []format.Record
	for i := 0; i < n; i++ {
		recs = append(recs, format.Record{Offset: int64(i), Key: []byte("k"), Value: []byte{byte(i)}, Timestamp: ts + int64(i)})
	}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	b, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixCRC recomputes a v2 batch's CRC after a test changed its fields, so
// that the change reaches the checks after the CRC's.
func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], format.ChecksumC(b[21:]))
	return b
}

func produceOne(w *wire, version int16, topic string, records []byte) kmsg.ProduceResponseTopicPartition {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, -1, 1000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Records: records}}}}
	return w.do(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
}

// TestProduceValidation: each class of batch a broker refuses is refused
// with the broker's error code (ProduceRequest.validateRecords,
// analyzeAndValidateRecords, LogValidator), and nothing refused reaches
// the log: what is stored verifies clean and holds only the accepted
// batches.
func TestProduceValidation(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	clock := newFakeClock()
	now := clock.Now().UnixMilli()
	_, addr := startServer(t, Config{LogDir: dir, Writable: true, Clock: clock, MaxMessageBytes: 4000,
		TimestampBeforeMax: 2000 * 24 * time.Hour})
	w := dial(t, addr)
	good := func() []byte { return buildBatch(t, 3, now-1000, 0) }
	mut := func(f func(b []byte) []byte) []byte { return f(good()) }
	type tc struct {
		name    string
		version int16
		topic   string
		batch   []byte
		code    int16
		msg     string // part of the error message
		records []int32
		stored  int // records appended
	}
	cases := []tc{
		{name: "plain", batch: good(), stored: 3},
		{name: "magic 3", batch: mut(func(b []byte) []byte { b[16] = 3; return fixCRC(b) }), code: kerr.CorruptMessage.Code, msg: "Invalid magic found in record: 3"},
		{name: "magic -1", batch: mut(func(b []byte) []byte { b[16] = 0xff; return b }), code: kerr.CorruptMessage.Code, msg: "Invalid magic"},
		{name: "magic 1", batch: mut(func(b []byte) []byte { b[16] = 1; return b }), code: kerr.InvalidRecord.Code, msg: "magic version 2"},
		{name: "bad crc", batch: mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), code: kerr.CorruptMessage.Code, msg: "Record is corrupt"},
		{name: "size below 14", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 13); return b }), code: kerr.CorruptMessage.Code, msg: "minimum record overhead"},
		{name: "size past the request", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], uint32(len(b))); return b }), code: kerr.InvalidRecord.Code, msg: "at least one record batch"},
		{name: "size below the header", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 30); return b[:42] }), code: kerr.CorruptMessage.Code},
		{name: "empty", batch: []byte{}, code: kerr.InvalidRecord.Code},
		{name: "two batches", batch: append(good(), good()...), code: kerr.InvalidRecord.Code, msg: "exactly one record batch"},
		{name: "trailing partial batch is dropped", batch: append(good(), good()[:40]...), stored: 3},
		{name: "trailing bad magic", batch: append(good(), mut(func(b []byte) []byte { b[16] = 7; return b })[:20]...), code: kerr.CorruptMessage.Code},
		{name: "base offset 5", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint64(b, 5); return b }), code: kerr.InvalidRecord.Code, msg: "should be 0, but it is 5"},
		{name: "count above last offset delta", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:], 4); return fixCRC(b) }), code: kerr.InvalidRecord.Code, msg: "Inconsistent batch offset range"},
		{name: "last offset delta above count", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[23:], 3); return fixCRC(b) }), code: kerr.InvalidRecord.Code, msg: "Inconsistent batch offset range"},
		{name: "count 0", batch: mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 0)
			binary.BigEndian.PutUint32(b[23:], 0xffffffff)
			return fixCRC(b)
		}), code: kerr.InvalidRecord.Code, msg: "invalid offset range"},
		{name: "records do not parse", batch: mut(func(b []byte) []byte {
			for i := 61; i < len(b); i++ {
				b[i] = 0xff
			}
			return fixCRC(b)
		}), code: kerr.InvalidRecord.Code},
		{name: "bytes after the last record", batch: mut(func(b []byte) []byte {
			b = append(b, 0, 0)
			binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
			return fixCRC(b)
		}), code: kerr.InvalidRecord.Code, msg: "records still remaining"},
		{name: "control batch", batch: fixCRC(buildBatch(t, 1, now, 0x20)), code: kerr.InvalidRecord.Code, msg: "control records"},
		{name: "producer id without sequence", batch: mut(func(b []byte) []byte { binary.BigEndian.PutUint64(b[43:], 7); return fixCRC(b) }), code: kerr.InvalidRecord.Code, msg: "Invalid sequence number -1"},
		{name: "over message.max.bytes", batch: buildBatch(t, 1500, now, 0), code: kerr.MessageTooLarge.Code, msg: "exceeds the maximum configured value of 4000"},
		{name: "zstd before v7", version: 6, batch: buildBatch(t, 3, now, int16(format.CompressionZstd)), code: kerr.UnsupportedCompressionType.Code},
		{name: "zstd at v7", version: 7, batch: buildBatch(t, 3, now, int16(format.CompressionZstd)), stored: 3},
		{name: "timestamp after the limit", batch: buildBatch(t, 3, now+time.Hour.Milliseconds(), 0), code: kerr.InvalidTimestamp.Code,
			msg: "rejected due to invalid timestamp", records: []int32{1, 2}},
		{name: "timestamp before the limit", batch: buildBatch(t, 2, 1000, 0), code: kerr.InvalidTimestamp.Code, records: []int32{0, 1}},
		{name: "no timestamp", batch: buildBatch(t, 1, -1, 0), stored: 1},
	}
	for _, name := range []string{"__consumer_offsets", "__transaction_state", "__share_group_state", "__cluster_metadata", "__remote_log_metadata"} {
		cases = append(cases, tc{name: name, topic: name, batch: good(), code: kerr.InvalidTopicException.Code, msg: "Cannot append to internal topic"})
	}
	want := 0
	for _, c := range cases {
		if c.version == 0 {
			c.version = 9
		}
		if c.topic == "" {
			c.topic = "t"
		}
		p := produceOne(w, c.version, c.topic, c.batch)
		msg := ""
		if p.ErrorMessage != nil {
			msg = *p.ErrorMessage
		}
		if p.ErrorCode != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: error %d %q, want %d %q", c.name, p.ErrorCode, msg, c.code, c.msg)
		}
		var got []int32
		for _, r := range p.ErrorRecords {
			got = append(got, r.RelativeOffset)
			if r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, "is out of range") {
				t.Errorf("%s: record error %+v", c.name, r)
			}
		}
		if len(got) != len(c.records) || (len(got) > 0 && (got[0] != c.records[0] || got[len(got)-1] != c.records[len(c.records)-1])) {
			t.Errorf("%s: record errors at %v, want %v", c.name, got, c.records)
		}
		want += c.stored
	}
	if got := len(dumpRecords(t, filepath.Join(dir, "t-0"))); got != want {
		t.Errorf("log holds %d records, want %d", got, want)
	}
	verifyClean(t, dir)
}

// TestAutoCreateTopicNames: Metadata creates only topics Kafka would
// (Topic.validate, no internal names, no '.'/'_' collision with a topic
// that exists) and leaves no directory for a name it refuses.
func TestAutoCreateTopicNames(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a_b-0"), 0o755)
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	w := dial(t, addr)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"ok.topic-1_x", true}, {strings.Repeat("x", 249), true},
		{strings.Repeat("x", 250), false}, {".", false}, {"..", false}, {"", false}, {"a/b", false}, {"a b", false}, {"é", false},
		{"a.b", false}, {"__consumer_offsets", false}, {"__share_group_state", false}, {"__cluster_metadata", false},
		{"ok_topic-1_x", false}, // collides with the first, created above
	} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = 12, true
		n := c.name
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &n}}
		mt := w.do(req).(*kmsg.MetadataResponse).Topics[0]
		// Created is UNKNOWN_TOPIC_OR_PARTITION (as a KRaft broker
		// answers the Metadata that auto-creates).
		if c.ok != (mt.ErrorCode == kerr.UnknownTopicOrPartition.Code) || (!c.ok && mt.ErrorCode != kerr.InvalidTopicException.Code) {
			t.Errorf("%q: error %d", c.name, mt.ErrorCode)
		}
		_, err := os.Stat(filepath.Join(dir, c.name+"-0"))
		if c.ok != (err == nil) && c.name != "" && !strings.Contains(c.name, "/") {
			t.Errorf("%q: directory exists %v", c.name, err == nil)
		}
	}
}

// TestHostileProduce: every hostile produce body of the corpus
// (internal/hostile) is refused with an error code, the connection keeps
// answering, and nothing reaches the log.
func TestHostileProduce(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	// message.max.bytes out of the way, so that the bombs reach the
	// decoders.
	_, addr := startServer(t, Config{LogDir: dir, Writable: true, MaxMessageBytes: 64 << 20})
	w := dial(t, addr)
	for name, body := range hostile.Produce() {
		p := produceOne(w, 9, "t", body)
		if p.ErrorCode == 0 {
			t.Errorf("%s: appended at %d", name, p.BaseOffset)
		}
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		if _, ok := w.do(req).(*kmsg.MetadataResponse); !ok {
			t.Fatalf("%s: the connection no longer answers", name)
		}
	}
	if got := len(dumpRecords(t, filepath.Join(dir, "t-0"))); got != 0 {
		t.Errorf("log holds %d records", got)
	}
	verifyClean(t, dir)
}
