package format

import "encoding/binary"

// Layout of log entries, v2 batches and v0/v1 messages. These constants are
// part of the on-disk format; never change them.
const (
	// Common framing of every entry (Records.java).
	posOffset           = 0
	posSize             = posOffset + 8
	LogOverhead         = posSize + 4 // 12: offset + size
	posMagic            = 16
	HeaderSizeUpToMagic = posMagic + 1 // 17

	// v2 record batch (DefaultRecordBatch.java).
	posBaseOffset           = 0
	posBatchLength          = posBaseOffset + 8
	posPartitionLeaderEpoch = posBatchLength + 4
	posMagicV2              = posPartitionLeaderEpoch + 4
	posCRC                  = posMagicV2 + 1
	posAttributes           = posCRC + 4
	posLastOffsetDelta      = posAttributes + 2
	posBaseTimestamp        = posLastOffsetDelta + 4
	posMaxTimestamp         = posBaseTimestamp + 8
	posProducerID           = posMaxTimestamp + 8
	posProducerEpoch        = posProducerID + 8
	posBaseSequence         = posProducerEpoch + 2
	posRecordCount          = posBaseSequence + 4
	BatchHeaderSize         = posRecordCount + 4 // 61: RECORD_BATCH_OVERHEAD

	// v0/v1 message, relative to the start of the entry (LegacyRecord.java).
	posLegacyCRC        = LogOverhead
	posLegacyMagic      = posLegacyCRC + 4
	posLegacyAttributes = posLegacyMagic + 1
	posLegacyTimestamp  = posLegacyAttributes + 1 // v1 only
	posLegacyKeyV0      = posLegacyAttributes + 1
	posLegacyKeyV1      = posLegacyTimestamp + 8

	// RecordOverheadV0 is the smallest valid v0 message (crc, magic,
	// attributes, key length, value length); any entry whose size field is
	// smaller is corrupt.
	RecordOverheadV0 = 14
	// RecordOverheadV1 adds the 8-byte timestamp.
	RecordOverheadV1 = 22
)

// Magic values.
const (
	MagicV0 int8 = 0
	MagicV1 int8 = 1
	MagicV2 int8 = 2
)

// Attribute bits of a v2 batch (low byte) and of a v0/v1 message.
const (
	attrCompressionMask = 0x07
	attrTimestampType   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
	attrDeleteHorizon   = 0x40
)

// Sentinel values Kafka writes for "none".
const (
	NoProducerID           int64 = -1
	NoProducerEpoch        int16 = -1
	NoSequence             int32 = -1
	NoPartitionLeaderEpoch int32 = -1
	NoTimestamp            int64 = -1
	maxInt32                     = 1<<31 - 1
)

// LooksLikeSegment reports whether h, the first HeaderSizeUpToMagic bytes
// of a file, is a plausible entry header (SegmentStart accepts it). It is
// how a file with no Kafka name is taken for a segment (verify, stats): a
// file shorter than one entry header is not.
func LooksLikeSegment(h []byte) bool {
	return len(h) >= HeaderSizeUpToMagic && SegmentStart(h[:HeaderSizeUpToMagic]) == nil
}

// minEntrySize is the smallest size field of an entry of each magic: the
// v0 and v1 message overheads (LegacyRecord.RECORD_OVERHEAD_V0/V1) and a v2
// batch header after the 12-byte framing (DefaultRecordBatch.
// RECORD_BATCH_OVERHEAD - Records.LOG_OVERHEAD = 49).
var minEntrySize = [...]int32{RecordOverheadV0, RecordOverheadV1, BatchHeaderSize - LogOverhead}

// SegmentStart judges the first bytes of a file or stream that has no
// Kafka name to go by: could they start a segment? head is its first
// HeaderSizeUpToMagic bytes, or all of it when it is shorter; only the
// bytes present are judged, so every prefix of a real segment passes. A
// plausible start is an entry header (Records.java: offset int64, size
// int32, then the v2 partitionLeaderEpoch or the v0/v1 CRC, magic int8 at
// byte 16) with a magic of 0, 1 or 2 and a size of at least that magic's smallest entry (14, 22, or 49 for a v2
// batch); or zero bytes only, what a preallocated segment holds before its
// first batch (log.preallocate). An empty head passes.
//
// It returns nil, or a *PosError of kind ErrNotSegment at position 0 naming
// the field that rules the start out. A damaged first header (a flipped
// magic) is ruled out too: the bytes alone cannot tell it from other data.
func SegmentStart(head []byte) error {
	h := head[:min(len(head), HeaderSizeUpToMagic)]
	zeros := true
	for _, c := range h {
		if c != 0 {
			zeros = false
			break
		}
	}
	if zeros {
		return nil
	}
	// The offset is not judged: no CRC covers it (v2's covers the batch
	// from its attributes, v0/v1's from the magic), so a first batch that
	// is intact but for its offset would be called "not a segment". A
	// negative size shows in its first byte.
	if len(h) > posSize && h[posSize]&0x80 != 0 {
		return notSegment("size", "a negative entry size")
	}
	if len(h) < posSize+4 {
		return nil
	}
	size := int32(binary.BigEndian.Uint32(h[posSize:]))
	if size < RecordOverheadV0 {
		return notSegment("size", "entry size "+itoa(int64(size))+", below the smallest entry (14 bytes)")
	}
	if len(h) <= posMagic {
		return nil
	}
	magic := int8(h[posMagic])
	if magic < MagicV0 || magic > MagicV2 {
		return notSegment("magic", "magic "+itoa(int64(magic))+" at byte 16, where a segment holds 0, 1 or 2")
	}
	if size < minEntrySize[magic] {
		return notSegment("size", "entry size "+itoa(int64(size))+", below the smallest magic "+itoa(int64(magic))+" entry ("+itoa(int64(minEntrySize[magic]))+" bytes)")
	}
	return nil
}

func notSegment(field, what string) error {
	return &PosError{Kind: ErrNotSegment, Pos: 0, Offset: -1, Field: field, Msg: "the first bytes do not start a segment: " + what}
}
