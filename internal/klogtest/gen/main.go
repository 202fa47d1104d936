//go:build klog_fixtures

// Command gen writes the synthetic segment fixtures under
// testdata/segments/generated: good segments built only with package
// format's encoders (Compressor.AppendBatch, PrepareBatch,
// Compressor.AppendLegacy, AppendControlKey, AppendEndTxnMarker), and damaged
// variants derived from a good segment by byte edits. Everything is
// deterministic: fixed timestamps, fixed PRNG seeds, and codecs that produce
// the same output for the same input, so running it twice gives identical
// files. It also writes the directory's README.md from the scenario table
// below, so the README always matches the files.
//
// The generated directory is owned by this command: it is removed and
// rewritten on every run. Tests read the committed files and never need this
// command (the build tag keeps it out of go build/vet/test ./...).
//
// Run using: go run -tags klog_fixtures ./internal/klogtest/gen
//
// from the module root (or pass -dir).
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/klog-dev/klog/format"
)

// t0 is the timestamp of the first record of every scenario (the same
// 2023-11-14T22:13:20Z the spec's hand-computed vectors use).
const t0 int64 = 1700000000000

// scenario is one generated segment file.
type scenario struct {
	name string // directory under the output root
	file string // segment file name: the 20-digit base offset + ".log"
	how  string // one README paragraph: what it holds and how it was made
	data []byte
}

func segName(base int64) string { return fmt.Sprintf("%020d.log", base) }

func main() {
	dir := flag.String("dir", filepath.Join("testdata", "segments", "generated"), "output `directory` (removed and rewritten)")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if filepath.Base(dir) != "generated" {
		// RemoveAll below must never hit a directory this command does
		// not own.
		return fmt.Errorf("refusing to rewrite %q: the output directory must be named \"generated\"", dir)
	}
	scs, err := scenarios()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, sc := range scs {
		d := filepath.Join(dir, sc.name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, sc.file), sc.data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "README.md"), readme(scs), 0o644)
}

// segment builds a segment file from encoder calls, remembering where each
// entry starts so damaged variants can edit a chosen one.
type segment struct {
	c      format.Compressor
	buf    []byte
	starts []int // position of each batch (or legacy entry / wrapper)
	err    error
}

// batch appends a v2 batch: PrepareBatch derives the deltas, LastOffsetDelta,
// BaseTimestamp and MaxTimestamp (except for LogAppendTime and delete-horizon
// batches, whose fields the caller sets), AppendBatch encodes it.
func (s *segment) batch(h format.Batch, recs []format.Record) {
	if s.err != nil {
		return
	}
	format.PrepareBatch(&h, recs)
	s.rawBatch(h, recs)
}

// rawBatch appends a v2 batch whose header fields and record deltas the
// caller has already set (for compacted batches PrepareBatch cannot make).
func (s *segment) rawBatch(h format.Batch, recs []format.Record) {
	if s.err != nil {
		return
	}
	s.starts = append(s.starts, len(s.buf))
	s.buf, s.err = s.c.AppendBatch(s.buf, &h, recs)
}

// legacy appends v0/v1 entries: one per record uncompressed, or one wrapper.
func (s *segment) legacy(spec format.LegacySpec, recs []format.Record) {
	if s.err != nil {
		return
	}
	if spec.Compression == format.CompressionNone {
		for i := range recs {
			s.starts = append(s.starts, len(s.buf))
			s.buf, s.err = s.c.AppendLegacy(s.buf, spec, recs[i:i+1])
			if s.err != nil {
				return
			}
		}
		return
	}
	s.starts = append(s.starts, len(s.buf))
	s.buf, s.err = s.c.AppendLegacy(s.buf, spec, recs)
}

// control appends a control batch with one ABORT or COMMIT record, as the
// transaction coordinator's WriteTxnMarkers makes the partition leader
// write it: transactional + control attributes, the producer's id and epoch,
// no base sequence, key = control key, value = end-transaction marker.
func (s *segment) control(offset, ts int64, epoch int32, pid int64, pepoch int16, t format.ControlType, coordinatorEpoch int32) {
	h := format.Batch{
		BaseOffset:           offset,
		PartitionLeaderEpoch: epoch,
		Attributes:           0x10 | 0x20, // isTransactional | isControl
		ProducerID:           pid,
		ProducerEpoch:        pepoch,
		BaseSequence:         format.NoSequence,
	}
	s.batch(h, []format.Record{{
		Offset:    offset,
		Timestamp: ts,
		Key:       format.AppendControlKey(nil, t),
		Value:     format.AppendEndTxnMarker(nil, coordinatorEpoch),
	}})
}

