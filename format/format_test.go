package format

// Unit tests for the format package: varints, sequence arithmetic, the
// spec's hand-computed vectors (kafka-format.md §3.13), the LZ4 header
// checksum, encode/decode round trips for every codec and magic, byte-exact
// re-encoding of Kafka-written segments, a truncation sweep in the style of
// archive/tar's TestReadTruncation, the damaged fixtures under
// testdata/segments/generated, and the decompression-bomb bound.
//
// The generated fixtures come from
//
//	go run -tags klog_fixtures ./internal/klogtest/gen
//
// and are committed; these tests only read them.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
)

// ---------------------------------------------------------------------------
// Helpers

// testSegmentsRoot is the repository's testdata/segments.
var testSegmentsRoot = filepath.Join("..", "testdata", "segments")

// generatedFile reads testdata/segments/generated/<scenario>/<file>.
func generatedFile(t *testing.T, scenario string) []byte {
	t.Helper()
	dir := filepath.Join(testSegmentsRoot, "generated", scenario)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (regenerate with: go run -tags klog_fixtures ./internal/klogtest/gen)", err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("no .log file in %s", dir)
	return nil
}

// logFiles lists the .log files under testdata/segments/<sub>, in walk
// (lexical) order, as paths relative to testdata/segments.
func logFiles(t *testing.T, sub string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(testSegmentsRoot, sub), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".log") {
			rel, err := filepath.Rel(testSegmentsRoot, p)
			if err != nil {
				return err
			}
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no .log files under testdata/segments/%s", sub)
	}
	return out
}

// scanResult is everything a Scanner reports over one input.
type scanResult struct {
	batches []*Batch // clones, in order
	ends    []int64  // the position after each batch
	errs    []error  // non-EOF errors, in order
	errPos  []int64  // Scanner.Pos() before the call that returned each error
	tail    Tail
}

// scanAll runs a Scanner to its end. It fails the test if the scanner stops
// making progress.
func scanAll(t *testing.T, data []byte, opts ScanOptions) scanResult {
	t.Helper()
	var res scanResult
	s := NewScanner(bytes.NewReader(data), int64(len(data)), opts)
	for i := 0; ; i++ {
		if i > len(data)+2 {
			t.Fatalf("scanner made no progress at position %d", s.Pos())
		}
		before := s.Pos()
		b, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.errs = append(res.errs, err)
			res.errPos = append(res.errPos, before)
			if s.Done() {
				break
			}
			if s.Pos() <= before {
				t.Fatalf("scanner did not move past the error at position %d: %v", before, err)
			}
			continue
		}
		res.batches = append(res.batches, b.Clone())
		res.ends = append(res.ends, s.Pos())
	}
	res.tail = s.Tail()
	return res
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// cloneRecord copies a record out of the RecordReader's buffers, keeping
// nil and empty apart.
func cloneRecord(r Record) Record {
	r.Key, r.Value = cloneBytes(r.Key), cloneBytes(r.Value)
	if r.Headers != nil {
		hs := make([]Header, len(r.Headers))
		for i, h := range r.Headers {
			hs[i] = Header{Key: cloneBytes(h.Key), Value: cloneBytes(h.Value)}
		}
		r.Headers = hs
	}
	return r
}

// readRecords decodes every record of b; err is what stopped the reader
// (nil at a clean end).
func readRecords(rr *RecordReader, b *Batch) ([]Record, error) {
	if err := rr.Reset(b); err != nil {
		return nil, err
	}
	var out []Record
	var rec Record
	for {
		err := rr.Next(&rec)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cloneRecord(rec))
	}
}

func describeBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%q", b)
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// recordDiff describes the first difference between two records in what a
// reader sees: offset, timestamp, key, value (null vs empty included) and
// headers. It returns "" when they are equal.
func recordDiff(want, got Record) string {
	switch {
	case want.Offset != got.Offset:
		return fmt.Sprintf("offset %d, want %d", got.Offset, want.Offset)
	case want.Timestamp != got.Timestamp:
		return fmt.Sprintf("offset %d: timestamp %d, want %d", want.Offset, got.Timestamp, want.Timestamp)
	case !sameBytes(want.Key, got.Key):
		return fmt.Sprintf("offset %d: key %s, want %s", want.Offset, describeBytes(got.Key), describeBytes(want.Key))
	case !sameBytes(want.Value, got.Value):
		return fmt.Sprintf("offset %d: value %s, want %s", want.Offset, describeBytes(got.Value), describeBytes(want.Value))
	case len(want.Headers) != len(got.Headers):
		return fmt.Sprintf("offset %d: %d headers, want %d", want.Offset, len(got.Headers), len(want.Headers))
	}
	for i := range want.Headers {
		w, g := want.Headers[i], got.Headers[i]
		if !bytes.Equal(w.Key, g.Key) || !sameBytes(w.Value, g.Value) {
			return fmt.Sprintf("offset %d: header %d = %q:%s, want %q:%s", want.Offset, i,
				g.Key, describeBytes(g.Value), w.Key, describeBytes(w.Value))
		}
	}
	return ""
}

func checkRecords(t *testing.T, want, got []Record) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range min(len(want), len(got)) {
		if d := recordDiff(want[i], got[i]); d != "" {
			t.Errorf("record %d: %s", i, d)
		}
	}
}

// headerDiff compares the header fields of two v2 batches that a re-encode
// must preserve (everything but CRC and BatchLength, which depend on the
// codec's output).
func headerDiff(want, got *Batch) string {
	type fields struct {
		BaseOffset, BaseTimestamp, MaxTimestamp, ProducerID int64
		PartitionLeaderEpoch, LastOffsetDelta, BaseSequence int32
		RecordCount                                         int32
		Attributes, ProducerEpoch                           int16
		Magic                                               int8
	}
	f := func(b *Batch) fields {
		return fields{b.BaseOffset, b.BaseTimestamp, b.MaxTimestamp, b.ProducerID,
			b.PartitionLeaderEpoch, b.LastOffsetDelta, b.BaseSequence, b.RecordCount,
			b.Attributes, b.ProducerEpoch, b.Magic}
	}
	if w, g := f(want), f(got); w != g {
		return fmt.Sprintf("header %+v, want %+v", g, w)
	}
	return ""
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// posErr extracts the *PosError of err, failing the test if there is none.
func posErr(t *testing.T, err error) *PosError {
	t.Helper()
	var pe *PosError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *PosError", err, err)
	}
	return pe
}

// ---------------------------------------------------------------------------
// Varints and sequences

func TestVarint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string // hex
		v    int32
		n    int
	}{
		{"zero", "00", 0, 1},
		{"minus one", "01", -1, 1},
		{"one", "02", 1, 1},
		{"63", "7e", 63, 1},
		{"-64", "7f", -64, 1},
		{"64", "8001", 64, 2},
		{"-65", "8101", -65, 2},
		{"300", "d804", 300, 2},
		{"MaxInt32", "feffffff0f", math.MaxInt32, 5},
		{"MinInt32", "ffffffff0f", math.MinInt32, 5},
		{"trailing bytes ignored", "0200ff", 1, 1},
		// ByteUtils.readVarint: the 5th byte's bits above bit 31 are
		// shifted out, not rejected.
		{"5th byte upper bits discarded", "ffffffff7f", math.MinInt32, 5},
		{"5th byte upper bits discarded positive", "feffffff7f", math.MaxInt32, 5},
		// "Varint is too long, the most significant bit in the 5th byte
		// is set".
		{"5th byte MSB set", "ffffffff8f", 0, -1},
		{"5th byte MSB set, more follow", "8080808080 00", 0, -1},
		{"non-minimal zero accepted", "8080808000", 0, 5},
		{"empty", "", 0, 0},
		{"cut after continuation", "80", 0, 0},
		{"cut after 4 continuations", "ffffffff", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := mustHex(t, strings.ReplaceAll(tt.in, " ", ""))
			v, n := Varint(in)
			if v != tt.v || n != tt.n {
				t.Errorf("Varint(%x) = %d, %d; want %d, %d", in, v, n, tt.v, tt.n)
			}
		})
	}
}

