package format

import (
	"encoding/binary"
	"errors"
)

// PrepareBatch fills the derived header fields of h from recs, whose Offset
// and Timestamp are absolute, the way Kafka's MemoryRecordsBuilder does: each
// record's OffsetDelta and TimestampDelta are set relative to h.BaseOffset and
// the first record's timestamp (h.BaseTimestamp), LastOffsetDelta from the
// last record, and MaxTimestamp the largest timestamp, unless h is
// LogAppendTime, whose MaxTimestamp the caller sets to the append time. A
// batch whose delete-horizon bit is set keeps h.BaseTimestamp as given.
func PrepareBatch(h *Batch, recs []Record) {
	if h.Magic == 0 {
		h.Magic = MagicV2
	}
	if len(recs) == 0 {
		return
	}
	if !h.HasDeleteHorizon() {
		h.BaseTimestamp = recs[0].Timestamp
	}
	maxTS := NoTimestamp
	for i := range recs {
		r := &recs[i]
		r.OffsetDelta = int32(r.Offset - h.BaseOffset)
		r.TimestampDelta = r.Timestamp - h.BaseTimestamp
		maxTS = max(maxTS, r.Timestamp)
	}
	h.LastOffsetDelta = recs[len(recs)-1].OffsetDelta
	if h.TimestampType() != LogAppendTime {
		h.MaxTimestamp = maxTS
	}
	h.RecordCount = int32(len(recs))
}

