package dump

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/ndjson"
)

// appendEncoded renders b for the text output, in ndjson's encodings (so
// every command shares the names): ndjson.EncodingText is Kafka's StringDecoder
// (Java's UTF-8 decoding with U+FFFD for malformed bytes), ndjson.EncodingRedacted
// prints only the size and a SHA-256 prefix.
func appendEncoded(l []byte, b []byte, e ndjson.Encoding) []byte {
	switch e {
	case ndjson.EncodingHex:
		return hex.AppendEncode(l, b)
	case ndjson.EncodingBase64:
		return base64.StdEncoding.AppendEncode(l, b)
	case ndjson.EncodingRedacted:
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
