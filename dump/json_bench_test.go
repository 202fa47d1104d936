package dump_test

// The JSON path against its peer: `klog dump --json --print-data-log` must
// be at least 2x faster than a plain franz-go kmsg + encoding/json program
// printing the same objects from the same segment. Compare within one run:
//
//	go test -run='^$' -bench=JSONPath -count=6 ./dump/

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/klog-dev/klog/dump"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkJSONPath runs klog's JSON path and the peer as sub-benchmarks of
// one benchmark, so that with -count they alternate and share the
// machine's load.
func BenchmarkJSONPath(b *testing.B) {
	p := benchSegmentFile(b)
	b.Run("impl=klog", func(b *testing.B) {
		opts := dump.Options{JSON: true, PrintData: true, MaxBytes: -1, Cwd: filepath.Dir(p)}
		b.SetBytes(benchDumpSegmentBytes)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := dump.Run([]string{p}, opts, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=kmsg+encoding-json", func(b *testing.B) {
		b.SetBytes(benchDumpSegmentBytes)
		b.ReportAllocs()
		for b.Loop() {
			if err := kmsgJSONDump(p, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The peer's objects: the same fields as klog's batch and record objects.
type peerBatch struct {
	Type                 string `json:"type"`
	Position             int64  `json:"position"`
	BaseOffset           int64  `json:"baseOffset"`
	LastOffset           int64  `json:"lastOffset"`
	RecordCount          int32  `json:"recordCount"`
	Magic                int8   `json:"magic"`
	CRC                  uint32 `json:"crc"`
	ComputedCRC          uint32 `json:"computedCrc"`
	IsValid              bool   `json:"isValid"`
	SizeBytes            int64  `json:"sizeBytes"`
	Compression          string `json:"compression"`
	TimestampType        string `json:"timestampType"`
	MaxTimestamp         int64  `json:"maxTimestamp"`
	ProducerID           int64  `json:"producerId"`
	ProducerEpoch        int16  `json:"producerEpoch"`
	BaseSequence         int32  `json:"baseSequence"`
	LastSequence         int32  `json:"lastSequence"`
	PartitionLeaderEpoch int32  `json:"partitionLeaderEpoch"`
	IsTransactional      bool   `json:"isTransactional"`
	IsControl            bool   `json:"isControl"`
	DeleteHorizonMs      *int64 `json:"deleteHorizonMs"`
}

type peerHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

type peerRecord struct {
	Type          string       `json:"type"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	KeySize       int          `json:"keySize"`
	ValueSize     int          `json:"valueSize"`
	Sequence      int32        `json:"sequence"`
	Headers       []peerHeader `json:"headers"`
	Key           any          `json:"key"`
	KeyEncoding   string       `json:"keyEncoding,omitempty"`
	Value         any          `json:"value"`
	ValueEncoding string       `json:"valueEncoding,omitempty"`
}

// peerBytes is what encoding/json needs to print bytes the way klog does:
// a string when valid UTF-8, else base64 ([]byte) with an encoding field.
func peerBytes(v []byte) (any, string) {
	if v == nil {
		return nil, ""
	}
	if utf8.Valid(v) {
		return string(v), ""
	}
	return v, "base64"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// kmsgJSONDump reads a segment of uncompressed v2 batches with kmsg and
// prints each batch and record with encoding/json.
func kmsgJSONDump(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	out := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var hdr [12]byte
	var buf []byte
	pos := int64(0)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[8:]))
		if cap(buf) < 12+n {
			buf = make([]byte, 12+n)
		}
		buf = buf[:12+n]
		copy(buf, hdr[:])
		if _, err := io.ReadFull(r, buf[12:]); err != nil {
			return err
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(buf); err != nil {
			return err
		}
		computed := crc32.Checksum(buf[21:], castagnoli)
		pb := peerBatch{Type: "batch", Position: pos, BaseOffset: rb.FirstOffset, LastOffset: rb.FirstOffset + int64(rb.LastOffsetDelta),
			RecordCount: rb.NumRecords, Magic: rb.Magic, CRC: uint32(rb.CRC), ComputedCRC: computed, IsValid: computed == uint32(rb.CRC),
			SizeBytes: int64(len(buf)), Compression: "none", TimestampType: "CreateTime", MaxTimestamp: rb.MaxTimestamp,
			ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch, BaseSequence: rb.FirstSequence, LastSequence: -1,
			PartitionLeaderEpoch: rb.PartitionLeaderEpoch}
		if err := enc.Encode(&pb); err != nil {
			return err
		}
		in := rb.Records
		for i := int32(0); i < rb.NumRecords; i++ {
			length, used := kbin.Varint(in)
			total := used + int(length)
			var rec kmsg.Record
			if err := rec.ReadFrom(in[:total]); err != nil {
				return err
			}
			in = in[total:]
			pr := peerRecord{Type: "record", Offset: rb.FirstOffset + int64(rec.OffsetDelta), Timestamp: rb.FirstTimestamp + int64(rec.TimestampDelta),
				KeySize: len(rec.Key), ValueSize: len(rec.Value), Sequence: -1, Headers: []peerHeader{}}
			pr.Key, pr.KeyEncoding = peerBytes(rec.Key)
			pr.Value, pr.ValueEncoding = peerBytes(rec.Value)
			for _, h := range rec.Headers {
				v := string(h.Value)
				pr.Headers = append(pr.Headers, peerHeader{Key: h.Key, Value: &v})
			}
			if err := enc.Encode(&pr); err != nil {
				return err
			}
		}
		pos += int64(len(buf))
	}
	return out.Flush()
}

// TestKmsgJSONPeerMatches checks that the peer prints what klog prints, so
// the benchmark compares equal work.
func TestKmsgJSONPeerMatches(t *testing.T) {
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if _, err := benchWriteSegment(p, 64<<10); err != nil {
		t.Fatal(err)
	}
	var klog, peer bytes.Buffer
	if _, err := dump.Run([]string{p}, dump.Options{JSON: true, PrintData: true, MaxBytes: -1, Cwd: filepath.Dir(p)}, &klog, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := kmsgJSONDump(p, &peer); err != nil {
		t.Fatal(err)
	}
	kl, pl := jsonLines(t, klog.Bytes()), jsonLines(t, peer.Bytes())
	// klog adds a file object first and a summary last.
	if len(kl) != len(pl)+2 {
		t.Fatalf("klog printed %d objects, the peer %d", len(kl), len(pl))
	}
	for i := range pl {
		if kl[i+1] != pl[i] {
			t.Fatalf("object %d differs:\nklog %s\npeer %s", i, kl[i+1], pl[i])
		}
	}
}

// jsonLines normalises each line (keys sorted) for comparison.
func jsonLines(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	d := json.NewDecoder(bytes.NewReader(b))
	for d.More() {
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		n, _ := json.Marshal(m)
		out = append(out, string(n))
	}
	return out
}

// TestJSONPathSpeed alternates klog's JSON path and the peer on one 32 MiB
// segment, 15 rounds each, and reports the best and median wall time of
// each: on a shared machine the best run is the least disturbed one, and
// alternating puts both under the same load. It needs KLOG_BENCH=1:
//
//	KLOG_BENCH=1 go test -run='^TestJSONPathSpeed$' -v ./dump/
//
// The target: klog at least 2x the peer's speed.
func TestJSONPathSpeed(t *testing.T) {
	if os.Getenv("KLOG_BENCH") != "1" {
		t.Skip("set KLOG_BENCH=1 to measure the JSON path against the kmsg + encoding/json peer")
	}
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if _, err := benchWriteSegment(p, benchDumpSegmentBytes); err != nil {
		t.Fatal(err)
	}
	opts := dump.Options{JSON: true, PrintData: true, MaxBytes: -1, Cwd: filepath.Dir(p)}
	var klog, peer []time.Duration
	for range 15 {
		start := time.Now()
		if _, err := dump.Run([]string{p}, opts, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		klog = append(klog, time.Since(start))
		start = time.Now()
		if err := kmsgJSONDump(p, io.Discard); err != nil {
			t.Fatal(err)
		}
		peer = append(peer, time.Since(start))
	}
	slices.Sort(klog)
	slices.Sort(peer)
	mbs := func(d time.Duration) float64 { return float64(benchDumpSegmentBytes) / d.Seconds() / 1e6 }
	t.Logf("klog: best %v (%.0f MB/s), median %v (%.0f MB/s)", klog[0], mbs(klog[0]), klog[7], mbs(klog[7]))
	t.Logf("kmsg + encoding/json: best %v (%.0f MB/s), median %v (%.0f MB/s)", peer[0], mbs(peer[0]), peer[7], mbs(peer[7]))
	t.Logf("klog is %.2fx the peer's speed (best), %.2fx (median)", peer[0].Seconds()/klog[0].Seconds(), peer[7].Seconds()/klog[7].Seconds())
	if r := peer[0].Seconds() / klog[0].Seconds(); r < 2 {
		t.Errorf("klog's best run is %.2fx the peer's, want at least 2x", r)
	}
}
