package ndjson

import (
	"encoding/binary"
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
// becomes U+FFFD; without, it stops and reports false.
func appendEscaped(dst []byte, s string, replace bool) ([]byte, bool) {
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII 16, then 8 bytes at a time.
		if i+16 <= len(s) {
			b := unsafe.Slice(unsafe.StringData(s), len(s))
			for i+16 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) && plainWord(binary.LittleEndian.Uint64(b[i+8:])) {
				i += 16
			}
			for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
				i += 8
			}
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
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
		r, n := utf8.DecodeRuneInString(s[i:])
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

// plainWord reports whether all 8 bytes of w are plain (see plain): none
// is >= 0x80, < 0x20, '"' or '\\'. Each test is the classic "has a zero
// byte" bit trick, (x - 0x01..) & ^x & 0x80.., which is exact when no byte
// has its top bit set (checked first).
func plainWord(w uint64) bool {
	if w&msb != 0 {
		return false
	}
	quote := w ^ ('"' * lsb)
	backslash := w ^ ('\\' * lsb)
	return ((w-0x20*lsb)|(quote-lsb)|(backslash-lsb))&msb == 0
}
