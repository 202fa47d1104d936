package format

// Kafka's varints (ByteUtils.java) are protobuf base-128 groups, least
// significant first, zig-zag encoded for signed values. A varint is at most 5
// bytes and a varlong at most 10; if the last permitted byte still has its
// continuation bit set the value is rejected ("Varint is too long"). Upper
// bits of a final 5th byte that do not fit are discarded, as Java does.

const (
	maxVarintLen  = 5
	maxVarlongLen = 10
)

// Varint decodes a zig-zag varint (int32) from b. n > 0 is the number of bytes
// read; n == 0 means b ended first; n < 0 means the varint is too long.
func Varint(b []byte) (v int32, n int) {
	var raw uint32
	for i := 0; i < maxVarintLen; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		raw |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int32(raw>>1) ^ -int32(raw&1), i + 1
		}
	}
	return 0, -1
}

// Varlong decodes a zig-zag varlong (int64) from b, with Varint's results.
func Varlong(b []byte) (v int64, n int) {
	var raw uint64
	for i := 0; i < maxVarlongLen; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		raw |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(raw>>1) ^ -int64(raw&1), i + 1
		}
	}
	return 0, -1
}

// Uvarint decodes an unsigned varint (int32 range, as in KRaft frames).
func Uvarint(b []byte) (v uint32, n int) {
	for i := 0; i < maxVarintLen; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}

// AppendVarint appends v zig-zag encoded.
func AppendVarint(dst []byte, v int32) []byte {
	u := uint32(v<<1) ^ uint32(v>>31)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// AppendVarlong appends v zig-zag encoded.
func AppendVarlong(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// AppendUvarint appends an unsigned varint.
func AppendUvarint(dst []byte, u uint32) []byte {
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// SizeOfVarint is the encoded length of v.
func SizeOfVarint(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// SizeOfVarlong is the encoded length of v.
func SizeOfVarlong(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
