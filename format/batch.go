package format

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Compression is a codec id from the attributes (bits 0-2).
type Compression int8

// Codec ids (CompressionType.java).
const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

// String returns Kafka's lower-case name (CompressionType.name), or
// "unknown(N)" for ids 5-7.
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	}
	return "unknown(" + strconv.Itoa(int(c)) + ")"
}

// Known reports whether Kafka knows this codec id (0-4).
func (c Compression) Known() bool { return c >= 0 && c <= CompressionZstd }

// ParseCompression maps a codec name to its id.
func ParseCompression(s string) (Compression, bool) {
	for c := CompressionNone; c <= CompressionZstd; c++ {
		if c.String() == s {
			return c, true
		}
	}
	return 0, false
}

// TimestampType is the meaning of a batch's timestamps.
type TimestampType int8

// Timestamp types (TimestampType.java).
const (
	NoTimestampType TimestampType = -1
	CreateTime      TimestampType = 0
	LogAppendTime   TimestampType = 1
)

// String returns Kafka's label: CreateTime, LogAppendTime, NoTimestampType.
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// ParseTimestampType reads a producer's timestamp type: create
// (CreateTime) or log-append (LogAppendTime), by those names or Kafka's.
func ParseTimestampType(s string) (TimestampType, error) {
	switch s {
	case "create", "CreateTime":
		return CreateTime, nil
	case "log-append", "LogAppendTime":
		return LogAppendTime, nil
	}
	return NoTimestampType, errors.New("timestamp type must be create or log-append, got " + strconv.Quote(s))
}

// Batch is one log entry: a v2 record batch, or a v0/v1 message (which Kafka
// also treats as a batch, of one record or, when compressed, of its inner
// messages). A Batch returned by a Scanner aliases the scanner's buffer and is
// valid until the next call to Next; use Clone to keep it.
type Batch struct {
	// Pos is the byte position of the entry in its file (or slice).
	Pos int64
	// Raw is the whole entry, LogOverhead + size bytes.
	Raw []byte

	Magic int8
	// BaseOffset: v2, the first offset of the batch. v0/v1, the entry's
	// offset field: for a compressed wrapper the offset of its last inner
	// message, which Kafka reports as the batch's last offset.
	BaseOffset int64
	// BatchLength is the size field: bytes after it (v2 batchLength, or the
	// v0/v1 message size).
	BatchLength int32
	// PartitionLeaderEpoch: v2 only; -1 for v0/v1.
	PartitionLeaderEpoch int32
	// CRC is the stored checksum: v2 CRC-32C, v0/v1 the message CRC-32.
	CRC uint32
	// Attributes: v2 the int16 attributes field; v0/v1 the message
	// attributes byte.
	Attributes int16
	// LastOffsetDelta: v2 only (0 for v0/v1).
	LastOffsetDelta int32
	// BaseTimestamp: v2 only, epoch ms (the delete horizon when
	// HasDeleteHorizon). -1 for v0/v1.
	BaseTimestamp int64
	// MaxTimestamp: v2 the maxTimestamp field; v1 the message timestamp;
	// v0 -1. Epoch ms.
	MaxTimestamp int64
	// ProducerID, ProducerEpoch, BaseSequence: v2 only; -1 for v0/v1.
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// RecordCount: v2 recordsCount as written (even if nonsense); -1 for
	// v0/v1, where Kafka has no count.
	RecordCount int32

	crcDone     bool
	computedCRC uint32
}

// Size is the entry size in bytes, LogOverhead + BatchLength.
func (b *Batch) Size() int64 { return LogOverhead + int64(b.BatchLength) }

// IsV2 reports whether Kafka reads this entry as a v2 batch (magic >= 2,
// including unknown magics 3..127, as FileLogInputStream does).
func (b *Batch) IsV2() bool { return b.Magic >= MagicV2 }

// LastOffset is BaseOffset + LastOffsetDelta (v2) or the entry offset (v0/v1).
func (b *Batch) LastOffset() int64 {
	if b.IsV2() {
		return b.BaseOffset + int64(b.LastOffsetDelta)
	}
	return b.BaseOffset
}

