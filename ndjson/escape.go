package ndjson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string holds as they are (RFC 8259
// §7: everything but '"', '\\' and the controls U+0000..U+001F).
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// String appends s as a JSON string (RFC 8259): '"', '\\' and control
// characters escaped, other characters as they are. Bytes that are not
// valid UTF-8 (including encoded surrogates) become U+FFFD, so the result
// is always valid JSON; use Bytes for data that must survive byte for byte.
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst, _ = appendEscaped(dst, s, true)
	return append(dst, '"')
}

// StringBytes is String for a byte slice, without a copy.
func StringBytes(dst []byte, b []byte) []byte {
	return String(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

// appendValidString appends b as a JSON string if it is valid UTF-8; ok is
// false (and dst holds garbage past its old length) otherwise.
func appendValidString(dst []byte, b []byte) ([]byte, bool) {
	dst = append(dst, '"')
	dst, ok := appendEscaped(dst, unsafe.String(unsafe.SliceData(b), len(b)), false)
	return append(dst, '"'), ok
}

// appendEscaped writes s's characters escaped. With replace, invalid UTF-8
// becomes U+FFFD; without, it stops and reports false. Runs of plain bytes
// are found 8 at a time and copied at once.
func appendEscaped(dst []byte, s string, replace bool) ([]byte, bool) {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	start, i := 0, 0
	for i < len(b) {
		for i+32 <= len(b) && nonPlain(binary.LittleEndian.Uint64(b[i:]))|
			nonPlain(binary.LittleEndian.Uint64(b[i+8:]))|
			nonPlain(binary.LittleEndian.Uint64(b[i+16:]))|
			nonPlain(binary.LittleEndian.Uint64(b[i+24:])) == 0 {
			i += 32
		}
		for i+8 <= len(b) {
			if m := nonPlain(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3 // the first byte that is not plain
				break
			}
			i += 8
		}
		if i+8 > len(b) {
			for i < len(b) && b[i] < utf8.RuneSelf && plain[b[i]] {
				i++
			}
			if i == len(b) {
				break
			}
		}
		c := b[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			if !replace {
				return dst, false
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += n
	}
	return append(dst, s[start:]...), true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// nonPlain returns a mask with the top bit set in each byte of w (read
// little endian) that is not plain (see plain): >= 0x80, < 0x20, '"' or
// '\\'. Each test is the "has a zero byte" bit trick, (x - 0x01..) &
// 0x80..; a borrow only starts at a byte that is not plain and only moves
// up, so the lowest set bit is exact (bytes above it may be flagged
// falsely, which the caller never looks at).
func nonPlain(w uint64) uint64 {
	quote := w ^ ('"' * lsb)
	backslash := w ^ ('\\' * lsb)
	return (w | (w - 0x20*lsb) | (quote - lsb) | (backslash - lsb)) & msb
}