// AppendBatch appends a v2 record batch to dst: the header fields of h
// (BaseOffset, PartitionLeaderEpoch, Magic, Attributes, LastOffsetDelta,
// BaseTimestamp, MaxTimestamp, ProducerID, ProducerEpoch, BaseSequence) and
// recs, encoded with their OffsetDelta, TimestampDelta, Attributes, Key,
// Value and Headers, compressed with h's codec. BatchLength, RecordCount and
// the CRC-32C are computed, the CRC last of all. The result decodes back to
// the same header and records.
func (c *Compressor) AppendBatch(dst []byte, h *Batch, recs []Record) ([]byte, error) {
	if len(recs) > maxInt32 {
		return dst, errors.New("too many records for one batch")
	}
	magic := h.Magic
	if magic == 0 {
		magic = MagicV2
	}
	if magic < MagicV2 {
		return dst, errors.New("AppendBatch writes magic v2; use AppendLegacy for v0/v1")
	}
	start := len(dst)
	dst = grow(dst, BatchHeaderSize)
	hdr := dst[start:]
	binary.BigEndian.PutUint64(hdr[posBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(hdr[posPartitionLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	hdr[posMagicV2] = byte(magic)
	binary.BigEndian.PutUint16(hdr[posAttributes:], uint16(h.Attributes))
	binary.BigEndian.PutUint32(hdr[posLastOffsetDelta:], uint32(h.LastOffsetDelta))
	binary.BigEndian.PutUint64(hdr[posBaseTimestamp:], uint64(h.BaseTimestamp))
	binary.BigEndian.PutUint64(hdr[posMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint64(hdr[posProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(hdr[posProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(hdr[posBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(hdr[posRecordCount:], uint32(len(recs)))
	codec := Compression(h.Attributes & attrCompressionMask)
	if codec == CompressionNone {
		for i := range recs {
			dst = AppendRecordV2(dst, &recs[i])
		}
	} else {
		raw := c.scratch[:0]
		for i := range recs {
			raw = AppendRecordV2(raw, &recs[i])
		}
		c.scratch = raw
		var err error
		if dst, err = c.Compress(codec, magic, dst, raw); err != nil {
			return dst[:start], err
		}
	}
	size := len(dst) - start
	if size-LogOverhead > maxInt32 {
		return dst[:start], errors.New("batch larger than 2 GiB")
	}
	b := dst[start:]
	binary.BigEndian.PutUint32(b[posBatchLength:], uint32(size-LogOverhead))
	binary.BigEndian.PutUint32(b[posCRC:], ChecksumC(b[posAttributes:]))
	return dst, nil
}

// AppendRecordV2 appends one v2 record (DefaultRecord.writeTo): its length
// varint, Attributes, TimestampDelta, OffsetDelta, Key, Value and Headers.
// A record stream of a batch is these, one after another (compressed
// with the batch's codec, see Compressor.Writer).
func AppendRecordV2(dst []byte, r *Record) []byte {
	body := 1 + SizeOfVarlong(r.TimestampDelta) + SizeOfVarint(r.OffsetDelta) +
		sizedLen(r.Key) + sizedLen(r.Value) + SizeOfVarint(int32(len(r.Headers)))
	for _, h := range r.Headers {
		body += sizedLen(h.Key) + sizedLen(h.Value)
	}
	dst = AppendVarint(dst, int32(body))
	dst = append(dst, byte(r.Attributes))
	dst = AppendVarlong(dst, r.TimestampDelta)
	dst = AppendVarint(dst, r.OffsetDelta)
	dst = appendSized(dst, r.Key)
	dst = appendSized(dst, r.Value)
	dst = AppendVarint(dst, int32(len(r.Headers)))
	for _, h := range r.Headers {
		dst = appendSized(dst, h.Key)
		dst = appendSized(dst, h.Value)
	}
	return dst
}

func sizedLen(b []byte) int {
	if b == nil {
		return 1
	}
	return SizeOfVarint(int32(len(b))) + len(b)
}

func appendSized(dst, b []byte) []byte {
	if b == nil {
		return AppendVarint(dst, -1)
	}
	return append(AppendVarint(dst, int32(len(b))), b...)
}

// LegacySpec describes v0/v1 entries to append.
type LegacySpec struct {
	Magic       int8 // MagicV0 or MagicV1
	Compression Compression
	// TimestampType: CreateTime or LogAppendTime (v1 only).
	TimestampType TimestampType
	// LogAppendTime is the wrapper timestamp when TimestampType is
	// LogAppendTime.
	LogAppendTime int64
}

// AppendLegacy appends recs (absolute Offset, Timestamp, Key, Value) as v0
// or v1 entries. Uncompressed, each record is its own entry. Compressed, the
// records become the inner message set of one wrapper whose offset is the
// last record's offset; v1 inner offsets are relative (0..n-1) and v0 inner
// offsets absolute, as Kafka's MemoryRecordsBuilder wrote them.
func (c *Compressor) AppendLegacy(dst []byte, s LegacySpec, recs []Record) ([]byte, error) {
	if s.Magic != MagicV0 && s.Magic != MagicV1 {
		return dst, errors.New("AppendLegacy writes magic v0 or v1")
	}
	if s.Compression == CompressionZstd || !s.Compression.Known() {
		return dst, errors.New("legacy messages support none, gzip, snappy and lz4 only")
	}
	if len(recs) == 0 {
		return dst, nil
	}
	var tsAttr byte
	if s.Magic == MagicV1 && s.TimestampType == LogAppendTime {
		tsAttr = attrTimestampType
	}
	if s.Compression == CompressionNone {
		for i := range recs {
			r := &recs[i]
			ts := r.Timestamp
			if tsAttr != 0 {
				ts = s.LogAppendTime
			}
			dst = AppendLegacyEntry(dst, r.Offset, s.Magic, tsAttr, ts, r.Key, r.Value)
		}
		return dst, nil
	}
	inner := c.scratch[:0]
	maxTS := NoTimestamp
	for i := range recs {
		r := &recs[i]
		off := r.Offset
		if s.Magic == MagicV1 {
			off = int64(i)
		}
		inner = AppendLegacyEntry(inner, off, s.Magic, 0, r.Timestamp, r.Key, r.Value)
		maxTS = max(maxTS, r.Timestamp)
	}
	c.scratch = inner
	value, err := c.Compress(s.Compression, s.Magic, c.scratch2[:0], inner)
	if err != nil {
		return dst, err
	}
	c.scratch2 = value
	ts := maxTS
	if tsAttr != 0 {
		ts = s.LogAppendTime
	}
	return AppendLegacyEntry(dst, recs[len(recs)-1].Offset, s.Magic, tsAttr|byte(s.Compression), ts, nil, value), nil
}

// AppendLegacyEntry appends a v0/v1 log entry: offset, size and the
// message (magic, attrs, v1's timestamp, key, value) with its CRC-32. A
// compressed wrapper's value is such entries, compressed.
func AppendLegacyEntry(dst []byte, offset int64, magic int8, attrs byte, ts int64, key, value []byte) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // size, crc
	dst = append(dst, byte(magic), attrs)
	if magic == MagicV1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(ts))
	}
	dst = appendInt32Sized(dst, key)
	dst = appendInt32Sized(dst, value)
	e := dst[start:]
	binary.BigEndian.PutUint32(e[posSize:], uint32(len(e)-LogOverhead))
	binary.BigEndian.PutUint32(e[posLegacyCRC:], ChecksumIEEE(e[posLegacyMagic:]))
	return dst
}

func appendInt32Sized(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(b))), b...)
}
