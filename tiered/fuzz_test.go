package tiered

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedManifests adds every .rsm-manifest of the fixtures.
func seedManifests(f *testing.F) {
	paths, _ := filepath.Glob(fixtures + "/aiven/*/storage/tiered/*/0/*" + SuffixManifest)
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzManifest: a manifest is parsed or refused, never a panic; a parsed
// one's chunks tile the original file and the transformed object in order.
func FuzzManifest(f *testing.F) {
	seedManifests(f)
	f.Add([]byte(`{"version":"1","chunkIndex":{"type":"variable","originalChunkSize":1,"originalFileSize":0,"transformedChunks":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		ci := m.Chunks()
		var orig, tr int64
		for i := 0; i < ci.Len() && i < 1<<16; i++ {
			c := ci.Chunk(i)
			if c.OriginalPosition != orig || c.TransformedPosition != tr || c.OriginalSize < 0 || c.TransformedSize < 0 {
				t.Fatalf("chunk %d = %+v, want positions %d, %d", i, c, orig, tr)
			}
			orig += int64(c.OriginalSize)
			tr += int64(c.TransformedSize)
		}
		if ci.Len() < 1<<16 && (orig != int64(ci.OriginalFileSize) || tr != ci.TransformedSize()) {
			t.Fatalf("chunks end at %d, %d; the index says %d, %d", orig, tr, ci.OriginalFileSize, ci.TransformedSize())
		}
	})
}

// FuzzChunkSizes: ChunkSizesBinaryCodec's bytes decode or are refused;
// decoded sizes encode back to the same bytes when the input was the
// codec's own (canonical) encoding.
func FuzzChunkSizes(f *testing.F) {
	for _, s := range []string{"00000000", "0000000100000007", "00000003000000640100" + "0a00000005", "000000020000000102010000000009"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeChunkSizesBinary(b)
		if err != nil {
			return
		}
		if len(v) > len(b) {
			t.Fatalf("%d sizes from %d bytes", len(v), len(b))
		}
		ints := make([]int, len(v))
		for i, x := range v {
			ints[i] = int(x)
		}
		enc := encodeChunkSizes(ints)
		again, err := decodeChunkSizesBinary(enc)
		if err != nil || !equalInts(again, v) {
			t.Fatalf("re-encoding %v: %v, %v", v, again, err)
		}
	})
}

// FuzzParseKey: a key names a segment artifact or not; when it does, its
// base and suffix are the key.
func FuzzParseKey(f *testing.F) {
	for _, k := range []string{
		"kafka-tiered-storage/orders-0-b3JkZXJzAAAAAAAAAAAAAg/00000000000000000008-U0VHTUVOVDEAAAAAAAAAAQ.log",
		"tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0/00000000000000000014-U0VHTUVOVDIAAAAAAAAAAg.rsm-manifest",
		"x/-0-b3JkZXJzAAAAAAAAAAAAAg/1-U0VHTUVOVDEAAAAAAAAAAQ.",
	} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		n, ok := ParseKey(key)
		if !ok {
			return
		}
		if n.Base+n.Suffix != key || !strings.HasPrefix(n.Base, n.Prefix) || n.StartOffset < 0 {
			t.Fatalf("ParseKey(%q) = %+v", key, n)
		}
	})
}

// FuzzAivenCustomFields: the plugin's custom metadata decodes or is
// refused, never a panic.
func FuzzAivenCustomFields(f *testing.F) {
	b, _ := hex.DecodeString("030002a61c0108087469657265642f02044303616263")
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		if fs, ok := AivenCustomFields(b); ok && fs.HasPrefix && len(fs.ObjectPrefix) > len(b) {
			t.Fatalf("a %d-byte prefix from %d bytes", len(fs.ObjectPrefix), len(b))
		}
	})
}

// FuzzChunk: a transformed chunk detransforms to its original size or is
// refused (zstd without the right content size, a GCM tag that fails),
// never a panic and never more than the chunk's size in memory.
func FuzzChunk(f *testing.F) {
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x03, 0x19, 0, 0, 'a', 'b', 'c'}, uint16(3), true)
	f.Add([]byte("plain"), uint16(5), false)
	f.Fuzz(func(t *testing.T, raw []byte, size uint16, compressed bool) {
		cb := &chunkBlocks{compressed: compressed}
		out := make([]byte, size)
		_ = cb.detransform(raw, out)
	})
}

// FuzzLineage: any sequence of __remote_log_metadata values folds without
// a panic, every record applied or reported, and what the fold leaves is
// consistent (a chain serves only finished segments).
func FuzzLineage(f *testing.F) {
	var gt struct {
		MetadataRecords []struct {
			ValueHex string `json:"valueHex"`
		} `json:"metadataRecords"`
	}
	if data, err := os.ReadFile(fixtures + "/local-tiered.groundtruth.json"); err == nil {
		json.Unmarshal(data, &gt)
	}
	for i, r := range gt.MetadataRecords {
		b, _ := hex.DecodeString(r.ValueHex)
		next, _ := hex.DecodeString(gt.MetadataRecords[(i+1)%len(gt.MetadataRecords)].ValueHex)
		f.Add(b, next)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		l := NewLineage()
		for i, v := range [][]byte{a, b, a} {
			ev, err := decodeEvent(v, MetadataPos{Partition: "__remote_log_metadata-0", Offset: int64(i)})
			if err != nil || ev == nil {
				continue
			}
			l.Apply(ev)
		}
		for _, p := range l.Partitions {
			for id, m := range p.Segments {
				if p.Referenced(id) && m.State != CopySegmentFinished {
					t.Fatalf("a %s segment is served", m.State)
				}
			}
		}
	})
}