func (s *segment) bytes() ([]byte, error) { return s.buf, s.err }

// noProducer is a v2 header with Kafka's "none" values for the producer
// fields, a CreateTime batch of codec c at offset base.
func noProducer(base int64, epoch int32, c format.Compression) format.Batch {
	return format.Batch{
		BaseOffset:           base,
		PartitionLeaderEpoch: epoch,
		Attributes:           int16(c),
		ProducerID:           format.NoProducerID,
		ProducerEpoch:        format.NoProducerEpoch,
		BaseSequence:         format.NoSequence,
	}
}

func rec(off int64, ts int64, key, value []byte, hs ...format.Header) format.Record {
	return format.Record{Offset: off, Timestamp: ts, Key: key, Value: value, Headers: hs}
}

func b(s string) []byte { return []byte(s) }

func hdr(k string, v []byte) format.Header { return format.Header{Key: b(k), Value: v} }

// smallBatches are the three batches of every v2-<codec> scenario (and the
// base of the corrupt-* variants): offsets 0-2, 3-7 (with headers and a
// tombstone) and 8-9.
func smallBatches() [3][]format.Record {
	return [3][]format.Record{
		{
			rec(0, t0, b("key-0"), b("value-0")),
			rec(1, t0+1, b("key-1"), b("value-1")),
			rec(2, t0+2, nil, b("value-no-key")),
		},
		{
			rec(3, t0+10, b("key-3"), b("value-3"), hdr("h1", b("v1"))),
			rec(4, t0+11, b("key-4"), b("value-4"), hdr("h1", b("v1")), hdr("h2", nil)),
			rec(5, t0+12, b("key-5"), nil),
			rec(6, t0+13, b("key-6"), b("value-6")),
			rec(7, t0+9, b("key-7"), b("out-of-order timestamp")),
		},
		{
			rec(8, t0+20, b("key-8"), b("value-8")),
			rec(9, t0+21, b("key-9"), b("value-9")),
		},
	}
}

// largeRecords is a batch of 36 records of 2000 bytes each (72 000 bytes
// uncompressed), so an lz4 frame needs two 64 KiB blocks and a snappy-java
// stream three 32 KiB chunks. The values are text that compresses well.
func largeRecords(base int64, ts int64) []format.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"kafka", "segment", "offset", "batch", "record", "broker", "leader", "epoch", "topic", "partition"}
	recs := make([]format.Record, 36)
	for i := range recs {
		var sb strings.Builder
		for sb.Len() < 2000 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		v := []byte(sb.String())[:2000]
		recs[i] = rec(base+int64(i), ts+int64(i), []byte(fmt.Sprintf("large-%02d", i)), v)
	}
	return recs
}

func v2Codec(c format.Compression) ([]byte, []int, error) {
	var s segment
	bs := smallBatches()
	s.batch(noProducer(0, 0, c), bs[0])
	s.batch(noProducer(3, 0, c), bs[1])
	s.batch(noProducer(8, 0, c), bs[2])
	if c != format.CompressionNone {
		s.batch(noProducer(10, 0, c), largeRecords(10, t0+100))
	}
	data, err := s.bytes()
	return data, s.starts, err
}

// legacyRecords are the six records of every v0/v1 scenario.
func legacyRecords() []format.Record {
	return []format.Record{
		rec(0, t0, b("key-0"), b("value-0")),
		rec(1, t0+1, nil, b("value-no-key")),
		rec(2, t0+2, b("key-tombstone"), nil),
		rec(3, t0+3, b("k"), b("value-3")),
		rec(4, t0+4, b("key-4"), b("value-4")),
		rec(5, t0+5, b("key-5"), b("value-5")),
	}
}

func legacyCodec(magic int8, c format.Compression, tt format.TimestampType) ([]byte, error) {
	var s segment
	spec := format.LegacySpec{Magic: magic, Compression: c, TimestampType: tt, LogAppendTime: t0 + 600000}
	recs := legacyRecords()
	if c == format.CompressionNone {
		s.legacy(spec, recs)
	} else {
		// Two wrappers of three inner messages (offsets 2 and 5).
		s.legacy(spec, recs[:3])
		s.legacy(spec, recs[3:])
	}
	return s.bytes()
}