func TestVarlong(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		v    int64
		n    int
	}{
		{"zero", "00", 0, 1},
		{"minus one", "01", -1, 1},
		{"1700000000000", "80a0abfef962", 1700000000000, 6},
		{"MaxInt64", "feffffffffffffffff01", math.MaxInt64, 10},
		{"MinInt64", "ffffffffffffffffff01", math.MinInt64, 10},
		{"10th byte upper bits discarded", "ffffffffffffffffff7f", math.MinInt64, 10},
		{"10th byte MSB set", "ffffffffffffffffff81", 0, -1},
		{"cut", "ffff", 0, 0},
		{"empty", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := mustHex(t, tt.in)
			v, n := Varlong(in)
			if v != tt.v || n != tt.n {
				t.Errorf("Varlong(%x) = %d, %d; want %d, %d", in, v, n, tt.v, tt.n)
			}
		})
	}
}

func TestVarintRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range []int32{0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, 1 << 20, -(1 << 20), 1 << 27,
		math.MaxInt32, math.MinInt32, math.MaxInt32 - 1, math.MinInt32 + 1} {
		enc := AppendVarint([]byte{0xaa}, v)[1:]
		if len(enc) != SizeOfVarint(v) {
			t.Errorf("SizeOfVarint(%d) = %d, encoded %d bytes", v, SizeOfVarint(v), len(enc))
		}
		if got, n := Varint(enc); got != v || n != len(enc) {
			t.Errorf("Varint(AppendVarint(%d) = %x) = %d, %d", v, enc, got, n)
		}
		if len(enc) < 5 {
			if _, n := Varint(enc[:len(enc)-1]); n != 0 {
				t.Errorf("Varint of %x cut by one byte: n = %d, want 0", enc, n)
			}
		}
	}
	for _, v := range []int64{0, 1, -1, 1700000000000, -1700000000000, math.MaxInt64, math.MinInt64,
		math.MaxInt32, math.MinInt32, 1 << 62} {
		enc := AppendVarlong(nil, v)
		if len(enc) != SizeOfVarlong(v) {
			t.Errorf("SizeOfVarlong(%d) = %d, encoded %d bytes", v, SizeOfVarlong(v), len(enc))
		}
		if got, n := Varlong(enc); got != v || n != len(enc) {
			t.Errorf("Varlong(AppendVarlong(%d) = %x) = %d, %d", v, enc, got, n)
		}
	}
	for _, u := range []uint32{0, 1, 127, 128, 16383, 16384, math.MaxUint32} {
		enc := AppendUvarint(nil, u)
		if got, n := Uvarint(enc); got != u || n != len(enc) {
			t.Errorf("Uvarint(AppendUvarint(%d) = %x) = %d, %d", u, enc, got, n)
		}
	}
	if _, n := Uvarint(mustHex(t, "ffffffff8f")); n != -1 {
		t.Errorf("Uvarint with a continuing 5th byte: n = %d, want -1", n)
	}
}

func TestSequence(t *testing.T) {
	t.Parallel()
	const maxSeq = math.MaxInt32
	tests := []struct {
		name      string
		seq, n    int32
		inc, back int32 // IncrementSequence(seq, n); DecrementSequence(inc, n) must give back seq
	}{
		{"zero", 0, 0, 0, 0},
		{"plain", 5, 3, 8, 5},
		{"to max", maxSeq - 2, 2, maxSeq, maxSeq - 2},
		{"max plus zero", maxSeq, 0, maxSeq, maxSeq},
		{"wrap by one", maxSeq, 1, 0, maxSeq},
		{"wrap past zero", maxSeq - 1, 3, 1, maxSeq - 1},
		{"wrap far", maxSeq - 10, 100, 89, maxSeq - 10},
		{"large delta", 0, maxSeq, maxSeq, 0},
		{"large delta wraps", 1, maxSeq, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := IncrementSequence(tt.seq, tt.n); got != tt.inc {
				t.Errorf("IncrementSequence(%d, %d) = %d, want %d", tt.seq, tt.n, got, tt.inc)
			}
			if got := DecrementSequence(tt.inc, tt.n); got != tt.back {
				t.Errorf("DecrementSequence(%d, %d) = %d, want %d", tt.inc, tt.n, got, tt.back)
			}
		})
	}
	// DefaultRecordBatch.decrementSequence, directly.
	for _, c := range []struct{ seq, n, want int32 }{{0, 1, maxSeq}, {1, 3, maxSeq - 1}, {8, 3, 5}, {2, 2, 0}} {
		if got := DecrementSequence(c.seq, c.n); got != c.want {
			t.Errorf("DecrementSequence(%d, %d) = %d, want %d", c.seq, c.n, got, c.want)
		}
	}
	b := Batch{Magic: MagicV2, BaseSequence: maxSeq - 1, LastOffsetDelta: 3}
	if got := b.LastSequence(); got != 1 {
		t.Errorf("LastSequence with base %d delta 3 = %d, want 1", b.BaseSequence, got)
	}
	b.BaseSequence = NoSequence
	if got := b.LastSequence(); got != NoSequence {
		t.Errorf("LastSequence without a base sequence = %d, want -1", got)
	}
}

// ---------------------------------------------------------------------------
// The spec's hand-computed vectors (kafka-format.md §3.13)

