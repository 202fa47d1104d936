package format

import (
	"errors"
	"io"
	"strconv"
)

// Error kinds, for errors.Is. Every error a decoder in this package returns
// for bad data is a *PosError whose Kind is one of these.
var (
	// ErrTruncated: the data ended inside a structure. It also matches
	// io.ErrUnexpectedEOF.
	ErrTruncated = errors.New("format: truncated")
	// ErrChecksum: a stored CRC does not match the computed one.
	ErrChecksum = errors.New("format: checksum mismatch")
	// ErrCorrupt: an impossible value (bad length, negative count, varint
	// overflow, sizes that disagree).
	ErrCorrupt = errors.New("format: corrupt")
	// ErrUnsupported: a magic, codec or version this package cannot read.
	ErrUnsupported = errors.New("format: unsupported")
	// ErrTooLarge: a size that is well-formed but over a configured limit
	// (ScanOptions.MaxBatchBytes, the decompression cap).
	ErrTooLarge = errors.New("format: over limit")
	// ErrNotSegment: the first bytes of a file or stream with no Kafka
	// name cannot start a segment (SegmentStart).
	ErrNotSegment = errors.New("format: not a segment")
)

// PosError is a problem at a known place in the data. Pos is the byte
// position of the structure that failed (in the file for a scanner, in the
// batch's records region plus the batch position for record errors); Offset
// is the Kafka offset of the batch or record when known, else -1.
type PosError struct {
	Kind     error  // one of the sentinels above; returned by Unwrap
	Pos      int64  // byte position of the failing structure
	Offset   int64  // Kafka offset if known, else -1
	Field    string // "crc", "size", "recordCount", ...
	Expected any    // what was required, if meaningful (nil otherwise)
	Actual   any    // what was found
	Msg      string // human description; Kafka's wording where Kafka has one
}

// Error renders "msg: field: expected E, actual A (at position P, offset O)".
func (e *PosError) Error() string {
	b := e.appendReason(make([]byte, 0, 128))
	b = append(b, " (at position "...)
	b = strconv.AppendInt(b, e.Pos, 10)
	if e.Offset >= 0 {
		b = append(b, ", offset "...)
		b = strconv.AppendInt(b, e.Offset, 10)
	}
	b = append(b, ')')
	return string(b)
}

// Reason is Error without the position and offset, for a report that
// prints those fields itself.
func (e *PosError) Reason() string { return string(e.appendReason(nil)) }

func (e *PosError) appendReason(b []byte) []byte {
	if e.Msg != "" {
		b = append(b, e.Msg...)
	} else {
		b = append(b, e.Kind.Error()...)
		if e.Field != "" {
			b = append(b, ": "...)
			b = append(b, e.Field...)
			if e.Actual != nil {
				b = append(b, ' ')
				b = appendAny(b, e.Actual)
			}
		}
	}
	if e.Expected != nil {
		b = append(b, ": "...)
		b = append(b, e.Field...)
		b = append(b, " expected "...)
		b = appendAny(b, e.Expected)
		b = append(b, ", actual "...)
		b = appendAny(b, e.Actual)
	}
	return b
}

// Unwrap returns the kind, so errors.Is(err, ErrChecksum) works.
func (e *PosError) Unwrap() error { return e.Kind }

// Is lets ErrTruncated errors match io.ErrUnexpectedEOF too.
func (e *PosError) Is(target error) bool {
	return e.Kind == ErrTruncated && target == io.ErrUnexpectedEOF
}

// CRC is a stored or computed checksum; it prints as 0x%08x.
type CRC uint32

func (c CRC) String() string {
	const hex = "0123456789abcdef"
	var b [10]byte
	b[0], b[1] = '0', 'x'
	for i := 0; i < 8; i++ {
		b[9-i] = hex[(uint32(c)>>(4*i))&0xf]
	}
	return string(b[:])
}

func appendAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case CRC:
		return append(b, x.String()...)
	case string:
		return append(b, x...)
	case bool:
		return strconv.AppendBool(b, x)
	case nil:
		return append(b, "nil"...)
	case interface{ String() string }:
		return append(b, x.String()...)
	}
	return append(b, '?')
}

// CorruptRecordError is the checksum failure of the reference texts' client
// read path: the record (batch) at Offset stored one CRC and its bytes hash to
// another. It wraps ErrChecksum.
type CorruptRecordError struct {
	Offset   int64
	Stored   uint32
	Computed uint32
}

func (e *CorruptRecordError) Error() string {
	b := make([]byte, 0, 96)
	b = append(b, "corrupt record at offset "...)
	b = strconv.AppendInt(b, e.Offset, 10)
	b = append(b, ": stored crc "...)
	b = append(b, CRC(e.Stored).String()...)
	b = append(b, ", computed "...)
	b = append(b, CRC(e.Computed).String()...)
	return string(b)
}

// Unwrap makes errors.Is(err, ErrChecksum) true.
func (e *CorruptRecordError) Unwrap() error { return ErrChecksum }
