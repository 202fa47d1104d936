package format

// Fuzz targets for the decoders. Every input is hostile: the properties are
// that nothing panics, positions only move forward, the scanner accounts for
// every byte, memory stays under the configured caps, and what decodes
// cleanly re-encodes to the same bytes. Run one with, for example,
//
//	go test -run='^$' -fuzz='^FuzzScan$' -fuzztime=60s ./format/
//
// Crashers found so far are kept in testdata/fuzz/<Target>/ and run as
// regression tests by a plain go test.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fuzzMaxBatchBytes = 1 << 20 // ScanOptions.MaxBatchBytes under fuzzing
	fuzzMaxOutBytes   = 1 << 20 // Decompressor.MaxBytes under fuzzing
	fuzzSeedMaxFile   = 1 << 20 // larger fixture files are not seeds
	fuzzSeedPrefix    = 64 << 10
)

// fuzzSeedFiles returns the first 64 KiB of every .log and .checkpoint file
// under the repository's testdata/segments (the real Kafka fixtures), in
// walk order. Files over 1 MiB are skipped. A missing tree gives no seeds.
func fuzzSeedFiles(tb testing.TB) [][]byte {
	tb.Helper()
	root := filepath.Join("..", "testdata", "segments")
	var seeds [][]byte
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".log") || strings.HasSuffix(p, ".checkpoint")) {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > fuzzSeedMaxFile {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		seeds = append(seeds, b[:min(len(b), fuzzSeedPrefix)])
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return seeds
}

// fuzzEntries splits seed files into their complete entries, for the
// targets that take one batch or one records region.
func fuzzEntries(files [][]byte) []*Batch {
	var out []*Batch
	for _, f := range files {
		sc := NewScanner(bytes.NewReader(f), int64(len(f)), ScanOptions{})
		for {
			b, err := sc.Next()
			if err == io.EOF || (err != nil && sc.Done()) {
				break
			}
			if err == nil {
				out = append(out, b.Clone())
			}
		}
	}
	return out
}

// fuzzCheckError fails unless err is one of the package's structured errors
// (a *PosError of a known kind, or a *CorruptRecordError).
func fuzzCheckError(t *testing.T, err error) {
	t.Helper()
	var pe *PosError
	if errors.As(err, &pe) {
		switch pe.Kind {
		case ErrTruncated, ErrChecksum, ErrCorrupt, ErrUnsupported, ErrTooLarge:
		default:
			t.Fatalf("PosError of unknown kind %v: %v", pe.Kind, err)
		}
		_ = pe.Error()
		return
	}
	var ce *CorruptRecordError
	if !errors.As(err, &ce) {
		t.Fatalf("unstructured error %T: %v", err, err)
	}
}

// fuzzReadRecords reads every record of b, checking each one's invariants,
// and returns how many decoded and the error that stopped the reader
// (nil at a clean end).
func fuzzReadRecords(t *testing.T, rr *RecordReader, b *Batch) (int, error) {
	t.Helper()
	if err := rr.Reset(b); err != nil {
		fuzzCheckError(t, err)
		return 0, err
	}
	var rec Record
	n := 0
	for {
		err := rr.Next(&rec)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			fuzzCheckError(t, err)
			return n, err
		}
		n++
		if b.IsV2() && n > int(b.RecordCount) {
			t.Fatalf("record %d of a batch that declares %d", n, b.RecordCount)
		}
		if !rec.Legacy && (rec.KeySize != sizeOf(rec.Key) || rec.ValueSize != sizeOf(rec.Value)) {
			t.Fatalf("key/value sizes %d/%d do not match the slices (%d/%d bytes)",
				rec.KeySize, rec.ValueSize, len(rec.Key), len(rec.Value))
		}
		if b.IsV2() && rec.Offset != b.BaseOffset+int64(rec.OffsetDelta) {
			t.Fatalf("offset %d != base %d + delta %d", rec.Offset, b.BaseOffset, rec.OffsetDelta)
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeedFiles(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := NewScanner(bytes.NewReader(data), int64(len(data)), ScanOptions{MaxBatchBytes: fuzzMaxBatchBytes})
		var rr RecordReader
		rr.Decompressor.MaxBytes = fuzzMaxOutBytes
		last := sc.Pos()
		for {
			b, err := sc.Next()
			if sc.Pos() < last {
				t.Fatalf("Pos moved back from %d to %d", last, sc.Pos())
			}
			if cap(sc.buf) > fuzzMaxBatchBytes {
				t.Fatalf("buffer grew to %d bytes, over MaxBatchBytes %d", cap(sc.buf), fuzzMaxBatchBytes)
			}
			if err != nil && (err == io.EOF || sc.Done()) {
				if err != io.EOF {
					fuzzCheckError(t, err)
				}
				tail := sc.Tail()
				if tail.Pos+tail.Bytes != int64(len(data)) {
					t.Fatalf("tail %+v does not end at %d (err %v)", tail, len(data), err)
				}
				if tail.Pos != sc.Pos() {
					t.Fatalf("tail at %d, scanner at %d", tail.Pos, sc.Pos())
				}
				if err == io.EOF && tail.Kind == TailCorrupt {
					t.Fatalf("io.EOF with a corrupt tail %+v", tail)
				}
				if again, err2 := sc.Next(); again != nil || err2 != err {
					t.Fatalf("Next after the end: %v, %v; want nil, %v", again, err2, err)
				}
				return
			}
			if err != nil {
				// A header the format rejects; the scan goes on after it.
				fuzzCheckError(t, err)
				last = sc.Pos()
				continue
			}
			if b.Pos != last || b.Pos+b.Size() != sc.Pos() || int64(len(b.Raw)) != b.Size() {
				t.Fatalf("batch at %d size %d (raw %d), scanner from %d to %d",
					b.Pos, b.Size(), len(b.Raw), last, sc.Pos())
			}
			last = sc.Pos()
			if b.Valid() != (b.CheckCRC() == nil) {
				t.Fatal("Valid and CheckCRC disagree")
			}
			fuzzReadRecords(t, &rr, b)
		}
	})
}

// fuzzCanonicalRecords reports whether every varint in a v2 records region
// is in its shortest form and every null is written as length -1, the only
// forms AppendBatch writes. Kafka (and RecordReader) also accept longer
// varints and any negative length as null, which cannot round-trip byte for
// byte. It assumes the region already decoded without error.
func fuzzCanonicalRecords(d []byte, count int32) bool {
	p := 0
	varint := func() int32 {
		if p < 0 {
			return 0
		}
		v, n := Varint(d[p:])
		if n <= 0 || !bytes.Equal(d[p:p+n], AppendVarint(nil, v)) {
			p = -1
			return 0
		}
		p += n
		return v
	}
	sized := func() {
		l := varint()
		switch {
		case p < 0:
		case l < -1:
			p = -1 // any negative length is null; AppendBatch writes -1
		case l > 0:
			p += int(l)
		}
	}
	for i := int32(0); i < count && p >= 0; i++ {
		varint() // length
		if p < 0 {
			return false
		}
		p++ // attributes
		ts, n := Varlong(d[p:])
		if n <= 0 || !bytes.Equal(d[p:p+n], AppendVarlong(nil, ts)) {
			return false
		}
		p += n
		varint() // offset delta
		sized()  // key
		sized()  // value
		nh := varint()
		for j := int32(0); j < nh && p >= 0; j++ {
			sized()
			sized()
		}
	}
	return p == len(d)
}

// fuzzFixCRC returns a copy of a v2 entry with its CRC recomputed, so that
// mutations after the CRC field reach the record decoder instead of stopping
// at the checksum.
func fuzzFixCRC(data []byte) []byte {
	if len(data) < BatchHeaderSize || int8(data[posMagic]) < MagicV2 {
		return data
	}
	size := int64(int32(binary.BigEndian.Uint32(data[posSize:])))
	end := LogOverhead + size
	if size < 0 || end > int64(len(data)) || end < BatchHeaderSize {
		return data
	}
	c := bytes.Clone(data)
	binary.BigEndian.PutUint32(c[posCRC:], ChecksumC(c[posAttributes:end]))
	return c
}

func FuzzParseBatch(f *testing.F) {
	files := fuzzSeedFiles(f)
	for _, s := range files {
		f.Add(s)
	}
	for _, b := range fuzzEntries(files) {
		f.Add(b.Raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, fuzzFixCRC(data)} {
			fuzzRoundTrip(t, in)
		}
	})
}

