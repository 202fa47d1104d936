package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fixtureHead is the first n bytes of a segment under testdata/segments.
func fixtureHead(t testing.TB, rel string, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "segments", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(n, len(b))]
}

// header is a 17-byte entry header: offset, size, 4 bytes, magic.
func header(offset int64, size int32, magic int8) []byte {
	h := binary.BigEndian.AppendUint64(nil, uint64(offset))
	h = binary.BigEndian.AppendUint32(h, uint32(size))
	h = append(h, 0xde, 0xad, 0xbe, 0xef)
	return append(h, byte(magic))
}

// TestSegmentStart: what the sniff of a nameless file or stream takes for
// the start of a segment. Real first headers of every magic pass, and so
// does every prefix of them; text, a PNG header, junk sizes and magics do
// not, each naming the field at position 0.
func TestSegmentStart(t *testing.T) {
	t.Parallel()
	v0 := fixtureHead(t, "generated/v0-none/00000000000000000000.log", 64)
	v1 := fixtureHead(t, "generated/v1-none/00000000000000000000.log", 64)
	v2 := fixtureHead(t, "generated/v2-none/00000000000000000000.log", 64)
	kafkaV2 := fixtureHead(t, "kafka-written/v2-transactions/00000000000000000000.log", 64)
	gap := fixtureHead(t, "generated/v2-base-offset-gap/00000000000000001000.log", 64)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00")
	for _, c := range []struct {
		name  string
		head  []byte
		field string // "" when it can start a segment
	}{
		{"v0 first header", v0, ""},
		{"v1 first header", v1, ""},
		{"v2 first header", v2, ""},
		{"v2 written by Kafka", kafkaV2, ""},
		{"v2 at base offset 1000", gap, ""},
		{"empty", nil, ""},
		{"10 bytes of a v2 segment", v2[:10], ""},
		{"16 bytes of a v2 segment", v2[:16], ""},
		{"zeros (a preallocated segment)", make([]byte, 64), ""},
		{"14 zero bytes", make([]byte, 14), ""},
		{"smallest v0 entry", header(0, 14, 0), ""},
		{"smallest v1 entry", header(0, 22, 1), ""},
		{"smallest v2 batch", header(0, 49, 2), ""},
		{"text", []byte("root:x:0:0:root:/root:/bin/bash\n"), "magic"},
		{"10 bytes of text", []byte("root:x:0:0"), ""}, // it could be an offset and a size's first bytes
		{"PNG header", png, "size"},
		{"10 bytes 0xff", bytes.Repeat([]byte{0xff}, 10), "size"},
		{"negative size", header(0, -1, 2), "size"},
		{"negative size, cut at 9 bytes", header(0, -1, 2)[:9], "size"},
		{"size below every entry", header(0, 13, 0), "size"},
		{"size below every entry, magic not read yet", header(0, 13, 0)[:12], "size"},
		{"v1 size of a v0 entry", header(0, 21, 1), "size"},
		{"v2 size under its header", header(0, 48, 2), "size"},
		{"magic 3", header(0, 100, 3), "magic"},
		{"magic -1", header(0, 100, -1), "magic"},
		{"negative offset (no CRC covers it)", header(-1, 100, 2), ""},
		{"zeros then a byte", append(make([]byte, 16), 7), "size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := SegmentStart(c.head)
			if c.field == "" {
				if err != nil {
					t.Fatalf("SegmentStart = %v, want nil", err)
				}
				return
			}
			var pe *PosError
			if !errors.As(err, &pe) || !errors.Is(err, ErrNotSegment) {
				t.Fatalf("SegmentStart = %v, want a *PosError of ErrNotSegment", err)
			}
			if pe.Pos != 0 || pe.Offset != -1 || pe.Field != c.field {
				t.Errorf("position %d, offset %d, field %q; want 0, -1, %q", pe.Pos, pe.Offset, pe.Field, c.field)
			}
			if n := len(c.head); n >= HeaderSizeUpToMagic && LooksLikeSegment(c.head[:HeaderSizeUpToMagic]) {
				t.Errorf("LooksLikeSegment accepts what SegmentStart rejects")
			}
		})
	}
	// Every prefix of every real segment passes.
	for _, h := range [][]byte{v0, v1, v2, kafkaV2, gap} {
		for i := range len(h) + 1 {
			if err := SegmentStart(h[:i]); err != nil {
				t.Errorf("prefix of %d bytes of %x: %v", i, h[:min(len(h), 17)], err)
			}
		}
	}
	// A file shorter than a header is not taken for a segment by its
	// content alone.
	if LooksLikeSegment(v2[:16]) {
		t.Errorf("LooksLikeSegment(16 bytes) = true")
	}
}

// FuzzSegmentStart: the sniff never panics, rejects only with an
// ErrNotSegment *PosError at position 0, is closed under prefixes (what it
// accepts, it accepts cut shorter: a stream cut short is never "not a
// segment" for being short), and never rejects a stream whose first entry
// the scanner reads as a valid batch.
func FuzzSegmentStart(f *testing.F) {
	for _, s := range fuzzSeedFiles(f) {
		f.Add(s[:min(len(s), 64)])
	}
	f.Add([]byte("root:x:0:0:root:/root:/bin/bash\n"))
	f.Add(make([]byte, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := SegmentStart(data)
		if err != nil {
			var pe *PosError
			if !errors.As(err, &pe) || !errors.Is(err, ErrNotSegment) || pe.Pos != 0 {
				t.Fatalf("SegmentStart = %#v", err)
			}
			sc := NewScanner(bytes.NewReader(data), int64(len(data)), ScanOptions{MaxBatchBytes: fuzzMaxBatchBytes})
			if b, serr := sc.Next(); serr == nil && b.Magic <= MagicV2 && b.Valid() {
				t.Fatalf("rejected (%v) a stream that starts with a valid batch", err)
			}
			return
		}
		for i := range min(len(data), HeaderSizeUpToMagic) {
			if perr := SegmentStart(data[:i]); perr != nil {
				t.Fatalf("accepts %x but not its first %d bytes: %v", data[:min(len(data), 17)], i, perr)
			}
		}
	})
}
