package format

import (
	"encoding/binary"
	"errors"
	"io"
)

// Frames: the entries of a log file as the broker's own reader walks them
// while it recovers a segment (FileLogInputStream.nextBatch, then
// RecordBatch.ensureValid), without reading a batch whole. Unlike Scanner,
// which bounds an entry by ScanOptions.MaxBatchBytes and rejects header
// fields the format forbids, a frame is judged only as Kafka judges it:
// the size field, then the CRC streamed over the entry, whatever its size.

// EntryFraming returns the fields every log entry starts with (Records.java:
// offset int64, size int32, and the magic byte at position 16 of both the
// v2 batch and the v0/v1 message). h holds at least HeaderSizeUpToMagic
// bytes.
func EntryFraming(h []byte) (offset int64, size int32, magic int8) {
	return int64(binary.BigEndian.Uint64(h[posOffset:])), int32(binary.BigEndian.Uint32(h[posSize:])), int8(h[posMagic])
}

// Frame is the header of one entry as FileChannelRecordBatch reads it: the
// fields of a DefaultRecordBatch for magic 2 and above (Kafka reads any
// magic above 1 as one), of a LegacyRecord otherwise. Fields the magic has
// not are -1 (LastOffset: the offset field).
type Frame struct {
	// Pos is the entry's byte position; Size its whole length,
	// LogOverhead + the size field.
	Pos, Size            int64
	BaseOffset           int64 // the offset field
	Magic                int8
	LastOffset           int64
	MaxTimestamp         int64 // v1: the message timestamp; v0: -1
	PartitionLeaderEpoch int32
	Attributes           int16 // v2 only (0 for v0/v1)
	ProducerID           int64
	RecordCount          int32 // v2 only (0 for v0/v1)
	CRC                  uint32
}

// IsV2 reports whether Kafka reads the entry as a DefaultRecordBatch.
func (f *Frame) IsV2() bool { return f.Magic >= MagicV2 }

// IsControl reports the control bit of a v2 batch's attributes.
func (f *Frame) IsControl() bool { return f.IsV2() && f.Attributes&attrControl != 0 }

// FrameReader reads frames from a file; its buffer is reused from call to
// call. It is not safe for concurrent use.
type FrameReader struct {
	hdr [BatchHeaderSize]byte
	buf []byte
}

// ErrFrameSize is the kind of the error ReadFrame returns for a size field
// below RecordOverheadV0 (Kafka's CorruptRecordException "Found record size
// N smaller than minimum record overhead").
var ErrFrameSize = errors.New("format: entry size below the minimum record overhead")

// ReadFrame reads the header of the entry at pos of r, whose data ends at
// end, as FileLogInputStream.nextBatch does: it returns io.EOF when 17
// bytes or fewer remain or when the entry runs past end (Kafka stops
// quietly there), a *PosError of kind ErrFrameSize (Actual: the size field)
// for a size field below 14, and a read error as is. The header fields of
// an entry shorter than its magic's header are read from the bytes that
// follow it up to end (zero past end), as Kafka's lazy header load reads
// them; RecordBatch.ensureValid (FrameValid) rejects such an entry.
func (fr *FrameReader) ReadFrame(r io.ReaderAt, pos, end int64) (Frame, error) {
	f := Frame{Pos: pos}
	if end-pos <= HeaderSizeUpToMagic {
		return f, io.EOF
	}
	n := min(int64(len(fr.hdr)), end-pos)
	if _, err := r.ReadAt(fr.hdr[:n], pos); err != nil && !errors.Is(err, io.EOF) {
		return f, err
	}
	h := fr.hdr[:n]
	offset, size, magic := EntryFraming(h)
	f.BaseOffset, f.Magic = offset, magic
	if size < RecordOverheadV0 {
		return f, &PosError{Kind: ErrFrameSize, Pos: pos, Offset: offset, Field: "size", Actual: size,
			Msg: "Found record size " + itoa(int64(size)) + " smaller than minimum record overhead (14)"}
	}
	if pos > end-LogOverhead-int64(size) {
		return f, io.EOF
	}
	f.Size = LogOverhead + int64(size)
	f.LastOffset, f.MaxTimestamp, f.PartitionLeaderEpoch, f.ProducerID = offset, NoTimestamp, NoPartitionLeaderEpoch, NoProducerID
	if f.IsV2() {
		var full [BatchHeaderSize]byte
		copy(full[:], h)
		f.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(full[posPartitionLeaderEpoch:]))
		f.CRC = binary.BigEndian.Uint32(full[posCRC:])
		f.Attributes = int16(binary.BigEndian.Uint16(full[posAttributes:]))
		f.LastOffset = offset + int64(int32(binary.BigEndian.Uint32(full[posLastOffsetDelta:])))
		f.MaxTimestamp = int64(binary.BigEndian.Uint64(full[posMaxTimestamp:]))
		f.ProducerID = int64(binary.BigEndian.Uint64(full[posProducerID:]))
		f.RecordCount = int32(binary.BigEndian.Uint32(full[posRecordCount:]))
		return f, nil
	}
	f.CRC = binary.BigEndian.Uint32(h[posLegacyCRC:])
	// LegacyRecord.timestamp: none for v0, else the field after the
	// attributes (the entry is at least 26 bytes).
	if magic != MagicV0 && len(h) >= posLegacyKeyV1 {
		f.MaxTimestamp = int64(binary.BigEndian.Uint64(h[posLegacyTimestamp:]))
	}
	return f, nil
}

// FrameCRC computes the checksum of the entry f of r as
// RecordBatch.ensureValid does, streaming it in bounded memory: CRC-32C of
// [21, Size) for a v2 batch, CRC-32 of [16, Size) otherwise (a negative
// magic is read as a legacy message). It does not check the size: a v2
// entry below BatchHeaderSize is the caller's to reject first.
func (fr *FrameReader) FrameCRC(r io.ReaderAt, f *Frame) (uint32, error) {
	if fr.buf == nil {
		fr.buf = make([]byte, 64<<10)
	}
	from := int64(posLegacyMagic)
	v2 := f.IsV2()
	if v2 {
		from = posAttributes
	}
	var c uint32
	for at, stop := f.Pos+from, f.Pos+f.Size; at < stop; {
		n := min(int64(len(fr.buf)), stop-at)
		m, err := r.ReadAt(fr.buf[:n], at)
		if int64(m) < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if v2 {
			c = UpdateC(c, fr.buf[:n])
		} else {
			c = UpdateIEEE(c, fr.buf[:n])
		}
		at += n
	}
	return c, nil
}
