package recovery

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// propertyBases are the clean segments the property test mutates: v2
// uncompressed and compressed, idempotent and transactional batches with a
// COMMIT marker, legacy v0/v1 messages and wrappers, and a segment large
// enough for recovery to write index entries.
func propertyBases(t testing.TB) [][]byte {
	var c format.Compressor
	legacy := func(spec format.LegacySpec, offs ...int64) []byte {
		var recs []format.Record
		for _, o := range offs {
			recs = append(recs, format.Record{Offset: o, Timestamp: genT0 + o, Key: []byte("k"), Value: []byte("legacy value")})
		}
		b, err := c.AppendLegacy(nil, spec, recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var big []byte
	for i := int64(0); i < 40; i++ {
		big = append(big, genBatch(t, i*4, 4, func(_ *format.Batch, recs []format.Record) {
			for j := range recs {
				recs[j].Value = make([]byte, 40)
			}
		})...)
	}
	return [][]byte{
		cat(genBatch(t, 0, 3, nil), genBatch(t, 3, 3, nil), genBatch(t, 6, 1, nil), genBatch(t, 7, 5, nil)),
		cat(genBatch(t, 0, 4, func(h *format.Batch, _ []format.Record) { h.Attributes = int16(format.CompressionGzip) }),
			genBatch(t, 4, 2, func(h *format.Batch, _ []format.Record) {
				h.Attributes = int16(format.CompressionLZ4)
				h.ProducerID, h.ProducerEpoch, h.BaseSequence = 5, 0, 0
			}),
			genBatch(t, 6, 2, func(h *format.Batch, _ []format.Record) {
				h.Attributes = 0x10
				h.ProducerID, h.ProducerEpoch, h.BaseSequence = 7, 0, 0
			}),
			controlBatch(t, 8, format.AppendControlKey(nil, format.ControlCommit), format.AppendEndTxnMarker(nil, 0))),
		cat(legacy(format.LegacySpec{Magic: format.MagicV1}, 0, 1, 2),
			legacy(format.LegacySpec{Magic: format.MagicV1, Compression: format.CompressionGzip}, 3, 4, 5),
			legacy(format.LegacySpec{Magic: format.MagicV0}, 6, 7)),
		big,
	}
}

// bounds lists the [start, end) of every entry of a clean segment.
func bounds(data []byte) [][2]int {
	var out [][2]int
	for p := 0; p+format.LogOverhead <= len(data); {
		n := format.LogOverhead + int(int32(binary.BigEndian.Uint32(data[p+8:])))
		out = append(out, [2]int{p, p + n})
		p += n
	}
	return out
}

// fixCRC recomputes the checksum of the entry at [s, e) as a writer would.
func fixCRC(b []byte, s, e int) {
	if e > len(b) || e-s < format.HeaderSizeUpToMagic+4 {
		return
	}
	if int8(b[s+16]) >= format.MagicV2 {
		if e-s >= format.BatchHeaderSize {
			binary.BigEndian.PutUint32(b[s+hCRC:], format.ChecksumC(b[s+hAttrs:e]))
		}
		return
	}
	binary.BigEndian.PutUint32(b[s+12:], crc32.ChecksumIEEE(b[s+16:e]))
}

var hostile32 = []uint32{0, 1, 13, 14, 40, 48, 49, 60, 61, math.MaxInt32, math.MaxInt32 - 1, 1 << 31, 0xffffffff, 0xfffffffe, 0xfffffffb, 1000000}
var hostile64 = []uint64{0, 1, 1 << 31, 1<<31 - 1, 1<<31 + 1, 1 << 32, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 5, 1 << 63, 0xffffffffffffffff, 50, 100}

// mutate returns a damaged copy of base and what was done to it.
func mutate(rng *rand.Rand, base []byte) ([]byte, string) {
	b := append([]byte(nil), base...)
	bs := bounds(b)
	e := bs[rng.IntN(len(bs))]
	recompute := rng.IntN(2) == 0
	what := ""
	switch k := rng.IntN(10); k {
	case 0, 1: // bit flips anywhere
		n := 1 + rng.IntN(3)
		for i := 0; i < n; i++ {
			p := rng.IntN(len(b))
			b[p] ^= 1 << rng.IntN(8)
		}
		what = "bit flips"
	case 2: // a bit flip inside one entry
		p := e[0] + rng.IntN(e[1]-e[0])
		b[p] ^= 1 << rng.IntN(8)
		what = "bit flip at " + strconv.Itoa(p)
	case 3: // hostile size
		binary.BigEndian.PutUint32(b[e[0]+hSize:], hostile32[rng.IntN(len(hostile32))])
		what = "size"
	case 4: // hostile base offset (not covered by the CRC)
		binary.BigEndian.PutUint64(b[e[0]:], hostile64[rng.IntN(len(hostile64))])
		what = "base offset"
	case 5: // hostile magic
		b[e[0]+hMagic] = byte([]int8{-1, -128, 0, 1, 2, 3, 7, 127}[rng.IntN(8)])
		what = "magic"
	case 6: // hostile count or last offset delta (v2 fields)
		if e[1]-e[0] >= format.BatchHeaderSize {
			at := []int{hCount, hLastDelta}[rng.IntN(2)]
			binary.BigEndian.PutUint32(b[e[0]+at:], hostile32[rng.IntN(len(hostile32))])
		}
		what = "count/delta"
	case 7: // hostile attributes: codec, control bit, producer id
		if e[1]-e[0] >= format.BatchHeaderSize {
			b[e[0]+hAttrs+1] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				binary.BigEndian.PutUint64(b[e[0]+hProducer:], uint64(rng.IntN(3))-1)
			}
		}
		what = "attributes"
	case 8: // cut short
		b = b[:rng.IntN(len(b))]
		what = "truncated"
	case 9: // garbage appended
		n := 1 + rng.IntN(80)
		for i := 0; i < n; i++ {
			b = append(b, byte(rng.IntN(256)))
		}
		recompute = false
		what = "garbage tail"
	}
	if recompute {
		fixCRC(b, e[0], e[1])
		what += " (CRC recomputed)"
	}
	return b, what
}

// TestVerifyFindsWhatRecoverChanges is the property that ties the two
// commands together: over thousands of mutated segments (bit flips,
// hostile sizes, offsets, magics, counts, deltas and attributes, cuts and
// garbage, with and without recomputed CRCs), whenever recover's plan
// changes anything or refuses to load, verify reports a finding. The plan
// never fails on such input, and a recovered copy recovers to itself.
func TestVerifyFindsWhatRecoverChanges(t *testing.T) {
	t.Parallel()
	n := 3000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(17, 11))
	bases := propertyBases(t)
	root := t.TempDir()
	start := time.Now()
	var changed, refused, moved int
	for i := 0; i < n; i++ {
		data, what := mutate(rng, bases[i%len(bases)])
		segBase := []int64{0, 0, 0, 0, 100}[rng.IntN(5)]
		dir := filepath.Join(root, "t-"+strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, partition.FileName(segBase, partition.LogSuffix)), data, 0o644)
		if rng.IntN(4) != 0 {
			os.WriteFile(filepath.Join(dir, partition.FileName(segBase, partition.IndexSuffix)), nil, 0o644)
		}
		plan, err := PlanDir(dir, Options{})
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, what, err)
		}
		if !plan.Changes() {
			os.RemoveAll(dir)
			continue
		}
		changed++
		if !plan.Loads {
			refused++
		}
		for _, s := range plan.Segments {
			if s.Action == ActionMove {
				moved++
			}
		}
		rep, err := verifyPaths(dir)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Findings() == 0 {
			t.Errorf("case %d (%s, segment base %d): recover %s %v %q, verify finds nothing", i, what, segBase,
				plan.Segments[0].Action, plan.Segments[0].Reason, plan.KafkaError)
		}
		if plan.Loads && i%10 == 0 {
			out := filepath.Join(filepath.Dir(dir), fmt.Sprintf("out%d-0", i))
			if err := plan.WriteRecovered(out); err != nil {
				t.Fatal(err)
			}
			again, err := PlanDir(out, Options{})
			if err != nil || again.Changes() || again.LogEndOffset != plan.LogEndOffset {
				t.Errorf("case %d (%s): the recovered copy recovers again: %v %+v", i, what, err, again)
			}
		}
		os.RemoveAll(dir)
	}
	t.Logf("%d segments: recovery changes %d (%d refused, %d moved) in %v", n, changed, refused, moved, time.Since(start))
	if changed < n/4 || refused == 0 || moved == 0 {
		t.Errorf("the mutations exercise too little: %d changed, %d refused, %d moved", changed, refused, moved)
	}
}
