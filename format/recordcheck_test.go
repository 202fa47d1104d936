package format

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// recordsBreakRules is the slow path CleanRecords stands in for: decode
// every record with a RecordReader and apply klog verify's record rules
// (offset deltas strictly increasing within 0..LastOffsetDelta; under
// CreateTime no timestamp above MaxTimestamp). It returns "" when the batch
// passes, else why not.
func recordsBreakRules(b *Batch) string {
	var rr RecordReader
	if err := rr.Reset(b); err != nil {
		return "reset: " + err.Error()
	}
	var rec Record
	prev := int32(-1)
	n := int32(0)
	for {
		err := rr.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "next: " + err.Error()
		}
		n++
		if rec.OffsetDelta <= prev || rec.OffsetDelta > b.LastOffsetDelta || rec.OffsetDelta < 0 {
			return "offset delta " + itoa(int64(rec.OffsetDelta))
		}
		prev = rec.OffsetDelta
		if b.TimestampType() == CreateTime && rec.Timestamp > b.MaxTimestamp {
			return "timestamp " + itoa(rec.Timestamp)
		}
	}
	if n != b.RecordCount {
		return "count " + itoa(int64(n))
	}
	return ""
}

// cleanBatch encodes recs as an uncompressed v2 batch with attrs.
func cleanBatch(t *testing.T, attrs int16, recs []Record) []byte {
	t.Helper()
	h := &Batch{BaseOffset: 100, Magic: MagicV2, Attributes: attrs, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	PrepareBatch(h, recs)
	if h.TimestampType() == LogAppendTime {
		h.MaxTimestamp = 1_700_000_009_000
	}
	var c Compressor
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// reseal recomputes the batch's CRC, so that a mutation reaches the records
// of a batch that parses.
func reseal(raw []byte) []byte {
	binary.BigEndian.PutUint32(raw[posCRC:], ChecksumC(raw[posAttributes:]))
	return raw
}

func TestCleanRecords(t *testing.T) {
	big := bytes.Repeat([]byte("v"), 70_000) // a three-byte length varint
	rec := func(off, ts int64, k, v []byte, hs ...Header) Record {
		return Record{Offset: 100 + off, Timestamp: 1_700_000_000_000 + ts, Key: k, Value: v, Headers: hs}
	}
	tests := []struct {
		name  string
		attrs int16
		recs  []Record
		// mutate edits the encoded batch (then resealed); nil keeps it.
		mutate func(raw []byte) []byte
		clean  bool
	}{
		{name: "plain", recs: []Record{rec(0, 0, []byte("k"), []byte("v")), rec(1, 5, []byte("k2"), []byte("v2"))}, clean: true},
		{name: "null key and value", recs: []Record{rec(0, 0, nil, nil)}, clean: true},
		{name: "empty key and value", recs: []Record{rec(0, 0, []byte{}, []byte{})}, clean: true},
		{name: "headers, one null value", recs: []Record{rec(0, 0, nil, []byte("x"), Header{Key: []byte("h"), Value: nil}, Header{Key: []byte("h2"), Value: []byte("y")})}, clean: true},
		{name: "long lengths and deltas", recs: []Record{rec(0, 0, big[:200], big), rec(300, 1_000_000_000, nil, big[:9000])}, clean: true},
		{name: "log append time", attrs: 1 << 3, recs: []Record{rec(0, 0, nil, []byte("v")), rec(1, 1, nil, nil)}, clean: true},
		{name: "gap in offsets", recs: []Record{rec(0, 0, nil, nil), rec(5, 0, nil, nil)}, clean: true},
		{name: "control batch", attrs: 1 << 5, recs: []Record{rec(0, 0, []byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 0})}, clean: false},
		{name: "compressed", attrs: int16(CompressionGzip), recs: []Record{rec(0, 0, nil, []byte("v"))}, clean: false},
		{name: "no records", recs: nil, clean: false},
		{name: "offset deltas out of order", recs: []Record{rec(1, 0, nil, nil), rec(0, 0, nil, nil)},
			mutate: func(raw []byte) []byte {
				binary.BigEndian.PutUint32(raw[posLastOffsetDelta:], 1)
				return raw
			}},
		{name: "timestamp above max", recs: []Record{rec(0, 0, nil, nil), rec(1, 10, nil, nil)},
			mutate: func(raw []byte) []byte {
				binary.BigEndian.PutUint64(raw[posMaxTimestamp:], 1_700_000_000_005)
				return raw
			}},
		{name: "a byte after the last record", recs: []Record{rec(0, 0, nil, []byte("v"))},
			mutate: func(raw []byte) []byte {
				raw = append(raw, 0)
				binary.BigEndian.PutUint32(raw[posBatchLength:], uint32(len(raw)-LogOverhead))
				return raw
			}},
		{name: "count above the records", recs: []Record{rec(0, 0, nil, []byte("v"))},
			mutate: func(raw []byte) []byte {
				binary.BigEndian.PutUint32(raw[posRecordCount:], 2)
				return raw
			}},
		{name: "negative header key length", recs: []Record{rec(0, 0, nil, nil, Header{Key: []byte("hh"), Value: nil})},
			mutate: func(raw []byte) []byte {
				// The header key length varint: 2 (4) becomes -1 (1).
				i := bytes.LastIndex(raw, []byte{4, 'h', 'h'})
				raw[i] = 1
				return raw
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw := cleanBatch(t, tc.attrs, tc.recs)
			if tc.mutate != nil {
				raw = reseal(tc.mutate(raw))
			}
			b, err := ParseBatch(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			why := recordsBreakRules(b)
			if got := CleanRecords(b); got != tc.clean {
				t.Fatalf("CleanRecords = %v, want %v (slow path: %q)", got, tc.clean, why)
			}
			if tc.clean && why != "" {
				t.Fatalf("a clean batch the slow path rejects: %s", why)
			}
			if tc.mutate != nil && why == "" {
				t.Fatal("the mutation did not break the batch: the case tests nothing")
			}
		})
	}
}

// TestCleanRecordsNeverAcceptsMore mutates every byte of the records of a
// small clean batch to every value (the CRC resealed, so the records are
// decoded): wherever CleanRecords says clean, decoding every record with
// the rules must find nothing. The rules must also find something in some
// mutations, or the test proves nothing.
func TestCleanRecordsNeverAcceptsMore(t *testing.T) {
	recs := []Record{
		{Offset: 100, Timestamp: 1_700_000_000_000, Key: []byte("k"), Value: []byte("vv"),
			Headers: []Header{{Key: []byte("h"), Value: []byte("x")}}},
		{Offset: 101, Timestamp: 1_700_000_000_001, Key: nil, Value: bytes.Repeat([]byte("w"), 130)},
		{Offset: 103, Timestamp: 1_700_000_000_002, Key: []byte{}, Value: nil},
	}
	orig := cleanBatch(t, 0, recs)
	broken, accepted := 0, 0
	for i := BatchHeaderSize; i < len(orig); i++ {
		for v := range 256 {
			raw := append([]byte(nil), orig...)
			if raw[i] == byte(v) {
				continue
			}
			raw[i] = byte(v)
			b, err := ParseBatch(reseal(raw), 0)
			if err != nil {
				t.Fatal(err)
			}
			why := recordsBreakRules(b)
			if why != "" {
				broken++
			}
			if CleanRecords(b) {
				accepted++
				if why != "" {
					t.Fatalf("byte %d = %#x: CleanRecords says clean, the slow path says %s", i, v, why)
				}
			}
		}
	}
	if broken == 0 || accepted == 0 {
		t.Fatalf("%d broken, %d accepted mutations: the test cannot fail", broken, accepted)
	}
}