// keyValueRecords covers the edge cases of keys and values: null, empty,
// binary and not valid UTF-8.
func keyValueRecords(base int64) []format.Record {
	return []format.Record{
		rec(base+0, t0, nil, b("null key")),
		rec(base+1, t0+1, []byte{}, b("empty key")),
		rec(base+2, t0+2, b("empty value"), []byte{}),
		rec(base+3, t0+3, b("tombstone"), nil),
		rec(base+4, t0+4, []byte{0xff, 0xfe, 0x00, 0x80}, []byte{0xc3, 0x28, 0x00, 0xa0, 0xa1, 0xf0, 0x28, 0x8c, 0xbc}),
		rec(base+5, t0+5, []byte{0x00}, []byte{0xed, 0xa0, 0x80}), // a UTF-16 surrogate encoded as "UTF-8"
		rec(base+6, t0+6, nil, nil),
		rec(base+7, t0+7, []byte{}, []byte{}),
		rec(base+8, t0+8, b("ключ-κλειδί-键"), b("valid UTF-8: żółw 🐢")),
	}
}

func scenarios() ([]scenario, error) {
	var out []scenario
	add := func(name, file, how string, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, scenario{name: name, file: file, how: how, data: data})
		return nil
	}
	zero := segName(0)

	// v2, every codec.
	var base []byte
	var baseStarts []int
	for c := format.CompressionNone; c <= format.CompressionZstd; c++ {
		data, starts, err := v2Codec(c)
		how := "Three CreateTime v2 batches, codec " + c.String() + ", leader epoch 0, no producer id: " +
			"offsets 0-2 (one null key), 3-7 (headers h1=\"v1\" and a null-valued h2, a null value, " +
			"a record whose timestamp is below the previous ones) and 8-9."
		if c != format.CompressionNone {
			how += " Then offsets 10-45: 36 records of 2000 bytes of text (72 000 bytes uncompressed), " +
				"so lz4 writes two 64 KiB blocks and snappy three 32 KiB chunks."
		} else {
			base, baseStarts = data, starts
		}
		if err := add("v2-"+c.String(), zero, how, data, err); err != nil {
			return nil, err
		}
	}

	// v0 and v1, every legacy codec.
	for _, magic := range []int8{format.MagicV0, format.MagicV1} {
		for c := format.CompressionNone; c <= format.CompressionLZ4; c++ {
			data, err := legacyCodec(magic, c, format.CreateTime)
			how := fmt.Sprintf("Magic v%d, codec %s: six messages at offsets 0-5 (a null key, a null value), timestamps %d+i.", magic, c, t0)
			if magic == format.MagicV0 {
				how = fmt.Sprintf("Magic v0, codec %s: six messages at offsets 0-5 (a null key, a null value); v0 has no timestamps.", c)
			}
			if c == format.CompressionNone {
				how += " One entry per message."
			} else if magic == format.MagicV0 {
				how += " Two compressed wrappers (offsets 2 and 5) of three inner messages with absolute offsets."
				if c == format.CompressionLZ4 {
					how += " The lz4 frame carries Kafka's v0 header checksum (KAFKA-3160: xxh32 over magic, FLG and BD)."
				}
			} else {
				how += " Two compressed wrappers (offsets 2 and 5) of three inner messages with relative offsets 0-2."
			}
			if err := add(fmt.Sprintf("v%d-%s", magic, c), zero, how, data, err); err != nil {
				return nil, err
			}
		}
	}
	for _, c := range []format.Compression{format.CompressionNone, format.CompressionGzip} {
		data, err := legacyCodec(format.MagicV1, c, format.LogAppendTime)
		how := fmt.Sprintf("Magic v1, codec %s, LogAppendTime (attribute bit 3) with append time %d; the messages of v1-%s, "+
			"whose own timestamps are replaced by the append time", c, t0+600000, c)
		if c == format.CompressionNone {
			how += " in every entry."
		} else {
			how += " in the wrappers only: the inner messages keep their CreateTime values, and readers must report the wrapper's."
		}
		if err := add("v1-logappendtime-"+c.String(), zero, how, data, err); err != nil {
			return nil, err
		}
	}

	// LogAppendTime v2.
	{
		var s segment
		for i, c := range []format.Compression{format.CompressionNone, format.CompressionGzip} {
			h := noProducer(int64(3*i), 1, c)
			h.Attributes |= 0x08
			h.MaxTimestamp = t0 + 600000 + int64(i)
			bo := int64(3 * i)
			s.batch(h, []format.Record{
				rec(bo, t0+bo, b("k"), b("created earlier")),
				rec(bo+1, t0+bo+5, b("k"), b("created later")),
				rec(bo+2, t0+bo+1, nil, b("v")),
			})
		}
		data, err := s.bytes()
		if err := add("v2-logappendtime", zero, fmt.Sprintf("Two LogAppendTime v2 batches (attribute bit 3), leader epoch 1: "+
			"offsets 0-2 uncompressed with maxTimestamp %d, offsets 3-5 gzip with maxTimestamp %d. The records keep "+
			"their CreateTime deltas; readers must report maxTimestamp for every record.", t0+600000, t0+600001), data, err); err != nil {
			return nil, err
		}
	}

	// Transactions: data batches, COMMIT and ABORT markers.
	{
		const pid, pepoch, coord = int64(1000), int16(3), int32(7)
		var s segment
		txn := func(off int64, seq int32, c format.Compression, recs []format.Record) {
			h := format.Batch{BaseOffset: off, PartitionLeaderEpoch: 2, Attributes: 0x10 | int16(c),
				ProducerID: pid, ProducerEpoch: pepoch, BaseSequence: seq}
			s.batch(h, recs)
		}
		txn(0, 0, format.CompressionNone, []format.Record{
			rec(0, t0, b("txn1-a"), b("committed 0")),
			rec(1, t0+1, b("txn1-b"), b("committed 1")),
			rec(2, t0+2, b("txn1-c"), b("committed 2")),
		})
		s.control(3, t0+10, 2, pid, pepoch, format.ControlCommit, coord)
		txn(4, 3, format.CompressionZstd, []format.Record{
			rec(4, t0+20, b("txn2-a"), b("aborted 4")),
			rec(5, t0+21, b("txn2-b"), b("aborted 5")),
		})
		s.control(6, t0+30, 2, pid, pepoch, format.ControlAbort, coord)
		// A non-transactional batch after the markers.
		s.batch(noProducer(7, 2, format.CompressionNone), []format.Record{rec(7, t0+40, b("plain"), b("not in a transaction"))})
		data, err := s.bytes()
		if err := add("v2-transactions", zero, fmt.Sprintf("Transactional producer id %d epoch %d, leader epoch 2: "+
			"offsets 0-2 (uncompressed, sequences 0-2), COMMIT marker at 3 (control batch, coordinatorEpoch %d, "+
			"baseSequence -1), offsets 4-5 (zstd, sequences 3-4), ABORT marker at 6, then a non-transactional "+
			"batch at offset 7.", pid, pepoch, coord), data, err); err != nil {
			return nil, err
		}
	}

	// Idempotent producer whose sequence wraps past MaxInt32.
	{
		var s segment
		h := format.Batch{BaseOffset: 0, Attributes: int16(format.CompressionNone),
			ProducerID: 4242, ProducerEpoch: 0, BaseSequence: 2147483646}
		s.batch(h, []format.Record{rec(0, t0, nil, b("seq 2147483646")), rec(1, t0+1, nil, b("seq 2147483647")),
			rec(2, t0+2, nil, b("seq 0")), rec(3, t0+3, nil, b("seq 1"))})
		h = format.Batch{BaseOffset: 4, Attributes: int16(format.CompressionLZ4),
			ProducerID: 4242, ProducerEpoch: 0, BaseSequence: 2}
		s.batch(h, []format.Record{rec(4, t0+4, nil, b("seq 2")), rec(5, t0+5, nil, b("seq 3"))})
		data, err := s.bytes()
		if err := add("v2-idempotent-seqwrap", zero, "Idempotent (non-transactional) producer id 4242 epoch 0: "+
			"offsets 0-3 with baseSequence 2147483646, so lastSequence wraps to 1 "+
			"(DefaultRecordBatch.incrementSequence), then offsets 4-5 (lz4) with baseSequence 2.", data, err); err != nil {
			return nil, err
		}
	}

	// Headers.
	{
		var s segment
		s.batch(noProducer(0, 0, format.CompressionNone), []format.Record{
			rec(0, t0, b("no headers"), b("v")),
			rec(1, t0+1, b("one header"), b("v"), hdr("content-type", b("text/plain"))),
			rec(2, t0+2, b("null header value"), b("v"), hdr("trace", nil)),
			rec(3, t0+3, b("empty header value"), b("v"), hdr("empty", []byte{})),
			rec(4, t0+4, b("many headers"), b("v"), hdr("a", b("1")), hdr("b", nil), hdr("a", b("2")),
				hdr("", b("empty key")), hdr("ключ", []byte{0xff, 0x00, 0xfe})),
		})
		s.batch(noProducer(5, 0, format.CompressionSnappy), []format.Record{
			rec(5, t0+5, nil, nil, hdr("only", nil)),
			rec(6, t0+6, b("k"), b("v"), hdr("h", b("v")), hdr("h", nil)),
		})
		data, err := s.bytes()
		if err := add("v2-headers", zero, "Record headers: none, one, a null value (length -1), an empty value, "+
			"repeated keys, an empty key, a non-ASCII key with a binary value (offsets 0-4, uncompressed); "+
			"then a snappy batch (offsets 5-6) with a null-key null-value record carrying a null-valued header.", data, err); err != nil {
			return nil, err
		}
	}

	// Keys and values.
	{
		var s segment
		s.batch(noProducer(0, 0, format.CompressionNone), keyValueRecords(0))
		s.batch(noProducer(9, 0, format.CompressionGzip), keyValueRecords(9))
		data, err := s.bytes()
		if err := add("v2-keys-values", zero, "Keys and values: null key, empty key, empty value, null value "+
			"(tombstone), binary non-UTF-8 bytes (0xff, NUL, lone continuation bytes, an encoded surrogate), "+
			"both null, both empty, and valid multi-byte UTF-8; offsets 0-8 uncompressed and the same "+
			"records again at 9-17 in a gzip batch.", data, err); err != nil {
			return nil, err
		}
		for _, magic := range []int8{format.MagicV0, format.MagicV1} {
			var s segment
			s.legacy(format.LegacySpec{Magic: magic}, keyValueRecords(0))
			s.legacy(format.LegacySpec{Magic: magic, Compression: format.CompressionSnappy}, keyValueRecords(9))
			data, err := s.bytes()
			if err := add(fmt.Sprintf("v%d-keys-values", magic), zero, fmt.Sprintf("The records of v2-keys-values "+
				"as magic v%d messages: offsets 0-8 one entry each, offsets 9-17 in one snappy wrapper.", magic), data, err); err != nil {
				return nil, err
			}
		}
	}

	// Non-zero base offset with offset gaps.
	{
		var s segment
		s.batch(noProducer(1000, 4, format.CompressionNone), []format.Record{
			rec(1000, t0, b("a"), b("1000")), rec(1001, t0+1, b("b"), b("1001")), rec(1002, t0+2, b("c"), b("1002")),
		})
		// A batch that compaction thinned out: base offset 1003 and
		// lastOffsetDelta 6 kept, only offsets 1005 and 1007 left.
		h := noProducer(1003, 4, format.CompressionNone)
		recs := []format.Record{rec(1005, t0+5, b("e"), b("1005")), rec(1007, t0+7, b("g"), b("1007"))}
		format.PrepareBatch(&h, recs)
		h.LastOffsetDelta = 6
		s.rawBatch(h, recs)
		s.batch(noProducer(1020, 5, format.CompressionNone), []format.Record{
			rec(1020, t0+20, b("t"), b("1020")), rec(1021, t0+21, b("u"), b("1021")),
		})
		data, err := s.bytes()
		if err := add("v2-base-offset-gap", segName(1000), "Segment 00000000000000001000.log (base offset 1000): "+
			"offsets 1000-1002; a batch with baseOffset 1003 and lastOffsetDelta 6 (last offset 1009) that holds "+
			"only offsets 1005 and 1007, as log compaction leaves one; then, after a gap of 10 offsets, "+
			"1020-1021 with leader epoch 5.", data, err); err != nil {
			return nil, err
		}
	}

	// Delete horizon, and a batch compaction emptied.
	{
		var s segment
		s.batch(noProducer(0, 0, format.CompressionNone), []format.Record{rec(0, t0, b("live"), b("value"))})
		const horizon = t0 + 86400000
		h := noProducer(1, 0, format.CompressionNone)
		h.Attributes |= 0x40
		h.BaseTimestamp = horizon
		s.batch(h, []format.Record{
			rec(1, t0+1, b("deleted-1"), nil),
			rec(2, t0+2, b("kept"), b("value")),
			rec(3, t0+3, b("deleted-3"), nil),
		})
		// Emptied by compaction, kept to preserve producer state
		// (KAFKA-5443): no records, baseTimestamp -1, the old
		// maxTimestamp, offsets 4-6 still covered.
		s.rawBatch(format.Batch{BaseOffset: 4, LastOffsetDelta: 2, BaseTimestamp: format.NoTimestamp,
			MaxTimestamp: t0 + 6, ProducerID: 77, ProducerEpoch: 1, BaseSequence: 10}, nil)
		s.batch(noProducer(7, 0, format.CompressionNone), []format.Record{rec(7, t0+7, b("after"), b("value"))})
		data, err := s.bytes()
		if err := add("v2-delete-horizon", zero, fmt.Sprintf("Compaction output: offset 0; a batch with the "+
			"delete-horizon bit (attribute 0x40) and baseTimestamp = deleteHorizonMs = %d holding two tombstones "+
			"and a live record (offsets 1-3; the record timestamp deltas are negative); an empty batch "+
			"(recordsCount 0, offsets 4-6, producer id 77 epoch 1 baseSequence 10, baseTimestamp -1) kept for "+
			"the producer state; then offset 7.", horizon), data, err); err != nil {
			return nil, err
		}
	}

	// Damaged variants of v2-none. Batch 1 (offsets 3-7) is the damaged
	// one unless said otherwise, so readers can be checked for what they
	// do before and after it.
	if len(baseStarts) != 3 {
		return nil, errors.New("v2-none: expected 3 batches")
	}
	p1, p2 := baseStarts[1], baseStarts[2]
	end1 := p2
	edit := func(f func(d []byte) []byte) []byte { return f(append([]byte(nil), base...)) }
	recrc := func(d []byte, pos, end int) {
		binary.BigEndian.PutUint32(d[pos+17:], format.ChecksumC(d[pos+21:end]))
	}
	damaged := []struct {
		name, how string
		data      []byte
	}{
		{"corrupt-crc-flipped", fmt.Sprintf("v2-none with the first CRC byte of batch 1 (position %d, offsets 3-7) "+
			"inverted (xor 0xff): the batch is not valid, everything else is intact.", p1+17),
			edit(func(d []byte) []byte { d[p1+17] ^= 0xff; return d })},
		{"corrupt-cut-mid-header", fmt.Sprintf("v2-none cut %d bytes into the 61-byte header of batch 2 "+
			"(file size %d): a partial trailing batch with more than 17 bytes.", 30, p2+30),
			edit(func(d []byte) []byte { return d[:p2+30] })},
		{"corrupt-cut-short", fmt.Sprintf("v2-none cut 10 bytes into batch 2 (file size %d): 17 bytes or fewer "+
			"remain, which Kafka's reader skips quietly.", p2+10),
			edit(func(d []byte) []byte { return d[:p2+10] })},
		{"corrupt-cut-mid-record", fmt.Sprintf("v2-none cut 5 bytes into the records of batch 2 (file size %d).",
			p2+61+5),
			edit(func(d []byte) []byte { return d[:p2+61+5] })},
		{"corrupt-length-negative", fmt.Sprintf("v2-none with the batchLength of batch 1 (position %d) set to -1.", p1),
			edit(func(d []byte) []byte { binary.BigEndian.PutUint32(d[p1+8:], 0xffffffff); return d })},
		{"corrupt-length-too-small", fmt.Sprintf("v2-none with the batchLength of batch 1 (position %d) set to 13, "+
			"below the 14-byte minimum record overhead (Kafka: CorruptRecordException).", p1),
			edit(func(d []byte) []byte { binary.BigEndian.PutUint32(d[p1+8:], 13); return d })},
		{"corrupt-length-under-header", fmt.Sprintf("v2-none with the batchLength of batch 1 (position %d) set to "+
			"40: at least 14, so the entry framing is accepted, but smaller than a v2 batch header (49).", p1),
			edit(func(d []byte) []byte { binary.BigEndian.PutUint32(d[p1+8:], 40); return d })},
		{"corrupt-count-too-high", "v2-none with recordsCount of batch 1 raised from 5 to 6 and the CRC recomputed: " +
			"the batch is valid but its records end early (\"Incorrect declared batch size, premature EOF reached\").",
			edit(func(d []byte) []byte {
				binary.BigEndian.PutUint32(d[p1+57:], 6)
				recrc(d, p1, end1)
				return d
			})},
		{"corrupt-count-too-low", "v2-none with recordsCount of batch 1 lowered from 5 to 4 and the CRC recomputed: " +
			"bytes remain after the 4th record (\"Incorrect declared batch size, records still remaining in file\").",
			edit(func(d []byte) []byte {
				binary.BigEndian.PutUint32(d[p1+57:], 4)
				recrc(d, p1, end1)
				return d
			})},
		{"corrupt-zero-tail", fmt.Sprintf("v2-none followed by 1024 zero bytes from position %d, like a "+
			"preallocated segment (log.preallocate=true).", len(base)),
			edit(func(d []byte) []byte { return append(d, make([]byte, 1024)...) })},
		{"corrupt-garbage-tail", fmt.Sprintf("v2-none followed by 1024 pseudo-random bytes from position %d "+
			"(math/rand/v2 PCG seeded 7, 11).", len(base)),
			edit(func(d []byte) []byte {
				rng := rand.New(rand.NewPCG(7, 11))
				for range 1024 {
					d = append(d, byte(rng.Uint32()))
				}
				return d
			})},
		{"corrupt-magic-unknown", fmt.Sprintf("v2-none with the magic byte of batch 1 (position %d) set to 0xff "+
			"(-1): Kafka reads magic < 2 as legacy and fails with \"Invalid magic used in LegacyRecord: -1\". "+
			"The CRC does not cover the magic, so only the magic is wrong.", p1+16),
			edit(func(d []byte) []byte { d[p1+16] = 0xff; return d })},
		{"corrupt-magic-3", fmt.Sprintf("v2-none with the magic byte of batch 1 (position %d) set to 3: Kafka's "+
			"FileLogInputStream reads every magic >= 2 as a v2 batch, and the CRC still matches.", p1+16),
			edit(func(d []byte) []byte { d[p1+16] = 3; return d })},
		{"corrupt-codec-5", fmt.Sprintf("v2-none with the codec bits of batch 1's attributes (position %d) set to "+
			"5 and the CRC recomputed: a valid batch whose records Kafka cannot read (\"Unknown compression "+
			"type id: 5\").", p1+21),
			edit(func(d []byte) []byte {
				d[p1+22] = d[p1+22]&^0x07 | 5
				recrc(d, p1, end1)
				return d
			})},
	}
	for _, d := range damaged {
		if err := add(d.name, zero, d.how, d.data, nil); err != nil {
			return nil, err
		}
	}

	// A damaged legacy file.
	{
		var s segment
		s.legacy(format.LegacySpec{Magic: format.MagicV1}, legacyRecords())
		data, err := s.bytes()
		if err == nil {
			data[s.starts[1]+12] ^= 0xff
		}
		if err := add("corrupt-legacy-crc-flipped", zero, fmt.Sprintf("v1-none with the first CRC byte of "+
			"message 1 (offset 1, position %d) inverted.", s.starts[1]+12), data, err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readme(scs []scenario) []byte {
	var sb strings.Builder
	sb.WriteString(`# Generated segment fixtures

Written by ` + "`go run -tags klog_fixtures ./internal/klogtest/gen`" + ` (run from the module root); do not
edit by hand, change the generator and run it again. The generator is deterministic (fixed
timestamps starting at ` + fmt.Sprint(t0) + `, fixed PRNG seeds), so re-running it reproduces these bytes
exactly with the same dependency versions.

Good segments are made only with package format's encoders (` + "`Compressor.AppendBatch`" + `,
` + "`PrepareBatch`, `Compressor.AppendLegacy`, `AppendControlKey`, `AppendEndTxnMarker`" + `). The
` + "`corrupt-*`" + ` files are byte edits of a good one, each described below. Unlike ` + "`../kafka-written/`" + `,
these files were not written by Kafka: they test klog against its own encoder and against
controlled damage, never as an oracle for Kafka's behaviour. ` + "`format/format_test.go`" + ` checks what
each scenario promises (TestGeneratedScenarios, TestScanDamaged) and cuts every file in its
truncation sweep (TestReadTruncation).

| scenario | file | size | how it was made |
|---|---|---|---|
`)
	for _, sc := range scs {
		fmt.Fprintf(&sb, "| `%s` | `%s` | %d | %s |\n", sc.name, sc.file, len(sc.data), sc.how)
	}
	return []byte(sb.String())
}