func TestSpecVectorA(t *testing.T) {
	t.Parallel()
	raw := mustHex(t, "00000000000000000000004f000000000242502f550000000000010000018bcfe568000000018bcfe56801"+
		"ffffffffffffffffffffffffffff000000021800000002610a68656c6c6f0020000202010a776f726c64020468310276")
	if len(raw) != 91 {
		t.Fatalf("vector is %d bytes, want 91", len(raw))
	}
	b, err := ParseBatch(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := Batch{BaseOffset: 0, BatchLength: 79, PartitionLeaderEpoch: 0, Magic: 2, CRC: 1112551253,
		Attributes: 0, LastOffsetDelta: 1, BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000001,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: 2}
	if d := headerDiff(&want, b); d != "" {
		t.Error(d)
	}
	if b.BatchLength != want.BatchLength || b.CRC != want.CRC || b.Size() != 91 {
		t.Errorf("batchLength %d crc %d size %d, want 79 1112551253 91", b.BatchLength, b.CRC, b.Size())
	}
	if !b.Valid() || b.ComputedCRC() != 0x42502F55 || b.CheckCRC() != nil {
		t.Errorf("Valid %v computed crc %#x, want true 0x42502f55", b.Valid(), b.ComputedCRC())
	}
	if b.Compression() != CompressionNone || b.TimestampType() != CreateTime || b.IsTransactional() ||
		b.IsControl() || b.HasDeleteHorizon() || b.LastOffset() != 1 || b.NextOffset() != 2 ||
		b.LastSequence() != -1 {
		t.Errorf("derived fields wrong: %+v", b)
	}
	var rr RecordReader
	recs, err := readRecords(&rr, b)
	if err != nil {
		t.Fatal(err)
	}
	wantRecs := []Record{
		{Offset: 0, Timestamp: 1700000000000, Key: []byte("a"), Value: []byte("hello")},
		{Offset: 1, Timestamp: 1700000000001, Value: []byte("world"), Headers: []Header{{Key: []byte("h1"), Value: []byte("v")}}},
	}
	checkRecords(t, wantRecs, recs)
	if len(recs) == 2 {
		if recs[0].KeySize != 1 || recs[0].ValueSize != 5 || recs[1].KeySize != -1 || recs[1].ValueSize != 5 {
			t.Errorf("key/value sizes %d/%d %d/%d, want 1/5 -1/5", recs[0].KeySize, recs[0].ValueSize, recs[1].KeySize, recs[1].ValueSize)
		}
		if recs[0].Sequence != -1 || recs[1].Sequence != -1 || recs[0].SizeInBytes != 13 || recs[1].SizeInBytes != 17 {
			t.Errorf("sequence %d %d size %d %d, want -1 -1 13 17", recs[0].Sequence, recs[1].Sequence, recs[0].SizeInBytes, recs[1].SizeInBytes)
		}
	}

	// Re-encode from the decoded header and the records' deltas.
	var c Compressor
	h := *b
	out, err := c.AppendBatch(nil, &h, recs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, raw) {
		t.Errorf("AppendBatch from decoded fields:\n got %x\nwant %x", out, raw)
	}
	// And from scratch, as a producer would: absolute offsets and
	// timestamps, derived by PrepareBatch.
	h = Batch{ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence}
	fresh := []Record{
		{Offset: 0, Timestamp: 1700000000000, Key: []byte("a"), Value: []byte("hello")},
		{Offset: 1, Timestamp: 1700000000001, Value: []byte("world"), Headers: []Header{{Key: []byte("h1"), Value: []byte("v")}}},
	}
	PrepareBatch(&h, fresh)
	out, err = c.AppendBatch(out[:0], &h, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, raw) {
		t.Errorf("PrepareBatch+AppendBatch:\n got %x\nwant %x", out, raw)
	}
}

func TestSpecVectorsLegacy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hex     string
		magic   int8
		offset  int64
		crc     uint32
		ts      int64
		tsType  TimestampType
		key     []byte
		value   []byte
		keySize int32
	}{
		{"B v1", "00000000000000070000001839268c3301000000018bcfe56800000000016b0000000176",
			MagicV1, 7, 958827571, 1700000000000, CreateTime, []byte("k"), []byte("v"), 1},
		{"C v0", "00000000000000030000001143dc3faf0000ffffffff00000003616263",
			MagicV0, 3, 1138507695, -1, NoTimestampType, nil, []byte("abc"), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw := mustHex(t, tt.hex)
			b, err := ParseBatch(raw, 0)
			if err != nil {
				t.Fatal(err)
			}
			if b.Magic != tt.magic || b.BaseOffset != tt.offset || b.CRC != tt.crc || b.MaxTimestamp != tt.ts ||
				b.TimestampType() != tt.tsType || b.Size() != int64(len(raw)) || b.LastOffset() != tt.offset {
				t.Errorf("header: magic %d offset %d crc %d ts %d type %v size %d", b.Magic, b.BaseOffset,
					b.CRC, b.MaxTimestamp, b.TimestampType(), b.Size())
			}
			if !b.Valid() || b.ComputedCRC() != tt.crc {
				t.Errorf("Valid %v computed %d, want true %d", b.Valid(), b.ComputedCRC(), tt.crc)
			}
			if b.ProducerID != -1 || b.ProducerEpoch != -1 || b.BaseSequence != -1 || b.PartitionLeaderEpoch != -1 ||
				b.RecordCount != -1 || b.IsTransactional() || b.IsControl() {
				t.Errorf("legacy batch properties wrong: %+v", b)
			}
			var rr RecordReader
			recs, err := readRecords(&rr, b)
			if err != nil {
				t.Fatal(err)
			}
			checkRecords(t, []Record{{Offset: tt.offset, Timestamp: tt.ts, Key: tt.key, Value: tt.value}}, recs)
			if len(recs) == 1 {
				r := recs[0]
				if !r.Legacy || r.Magic != tt.magic || r.CRC != tt.crc || !r.Valid || r.KeySize != tt.keySize ||
					r.ValueSize != int32(len(tt.value)) || r.SizeInBytes != len(raw) {
					t.Errorf("record: %+v", r)
				}
			}
			var c Compressor
			out, err := c.AppendLegacy(nil, LegacySpec{Magic: tt.magic},
				[]Record{{Offset: tt.offset, Timestamp: tt.ts, Key: tt.key, Value: tt.value}})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, raw) {
				t.Errorf("AppendLegacy:\n got %x\nwant %x", out, raw)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// LZ4 framing

func TestXXH32(t *testing.T) {
	t.Parallel()
	// Reference values from the xxHash test suite (as pierrec/lz4 uses).
	for _, tt := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
		{"abcd", 0xa3643705},
		{"abcdefghij", 0x8b988cfe},
		{"abcdefghijklmnop", 0x9d2d8b62},
		{"abcdefghijklmnopqrstuvwxyz0123456789", 0x42ae804d},
	} {
		if got := xxh32([]byte(tt.in)); got != tt.want {
			t.Errorf("xxh32(%q) = %#08x, want %#08x", tt.in, got, tt.want)
		}
	}
}

func TestLZ4HeaderChecksum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		magic int8
		hc    byte
	}{
		// xxh32(60 40) >> 8 & 0xff: the LZ4 spec's descriptor checksum.
		{"v2", MagicV2, 0x82},
		{"v1", MagicV1, 0x82},
		// KAFKA-3160: Kafka's v0 writer hashed the magic bytes too.
		{"v0", MagicV0, 0x1a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := bytes.Repeat([]byte("lz4 header checksum "), 100)
			out, err := encodeLZ4Frame(nil, src, tt.magic)
			if err != nil {
				t.Fatal(err)
			}
			if want := []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, tt.hc}; !bytes.Equal(out[:7], want) {
				t.Fatalf("frame header %x, want %x", out[:7], want)
			}
			dec, err := decodeLZ4Frame(out, nil, tt.magic, 1<<20)
			if err != nil || !bytes.Equal(dec, src) {
				t.Fatalf("decode: %v (equal %v)", err, bytes.Equal(dec, src))
			}
			// A wrong HC fails for v1/v2 and is ignored for v0, as
			// Lz4BlockInputStream does.
			bad := append([]byte(nil), out...)
			bad[6] ^= 0xff
			_, err = decodeLZ4Frame(bad, nil, tt.magic, 1<<20)
			if tt.magic == MagicV0 {
				if err != nil {
					t.Errorf("v0 frame with a wrong HC: %v, want no error", err)
				}
			} else if !errors.Is(err, errLZ4Descriptor) {
				t.Errorf("frame with a wrong HC: %v, want %v", err, errLZ4Descriptor)
			}
		})
	}
	// Kafka's own files carry the same bytes.
	for _, f := range []struct {
		path string
		at   int // position of the frame in the file
		hc   byte
	}{
		{"kafka-written/v2-lz4/00000000000000000000.log", BatchHeaderSize, 0x82},
		{"kafka-written/v0-lz4/00000000000000000000.log", posLegacyKeyV0 + 4 + 4, 0x1a},
	} {
		data, err := os.ReadFile(filepath.Join(testSegmentsRoot, f.path))
		if err != nil {
			t.Fatal(err)
		}
		if got := data[f.at : f.at+7]; !bytes.Equal(got, []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, f.hc}) {
			t.Errorf("%s: frame header %x, want ...%02x", f.path, got, f.hc)
		}
	}
}

// ---------------------------------------------------------------------------
// Round trips

// roundTripRecords covers nil vs empty keys and values, binary data,
// headers with null values, timestamps out of order and offset gaps.
func roundTripRecords(base int64, headers bool) []Record {
	const t0 = 1700000000000
	recs := []Record{
		{Offset: base, Timestamp: t0, Key: []byte("key"), Value: []byte("value")},
		{Offset: base + 1, Timestamp: t0 + 5, Key: nil, Value: []byte("null key")},
		{Offset: base + 2, Timestamp: t0 + 2, Key: []byte{}, Value: []byte("empty key")},
		{Offset: base + 3, Timestamp: t0 + 3, Key: []byte("empty value"), Value: []byte{}},
		{Offset: base + 4, Timestamp: t0 + 4, Key: []byte("tombstone"), Value: nil},
		{Offset: base + 5, Timestamp: t0 - 7, Key: []byte{0xff, 0x00, 0xfe}, Value: []byte{0xc3, 0x28, 0x80}},
		{Offset: base + 6, Timestamp: t0 + 6, Key: nil, Value: nil},
		{Offset: base + 7, Timestamp: t0 + 7, Key: []byte("big"), Value: bytes.Repeat([]byte("0123456789abcdef"), 5000)},
	}
	if headers {
		recs[0].Headers = []Header{{Key: []byte("h1"), Value: []byte("v1")}, {Key: []byte("h2"), Value: nil}}
		recs[3].Headers = []Header{{Key: []byte(""), Value: []byte{}}}
		recs[6].Headers = []Header{{Key: []byte("only"), Value: nil}}
		// A gap inside the batch, as compaction leaves.
		recs[7].Offset = base + 9
	}
	return recs
}

func cloneRecords(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = cloneRecord(r)
	}
	return out
}

