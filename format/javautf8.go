package format

import "unicode/utf8"

// javaUTF8Replacement is the UTF-8 encoding of U+FFFD.
const javaUTF8Replacement = "\uFFFD"

// AppendJavaUTF8 appends to dst the UTF-8 encoding of the string Java 17's
// new String(b, StandardCharsets.UTF_8) produces for b: valid UTF-8 is copied
// as is, and malformed input is replaced by U+FFFD exactly as the JDK's
// decoder does.
//
// The JDK's rule (java.lang.String.decodeUTF8_UTF16 with replacement, plus its
// malformed3/malformed4 helpers) is: each malformed sequence is replaced by
// one U+FFFD covering the longest prefix that could still start a valid
// sequence, where the accepted second bytes are
//
//	C2..DF  80..BF
//	E0      A0..BF
//	E1..EF  80..BF (including ED: A0..BF is accepted here)
//	F0      90..BF
//	F1..F3  80..BF
//	F4      80..8F
//
// and every later byte must be 80..BF. Bytes 80..C1 and F5..FF are replaced
// one by one. A complete UTF-8-encoded surrogate (ED A0..BF 80..BF) is
// replaced by a single U+FFFD for all three bytes, which is where Java
// differs from the Unicode "maximal subpart" practice.
//
// It allocates only if dst lacks capacity.
func AppendJavaUTF8(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	return appendJavaUTF8Slow(dst, b)
}

// appendJavaUTF8Slow is AppendJavaUTF8 for input that is not valid UTF-8.
// Valid runs are copied with one append each.
func appendJavaUTF8Slow(dst, b []byte) []byte {
	n := len(b)
	start := 0 // start of the pending run of valid bytes
	i := 0
	for i < n {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		var bad int // bytes covered by one U+FFFD
		switch {
		case c < 0xC2: // continuation byte, or overlong lead C0/C1
			bad = 1
		case c < 0xE0: // 2-byte lead
			if i+1 < n && b[i+1]&0xC0 == 0x80 {
				i += 2
				continue
			}
			bad = 1
		case c < 0xF0: // 3-byte lead
			lo := byte(0x80)
			if c == 0xE0 {
				lo = 0xA0
			}
			switch {
			case i+1 >= n || b[i+1] < lo || b[i+1] > 0xBF:
				bad = 1
			case i+2 >= n || b[i+2]&0xC0 != 0x80:
				bad = 2
			case c == 0xED && b[i+1] >= 0xA0: // surrogate: one U+FFFD
				bad = 3
			default:
				i += 3
				continue
			}
		case c < 0xF5: // 4-byte lead
			lo, hi := byte(0x80), byte(0xBF)
			if c == 0xF0 {
				lo = 0x90
			} else if c == 0xF4 {
				hi = 0x8F
			}
			switch {
			case i+1 >= n || b[i+1] < lo || b[i+1] > hi:
				bad = 1
			case i+2 >= n || b[i+2]&0xC0 != 0x80:
				bad = 2
			case i+3 >= n || b[i+3]&0xC0 != 0x80:
				bad = 3
			default:
				i += 4
				continue
			}
		default: // F5..FF
			bad = 1
		}
		dst = append(dst, b[start:i]...)
		dst = append(dst, javaUTF8Replacement...)
		i += bad
		start = i
	}
	return append(dst, b[start:]...)
}