// fuzzRoundTrip parses one entry and, when it is an uncompressed v2 batch
// whose CRC matches and whose records all decode, re-encodes it from the
// decoded fields and compares with the bytes ParseBatch consumed.
func fuzzRoundTrip(t *testing.T, data []byte) {
	b, err := ParseBatch(data, 0)
	if err != nil {
		fuzzCheckError(t, err)
		return
	}
	if int64(len(b.Raw)) != b.Size() || b.Size() > int64(len(data)) || !bytes.Equal(b.Raw, data[:len(b.Raw)]) {
		t.Fatalf("Raw is %d bytes, Size %d, input %d", len(b.Raw), b.Size(), len(data))
	}
	if b.Magic != MagicV2 || b.Compression() != CompressionNone || !b.Valid() {
		var rr RecordReader
		rr.Decompressor.MaxBytes = fuzzMaxOutBytes
		fuzzReadRecords(t, &rr, b)
		return
	}
	var rr RecordReader
	var recs []Record
	if err := rr.Reset(b); err != nil {
		fuzzCheckError(t, err)
		return
	}
	for {
		var rec Record
		err := rr.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			fuzzCheckError(t, err)
			return
		}
		// Headers alias the reader's reused slice: copy them.
		rec.Headers = append([]Header(nil), rec.Headers...)
		recs = append(recs, rec)
	}
	if len(recs) != int(b.RecordCount) {
		t.Fatalf("read %d records, batch declares %d", len(recs), b.RecordCount)
	}
	h := &Batch{BaseOffset: b.BaseOffset, PartitionLeaderEpoch: b.PartitionLeaderEpoch, Magic: b.Magic,
		Attributes: b.Attributes, LastOffsetDelta: b.LastOffsetDelta, BaseTimestamp: b.BaseTimestamp,
		MaxTimestamp: b.MaxTimestamp, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
		BaseSequence: b.BaseSequence}
	var c Compressor
	out, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	if bytes.Equal(out, b.Raw) {
		return
	}
	if fuzzCanonicalRecords(b.Raw[BatchHeaderSize:], b.RecordCount) {
		t.Fatalf("re-encoded batch differs from the input:\n in  %x\n out %x", b.Raw, out)
	}
	// Non-minimal varints: the bytes differ, but the re-encoded batch must
	// decode to the same records.
	b2, err := ParseBatch(out, 0)
	if err != nil {
		t.Fatalf("re-encoded batch does not parse: %v", err)
	}
	var rr2 RecordReader
	if err := rr2.Reset(b2); err != nil {
		t.Fatalf("re-encoded batch: %v", err)
	}
	for i := range recs {
		var rec Record
		if err := rr2.Next(&rec); err != nil {
			t.Fatalf("re-encoded record %d: %v", i, err)
		}
		want := &recs[i]
		if rec.Offset != want.Offset || rec.Timestamp != want.Timestamp || rec.Attributes != want.Attributes ||
			!bytes.Equal(rec.Key, want.Key) || (rec.Key == nil) != (want.Key == nil) ||
			!bytes.Equal(rec.Value, want.Value) || (rec.Value == nil) != (want.Value == nil) ||
			len(rec.Headers) != len(want.Headers) {
			t.Fatalf("re-encoded record %d = %+v, want %+v", i, rec, *want)
		}
	}
}

