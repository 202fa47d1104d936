package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Confluent's wire format (the serializers' "magic byte" framing), as
// written by Confluent's serializers (AbstractKafkaSchemaSerDe,
// confluent-kafka-go's serde.SchemaID): part of the format; never change.
const (
	// MagicID precedes a 4-byte big-endian schema id.
	MagicID byte = 0
	// MagicGUID precedes a 16-byte schema GUID (newer serializers, in the
	// prefix or in the __key_schema_id/__value_schema_id header).
	MagicGUID byte = 1
	// IDPrefixBytes is the size of the magic byte and the schema id.
	IDPrefixBytes = 5
	// GUIDPrefixBytes is the size of the magic byte and the GUID.
	GUIDPrefixBytes = 17
	// KeySchemaIDHeader and ValueSchemaIDHeader carry a schema GUID in a
	// record header instead of the payload's prefix.
	KeySchemaIDHeader   = "__key_schema_id"
	ValueSchemaIDHeader = "__value_schema_id"
	// maxMessageIndexes bounds the Protobuf message-index path: a path
	// deeper than any .proto nests messages is corrupt, and it is never
	// allocated from the count read.
	maxMessageIndexes = 64
)

// ErrNotFramed says the bytes do not start with Confluent's framing.
var ErrNotFramed = errors.New("not in Confluent's wire format")

// Frame is the part of a payload before the encoded value.
type Frame struct {
	// Magic is MagicID or MagicGUID.
	Magic byte
	// ID is the schema id (MagicID), else 0.
	ID int32
	// GUID is the schema GUID (MagicGUID).
	GUID [16]byte
	// Size is how many bytes of the payload the frame takes (without
	// the Protobuf message indexes, which ParseIndexes reads).
	Size int
}

// ParseFrame reads Confluent's framing at the start of b. A payload shorter
// than the frame or with another magic byte is ErrNotFramed.
func ParseFrame(b []byte) (Frame, error) {
	if len(b) == 0 {
		return Frame{}, fmt.Errorf("%w: empty", ErrNotFramed)
	}
	switch b[0] {
	case MagicID:
		if len(b) < IDPrefixBytes {
			return Frame{}, fmt.Errorf("%w: %d bytes, the framing takes %d", ErrNotFramed, len(b), IDPrefixBytes)
		}
		return Frame{Magic: MagicID, ID: int32(binary.BigEndian.Uint32(b[1:5])), Size: IDPrefixBytes}, nil
	case MagicGUID:
		if len(b) < GUIDPrefixBytes {
			return Frame{}, fmt.Errorf("%w: %d bytes, a GUID framing takes %d", ErrNotFramed, len(b), GUIDPrefixBytes)
		}
		f := Frame{Magic: MagicGUID, Size: GUIDPrefixBytes}
		copy(f.GUID[:], b[1:17])
		return f, nil
	}
	return Frame{}, fmt.Errorf("%w: magic byte %d", ErrNotFramed, b[0])
}

// ParseIndexes reads the Protobuf message-index path that follows the frame:
// a zig-zag varint count, then that many zig-zag varint indexes, each the
// position of a message among its parent's (the file's top-level messages
// first). The single byte 0 is Confluent's short form of [0], the file's
// first message. It returns the path and the bytes it took.
func ParseIndexes(b []byte) ([]int, int, error) {
	n, p := binary.Varint(b)
	switch {
	case p <= 0:
		return nil, 0, errors.New("protobuf message indexes: missing or malformed count")
	case n < 0 || n > maxMessageIndexes:
		return nil, 0, fmt.Errorf("protobuf message indexes: count %d (at most %d)", n, maxMessageIndexes)
	case n == 0:
		return []int{0}, p, nil
	}
	path := make([]int, 0, n)
	for i := int64(0); i < n; i++ {
		v, m := binary.Varint(b[p:])
		if m <= 0 || v < 0 || v > 1<<20 {
			return nil, 0, fmt.Errorf("protobuf message indexes: index %d of %d malformed", i, n)
		}
		path = append(path, int(v))
		p += m
	}
	return path, p, nil
}

// AppendFrame appends the MagicID framing of schema id to dst.
func AppendFrame(dst []byte, id int32) []byte {
	dst = append(dst, MagicID)
	return binary.BigEndian.AppendUint32(dst, uint32(id))
}

// AppendIndexes appends a Protobuf message-index path to dst, [0] in its
// short form as Confluent's serializers write it.
func AppendIndexes(dst []byte, path []int) []byte {
	if len(path) == 1 && path[0] == 0 {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(len(path)))
	for _, i := range path {
		dst = binary.AppendVarint(dst, int64(i))
	}
	return dst
}