func TestRoundTripV2(t *testing.T) {
	t.Parallel()
	for c := CompressionNone; c <= CompressionZstd; c++ {
		for _, tt := range []TimestampType{CreateTime, LogAppendTime} {
			t.Run(fmt.Sprintf("codec=%s/ts=%s", c, tt), func(t *testing.T) {
				t.Parallel()
				const appendTime = 1700000999999
				attrs := int16(c)
				if tt == LogAppendTime {
					attrs |= attrTimestampType
				}
				headers := []Batch{
					{BaseOffset: 0, PartitionLeaderEpoch: 3, Attributes: attrs,
						ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence},
					{BaseOffset: 10, PartitionLeaderEpoch: 4, Attributes: attrs | attrTransactional,
						ProducerID: 123456789, ProducerEpoch: 7, BaseSequence: math.MaxInt32 - 2},
				}
				var seg []byte
				var comp Compressor
				var want [][]Record
				for i := range headers {
					h := &headers[i]
					if tt == LogAppendTime {
						h.MaxTimestamp = appendTime
					}
					recs := roundTripRecords(h.BaseOffset, true)
					PrepareBatch(h, recs)
					var err error
					if seg, err = comp.AppendBatch(seg, h, recs); err != nil {
						t.Fatal(err)
					}
					exp := cloneRecords(recs)
					for j := range exp {
						if tt == LogAppendTime {
							exp[j].Timestamp = appendTime
						}
					}
					want = append(want, exp)
				}
				res := scanAll(t, seg, ScanOptions{})
				if len(res.errs) != 0 || len(res.batches) != 2 || res.tail.Kind != TailNone || res.tail.Pos != int64(len(seg)) {
					t.Fatalf("scan: %d batches, errors %v, tail %+v", len(res.batches), res.errs, res.tail)
				}
				var rr RecordReader
				for i, b := range res.batches {
					h := headers[i]
					h.Magic = MagicV2
					if d := headerDiff(&h, b); d != "" {
						t.Errorf("batch %d: %s", i, d)
					}
					if !b.Valid() || b.Compression() != c || b.TimestampType() != tt || b.LastOffset() != h.BaseOffset+9 {
						t.Errorf("batch %d: valid %v codec %v type %v last offset %d", i, b.Valid(), b.Compression(),
							b.TimestampType(), b.LastOffset())
					}
					got, err := readRecords(&rr, b)
					if err != nil {
						t.Fatalf("batch %d: %v", i, err)
					}
					checkRecords(t, want[i], got)
					for j, r := range got {
						wantSeq := NoSequence
						if h.BaseSequence >= 0 {
							wantSeq = IncrementSequence(h.BaseSequence, int32(r.Offset-h.BaseOffset))
						}
						if r.Sequence != wantSeq || r.KeySize != sizeOf(want[i][j].Key) || r.ValueSize != sizeOf(want[i][j].Value) {
							t.Errorf("batch %d record %d: sequence %d key size %d value size %d", i, j, r.Sequence, r.KeySize, r.ValueSize)
						}
					}
				}
				if b := res.batches[1]; b.LastSequence() != IncrementSequence(math.MaxInt32-2, 9) || b.LastSequence() != 6 {
					t.Errorf("last sequence %d, want 6 (wrapped)", b.LastSequence())
				}
			})
		}
	}
}

func TestRoundTripLegacy(t *testing.T) {
	t.Parallel()
	type tc struct {
		magic int8
		codec Compression
		tt    TimestampType
	}
	var cases []tc
	for c := CompressionNone; c <= CompressionLZ4; c++ {
		cases = append(cases, tc{MagicV0, c, NoTimestampType}, tc{MagicV1, c, CreateTime}, tc{MagicV1, c, LogAppendTime})
	}
	for _, tt := range cases {
		t.Run(fmt.Sprintf("magic=%d/codec=%s/ts=%s", tt.magic, tt.codec, tt.tt), func(t *testing.T) {
			t.Parallel()
			const appendTime = 1700000999999
			spec := LegacySpec{Magic: tt.magic, Compression: tt.codec, TimestampType: tt.tt, LogAppendTime: appendTime}
			// Two calls: for compressed data, two wrappers, the second
			// at a non-zero offset (v1 inner offsets are relative).
			parts := [][]Record{roundTripRecords(0, false), roundTripRecords(100, false)}
			var seg []byte
			var comp Compressor
			var want []Record
			var wrappers []int64 // expected entry offsets
			for _, recs := range parts {
				var err error
				if seg, err = comp.AppendLegacy(seg, spec, recs); err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					r = cloneRecord(r)
					switch {
					case tt.magic == MagicV0:
						r.Timestamp = NoTimestamp
					case tt.tt == LogAppendTime:
						r.Timestamp = appendTime
					}
					want = append(want, r)
					if tt.codec == CompressionNone {
						wrappers = append(wrappers, r.Offset)
					}
				}
				if tt.codec != CompressionNone {
					wrappers = append(wrappers, recs[len(recs)-1].Offset)
				}
			}
			res := scanAll(t, seg, ScanOptions{})
			if len(res.errs) != 0 || res.tail.Kind != TailNone || len(res.batches) != len(wrappers) {
				t.Fatalf("scan: %d batches (want %d), errors %v, tail %+v", len(res.batches), len(wrappers), res.errs, res.tail)
			}
			var rr RecordReader
			var got []Record
			for i, b := range res.batches {
				if b.Magic != tt.magic || b.BaseOffset != wrappers[i] || !b.Valid() || b.Compression() != tt.codec {
					t.Errorf("entry %d: magic %d offset %d (want %d) valid %v codec %v", i, b.Magic, b.BaseOffset,
						wrappers[i], b.Valid(), b.Compression())
				}
				wantType := tt.tt
				if b.TimestampType() != wantType {
					t.Errorf("entry %d: timestamp type %v, want %v", i, b.TimestampType(), wantType)
				}
				if tt.magic == MagicV1 && tt.codec != CompressionNone {
					// The wrapper timestamp: the max inner timestamp, or
					// the append time.
					wantTS := int64(1700000000007)
					if tt.tt == LogAppendTime {
						wantTS = appendTime
					}
					if b.MaxTimestamp != wantTS {
						t.Errorf("wrapper %d timestamp %d, want %d", i, b.MaxTimestamp, wantTS)
					}
				}
				recs, err := readRecords(&rr, b)
				if err != nil {
					t.Fatalf("entry %d: %v", i, err)
				}
				for _, r := range recs {
					if !r.Legacy || !r.Valid || r.Magic != tt.magic || r.Sequence != NoSequence {
						t.Errorf("offset %d: legacy %v valid %v magic %d sequence %d", r.Offset, r.Legacy, r.Valid, r.Magic, r.Sequence)
					}
				}
				got = append(got, recs...)
			}
			checkRecords(t, want, got)
		})
	}
}

// ---------------------------------------------------------------------------
// Kafka-written segments: decode → re-encode

// TestReencodeKafkaWritten decodes every valid entry of every .log file
// Kafka wrote and encodes it again from the decoded fields. Uncompressed
// entries must come back byte for byte; compressed ones cannot (the
// codec's output differs from Java's), so they must decode again to the
// same header and records.
func TestReencodeKafkaWritten(t *testing.T) {
	t.Parallel()
	for _, rel := range logFiles(t, "kafka-written") {
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(testSegmentsRoot, rel))
			if err != nil {
				t.Fatal(err)
			}
			res := scanAll(t, data, ScanOptions{})
			var rr, rr2 RecordReader
			var comp Compressor
			exact, decoded := 0, 0
			for _, b := range res.batches {
				if !b.Valid() {
					continue // a damaged fixture; nothing to reproduce
				}
				recs, err := readRecords(&rr, b)
				if err != nil {
					t.Errorf("batch at %d: %v", b.Pos, err)
					continue
				}
				var out []byte
				switch {
				case b.IsV2():
					h := *b
					out, err = comp.AppendBatch(nil, &h, recs)
				case b.Compression() == CompressionNone:
					if len(recs) != 1 {
						t.Fatalf("legacy entry at %d: %d records", b.Pos, len(recs))
					}
					out, err = comp.AppendLegacy(nil, LegacySpec{Magic: b.Magic, TimestampType: b.TimestampType(),
						LogAppendTime: b.MaxTimestamp}, recs)
				default:
					out, err = comp.AppendLegacy(nil, LegacySpec{Magic: b.Magic, Compression: b.Compression(),
						TimestampType: b.TimestampType(), LogAppendTime: b.MaxTimestamp}, recs)
				}
				if err != nil {
					t.Fatalf("batch at %d: re-encode: %v", b.Pos, err)
				}
				if b.Compression() == CompressionNone {
					if !bytes.Equal(out, b.Raw) {
						t.Errorf("batch at %d (offset %d): re-encoded bytes differ\n got %x\nwant %x", b.Pos, b.BaseOffset, out, b.Raw)
					}
					exact++
					continue
				}
				b2, err := ParseBatch(out, 0)
				if err != nil {
					t.Fatalf("batch at %d: re-encoded batch: %v", b.Pos, err)
				}
				if !b2.Valid() || b2.Size() != int64(len(out)) {
					t.Errorf("batch at %d: re-encoded batch not valid", b.Pos)
				}
				if b.IsV2() {
					if d := headerDiff(b, b2); d != "" {
						t.Errorf("batch at %d: %s", b.Pos, d)
					}
				} else if b2.BaseOffset != b.BaseOffset || b2.Attributes != b.Attributes || b2.MaxTimestamp != b.MaxTimestamp {
					t.Errorf("wrapper at %d: offset %d attrs %d ts %d, want %d %d %d", b.Pos, b2.BaseOffset,
						b2.Attributes, b2.MaxTimestamp, b.BaseOffset, b.Attributes, b.MaxTimestamp)
				}
				recs2, err := readRecords(&rr2, b2)
				if err != nil {
					t.Fatalf("batch at %d: re-encoded records: %v", b.Pos, err)
				}
				checkRecords(t, recs, recs2)
				decoded++
			}
			t.Logf("%d entries byte-identical, %d compressed entries decode equal", exact, decoded)
		})
	}
}

