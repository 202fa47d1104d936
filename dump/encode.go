package dump

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
)

// Encoding is how key and value bytes are rendered (--key-encoding,
// --value-encoding).
type Encoding int8

// Encodings. EncodingText is Kafka's StringDecoder (Java's UTF-8 decoding
// with U+FFFD for malformed bytes); EncodingRedacted prints only the size
// and a SHA-256 prefix, for sharing dumps.
const (
	EncodingText Encoding = iota
	EncodingHex
	EncodingBase64
	EncodingRedacted
)

// ParseEncoding reads text, hex, base64 or redacted.
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
	return 0, errors.New("unknown encoding " + strconv.Quote(s) + " (text, hex, base64 or redacted)")
}

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

// appendEncoded renders b for the text output.
func appendEncoded(l []byte, b []byte, e Encoding) []byte {
	switch e {
	case EncodingHex:
		return hex.AppendEncode(l, b)
	case EncodingBase64:
		return base64.StdEncoding.AppendEncode(l, b)
	case EncodingRedacted:
		return appendRedacted(l, b)
	}
	return AppendJavaUTF8(l, b)
}

// appendRedacted writes "<redacted N bytes sha256:XXXXXXXXXXXXXXXX>".
func appendRedacted(l, b []byte) []byte {
	sum := sha256.Sum256(b)
	l = append(l, "<redacted "...)
	l = strconv.AppendInt(l, int64(len(b)), 10)
	l = append(l, " bytes sha256:"...)
	l = hex.AppendEncode(l, sum[:8])
	return append(l, '>')
}
