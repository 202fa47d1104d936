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
// of a file, is a plausible entry header: an offset that is not negative,
// a size of at least the smallest entry and a magic of 0, 1 or 2. It is how
// a file with no Kafka name is taken for a segment (verify, stats).
func LooksLikeSegment(h []byte) bool {
	if len(h) < HeaderSizeUpToMagic {
		return false
	}
	size := int32(binary.BigEndian.Uint32(h[posSize:]))
	magic := int8(h[posMagic])
	return int64(binary.BigEndian.Uint64(h[posOffset:])) >= 0 && size >= RecordOverheadV0 && magic >= 0 && magic <= MagicV2
}
