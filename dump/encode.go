package dump

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
)

// Encoding is how key and value bytes are rendered (--key-encoding,
// --value-encoding): ndjson's, so every command shares the names. In text
// output EncodingText is Kafka's StringDecoder (Java's UTF-8 decoding with
// U+FFFD for malformed bytes) and EncodingRedacted prints only the size and
// a SHA-256 prefix.
type Encoding = ndjson.Encoding

// Encodings.
const (
	EncodingText     = ndjson.EncodingText
	EncodingHex      = ndjson.EncodingHex
	EncodingBase64   = ndjson.EncodingBase64
	EncodingRedacted = ndjson.EncodingRedacted
)

// ParseEncoding reads text, hex, base64 or redacted.
func ParseEncoding(s string) (Encoding, error) { return ndjson.ParseEncoding(s) }

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
	return format.AppendJavaUTF8(l, b)
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

// AppendJavaUTF8 appends b decoded as Java's new String(b, UTF_8) and
// encoded back to UTF-8: format.AppendJavaUTF8, kept here for callers of
// the renderer.
func AppendJavaUTF8(dst, b []byte) []byte { return format.AppendJavaUTF8(dst, b) }
