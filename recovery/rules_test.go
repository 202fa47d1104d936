package recovery

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// Byte positions of v2 header fields (DefaultRecordBatch).
const (
	hSize      = 8
	hEpoch     = 12
	hMagic     = 16
	hCRC       = 17
	hAttrs     = 21
	hLastDelta = 23
	hMaxTs     = 35
	hProducer  = 43
	hCount     = 57
)

const genT0 = 1700000000000

// genBatch builds a v2 batch of n records at base with real CRCs; mut may
// change the header and records before encoding.
func genBatch(t testing.TB, base int64, n int, mut func(h *format.Batch, recs []format.Record)) []byte {
	t.Helper()
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Offset: base + int64(i), Timestamp: genT0 + base + int64(i), Key: []byte("k"), Value: []byte("value")}
	}
	h := &format.Batch{BaseOffset: base, PartitionLeaderEpoch: 3, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	format.PrepareBatch(h, recs)
	if mut != nil {
		mut(h, recs)
	}
	var c format.Compressor
	b, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// put32/put64 patch a header field; recrc recomputes a v2 batch's CRC.
func put32(b []byte, at int, v uint32) []byte { binary.BigEndian.PutUint32(b[at:], v); return b }
func put64(b []byte, at int, v uint64) []byte { binary.BigEndian.PutUint64(b[at:], v); return b }
func recrc(b []byte) []byte {
	return put32(b, hCRC, format.ChecksumC(b[hAttrs:]))
}

// genLegacy builds uncompressed v0/v1 messages at the given offsets.
func genLegacy(t testing.TB, magic int8, offsets ...int64) []byte {
	t.Helper()
	var recs []format.Record
	for _, o := range offsets {
		recs = append(recs, format.Record{Offset: o, Timestamp: genT0, Key: []byte("k"), Value: []byte("v")})
	}
	var c format.Compressor
	b, err := c.AppendLegacy(nil, format.LegacySpec{Magic: magic}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func seg(base int64) string { return partition.FileName(base, partition.LogSuffix) }

// controlBatch is a transactional control batch of producer 7 whose one
// record has the given key and value.
func controlBatch(t testing.TB, base int64, key, value []byte) []byte {
	return genBatch(t, base, 1, func(h *format.Batch, recs []format.Record) {
		h.Attributes = 0x30
		h.ProducerID, h.ProducerEpoch = 7, 0
		recs[0].Key, recs[0].Value = key, value
	})
}

func writeDir(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "topic-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// idx is an empty offset index, so that a segment is recovered by
// recoverLog (as after an unclean shutdown) and not while loading.
var idx = []byte{}

// wantSeg is the expected action on one original segment.
type wantSeg struct {
	action        string
	truncateBytes int64 // -1: do not check
	newBase       int64 // for move
}

// TestRecoverRules checks each of Kafka 4.3.1's recovery rules on a
// directory built with real CRCs, and that verify reports a finding for
// every directory the plan changes or refuses.
func TestRecoverRules(t *testing.T) {
	t.Parallel()
	good := genBatch(t, 0, 3, nil)
	// Records garbage, CRC recomputed: recovery never decodes records.
	garbage := func(mut func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		for i := format.BatchHeaderSize; i < len(b); i++ {
			b[i] = 0xff
		}
		if mut != nil {
			mut(b)
		}
		return recrc(b)
	}
	over := genBatch(t, 1<<31, 2, nil) // offsets 2147483648, 2147483649
	cases := []struct {
		name     string
		files    map[string][]byte
		loads    bool
		kafkaErr string // prefix
		lso, leo int64
		segs     []wantSeg
		deleted  []string // base names of other files deleted
	}{
		{name: "intact", files: map[string][]byte{seg(0): cat(good, genBatch(t, 3, 2, nil)), "00000000000000000000.index": idx},
			loads: true, leo: 5, segs: []wantSeg{{ActionKeep, 0, 0}}},
		// Framing only: records are never read.
		{name: "garbage-records-valid-crc", files: map[string][]byte{seg(0): garbage(nil), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionKeep, 0, 0}}},
		{name: "codec-7-valid-crc", files: map[string][]byte{seg(0): garbage(func(b []byte) { b[hAttrs+1] = 7 }), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionKeep, 0, 0}}},
		{name: "count-2^31-1", files: map[string][]byte{seg(0): garbage(func(b []byte) {
			put32(b, hCount, math.MaxInt32)
			put32(b, hLastDelta, math.MaxInt32-1)
		}), "00000000000000000000.index": idx},
			loads: true, leo: math.MaxInt32, segs: []wantSeg{{ActionKeep, 0, 0}}},
		{name: "bad-crc", files: map[string][]byte{seg(0): cat(good, put32(genBatch(t, 3, 2, nil), hCRC, 1)), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, -1, 0}}},
		// Magic: 2 or more is v2, negative ends the valid prefix.
		{name: "magic-7", files: map[string][]byte{seg(0): cat(good, func() []byte { b := genBatch(t, 3, 1, nil); b[hMagic] = 7; return b }()), "00000000000000000000.index": idx},
			loads: true, leo: 4, segs: []wantSeg{{ActionKeep, 0, 0}}},
		{name: "magic-127", files: map[string][]byte{seg(0): cat(good, func() []byte { b := genBatch(t, 3, 1, nil); b[hMagic] = 127; return b }()), "00000000000000000000.index": idx},
			loads: true, leo: 4, segs: []wantSeg{{ActionKeep, 0, 0}}},
		{name: "magic-negative", files: map[string][]byte{seg(0): cat(good, func() []byte { b := genBatch(t, 3, 1, nil); b[hMagic] = 0xff; return recrc(b) }()), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, int64(len(genBatch(t, 3, 1, nil))), 0}}},
		// A negative magic is read as a legacy message: its CRC-32 from the
		// magic byte decides (a v2 batch whose magic turned negative fails it).
		{name: "magic-negative-legacy-crc", files: map[string][]byte{seg(0): cat(good, func() []byte {
			b := genLegacy(t, 1, 3)
			b[hMagic] = 0xfe
			binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
			return b
		}()), "00000000000000000000.index": idx},
			loads: true, leo: 4, segs: []wantSeg{{ActionKeep, 0, 0}}},
		// Sizes end the valid prefix.
		{name: "size-below-minimum", files: map[string][]byte{seg(0): cat(good, put32(genBatch(t, 3, 1, nil), hSize, 13)), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, int64(len(genBatch(t, 3, 1, nil))), 0}}},
		{name: "size-negative", files: map[string][]byte{seg(0): cat(good, put32(genBatch(t, 3, 1, nil), hSize, 0xfffffff0)), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, -1, 0}}},
		{name: "size-past-end", files: map[string][]byte{seg(0): cat(good, put32(genBatch(t, 3, 1, nil), hSize, math.MaxInt32)), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, -1, 0}}},
		{name: "size-under-v2-header", files: map[string][]byte{seg(0): cat(good, put32(genBatch(t, 3, 1, nil), hSize, 40)), "00000000000000000000.index": idx},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, -1, 0}}},
		// Truncation deletes every later segment (with its files).
		{name: "truncate-deletes-later", files: map[string][]byte{
			seg(0): cat(good, []byte("torn")), "00000000000000000000.index": idx,
			seg(3): genBatch(t, 3, 2, nil), "00000000000000000003.index": idx, "00000000000000000003.snapshot": format.AppendProducerSnapshot(nil, nil)},
			loads: true, leo: 3, segs: []wantSeg{{ActionTruncate, 4, 0}, {ActionDelete, -1, 0}},
			deleted: []string{"00000000000000000003.index"}}, // 3.snapshot is rewritten at the new log end
		// A segment without an offset index is recovered while loading:
		// its truncation does not delete later segments.
		{name: "no-index-truncation-keeps-later", files: map[string][]byte{
			seg(0): cat(good, []byte("torn")),
			seg(3): genBatch(t, 3, 2, nil), "00000000000000000003.index": idx},
			loads: true, leo: 5, segs: []wantSeg{{ActionTruncate, 4, 0}, {ActionKeep, 0, 0}}},
		// A .txnindex entry below the segment's base: recovered while
		// loading too. A newer .txnindex version fails the load.
		{name: "txnindex-below-base-truncation-keeps-later", files: map[string][]byte{
			seg(0): cat(good, []byte("torn")), "00000000000000000000.index": idx,
			"00000000000000000000.txnindex": format.AppendAbortedTxn(nil, format.AbortedTxn{ProducerID: 1, FirstOffset: -5, LastOffset: -2, LastStableOffset: 0}),
			seg(3):                          genBatch(t, 3, 2, nil), "00000000000000000003.index": idx},
			loads: true, leo: 5, segs: []wantSeg{{ActionTruncate, 4, 0}, {ActionKeep, 0, 0}}},
		{name: "txnindex-version-1", files: map[string][]byte{
			seg(0): good, "00000000000000000000.index": idx,
			// AbortedTxn.version() reads the first byte of the int16 field.
			"00000000000000000000.txnindex": func() []byte {
				b := format.AppendAbortedTxn(nil, format.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 0})
				b[0] = 1
				return b
			}()},
			kafkaErr: "KafkaException: Unexpected aborted transaction version 1", segs: []wantSeg{{ActionKeep, 0, 0}}},
		// Offsets out of order where recovery appends an index entry:
		// InvalidOffsetException, LogLoader empties the segment.
		{name: "index-append-not-increasing", files: map[string][]byte{
			seg(0): func() []byte {
				var b []byte
				for _, base := range []int64{0, 4, 8, 12, 1000, 24, 28, 32, 36, 40, 44, 48} {
					b = append(b, genBatch(t, base, 4, func(_ *format.Batch, recs []format.Record) {
						for j := range recs {
							recs[j].Value = make([]byte, 250)
						}
					})...)
				}
				return b
			}(), "00000000000000000000.index": idx,
			seg(2000): genBatch(t, 2000, 1, nil), "00000000000000002000.index": idx},
			loads: true, leo: 0, segs: []wantSeg{{ActionTruncate, -1, 0}, {ActionDelete, -1, 0}},
			deleted: []string{"00000000000000002000.index"}},
		// Offset overflow: split into a segment based at the batch.
		{name: "overflow-moves", files: map[string][]byte{seg(0): over, "00000000000000000000.index": idx},
			loads: true, lso: 1 << 31, leo: 1<<31 + 2, segs: []wantSeg{{ActionMove, -1, 1 << 31}},
			deleted: []string{"00000000000000000000.index"}},
		{name: "overflow-splits-in-two", files: map[string][]byte{seg(0): cat(good, over), "00000000000000000000.index": idx},
			loads: true, lso: 0, leo: 1<<31 + 2, segs: []wantSeg{{ActionMove, -1, 0}},
			deleted: []string{"00000000000000000000.index"}},
		{name: "overflow-then-torn-tail", files: map[string][]byte{seg(0): cat(over, []byte("torn tail bytes, more than seventeen")), "00000000000000000000.index": idx},
			kafkaErr: "NoSuchElementException", segs: []wantSeg{{ActionKeep, -1, 0}}},
		// Refusals: the split's precondition fails.
		{name: "delta-minus-one-count-0", files: map[string][]byte{seg(0): func() []byte {
			b := genBatch(t, 0, 1, nil)
			put32(b, hCount, 0)
			put32(b, hLastDelta, 0xffffffff)
			return recrc(b)
		}(), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation is only permitted for segments with overflow", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "negative-delta", files: map[string][]byte{seg(0): cat(good, recrc(put32(genBatch(t, 3, 1, nil), hLastDelta, 0xfffffffb))), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "base-near-long-max", files: map[string][]byte{seg(0): put64(genBatch(t, 0, 6, nil), 0, math.MaxInt64-1), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "base-below-segment", files: map[string][]byte{seg(100): genBatch(t, 50, 2, nil), "00000000000000000100.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "overflow-not-last", files: map[string][]byte{seg(0): cat(good, over, genBatch(t, 3, 1, nil)), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "negative-base-with-epoch", files: map[string][]byte{seg(0): put64(genBatch(t, 0, 6, nil), 0, 0xffffffffffffffff), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Received invalid partition leader epoch entry EpochEntry(epoch=3, startOffset=-1)", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "v0-negative-offset", files: map[string][]byte{seg(0): genLegacy(t, 0, -1), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "v1-negative-offset", files: map[string][]byte{seg(0): genLegacy(t, 1, 0, -5), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Split operation", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "non-numeric-log-name", files: map[string][]byte{seg(0): good, "00000000000000000000.index": idx, "notes.log": []byte("hello")},
			kafkaErr: `NumberFormatException: For input string: "notes"`},
		// Control batches: the marker is parsed rebuilding producer state.
		{name: "control-key-unparseable", files: map[string][]byte{seg(0): cat(good, controlBatch(t, 3, []byte{0, 0}, []byte{0, 0, 0, 0, 0, 1})), "00000000000000000000.index": idx},
			kafkaErr: "InvalidRecordException: Invalid value size found for control record key", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "control-key-negative-version", files: map[string][]byte{seg(0): cat(good, controlBatch(t, 3, []byte{0xff, 0xff, 0, 1}, []byte{0, 0, 0, 0, 0, 1}), genBatch(t, 4, 1, nil)), "00000000000000000000.index": idx},
			kafkaErr: "InvalidRecordException: Invalid version found for control record", segs: []wantSeg{{ActionTruncate, -1, 0}}},
		{name: "control-not-a-marker", files: map[string][]byte{seg(0): cat(good, controlBatch(t, 3, []byte{0, 0, 0, 2}, []byte{0, 0, 0, 0, 0, 1})), "00000000000000000000.index": idx},
			kafkaErr: "IllegalArgumentException: Invalid control record type for end transaction markerLEADER_CHANGE", segs: []wantSeg{{ActionKeep, -1, 0}}},
		{name: "control-marker-ok", files: map[string][]byte{seg(0): cat(good, genBatch(t, 3, 1, func(h *format.Batch, _ []format.Record) {
			h.Attributes, h.ProducerID, h.ProducerEpoch = 0x10, 7, 0
		}), controlBatch(t, 4, format.AppendControlKey(nil, format.ControlCommit), format.AppendEndTxnMarker(nil, 0))), "00000000000000000000.index": idx},
			loads: true, leo: 5, segs: []wantSeg{{ActionKeep, 0, 0}}},
		// Other files.
		{name: "orphan-index", files: map[string][]byte{seg(0): good, "00000000000000000000.index": idx, "00000000000000000009.index": make([]byte, 8), "00000000000000000009.timeindex": make([]byte, 12)},
			loads: true, leo: 3, segs: []wantSeg{{ActionKeep, 0, 0}}, deleted: []string{"00000000000000000009.index", "00000000000000000009.timeindex"}},
		{name: "snapshot-above-log-end", files: map[string][]byte{seg(0): good, "00000000000000000000.index": idx, "00000000000000000003.snapshot": format.AppendProducerSnapshot(nil, nil), "00000000000000000007.snapshot": format.AppendProducerSnapshot(nil, nil)},
			loads: true, leo: 3, segs: []wantSeg{{ActionKeep, 0, 0}}, deleted: []string{"00000000000000000007.snapshot"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := writeDir(t, c.files)
			plan, err := PlanDir(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			loads := c.kafkaErr == ""
			if plan.Loads != loads || !strings.HasPrefix(plan.KafkaError, c.kafkaErr) {
				t.Fatalf("loads %v %q, want %v %q", plan.Loads, plan.KafkaError, loads, c.kafkaErr)
			}
			if loads && (plan.LogStartOffset != c.lso || plan.LogEndOffset != c.leo) {
				t.Errorf("log start/end %d/%d, want %d/%d", plan.LogStartOffset, plan.LogEndOffset, c.lso, c.leo)
			}
			if c.segs != nil && len(plan.Segments) != len(c.segs) {
				t.Fatalf("%d segments, want %d", len(plan.Segments), len(c.segs))
			}
			for i, w := range c.segs {
				s := plan.Segments[i]
				if s.Action != w.action || w.truncateBytes >= 0 && s.TruncateBytes != w.truncateBytes {
					t.Errorf("%s: %s truncating %d, want %s %d (%s)", filepath.Base(s.Log), s.Action, s.TruncateBytes, w.action, w.truncateBytes, s.Reason)
				}
				if w.action == ActionMove && (s.NewBaseOffset == nil || *s.NewBaseOffset != w.newBase) {
					t.Errorf("%s: new base offset %v, want %d", filepath.Base(s.Log), s.NewBaseOffset, w.newBase)
				}
			}
			var del []string
			for _, f := range plan.DeletedFiles {
				if f.Changes() {
					del = append(del, filepath.Base(f.Path))
				}
			}
			if strings.Join(del, ",") != strings.Join(c.deleted, ",") {
				t.Errorf("deleted %v, want %v", del, c.deleted)
			}
			if plan.Changes() == (c.name == "intact" || c.name == "garbage-records-valid-crc" || c.name == "codec-7-valid-crc" ||
				c.name == "count-2^31-1" || c.name == "magic-7" || c.name == "magic-127" || c.name == "control-marker-ok" ||
				c.name == "magic-negative-legacy-crc") {
				t.Errorf("Changes() = %v", plan.Changes())
			}
			// verify says what is wrong wherever Kafka acts.
			rep, err := verifyPaths(dir)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Changes() && rep.Findings() == 0 {
				t.Errorf("the plan changes the partition (%s) but verify finds nothing", plan.KafkaError)
			}
			if plan.Loads {
				out := filepath.Join(t.TempDir(), "out-0")
				if err := plan.WriteRecovered(out); err != nil {
					t.Fatal(err)
				}
				again, err := PlanDir(out, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if again.Changes() || again.LogEndOffset != plan.LogEndOffset || again.LogStartOffset != plan.LogStartOffset {
					t.Errorf("recovering the recovered copy changes it again: %+v", again)
				}
			} else if err := plan.WriteRecovered(filepath.Join(t.TempDir(), "out-0")); err != ErrRefused {
				t.Errorf("WriteRecovered on a refused plan: %v", err)
			}
		})
	}
}