// ---------------------------------------------------------------------------
// Truncation sweep

// cutPoints are the positions to cut a file at: every entry boundary ±1,
// and positions inside each entry's overhead, header and records.
func cutPoints(bounds []int64, end int64) []int64 {
	var cuts []int64
	add := func(c int64) {
		if c >= 0 && c <= end {
			cuts = append(cuts, c)
		}
	}
	for i, p := range bounds {
		add(p - 1)
		add(p)
		add(p + 1)
		q := end
		if i+1 < len(bounds) {
			q = bounds[i+1]
		}
		for _, d := range []int64{5, 8, 11, 12, 16, 17, 18, 21, 30, 57, 60, 61, 62, 70} {
			if p+d < q {
				add(p + d)
			}
		}
		if p < q {
			add((p + q) / 2)
			add(q - 2)
		}
	}
	add(end)
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// TestReadTruncation cuts every fixture at many positions and checks what
// the scanner makes of each prefix: how many entries it reads, and that the
// rest is classified as Kafka's reader would (FileLogInputStream.nextBatch):
// nothing at a boundary, a quiet short tail when 17 bytes or fewer remain,
// a partial entry otherwise, never an error and never a panic.
func TestReadTruncation(t *testing.T) {
	t.Parallel()
	files := append(logFiles(t, "kafka-written"), logFiles(t, "generated")...)
	for _, rel := range files {
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(testSegmentsRoot, rel))
			if err != nil {
				t.Fatal(err)
			}
			full := scanAll(t, data, ScanOptions{})
			// The clean prefix: entries up to the first error. Past it a
			// cut can produce other outcomes (checked elsewhere).
			bounds := []int64{0}
			end := int64(len(data))
			if len(full.errs) > 0 {
				end = full.errPos[0]
			}
			for _, e := range full.ends {
				if e > end {
					break
				}
				bounds = append(bounds, e)
			}
			cuts := cutPoints(bounds, end)
			for _, c := range cuts {
				k := 0 // bounds[k] is the last boundary <= c
				for k+1 < len(bounds) && bounds[k+1] <= c {
					k++
				}
				last, rem := bounds[k], c-bounds[k]
				wantKind := TailPartial
				switch {
				case rem == 0:
					wantKind = TailNone
				case rem <= HeaderSizeUpToMagic:
					wantKind = TailShort
				}
				got := scanAll(t, data[:c], ScanOptions{})
				if len(got.errs) != 0 {
					t.Errorf("cut at %d: unexpected errors %v", c, got.errs)
				}
				if len(got.batches) != k {
					t.Errorf("cut at %d: read %d entries, want %d", c, len(got.batches), k)
				}
				tl := got.tail
				if tl.Kind != wantKind || tl.Pos != last || tl.Bytes != rem {
					t.Errorf("cut at %d: tail %v at %d (%d bytes), want %v at %d (%d bytes)", c, tl.Kind, tl.Pos, tl.Bytes, wantKind, last, rem)
				}
				if wantKind == TailPartial {
					wantSize := full.tail.Want
					if k+1 < len(bounds) {
						wantSize = bounds[k+1] - bounds[k]
					}
					wantOffset := int64(binary.BigEndian.Uint64(data[last:]))
					seen := int64(0)
					for _, b := range got.batches {
						seen = max(seen, b.LastOffset())
					}
					if wantOffset < 0 || wantOffset-seen > 1<<31-1 {
						wantOffset = -1 // junk: an offset no segment could hold
					}
					if tl.Want != wantSize || tl.Offset != wantOffset {
						t.Errorf("cut at %d: partial entry wants %d bytes at offset %d, want %d at offset %d", c, tl.Want, tl.Offset, wantSize, wantOffset)
					}
				}
				// The entries read are the same as in the whole file.
				for i, b := range got.batches {
					if !bytes.Equal(b.Raw, full.batches[i].Raw) {
						t.Errorf("cut at %d: entry %d differs from the uncut file", c, i)
					}
				}
			}
			t.Logf("%d cuts, %d entries", len(cuts), len(bounds)-1)
		})
	}
}

// ---------------------------------------------------------------------------
// Damaged fixtures