func FuzzRecords(f *testing.F) {
	files := fuzzSeedFiles(f)
	for _, b := range fuzzEntries(files) {
		if b.IsV2() && len(b.Raw) >= BatchHeaderSize {
			f.Add(b.Raw[BatchHeaderSize:], b.RecordCount, uint8(b.Compression()), false)
		}
	}
	for _, s := range files {
		f.Add(s, int32(1), uint8(0), false)
	}
	f.Fuzz(func(t *testing.T, region []byte, count int32, codec uint8, compress bool) {
		h := Batch{BaseOffset: 1000, PartitionLeaderEpoch: 1, Magic: MagicV2,
			Attributes: int16(codec) & 0x7f, LastOffsetDelta: max(count-1, 0), BaseTimestamp: 1_700_000_000_000,
			MaxTimestamp: 1_700_000_000_100, ProducerID: 7, ProducerEpoch: 1, BaseSequence: 5}
		c := Compression(h.Attributes & attrCompressionMask)
		var comp Compressor
		if compress && c != CompressionNone && c.Known() {
			// Compress the region so the fuzzed records reach the record
			// decoder through the codec.
			var err error
			if region, err = comp.Compress(c, MagicV2, nil, region); err != nil {
				t.Fatalf("Compress(%v): %v", c, err)
			}
		}
		attrs := h.Attributes
		h.Attributes &^= attrCompressionMask // an empty, uncompressed header
		raw, err := comp.AppendBatch(nil, &h, nil)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint16(raw[posAttributes:], uint16(attrs))
		raw = append(raw, region...)
		binary.BigEndian.PutUint32(raw[posBatchLength:], uint32(len(raw)-LogOverhead))
		binary.BigEndian.PutUint32(raw[posRecordCount:], uint32(count))
		binary.BigEndian.PutUint32(raw[posCRC:], ChecksumC(raw[posAttributes:]))
		b, err := ParseBatch(raw, 4096)
		if err != nil {
			t.Fatalf("ParseBatch of a well-formed header: %v", err)
		}
		if !b.Valid() || b.RecordCount != count {
			t.Fatalf("valid %v, count %d; want true, %d", b.Valid(), b.RecordCount, count)
		}
		var rr RecordReader
		rr.Decompressor.MaxBytes = fuzzMaxOutBytes
		n, err := fuzzReadRecords(t, &rr, b)
		if err == nil && n != int(max(count, 0)) {
			t.Fatalf("clean end after %d records of %d", n, count)
		}
		if err != nil && n > 0 && c != CompressionNone {
			t.Fatalf("compressed batch delivered %d records before failing: %v", n, err)
		}
		if count < 0 && err == nil {
			t.Fatalf("negative count %d read without error", count)
		}
		// CleanRecords may accept only what the decoder and verify's
		// record rules accept.
		if CleanRecords(b) {
			if why := recordsBreakRules(b); why != "" {
				t.Fatalf("CleanRecords says clean; decoding says %s", why)
			}
		}
		// The reader must be reusable after any outcome, and give the
		// same result again.
		if n2, err2 := fuzzReadRecords(t, &rr, b); n2 != n || (err2 == nil) != (err == nil) {
			t.Fatalf("second pass: %d records, %v; first: %d, %v", n2, err2, n, err)
		}
	})
}

