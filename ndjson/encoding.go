package ndjson

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
)

// Encoding is how key and value bytes are rendered (--key-encoding,
// --value-encoding). The zero value is EncodingText.
type Encoding int8

// Encodings. In JSON, EncodingText writes the bytes as a string when they
// are valid UTF-8 and as base64 (with "<field>Encoding":"base64") otherwise;
// hex and base64 always use that encoding; EncodingRedacted writes
// "sha256:<hex>" only, for sharing output.
const (
	EncodingText Encoding = iota
	EncodingHex
	EncodingBase64
	EncodingRedacted
)

// ErrUnknownEncoding is returned by ParseEncoding.
var ErrUnknownEncoding = errors.New("unknown encoding (text, hex, base64 or redacted)")

// ParseEncoding reads text, hex, base64 or redacted ("" is text).
func ParseEncoding(s string) (Encoding, error) {
	switch s {
	case "", "text":
		return EncodingText, nil
	case "hex":
		return EncodingHex, nil
	case "base64":
		return EncodingBase64, nil
	case "redacted":
		return EncodingRedacted, nil
	}
	return 0, &encodingError{s}
}

type encodingError struct{ s string }

func (e *encodingError) Error() string {
	return "unknown encoding " + strconv.Quote(e.s) + " (text, hex, base64 or redacted)"
}

func (e *encodingError) Unwrap() error { return ErrUnknownEncoding }

func (e Encoding) String() string {
	switch e {
	case EncodingHex:
		return "hex"
	case EncodingBase64:
		return "base64"
	case EncodingRedacted:
		return "redacted"
	}
	return "text"
}

// Bytes writes "name":v in encoding e, followed by "<encName>":"<e>" unless
// the value is a plain JSON string. nil is null.
func Bytes(dst []byte, name, encName string, v []byte, e Encoding) []byte {
	return bytesValue(Field(dst, name), encName, v, e)
}

// bytesValue writes v as Bytes does, after its field name.
func bytesValue(dst []byte, encName string, v []byte, e Encoding) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	if e == EncodingText {
		n := len(dst)
		var ok bool
		if dst, ok = appendValidString(dst, v); ok {
			return dst
		}
		dst = dst[:n]
		e = EncodingBase64
	}
	dst = append(dst, '"')
	switch e {
	case EncodingHex:
		dst = hex.AppendEncode(dst, v)
	case EncodingBase64:
		dst = base64.StdEncoding.AppendEncode(dst, v)
	default:
		sum := sha256.Sum256(v)
		dst = append(dst, "sha256:"...)
		dst = hex.AppendEncode(dst, sum[:])
	}
	dst = append(dst, '"')
	dst = Field(dst, encName)
	dst = append(dst, '"')
	dst = append(dst, e.String()...)
	return append(dst, '"')
}