// TestScanDamaged checks each generated corrupt-* file against what its
// README entry says it is. Batch 1 of v2-none (offsets 3-7) is the damaged
// one unless noted.
func TestScanDamaged(t *testing.T) {
	t.Parallel()
	good := generatedFile(t, "v2-none")
	base := scanAll(t, good, ScanOptions{})
	if len(base.batches) != 3 || len(base.errs) != 0 {
		t.Fatalf("v2-none: %d batches, errors %v", len(base.batches), base.errs)
	}
	pos1, pos2 := base.batches[1].Pos, base.batches[2].Pos
	end1, size := base.ends[1], int64(len(good))

	// readAll decodes the records of every batch; it returns the records
	// of each and the error each reader ended with.
	readAll := func(res scanResult) ([][]Record, []error) {
		var rr RecordReader
		recs := make([][]Record, len(res.batches))
		errs := make([]error, len(res.batches))
		for i, b := range res.batches {
			recs[i], errs[i] = readRecords(&rr, b)
		}
		return recs, errs
	}
	// wantScanError checks the single scanner error of res.
	wantScanError := func(t *testing.T, res scanResult, kind error, pos, offset int64, field string) {
		t.Helper()
		if len(res.errs) != 1 {
			t.Fatalf("scanner errors %v, want exactly one", res.errs)
		}
		err := res.errs[0]
		if !errors.Is(err, kind) {
			t.Errorf("error %v, want kind %v", err, kind)
		}
		pe := posErr(t, err)
		if pe.Pos != pos || pe.Offset != offset || pe.Field != field {
			t.Errorf("error at position %d offset %d field %q, want %d %d %q", pe.Pos, pe.Offset, pe.Field, pos, offset, field)
		}
	}

	tests := []struct {
		name  string
		check func(t *testing.T, data []byte, res scanResult)
	}{
		{"corrupt-crc-flipped", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 3 || len(res.errs) != 0 || res.tail.Kind != TailNone {
				t.Fatalf("%d batches, errors %v, tail %v", len(res.batches), res.errs, res.tail.Kind)
			}
			for i, b := range res.batches {
				if b.Valid() != (i != 1) {
					t.Errorf("batch %d: Valid() = %v", i, b.Valid())
				}
			}
			b := res.batches[1]
			err := b.CheckCRC()
			if !errors.Is(err, ErrChecksum) {
				t.Fatalf("CheckCRC = %v, want ErrChecksum", err)
			}
			var ce *CorruptRecordError
			if !errors.As(err, &ce) || ce.Offset != 3 || ce.Stored != b.CRC || ce.Computed != base.batches[1].CRC {
				t.Errorf("CheckCRC = %#v, want offset 3, stored %#x, computed %#x", ce, b.CRC, base.batches[1].CRC)
			}
			// Only the stored CRC is damaged: the records still decode.
			recs, errs := readAll(res)
			for i := range recs {
				if errs[i] != nil {
					t.Errorf("batch %d: %v", i, errs[i])
				}
			}
			if len(recs[1]) != 5 {
				t.Errorf("batch 1: %d records, want 5", len(recs[1]))
			}
		}},
		{"corrupt-cut-mid-header", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 2 || len(res.errs) != 0 {
				t.Fatalf("%d batches, errors %v", len(res.batches), res.errs)
			}
			want := Tail{Kind: TailPartial, Pos: pos2, Bytes: 30, Offset: 8, Want: size - pos2}
			if res.tail != want {
				t.Errorf("tail %+v, want %+v", res.tail, want)
			}
			// ParseBatch on the cut entry reports the truncation.
			_, err := ParseBatch(data[pos2:], pos2)
			if !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("ParseBatch of the cut entry: %v, want ErrTruncated", err)
			}
			if pe := posErr(t, err); pe.Pos != pos2 || pe.Offset != 8 {
				t.Errorf("ParseBatch error at %d offset %d, want %d 8", pe.Pos, pe.Offset, pos2)
			}
		}},
		{"corrupt-cut-short", func(t *testing.T, data []byte, res scanResult) {
			want := Tail{Kind: TailShort, Pos: pos2, Bytes: 10, Offset: -1}
			if len(res.batches) != 2 || len(res.errs) != 0 || res.tail != want {
				t.Errorf("%d batches, errors %v, tail %+v; want 2, none, %+v", len(res.batches), res.errs, res.tail, want)
			}
			_, err := ParseBatch(data[pos2:], pos2)
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("ParseBatch of 10 bytes: %v, want ErrTruncated", err)
			}
		}},
		{"corrupt-cut-mid-record", func(t *testing.T, data []byte, res scanResult) {
			want := Tail{Kind: TailPartial, Pos: pos2, Bytes: BatchHeaderSize + 5, Offset: 8, Want: size - pos2}
			if len(res.batches) != 2 || len(res.errs) != 0 || res.tail != want {
				t.Errorf("%d batches, errors %v, tail %+v; want 2, none, %+v", len(res.batches), res.errs, res.tail, want)
			}
		}},
		{"corrupt-length-negative", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 1 {
				t.Errorf("%d batches, want 1", len(res.batches))
			}
			wantScanError(t, res, ErrCorrupt, pos1, 3, "size")
			if pe := posErr(t, res.errs[0]); pe.Actual != int32(-1) {
				t.Errorf("error reports size %v, want -1", pe.Actual)
			}
			if res.tail.Kind != TailCorrupt || res.tail.Pos != pos1 || res.tail.Bytes != size-pos1 {
				t.Errorf("tail %+v, want corrupt at %d", res.tail, pos1)
			}
			_, err := ParseBatch(data[pos1:], pos1)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("ParseBatch: %v, want ErrCorrupt", err)
			}
		}},
		{"corrupt-length-too-small", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 1 {
				t.Errorf("%d batches, want 1", len(res.batches))
			}
			wantScanError(t, res, ErrCorrupt, pos1, 3, "size")
			if res.tail.Kind != TailCorrupt || res.tail.Pos != pos1 {
				t.Errorf("tail %+v, want corrupt at %d", res.tail, pos1)
			}
		}},
		{"corrupt-length-under-header", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) < 1 || res.batches[0].Pos != 0 {
				t.Fatalf("first batch missing")
			}
			if len(res.errs) == 0 {
				t.Fatal("no error")
			}
			err := res.errs[0]
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("first error %v, want ErrCorrupt", err)
			}
			if pe := posErr(t, err); pe.Pos != pos1 || pe.Offset != 3 || pe.Field != "batchLength" {
				t.Errorf("first error at %d offset %d field %q, want %d 3 batchLength", pe.Pos, pe.Offset, pe.Field, pos1)
			}
			// The scanner resynchronised on the length field (52 bytes
			// on) and went on without panicking; what it finds there is
			// the middle of batch 1.
			if res.errPos[0] != pos1 {
				t.Errorf("error reported before position %d, want %d", res.errPos[0], pos1)
			}
		}},
		{"corrupt-count-too-high", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 3 || len(res.errs) != 0 || res.tail.Kind != TailNone {
				t.Fatalf("%d batches, errors %v, tail %v", len(res.batches), res.errs, res.tail.Kind)
			}
			b := res.batches[1]
			if !b.Valid() || b.RecordCount != 6 {
				t.Errorf("batch 1: valid %v count %d, want true 6", b.Valid(), b.RecordCount)
			}
			recs, errs := readAll(res)
			if len(recs[1]) != 5 {
				t.Errorf("batch 1: %d records before the error, want 5", len(recs[1]))
			}
			err := errs[1]
			// "Incorrect declared batch size, premature EOF reached"
			if !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("batch 1: %v, want ErrTruncated", err)
			}
			if pe := posErr(t, err); pe.Pos != end1 || pe.Offset != 8 {
				t.Errorf("error at %d offset %d, want %d 8", pe.Pos, pe.Offset, end1)
			}
			if errs[0] != nil || errs[2] != nil {
				t.Errorf("other batches: %v, %v", errs[0], errs[2])
			}
		}},
		{"corrupt-count-too-low", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 3 || len(res.errs) != 0 {
				t.Fatalf("%d batches, errors %v", len(res.batches), res.errs)
			}
			b := res.batches[1]
			if !b.Valid() || b.RecordCount != 4 {
				t.Errorf("batch 1: valid %v count %d, want true 4", b.Valid(), b.RecordCount)
			}
			recs, errs := readAll(res)
			// Kafka throws on reading the 4th record, when bytes remain.
			if len(recs[1]) != 3 {
				t.Errorf("batch 1: %d records before the error, want 3", len(recs[1]))
			}
			err := errs[1]
			// "Incorrect declared batch size, records still remaining in file"
			if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated) {
				t.Fatalf("batch 1: %v, want ErrCorrupt", err)
			}
			pe := posErr(t, err)
			// The 5th record (offset 7) starts where the error points.
			var rr RecordReader
			all, _ := readRecords(&rr, base.batches[1])
			wantPos := end1 - int64(all[4].SizeInBytes)
			if pe.Pos != wantPos || pe.Offset != 6 || pe.Field != "batchLength" {
				t.Errorf("error at %d offset %d field %q, want %d 6 batchLength", pe.Pos, pe.Offset, pe.Field, wantPos)
			}
		}},
		{"corrupt-zero-tail", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 3 {
				t.Errorf("%d batches, want 3", len(res.batches))
			}
			wantScanError(t, res, ErrCorrupt, size, 0, "size")
			want := Tail{Kind: TailZeros, Pos: size, Bytes: 1024, Offset: 0}
			if res.tail != want {
				t.Errorf("tail %+v, want %+v", res.tail, want)
			}
		}},
		{"corrupt-garbage-tail", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 3 {
				t.Errorf("%d batches, want 3", len(res.batches))
			}
			tl := res.tail
			if tl.Pos != size || tl.Bytes != 1024 || (tl.Kind != TailPartial && tl.Kind != TailCorrupt) {
				t.Errorf("tail %+v, want partial or corrupt at %d (1024 bytes)", tl, size)
			}
			for _, err := range res.errs {
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("error %v, want ErrCorrupt", err)
				}
			}
		}},
		{"corrupt-magic-unknown", func(t *testing.T, data []byte, res scanResult) {
			// "Invalid magic used in LegacyRecord: -1"; the length is
			// intact, so the scanner goes on with batch 2.
			wantScanError(t, res, ErrUnsupported, pos1, 3, "magic")
			if pe := posErr(t, res.errs[0]); pe.Actual != int8(-1) {
				t.Errorf("error reports magic %v, want -1", pe.Actual)
			}
			if len(res.batches) != 2 || res.batches[0].Pos != 0 || res.batches[1].Pos != pos2 {
				t.Errorf("%d batches, want batches 0 and 2", len(res.batches))
			}
			if res.tail.Kind != TailNone || res.tail.Pos != size {
				t.Errorf("tail %+v", res.tail)
			}
			_, err := ParseBatch(data[pos1:], pos1)
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("ParseBatch: %v, want ErrUnsupported", err)
			}
		}},
		{"corrupt-magic-3", func(t *testing.T, data []byte, res scanResult) {
			// FileLogInputStream reads every magic >= 2 as v2; the CRC
			// does not cover the magic.
			if len(res.batches) != 3 || len(res.errs) != 0 {
				t.Fatalf("%d batches, errors %v", len(res.batches), res.errs)
			}
			b := res.batches[1]
			if b.Magic != 3 || !b.IsV2() || !b.Valid() {
				t.Errorf("batch 1: magic %d v2 %v valid %v", b.Magic, b.IsV2(), b.Valid())
			}
			recs, errs := readAll(res)
			if errs[1] != nil || len(recs[1]) != 5 {
				t.Errorf("batch 1: %d records, %v", len(recs[1]), errs[1])
			}
		}},
		{"corrupt-codec-5", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 3 || len(res.errs) != 0 {
				t.Fatalf("%d batches, errors %v", len(res.batches), res.errs)
			}
			b := res.batches[1]
			if !b.Valid() || b.Compression() != 5 || b.Compression().Known() {
				t.Errorf("batch 1: valid %v codec %v", b.Valid(), b.Compression())
			}
			recs, errs := readAll(res)
			if !errors.Is(errs[1], ErrUnsupported) || len(recs[1]) != 0 {
				t.Fatalf("batch 1: %d records, %v; want ErrUnsupported", len(recs[1]), errs[1])
			}
			if pe := posErr(t, errs[1]); pe.Pos != pos1+posAttributes || pe.Offset != 3 {
				t.Errorf("error at %d offset %d, want %d 3", pe.Pos, pe.Offset, pos1+posAttributes)
			}
			if errs[0] != nil || errs[2] != nil {
				t.Errorf("other batches: %v, %v", errs[0], errs[2])
			}
		}},
		{"corrupt-legacy-crc-flipped", func(t *testing.T, data []byte, res scanResult) {
			if len(res.batches) != 6 || len(res.errs) != 0 || res.tail.Kind != TailNone {
				t.Fatalf("%d entries, errors %v, tail %v", len(res.batches), res.errs, res.tail.Kind)
			}
			recs, errs := readAll(res)
			for i, b := range res.batches {
				if b.Valid() != (i != 1) || errs[i] != nil || len(recs[i]) != 1 || recs[i][0].Valid != (i != 1) {
					t.Errorf("entry %d: Valid %v, %v", i, b.Valid(), errs[i])
				}
			}
			var ce *CorruptRecordError
			if err := res.batches[1].CheckCRC(); !errors.Is(err, ErrChecksum) || !errors.As(err, &ce) || ce.Offset != 1 {
				t.Errorf("CheckCRC = %v, want ErrChecksum at offset 1", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := generatedFile(t, tt.name)
			tt.check(t, data, scanAll(t, data, ScanOptions{}))
		})
	}
}