// NextOffset is LastOffset + 1: where the next batch starts, even for a batch
// emptied by compaction (KAFKA-5443).
func (b *Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// Compression is the codec of the attributes.
func (b *Batch) Compression() Compression { return Compression(b.Attributes & attrCompressionMask) }

// TimestampType: v2 and v1 from attribute bit 3; v0 NoTimestampType.
func (b *Batch) TimestampType() TimestampType {
	if b.Magic == MagicV0 {
		return NoTimestampType
	}
	if b.Attributes&attrTimestampType != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// IsTransactional reports attribute bit 4 (v2 only).
func (b *Batch) IsTransactional() bool { return b.IsV2() && b.Attributes&attrTransactional != 0 }

// IsControl reports attribute bit 5 (v2 only).
func (b *Batch) IsControl() bool { return b.IsV2() && b.Attributes&attrControl != 0 }

// HasDeleteHorizon reports attribute bit 6 (v2 only).
func (b *Batch) HasDeleteHorizon() bool { return b.IsV2() && b.Attributes&attrDeleteHorizon != 0 }

// DeleteHorizonMs is BaseTimestamp when HasDeleteHorizon.
func (b *Batch) DeleteHorizonMs() (int64, bool) {
	if b.HasDeleteHorizon() {
		return b.BaseTimestamp, true
	}
	return 0, false
}

// LastSequence is BaseSequence advanced by LastOffsetDelta with Kafka's
// wrap-around, or -1 when there is no sequence.
func (b *Batch) LastSequence() int32 {
	if b.BaseSequence == NoSequence {
		return NoSequence
	}
	return IncrementSequence(b.BaseSequence, b.LastOffsetDelta)
}

// IncrementSequence adds n to seq wrapping past MaxInt32 to 0, as
// DefaultRecordBatch.incrementSequence does.
func IncrementSequence(seq, n int32) int32 {
	if seq > maxInt32-n {
		return n - (maxInt32 - seq) - 1
	}
	return seq + n
}

// DecrementSequence is the inverse of IncrementSequence.
func DecrementSequence(seq, n int32) int32 {
	if seq < n {
		return maxInt32 - (n - seq) + 1
	}
	return seq - n
}

// ComputedCRC computes (once) the checksum of the entry's bytes: CRC-32C of
// [21, end) for v2, CRC-32 of [16, end) for v0/v1.
func (b *Batch) ComputedCRC() uint32 {
	if !b.crcDone {
		if b.IsV2() {
			if len(b.Raw) >= posAttributes {
				b.computedCRC = ChecksumC(b.Raw[posAttributes:])
			}
		} else if len(b.Raw) >= posLegacyMagic {
			b.computedCRC = ChecksumIEEE(b.Raw[posLegacyMagic:])
		}
		b.crcDone = true
	}
	return b.computedCRC
}

// Valid is Kafka's isValid: the entry is at least the minimum size and its
// stored CRC matches the computed one.
func (b *Batch) Valid() bool {
	if b.IsV2() {
		if len(b.Raw) < BatchHeaderSize {
			return false
		}
	} else if b.BatchLength < RecordOverheadV0 {
		return false
	}
	return b.CRC == b.ComputedCRC()
}

// CheckCRC returns a *CorruptRecordError when the batch is not Valid.
func (b *Batch) CheckCRC() error {
	if b.Valid() {
		return nil
	}
	return &CorruptRecordError{Offset: b.BaseOffset, Stored: b.CRC, Computed: b.ComputedCRC()}
}

// Clone returns a copy that does not alias any buffer.
func (b *Batch) Clone() *Batch {
	c := *b
	c.Raw = append([]byte(nil), b.Raw...)
	return &c
}

// ParseBatch decodes the entry at the start of raw, which must hold the whole
// entry (LogOverhead + size bytes; extra bytes are ignored). pos is recorded
// as the entry's position for errors. Only the header is decoded; records
// are read with a RecordReader.
func ParseBatch(raw []byte, pos int64) (*Batch, error) {
	b := new(Batch)
	if err := b.parse(raw, pos); err != nil {
		return nil, err
	}
	return b, nil
}

// Parse is ParseBatch into b, for a caller that reuses one Batch from entry
// to entry (no allocation per batch); b is left undefined on error.
func (b *Batch) Parse(raw []byte, pos int64) error { return b.parse(raw, pos) }

// parseHeader fills b's header fields from the first bytes of an entry whose
// size field is size; Raw is left holding just those bytes.
func (b *Batch) parseHeader(hdr []byte, pos int64, size int32) error {
	total := LogOverhead + int64(size)
	if int64(len(hdr)) >= total {
		return b.parse(hdr, pos)
	}
	var tmp [BatchHeaderSize]byte
	copy(tmp[:], hdr)
	magic := int8(hdr[posMagic])
	need := int64(BatchHeaderSize)
	if magic < MagicV2 {
		need = posLegacyKeyV1
	}
	if int64(len(hdr)) < need && int64(len(hdr)) < total {
		return &PosError{Kind: ErrTruncated, Pos: pos, Offset: -1, Field: "header", Msg: "entry header cut short"}
	}
	err := b.parseFields(tmp[:], pos, magic, size)
	b.Raw = hdr
	b.crcDone = false
	return err
}

// parse fills b from raw (which holds at least the whole entry).
func (b *Batch) parse(raw []byte, pos int64) error {
	if len(raw) < HeaderSizeUpToMagic {
		return &PosError{Kind: ErrTruncated, Pos: pos, Offset: -1, Field: "header",
			Expected: HeaderSizeUpToMagic, Actual: len(raw), Msg: "entry header cut short"}
	}
	offset := int64(binary.BigEndian.Uint64(raw[posOffset:]))
	size := int32(binary.BigEndian.Uint32(raw[posSize:]))
	magic := int8(raw[posMagic])
	if size < RecordOverheadV0 {
		return &PosError{Kind: ErrCorrupt, Pos: pos, Offset: offset, Field: "size", Actual: size,
			Msg: "Found record size " + strconv.Itoa(int(size)) + " smaller than minimum record overhead (14)"}
	}
	total := LogOverhead + int64(size)
	if int64(len(raw)) < total {
		return &PosError{Kind: ErrTruncated, Pos: pos, Offset: offset, Field: "size",
			Expected: total, Actual: len(raw), Msg: "entry cut short"}
	}
	*b = Batch{Pos: pos, Raw: raw[:total:total], Magic: magic, BaseOffset: offset, BatchLength: size}
	return b.parseFields(b.Raw, pos, magic, size)
}

// parseFields reads the header fields of an entry (raw holds at least the
// header for its magic); the size was checked by the caller.
func (b *Batch) parseFields(raw []byte, pos int64, magic int8, size int32) error {
	offset := int64(binary.BigEndian.Uint64(raw[posOffset:]))
	total := LogOverhead + int64(size)
	*b = Batch{Pos: pos, Raw: b.Raw, Magic: magic, BaseOffset: offset, BatchLength: size}
	if magic >= MagicV2 {
		if total < BatchHeaderSize {
			return &PosError{Kind: ErrCorrupt, Pos: pos, Offset: offset, Field: "batchLength",
				Expected: BatchHeaderSize - LogOverhead, Actual: size,
				Msg: "record batch smaller than its 61-byte header"}
		}
		b.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(raw[posPartitionLeaderEpoch:]))
		b.CRC = binary.BigEndian.Uint32(raw[posCRC:])
		b.Attributes = int16(binary.BigEndian.Uint16(raw[posAttributes:]))
		b.LastOffsetDelta = int32(binary.BigEndian.Uint32(raw[posLastOffsetDelta:]))
		b.BaseTimestamp = int64(binary.BigEndian.Uint64(raw[posBaseTimestamp:]))
		b.MaxTimestamp = int64(binary.BigEndian.Uint64(raw[posMaxTimestamp:]))
		b.ProducerID = int64(binary.BigEndian.Uint64(raw[posProducerID:]))
		b.ProducerEpoch = int16(binary.BigEndian.Uint16(raw[posProducerEpoch:]))
		b.BaseSequence = int32(binary.BigEndian.Uint32(raw[posBaseSequence:]))
		b.RecordCount = int32(binary.BigEndian.Uint32(raw[posRecordCount:]))
		return nil
	}
	if magic != MagicV0 && magic != MagicV1 {
		return &PosError{Kind: ErrUnsupported, Pos: pos, Offset: offset, Field: "magic", Actual: magic,
			Msg: "Invalid magic used in LegacyRecord: " + strconv.Itoa(int(magic))}
	}
	if magic == MagicV1 && size < RecordOverheadV1 {
		return &PosError{Kind: ErrCorrupt, Pos: pos, Offset: offset, Field: "size",
			Expected: RecordOverheadV1, Actual: size, Msg: "v1 message smaller than its overhead"}
	}
	b.PartitionLeaderEpoch = NoPartitionLeaderEpoch
	b.CRC = binary.BigEndian.Uint32(raw[posLegacyCRC:])
	b.Attributes = int16(raw[posLegacyAttributes])
	b.BaseTimestamp = NoTimestamp
	b.MaxTimestamp = NoTimestamp
	if magic == MagicV1 {
		b.MaxTimestamp = int64(binary.BigEndian.Uint64(raw[posLegacyTimestamp:]))
	}
	b.ProducerID = NoProducerID
	b.ProducerEpoch = NoProducerEpoch
	b.BaseSequence = NoSequence
	b.RecordCount = -1
	return nil
}
