package produce_test

// Three independent readers of what an Appender wrote: klog's own
// format.Scanner/RecordReader, franz-go's fetch-response decoder
// (kgo.ProcessFetchPartition, what a franz-go consumer runs on the bytes a
// broker sends) and segmentio/kafka-go's protocol.RecordSet. A segment file
// is exactly the RecordBatches of a fetch response, so a client that decodes
// it record for record is the acceptance test of "a broker could have
// written this".

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/verifytest"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
	kafkago "github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rec is a record as every reader can report it. Nil and empty byte slices
// are different values (null vs empty in Kafka), which show reports.
type rec struct {
	Offset    int64
	Timestamp int64
	Key       []byte
	Value     []byte
	Headers   []format.Header
}

func showBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > 24 {
		return fmt.Sprintf("%q…(%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func (r rec) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "offset=%d ts=%d key=%s value=%s headers=[", r.Offset, r.Timestamp, showBytes(r.Key), showBytes(r.Value))
	for i, h := range r.Headers {
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%s:%s", showBytes(h.Key), showBytes(h.Value))
	}
	sb.WriteString("]")
	return sb.String()
}

// sameBytes is bytes.Equal that also tells null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sameRec(a, b rec, checkTS bool) bool {
	if a.Offset != b.Offset || (checkTS && a.Timestamp != b.Timestamp) || !sameBytes(a.Key, b.Key) ||
		!sameBytes(a.Value, b.Value) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		// A header key is never null on the wire; clients give strings.
		if !bytes.Equal(a.Headers[i].Key, b.Headers[i].Key) || !sameBytes(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

// compareRecs reports the first differences between two record lists.
func compareRecs(t *testing.T, reader string, got, want []rec, checkTS bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", reader, len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		if !sameRec(got[i], want[i], checkTS) {
			t.Errorf("%s: record %d:\n got  %v\n want %v", reader, i, got[i], want[i])
			if bad++; bad > 5 {
				return
			}
		}
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// segmentFiles lists the .log files of dir in offset order.
func segmentFiles(t testing.TB, dir string) []partition.Segment {
	t.Helper()
	d, err := partition.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var segs []partition.Segment
	for _, s := range d.Segments {
		if s.Log != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// batchInfo is a batch header as klog read it, with where it was.
type batchInfo struct {
	format.Batch
	Segment string
	Records []rec
}

// readKlog reads every segment of dir with format.Scanner and
// format.RecordReader. It fails the test unless every batch is valid, the
// segments end exactly at a batch boundary, each segment starts at the
// offset its name says and offsets are contiguous from the first batch.
func readKlog(t testing.TB, dir string) ([]batchInfo, []rec) {
	t.Helper()
	var (
		batches []batchInfo
		recs    []rec
		rr      format.RecordReader
		r       format.Record
		next    = int64(-1)
	)
	for _, s := range segmentFiles(t, dir) {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		sc := format.NewScanner(bytes.NewReader(data), int64(len(data)), format.ScanOptions{})
		first := true
		for {
			b, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", s.Log, err)
			}
			if !b.Valid() {
				t.Fatalf("%s: batch at position %d (offset %d): stored crc %d, computed %d", s.Log, b.Pos, b.BaseOffset, b.CRC, b.ComputedCRC())
			}
			if first && b.BaseOffset != s.BaseOffset {
				t.Errorf("%s starts with offset %d, not the base offset of its name", s.Log, b.BaseOffset)
			}
			first = false
			if next >= 0 && b.BaseOffset != next {
				t.Fatalf("%s: batch at position %d has base offset %d, want %d (contiguous)", s.Log, b.Pos, b.BaseOffset, next)
			}
			next = b.NextOffset()
			bi := batchInfo{Batch: *b.Clone(), Segment: s.Log}
			if err := rr.Reset(b); err != nil {
				t.Fatalf("%s: batch at offset %d: %v", s.Log, b.BaseOffset, err)
			}
			n := int32(0)
			for {
				err := rr.Next(&r)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: batch at offset %d: %v", s.Log, b.BaseOffset, err)
				}
				if r.Offset != b.BaseOffset+int64(n) {
					t.Errorf("%s: record %d of batch %d has offset %d", s.Log, n, b.BaseOffset, r.Offset)
				}
				n++
				var hs []format.Header
				for _, h := range r.Headers {
					hs = append(hs, format.Header{Key: clone(h.Key), Value: clone(h.Value)})
				}
				x := rec{Offset: r.Offset, Timestamp: r.Timestamp, Key: clone(r.Key), Value: clone(r.Value), Headers: hs}
				bi.Records = append(bi.Records, x)
				if !b.IsControl() {
					recs = append(recs, x)
				}
			}
			if n != b.RecordCount || int64(n) != int64(b.LastOffsetDelta)+1 {
				t.Errorf("%s: batch at offset %d: %d records, count %d, last offset delta %d", s.Log, b.BaseOffset, n, b.RecordCount, b.LastOffsetDelta)
			}
			batches = append(batches, bi)
		}
		if tail := sc.Tail(); tail.Bytes != 0 {
			t.Fatalf("%s: %d bytes after the last batch (%v)", s.Log, tail.Bytes, tail.Kind)
		}
	}
	return batches, recs
}

// readFranz decodes each segment as the RecordBatches of a fetch response
// with franz-go, which checks every CRC. Control records are dropped, as a
// consumer drops them.
func readFranz(t testing.TB, dir string, leo int64) []rec {
	t.Helper()
	return readFranzOpts(t, dir, leo, kgo.ProcessFetchPartitionOpts{}, nil)
}

// readFranzOpts is readFranz with options (read_committed) and the aborted
// transactions of the fetch response.
func readFranzOpts(t testing.TB, dir string, leo int64, opts kgo.ProcessFetchPartitionOpts, aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction) []rec {
	t.Helper()
	var out []rec
	for _, s := range segmentFiles(t, dir) {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			continue
		}
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = data
		p.HighWatermark = leo
		p.LastStableOffset = leo
		p.AbortedTransactions = aborted
		o := opts
		o.Offset = s.BaseOffset
		o.Topic = "t"
		fp, _ := kgo.ProcessFetchPartition(o, &p, kgo.DefaultDecompressor(), nil)
		if fp.Err != nil {
			t.Fatalf("franz-go: %s: %v", s.Log, fp.Err)
		}
		for _, r := range fp.Records {
			var hs []format.Header
			for _, h := range r.Headers {
				hs = append(hs, format.Header{Key: []byte(h.Key), Value: clone(h.Value)})
			}
			out = append(out, rec{Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli(), Key: clone(r.Key), Value: clone(r.Value), Headers: hs})
		}
	}
	return out
}

// readKafkaGo decodes every batch with kafka-go's protocol.RecordSet, one
// batch at a time so that a checksum error cannot be skipped silently
// (RecordSet.ReadFrom drops errors once it has read some records). kafka-go
// takes each record's timestamp as baseTimestamp + delta whatever the
// timestamp type, so for LogAppendTime batches it reports the producer's
// CreateTime; control batches are skipped.
func readKafkaGo(t testing.TB, batches []batchInfo) []rec {
	t.Helper()
	var out []rec
	for _, b := range batches {
		var framed bytes.Buffer
		binary.Write(&framed, binary.BigEndian, int32(len(b.Raw)))
		framed.Write(b.Raw)
		var rs kafkago.RecordSet
		if _, err := rs.ReadFrom(bufio.NewReader(&framed)); err != nil {
			t.Fatalf("kafka-go: batch at offset %d of %s: %v", b.BaseOffset, b.Segment, err)
		}
		if rs.Records == nil {
			t.Fatalf("kafka-go: batch at offset %d of %s: no records", b.BaseOffset, b.Segment)
		}
		if rs.Attributes.Control() {
			continue
		}
		if got, want := int16(rs.Attributes)&0x7, b.Attributes&0x7; got != want {
			t.Errorf("kafka-go: batch at offset %d: codec %d, want %d", b.BaseOffset, got, want)
		}
		for {
			r, err := rs.Records.ReadRecord()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("kafka-go: batch at offset %d: %v", b.BaseOffset, err)
			}
			k, err := kafkago.ReadAll(r.Key)
			if err != nil {
				t.Fatal(err)
			}
			v, err := kafkago.ReadAll(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if r.Key == nil {
				k = nil
			}
			if r.Value == nil {
				v = nil
			}
			var hs []format.Header
			for _, h := range r.Headers {
				hs = append(hs, format.Header{Key: []byte(h.Key), Value: clone(h.Value)})
			}
			out = append(out, rec{Offset: r.Offset, Timestamp: r.Time.UnixMilli(), Key: k, Value: v, Headers: hs})
		}
	}
	return out
}

// verifyClean runs verify on dir and fails on any finding.
func verifyClean(t testing.TB, dir string) *verifytest.Report {
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
				t.Errorf("verify: %s: %s at position %d (offset %d): %s", f.Path, p.Kind, p.Position, p.Offset, p.Message)
			}
		}
	}
	return rep
}
