package format

import (
	"encoding/binary"
	"io"
)

// Header is a v2 record header. Value is nil for a null value; Key is never
// null (Kafka rejects negative header key lengths).
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one record of a batch: a v2 record, or a v0/v1 message (an
// uncompressed entry, or an inner message of a compressed wrapper). Its byte
// slices alias the RecordReader's buffers and are valid until the next call
// to Next or Reset.
type Record struct {
	// Offset is the absolute offset.
	Offset int64
	// Timestamp in epoch ms: v2 base + delta, or the batch max timestamp
	// for LogAppendTime; v1 its own (or the wrapper's, for LogAppendTime
	// wrappers); v0 -1.
	Timestamp  int64
	Attributes int8
	// Key and Value are nil when null.
	Key, Value []byte
	// KeySize and ValueSize are as Kafka reports them: -1 for null.
	KeySize, ValueSize int32
	Headers            []Header
	// Sequence is the batch base sequence advanced by the offset delta, or -1.
	Sequence int32
	// SizeInBytes is the encoded size: v2 the length varint plus body; v0/v1
	// LogOverhead + message size.
	SizeInBytes int

	// Legacy is set for v0/v1 messages; then Magic, CRC and Valid describe
	// the message's own CRC-32.
	Legacy bool
	Magic  int8
	CRC    uint32
	Valid  bool
	// TimestampDelta and OffsetDelta are the v2 record's raw deltas.
	TimestampDelta int64
	OffsetDelta    int32
}

// RecordReader decodes the records of batches, reusing its buffers from one
// batch to the next. The zero value is ready to use; it is not safe for
// concurrent use.
//
// Reset follows Kafka's iterators: for an uncompressed v2 batch records are
// decoded one at a time and an error stops iteration where it happens (the
// records before it are delivered); a compressed batch is decompressed and
// decoded whole first, so any error comes from Reset and no record is
// delivered (DefaultRecordBatch.iterator). Legacy compressed wrappers load
// all inner messages first too (AbstractLegacyRecordBatch.DeepRecordsIterator).
type RecordReader struct {
	// Decompressor holds the codec state and the output cap.
	Decompressor Decompressor

	b      *Batch
	data   []byte // records region or decompressed stream
	dataAt int64  // file position of data[0], or -1 when decompressed
	p      int
	read   int32
	count  int32
	inner  []innerEntry
	base   int64 // v1 wrapper absolute base offset
	single bool  // uncompressed legacy entry not yet returned
	hdrs   []Header
	buf    []byte
}

type innerEntry struct {
	pos, size int
	offset    int64
}

// Reset prepares to read the records of b. It returns an error when Kafka's
// iterator would fail before yielding any record.
func (rr *RecordReader) Reset(b *Batch) error {
	rr.b, rr.p, rr.read, rr.count, rr.single = b, 0, 0, 0, false
	rr.inner = rr.inner[:0]
	rr.data = nil
	if !b.IsV2() {
		return rr.resetLegacy(b)
	}
	if b.RecordCount == 0 {
		return nil
	}
	if b.RecordCount < 0 {
		return rr.errAt(ErrCorrupt, b.Pos+posRecordCount, b.BaseOffset, "recordCount",
			"Found invalid record count "+itoa(int64(b.RecordCount))+" in magic v"+itoa(int64(b.Magic))+" batch")
	}
	rr.count = b.RecordCount
	region := b.Raw[BatchHeaderSize:]
	c := b.Compression()
	if c == CompressionNone {
		rr.data, rr.dataAt = region, b.Pos+BatchHeaderSize
		return nil
	}
	if !c.Known() {
		return rr.errAt(ErrUnsupported, b.Pos+posAttributes, b.BaseOffset, "attributes",
			"Unknown compression type id: "+itoa(int64(c)))
	}
	out, err := rr.Decompressor.Decompress(c, b.Magic, region, rr.buf)
	rr.buf = out[:0]
	if err != nil {
		kind := ErrCorrupt
		if err == errOverCap {
			kind = ErrTooLarge
		}
		return &PosError{Kind: kind, Pos: b.Pos + BatchHeaderSize, Offset: b.BaseOffset, Field: "records",
			Msg: "Failed to decompress record stream (" + c.String() + "): " + err.Error()}
	}
	rr.data, rr.dataAt = out, -1
	// Decode everything once, as Kafka does before yielding anything.
	var rec Record
	for {
		err := rr.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	rr.p, rr.read = 0, 0
	return nil
}

// Next decodes the next record into rec. It returns io.EOF after the last one.
func (rr *RecordReader) Next(rec *Record) error {
	b := rr.b
	if b == nil {
		return io.EOF
	}
	if !b.IsV2() {
		return rr.nextLegacy(rec)
	}
	if rr.read >= rr.count {
		return io.EOF
	}
	if err := rr.decodeV2(rec); err != nil {
		rr.read = rr.count // stop
		return err
	}
	rr.read++
	if rr.read == rr.count && rr.p != len(rr.data) {
		return rr.errAt(ErrCorrupt, rr.posOf(rr.p), rec.Offset, "batchLength",
			"Incorrect declared batch size, records still remaining in file")
	}
	return nil
}

func (rr *RecordReader) posOf(p int) int64 {
	if rr.dataAt >= 0 {
		return rr.dataAt + int64(p)
	}
	return rr.b.Pos + BatchHeaderSize
}

func (rr *RecordReader) errAt(kind error, pos, offset int64, field, msg string) error {
	return &PosError{Kind: kind, Pos: pos, Offset: offset, Field: field, Msg: msg}
}

// decodeV2 reads one record at rr.p (DefaultRecord.readFrom).
func (rr *RecordReader) decodeV2(rec *Record) error {
	b, d := rr.b, rr.data
	p := rr.p
	recPos := rr.posOf(p)
	bad := func(msg string) error {
		off := b.BaseOffset
		if rec != nil && rec.Offset >= b.BaseOffset {
			off = rec.Offset
		}
		return &PosError{Kind: ErrCorrupt, Pos: recPos, Offset: off, Field: "record", Msg: msg}
	}
	if p >= len(d) {
		return &PosError{Kind: ErrTruncated, Pos: recPos, Offset: b.BaseOffset + int64(rr.read),
			Field: "record", Msg: "Incorrect declared batch size, premature EOF reached"}
	}
	bodyLen, n := varint2(d, p)
	if n <= 0 {
		return bad("Found invalid record structure (record length varint)")
	}
	p += n
	if int64(bodyLen) > int64(len(d)-p) {
		return bad("Invalid record size: expected " + itoa(int64(bodyLen)) +
			" bytes in record payload, but instead the buffer has only " + itoa(int64(len(d)-p)) + " remaining bytes.")
	}
	bodyStart := p
	rec.Offset = b.BaseOffset
	if p >= len(d) {
		return bad("Found invalid record structure")
	}
	rec.Attributes = int8(d[p])
	p++
	var tsDelta int64
	if p < len(d) && d[p] < 0x80 {
		tsDelta, n = int64(zigzag(uint32(d[p]))), 1
	} else {
		tsDelta, n = Varlong(d[p:])
	}
	if n <= 0 {
		return bad("Found invalid record structure (timestamp delta)")
	}
	p += n
	offDelta, n := varint2(d, p)
	if n <= 0 {
		return bad("Found invalid record structure (offset delta)")
	}
	p += n
	rec.TimestampDelta, rec.OffsetDelta = tsDelta, offDelta
	rec.Offset = b.BaseOffset + int64(offDelta)
	if b.TimestampType() == LogAppendTime {
		rec.Timestamp = b.MaxTimestamp
	} else {
		rec.Timestamp = b.BaseTimestamp + tsDelta
	}
	rec.Sequence = NoSequence
	if b.BaseSequence >= 0 {
		rec.Sequence = IncrementSequence(b.BaseSequence, offDelta)
	}
	var ok bool
	if rec.Key, p, ok = readSized(d, p); !ok {
		return bad("Found invalid record structure (key)")
	}
	if rec.Value, p, ok = readSized(d, p); !ok {
		return bad("Found invalid record structure (value)")
	}
	rec.KeySize, rec.ValueSize = sizeOf(rec.Key), sizeOf(rec.Value)
	nh, n := varint2(d, p)
	if n <= 0 {
		return bad("Found invalid record structure (header count)")
	}
	p += n
	if nh < 0 {
		return bad("Found invalid number of record headers " + itoa(int64(nh)))
	}
	if int64(nh) > int64(len(d)-p) {
		return bad("Found invalid number of record headers. " + itoa(int64(nh)) + " is larger than the remaining size of the buffer")
	}
	hs := rr.hdrs[:0]
	for i := int32(0); i < nh; i++ {
		kl, n := varint2(d, p)
		if n <= 0 {
			return bad("Found invalid record structure (header key length)")
		}
		if kl < 0 {
			return bad("Invalid negative header key size " + itoa(int64(kl)))
		}
		var h Header
		if h.Key, p, ok = readSized(d, p); !ok {
			return bad("Found invalid record structure (header key)")
		}
		if h.Value, p, ok = readSized(d, p); !ok {
			return bad("Found invalid record structure (header value)")
		}
		hs = append(hs, h)
	}
	rr.hdrs = hs
	rec.Headers = hs
	if p-bodyStart != int(bodyLen) {
		return bad("Invalid record size: expected to read " + itoa(int64(bodyLen)) +
			" bytes in record payload, but instead read " + itoa(int64(p-bodyStart)))
	}
	rec.SizeInBytes = SizeOfVarint(bodyLen) + int(bodyLen)
	rec.Legacy, rec.Magic, rec.CRC, rec.Valid = false, b.Magic, 0, false
	rr.p = p
	return nil
}

// readSized reads a varint length and that many bytes; a negative length is
// null (Utils.readBytes). ok is false when the data is too short.
func readSized(d []byte, p int) (v []byte, next int, ok bool) {
	l, n := varint2(d, p)
	if n <= 0 {
		return nil, p, false
	}
	p += n
	if l < 0 {
		return nil, p, true
	}
	if int(l) > len(d)-p {
		return nil, p, false
	}
	return d[p : p+int(l) : p+int(l)], p + int(l), true
}

func sizeOf(b []byte) int32 {
	if b == nil {
		return -1
	}
	return int32(len(b))
}

func (rr *RecordReader) resetLegacy(b *Batch) error {
	if b.Compression() == CompressionNone {
		rr.single = true
		return nil
	}
	msg := b.Raw[LogOverhead:]
	if b.Compression() == CompressionZstd || !b.Compression().Known() {
		return rr.errAt(ErrUnsupported, b.Pos+posLegacyAttributes, b.BaseOffset, "attributes",
			"Invalid wrapper compressionType found in legacy deep record iterator "+itoa(int64(b.Magic)))
	}
	_, value, err := legacyKeyValue(msg, b.Magic)
	if err != nil {
		return rr.errAt(ErrCorrupt, b.Pos, b.BaseOffset, "message", err.Error())
	}
	if value == nil {
		return rr.errAt(ErrCorrupt, b.Pos, b.BaseOffset, "value",
			"Found invalid compressed record set with null value (magic = "+itoa(int64(b.Magic))+")")
	}
	out, derr := rr.Decompressor.Decompress(b.Compression(), b.Magic, value, rr.buf)
	rr.buf = out[:0]
	if derr != nil {
		kind := ErrCorrupt
		if derr == errOverCap {
			kind = ErrTooLarge
		}
		return &PosError{Kind: kind, Pos: b.Pos, Offset: b.BaseOffset, Field: "value",
			Msg: "Failed to decompress wrapper message (" + b.Compression().String() + "): " + derr.Error()}
	}
	rr.data, rr.dataAt = out, -1
	// Load every inner entry (DataLogInputStream.nextBatch): a partial
	// entry ends the set quietly; a size under the minimum is corrupt.
	for p := 0; len(out)-p >= LogOverhead; {
		off := int64(binary.BigEndian.Uint64(out[p:]))
		size := int32(binary.BigEndian.Uint32(out[p+8:]))
		if size < RecordOverheadV0 {
			return rr.errAt(ErrCorrupt, b.Pos, b.BaseOffset, "innerSize",
				"Record size is less than the minimum record overhead (14)")
		}
		if int64(size) > int64(len(out)-p-LogOverhead) {
			break
		}
		rr.inner = append(rr.inner, innerEntry{pos: p, size: int(size), offset: off})
		p += LogOverhead + int(size)
	}
	if len(rr.inner) == 0 {
		return rr.errAt(ErrCorrupt, b.Pos, b.BaseOffset, "value",
			"Found invalid compressed record set with no inner records")
	}
	rr.base = -1
	if b.Magic == MagicV1 {
		if b.BaseOffset == 0 {
			rr.base = 0 // librdkafka writes wrapper offset 0
		} else {
			last := rr.inner[len(rr.inner)-1].offset
			if b.BaseOffset < last {
				return rr.errAt(ErrCorrupt, b.Pos, b.BaseOffset, "offset",
					"Found invalid wrapper offset in compressed v1 message set, wrapper offset '"+itoa(b.BaseOffset)+
						"' is less than the last inner message offset '"+itoa(last)+"' and it is not zero.")
			}
			rr.base = b.BaseOffset - last
		}
	}
	return nil
}

func (rr *RecordReader) nextLegacy(rec *Record) error {
	b := rr.b
	if rr.single {
		rr.single = false
		return rr.legacyRecord(rec, b.Raw, b.BaseOffset, b.Pos, false)
	}
	if rr.p >= len(rr.inner) {
		return io.EOF
	}
	e := rr.inner[rr.p]
	rr.p++
	off := e.offset
	if b.Magic == MagicV1 {
		off = rr.base + e.offset
	}
	err := rr.legacyRecord(rec, rr.data[e.pos:e.pos+LogOverhead+e.size], off, b.Pos, true)
	if err == nil && Compression(rec.Attributes&attrCompressionMask) != CompressionNone {
		rr.p = len(rr.inner)
		return rr.errAt(ErrCorrupt, b.Pos, off, "attributes", "Inner messages must not be compressed")
	}
	if err != nil {
		rr.p = len(rr.inner)
	}
	return err
}

// legacyRecord decodes one v0/v1 entry (offset, size, message) as a Record.
func (rr *RecordReader) legacyRecord(rec *Record, entry []byte, offset, pos int64, inner bool) error {
	msg := entry[LogOverhead:]
	magic := int8(msg[4])
	if magic != MagicV0 && magic != MagicV1 {
		return rr.errAt(ErrUnsupported, pos, offset, "magic", "Invalid magic used in LegacyRecord: "+itoa(int64(magic)))
	}
	if magic == MagicV1 && len(msg) < RecordOverheadV1-0 {
		return rr.errAt(ErrCorrupt, pos, offset, "size", "v1 message smaller than its overhead")
	}
	key, value, err := legacyKeyValue(msg, magic)
	if err != nil {
		return rr.errAt(ErrCorrupt, pos, offset, "message", err.Error())
	}
	w := rr.b
	*rec = Record{Offset: offset, Key: key, Value: value, Legacy: true, Magic: magic,
		Attributes: int8(msg[5]), Sequence: NoSequence, SizeInBytes: len(entry)}
	rec.CRC = binary.BigEndian.Uint32(msg)
	rec.Valid = len(msg) >= RecordOverheadV0 && rec.CRC == ChecksumIEEE(msg[4:])
	koff := legacyKeyPos(magic)
	rec.KeySize = int32(binary.BigEndian.Uint32(msg[koff:]))
	rec.ValueSize = int32(binary.BigEndian.Uint32(msg[koff+4+max(0, int(rec.KeySize)):]))
	rec.Timestamp = NoTimestamp
	if magic == MagicV1 {
		rec.Timestamp = int64(binary.BigEndian.Uint64(msg[6:]))
		// Inner v1 messages take the wrapper's timestamp type; a
		// LogAppendTime wrapper gives them its own timestamp.
		if inner && w.TimestampType() == LogAppendTime {
			rec.Timestamp = w.MaxTimestamp
		}
	}
	return nil
}

func legacyKeyPos(magic int8) int {
	if magic == MagicV1 {
		return posLegacyKeyV1 - LogOverhead
	}
	return posLegacyKeyV0 - LogOverhead
}

type legacyError string

func (e legacyError) Error() string { return string(e) }

// legacyKeyValue slices the key and value of a message (LegacyRecord.key and
// value: int32 length-delimited, negative = null).
func legacyKeyValue(msg []byte, magic int8) (key, value []byte, err error) {
	p := legacyKeyPos(magic)
	if len(msg) < p+4 {
		return nil, nil, legacyError("message too short for its key length")
	}
	kl := int32(binary.BigEndian.Uint32(msg[p:]))
	p += 4
	if kl >= 0 {
		if int64(kl) > int64(len(msg)-p) {
			return nil, nil, legacyError("key length " + itoa(int64(kl)) + " exceeds the message")
		}
		key = msg[p : p+int(kl) : p+int(kl)]
		p += int(kl)
	}
	if len(msg) < p+4 {
		return nil, nil, legacyError("message too short for its value length")
	}
	vl := int32(binary.BigEndian.Uint32(msg[p:]))
	p += 4
	if vl >= 0 {
		if int64(vl) > int64(len(msg)-p) {
			return nil, nil, legacyError("value length " + itoa(int64(vl)) + " exceeds the message")
		}
		value = msg[p : p+int(vl) : p+int(vl)]
	}
	return key, value, nil
}