func TestScanMaxBatchBytes(t *testing.T) {
	t.Parallel()
	data := generatedFile(t, "v2-gzip")
	res := scanAll(t, data, ScanOptions{MaxBatchBytes: 1024})
	// The fourth batch (the large one) is bigger than 1 KiB even compressed.
	if len(res.batches) != 3 || len(res.errs) != 1 {
		t.Fatalf("%d batches, errors %v; want 3 and one error", len(res.batches), res.errs)
	}
	if !errors.Is(res.errs[0], ErrTooLarge) || res.tail.Kind != TailCorrupt || res.tail.Pos != res.ends[2] {
		t.Errorf("error %v, tail %+v; want ErrTooLarge at %d", res.errs[0], res.tail, res.ends[2])
	}
	if pe := posErr(t, res.errs[0]); pe.Pos != res.ends[2] || pe.Offset != 10 {
		t.Errorf("error at %d offset %d, want %d 10", pe.Pos, pe.Offset, res.ends[2])
	}
}

// ---------------------------------------------------------------------------
// Generated good fixtures: what each scenario promises

func TestGeneratedScenarios(t *testing.T) {
	t.Parallel()
	type batchRecs struct {
		b    *Batch
		recs []Record
	}
	const t0 = 1700000000000
	tests := []struct {
		name  string
		check func(t *testing.T, bs []batchRecs)
	}{
		{"v2-transactions", func(t *testing.T, bs []batchRecs) {
			if len(bs) != 5 {
				t.Fatalf("%d batches, want 5", len(bs))
			}
			for i, want := range []struct {
				control bool
				ctype   ControlType
				base    int64
				seq     int32
			}{{false, 0, 0, 0}, {true, ControlCommit, 3, -1}, {false, 0, 4, 3}, {true, ControlAbort, 6, -1}} {
				b := bs[i].b
				if !b.IsTransactional() || b.IsControl() != want.control || b.BaseOffset != want.base ||
					b.ProducerID != 1000 || b.ProducerEpoch != 3 || b.BaseSequence != want.seq || b.PartitionLeaderEpoch != 2 {
					t.Errorf("batch %d: %+v", i, b)
				}
				if !want.control {
					continue
				}
				r := bs[i].recs[0]
				k, err := ParseControlKey(r.Key)
				if err != nil || k.Type != want.ctype || k.Version != 0 {
					t.Errorf("batch %d: control key %+v, %v", i, k, err)
				}
				m, err := ParseEndTxnMarker(r.Value)
				if err != nil || m.CoordinatorEpoch != 7 {
					t.Errorf("batch %d: marker %+v, %v", i, m, err)
				}
			}
			if bs[2].b.Compression() != CompressionZstd || bs[2].b.LastSequence() != 4 {
				t.Errorf("batch 2: codec %v last sequence %d", bs[2].b.Compression(), bs[2].b.LastSequence())
			}
			if b := bs[4].b; b.IsTransactional() || b.ProducerID != -1 {
				t.Errorf("batch 4 should be non-transactional: %+v", b)
			}
		}},
		{"v2-idempotent-seqwrap", func(t *testing.T, bs []batchRecs) {
			if len(bs) != 2 || bs[0].b.LastSequence() != 1 || bs[1].b.BaseSequence != 2 || bs[1].b.LastSequence() != 3 {
				t.Fatalf("sequences wrong")
			}
			for i, want := range []int32{math.MaxInt32 - 1, math.MaxInt32, 0, 1} {
				if s := bs[0].recs[i].Sequence; s != want {
					t.Errorf("record %d: sequence %d, want %d", i, s, want)
				}
			}
		}},
		{"v2-logappendtime", func(t *testing.T, bs []batchRecs) {
			for i, br := range bs {
				if br.b.TimestampType() != LogAppendTime {
					t.Errorf("batch %d: %v", i, br.b.TimestampType())
				}
				for _, r := range br.recs {
					if r.Timestamp != t0+600000+int64(i) {
						t.Errorf("offset %d: timestamp %d, want the append time", r.Offset, r.Timestamp)
					}
				}
			}
		}},
		{"v1-logappendtime-gzip", func(t *testing.T, bs []batchRecs) {
			for _, br := range bs {
				for _, r := range br.recs {
					if r.Timestamp != t0+600000 {
						t.Errorf("offset %d: timestamp %d, want the wrapper's append time", r.Offset, r.Timestamp)
					}
				}
			}
		}},
		{"v2-headers", func(t *testing.T, bs []batchRecs) {
			r := bs[0].recs[4]
			if len(r.Headers) != 5 || r.Headers[1].Value != nil || r.Headers[3].Key == nil || len(r.Headers[3].Key) != 0 {
				t.Errorf("record 4 headers: %+v", r.Headers)
			}
			if h := bs[0].recs[3].Headers; len(h) != 1 || h[0].Value == nil || len(h[0].Value) != 0 {
				t.Errorf("record 3: empty header value lost: %+v", h)
			}
			if h := bs[1].recs[0].Headers; len(h) != 1 || h[0].Value != nil || bs[1].recs[0].Key != nil || bs[1].recs[0].Value != nil {
				t.Errorf("record 5: %+v", bs[1].recs[0])
			}
		}},
		{"v2-keys-values", func(t *testing.T, bs []batchRecs) {
			for _, br := range bs {
				rs := br.recs
				if len(rs) != 9 || rs[0].Key != nil || rs[1].Key == nil || len(rs[1].Key) != 0 || rs[2].Value == nil ||
					len(rs[2].Value) != 0 || rs[3].Value != nil || rs[3].ValueSize != -1 || rs[1].KeySize != 0 {
					t.Errorf("batch at %d: null/empty keys and values not preserved", br.b.Pos)
				}
			}
		}},
		{"v1-keys-values", func(t *testing.T, bs []batchRecs) {
			var rs []Record
			for _, br := range bs {
				rs = append(rs, br.recs...)
			}
			if len(rs) != 18 || rs[0].Key != nil || rs[1].Key == nil || rs[2].Value == nil || rs[3].Value != nil ||
				rs[9].Key != nil || rs[10].Key == nil || rs[12].Value != nil || rs[12].ValueSize != -1 {
				t.Errorf("null/empty keys and values not preserved")
			}
		}},
		{"v2-base-offset-gap", func(t *testing.T, bs []batchRecs) {
			if len(bs) != 3 || bs[0].b.BaseOffset != 1000 || bs[1].b.BaseOffset != 1003 || bs[1].b.LastOffset() != 1009 ||
				bs[1].b.NextOffset() != 1010 || bs[2].b.BaseOffset != 1020 || bs[2].b.PartitionLeaderEpoch != 5 {
				t.Fatalf("offsets wrong")
			}
			if rs := bs[1].recs; len(rs) != 2 || rs[0].Offset != 1005 || rs[1].Offset != 1007 || rs[0].OffsetDelta != 2 {
				t.Errorf("compacted batch records: %+v", rs)
			}
		}},
		{"v2-delete-horizon", func(t *testing.T, bs []batchRecs) {
			if len(bs) != 4 {
				t.Fatalf("%d batches", len(bs))
			}
			h, ok := bs[1].b.DeleteHorizonMs()
			if !ok || h != t0+86400000 || bs[1].recs[0].Value != nil || bs[1].recs[0].Timestamp != t0+1 {
				t.Errorf("delete horizon %d %v, records %+v", h, ok, bs[1].recs)
			}
			if _, ok := bs[0].b.DeleteHorizonMs(); ok {
				t.Error("batch 0 has a delete horizon")
			}
			e := bs[2].b
			if e.RecordCount != 0 || len(bs[2].recs) != 0 || e.LastOffset() != 6 || e.NextOffset() != 7 ||
				e.BaseTimestamp != -1 || e.ProducerID != 77 || e.LastSequence() != 12 {
				t.Errorf("empty batch: %+v", e)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := generatedFile(t, tt.name)
			res := scanAll(t, data, ScanOptions{})
			if len(res.errs) != 0 || res.tail.Kind != TailNone {
				t.Fatalf("scan errors %v, tail %+v", res.errs, res.tail)
			}
			var rr RecordReader
			var bs []batchRecs
			for _, b := range res.batches {
				if !b.Valid() {
					t.Errorf("batch at %d is not valid", b.Pos)
				}
				recs, err := readRecords(&rr, b)
				if err != nil {
					t.Fatalf("batch at %d: %v", b.Pos, err)
				}
				bs = append(bs, batchRecs{b, recs})
			}
			tt.check(t, bs)
		})
	}
	// Every good generated file scans and decodes cleanly.
	for _, rel := range logFiles(t, "generated") {
		if strings.Contains(rel, "corrupt-") {
			continue
		}
		t.Run("clean/"+filepath.ToSlash(filepath.Dir(rel)), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(testSegmentsRoot, rel))
			if err != nil {
				t.Fatal(err)
			}
			res := scanAll(t, data, ScanOptions{})
			if len(res.errs) != 0 || res.tail.Kind != TailNone || len(res.batches) == 0 {
				t.Fatalf("%d batches, errors %v, tail %+v", len(res.batches), res.errs, res.tail)
			}
			var rr RecordReader
			next := int64(math.MinInt64)
			for _, b := range res.batches {
				if !b.Valid() {
					t.Errorf("batch at %d is not valid", b.Pos)
				}
				recs, err := readRecords(&rr, b)
				if err != nil {
					t.Errorf("batch at %d: %v", b.Pos, err)
				}
				for _, r := range recs {
					if r.Offset < next {
						t.Errorf("offset %d after %d", r.Offset, next-1)
					}
					next = r.Offset + 1
				}
				if b.IsV2() {
					next = b.NextOffset()
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Decompression bombs

// TestDecompressBombBounded checks that a small payload that expands past
// Decompressor.MaxBytes fails with ErrTooLarge instead of being inflated.
// It does not call t.Parallel, so its allocation count is its own.
func TestDecompressBombBounded(t *testing.T) {
	const (
		limit    = 1 << 20
		expanded = 16 << 20
		// What decoding may allocate: the capped output (grown by
		// doubling) plus codec state, far below the 16 MiB expansion.
		allocBound = 8 << 20
	)
	zeros := make([]byte, expanded)
	var comp Compressor
	type bomb struct {
		name  string
		batch *Batch
	}
	var bombs []bomb
	for c := CompressionGzip; c <= CompressionZstd; c++ {
		h := Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Attributes: int16(c)}
		recs := []Record{{Value: zeros}}
		PrepareBatch(&h, recs)
		raw, err := comp.AppendBatch(nil, &h, recs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseBatch(raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		bombs = append(bombs, bomb{"v2/" + c.String(), b})
		if c == CompressionZstd {
			continue
		}
		raw, err = comp.AppendLegacy(nil, LegacySpec{Magic: MagicV1, Compression: c}, []Record{{Value: zeros}})
		if err != nil {
			t.Fatal(err)
		}
		if b, err = ParseBatch(raw, 0); err != nil {
			t.Fatal(err)
		}
		bombs = append(bombs, bomb{"v1/" + c.String(), b})
	}
	// A raw snappy block (no xerial framing), which declares its whole
	// decoded length up front.
	{
		h := Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		recs := []Record{{Value: zeros}}
		PrepareBatch(&h, recs)
		raw, err := comp.AppendBatch(nil, &h, recs)
		if err != nil {
			t.Fatal(err)
		}
		region := snappy.Encode(nil, raw[BatchHeaderSize:])
		raw = append(raw[:BatchHeaderSize:BatchHeaderSize], region...)
		binary.BigEndian.PutUint32(raw[posBatchLength:], uint32(len(raw)-LogOverhead))
		binary.BigEndian.PutUint16(raw[posAttributes:], uint16(CompressionSnappy))
		binary.BigEndian.PutUint32(raw[posCRC:], ChecksumC(raw[posAttributes:]))
		b, err := ParseBatch(raw, 0)
		if err != nil {
			t.Fatal(err)
		}
		bombs = append(bombs, bomb{"v2/snappy-raw-block", b})
	}
	zeros = nil
	for _, bm := range bombs {
		t.Run(bm.name, func(t *testing.T) {
			if bm.batch.Size() > 1<<20 {
				t.Fatalf("the bomb is %d bytes; it should be small", bm.batch.Size())
			}
			rr := RecordReader{Decompressor: Decompressor{MaxBytes: limit}}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := rr.Reset(bm.batch)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Reset = %v, want ErrTooLarge", err)
			}
			if pe := posErr(t, err); pe.Offset != bm.batch.BaseOffset {
				t.Errorf("error offset %d, want %d", pe.Offset, bm.batch.BaseOffset)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > allocBound {
				t.Errorf("decoding allocated %d bytes, want at most %d", n, allocBound)
			}
			// With the default cap, the same batch decodes.
			var ok RecordReader
			recs, err := readRecords(&ok, bm.batch)
			if err != nil || len(recs) != 1 || len(recs[0].Value) != expanded {
				t.Errorf("with the default cap: %d records, %v", len(recs), err)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Errors

func TestPosErrorKinds(t *testing.T) {
	t.Parallel()
	for _, kind := range []error{ErrTruncated, ErrChecksum, ErrCorrupt, ErrUnsupported, ErrTooLarge} {
		var err error = &PosError{Kind: kind, Pos: 10, Offset: 3, Field: "f", Msg: "m"}
		wrapped := fmt.Errorf("reading segment: %w", err)
		if !errors.Is(wrapped, kind) {
			t.Errorf("%v: errors.Is(kind) false", kind)
		}
		if got := errors.Is(wrapped, io.ErrUnexpectedEOF); got != (kind == ErrTruncated) {
			t.Errorf("%v: errors.Is(io.ErrUnexpectedEOF) = %v", kind, got)
		}
		var pe *PosError
		if !errors.As(wrapped, &pe) || pe.Pos != 10 || pe.Offset != 3 {
			t.Errorf("%v: errors.As failed", kind)
		}
		if err.Error() == "" {
			t.Errorf("%v: empty message", kind)
		}
	}
	var ce error = &CorruptRecordError{Offset: 5, Stored: 1, Computed: 2}
	if !errors.Is(ce, ErrChecksum) || errors.Is(ce, ErrCorrupt) {
		t.Error("CorruptRecordError should match ErrChecksum only")
	}
}