func FuzzDecompress(f *testing.F) {
	files := fuzzSeedFiles(f)
	for _, b := range fuzzEntries(files) {
		if b.IsV2() && len(b.Raw) >= BatchHeaderSize {
			f.Add(b.Raw[BatchHeaderSize:], uint16(4096))
		} else if v := fuzzLegacyValue(b); v != nil {
			f.Add(v, uint16(4096))
		}
	}
	for _, s := range files {
		f.Add(s, uint16(100))
	}
	f.Fuzz(func(t *testing.T, src []byte, maxBytes uint16) {
		limit := int(maxBytes) + 1
		d := Decompressor{MaxBytes: limit}
		var comp Compressor
		var dst []byte
		for c := Compression(0); c <= 7; c++ {
			for _, magic := range []int8{MagicV0, MagicV1, MagicV2} {
				// Raw input: any error is fine, but never more than the cap.
				out, err := d.Decompress(c, magic, src, dst)
				if len(out) > limit {
					t.Fatalf("%v magic %d: %d bytes out, cap %d (err %v)", c, magic, len(out), limit, err)
				}
				dst = out
				if !c.Known() || (c == CompressionZstd && magic < MagicV2) {
					continue
				}
				// Our own compression of src must come back whole, or hit
				// the cap.
				z, err := comp.Compress(c, magic, nil, src)
				if err != nil {
					t.Fatalf("Compress(%v): %v", c, err)
				}
				out, err = d.Decompress(c, magic, z, dst)
				dst = out
				switch {
				case len(out) > limit:
					t.Fatalf("%v round trip: %d bytes out, cap %d", c, len(out), limit)
				case len(src) <= limit && (err != nil || !bytes.Equal(out, src)):
					t.Fatalf("%v magic %d round trip of %d bytes: %v (%d bytes back)", c, magic, len(src), err, len(out))
				case len(src) > limit && err == nil:
					t.Fatalf("%v: %d bytes decompressed under a %d-byte cap without error", c, len(src), limit)
				}
			}
		}
	})
}

// fuzzLegacyValue is the compressed value of a v0/v1 wrapper, or nil.
func fuzzLegacyValue(b *Batch) []byte {
	if b.IsV2() || b.Compression() == CompressionNone {
		return nil
	}
	_, v, err := legacyKeyValue(b.Raw[LogOverhead:], b.Magic)
	if err != nil {
		return nil
	}
	return v
}

func FuzzControl(f *testing.F) {
	files := fuzzSeedFiles(f)
	var rr RecordReader
	var rec Record
	for _, b := range fuzzEntries(files) {
		if !b.IsControl() || rr.Reset(b) != nil {
			continue
		}
		for rr.Next(&rec) == nil {
			f.Add(bytes.Clone(rec.Key), bytes.Clone(rec.Value))
		}
	}
	for _, s := range files {
		f.Add(s[:min(len(s), 4)], s)
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		for _, k := range [][]byte{key, value} {
			ck, err := ParseControlKey(k)
			_ = ck.Type.String()
			if err == nil && (len(k) < 4 || ck.Version < 0) {
				t.Fatalf("key %x accepted as %+v", k, ck)
			}
		}
		for _, v := range [][]byte{value, key} {
			if m, err := ParseEndTxnMarker(v); err == nil && (len(v) < 6 || m.Version < 0) {
				t.Fatalf("marker %x accepted as %+v", v, m)
			}
			if m, err := ParseLeaderChange(v); err == nil && len(m.Voters)+len(m.GrantingVoters) > len(v) {
				t.Fatalf("%d voters from %d bytes", len(m.Voters)+len(m.GrantingVoters), len(v))
			}
			ParseSnapshotHeader(v)
			ParseSnapshotFooter(v)
			ParseKRaftVersion(v)
			if m, err := ParseVoters(v); err == nil && len(m.Voters) > len(v) {
				t.Fatalf("%d voters from %d bytes", len(m.Voters), len(v))
			}
		}
	})
}
