package ndjson

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// BenchmarkBytes measures writing a 1 KiB printable value (with quotes) as
// a JSON string, the per-record cost of the JSON path.
func BenchmarkBytes(b *testing.B) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 {}:\","
	rng := rand.New(rand.NewPCG(7, 11))
	v := make([]byte, 1024)
	for i := range v {
		v[i] = alphabet[rng.IntN(len(alphabet))]
	}
	dst := make([]byte, 0, 4096)
	b.Run("impl=ndjson", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		b.ReportAllocs()
		for b.Loop() {
			dst = Bytes(dst[:0], "value", "valueEncoding", v, EncodingText)
		}
	})
	// The baseline: one byte at a time (FuzzString's reference), after a
	// utf8.Valid check as the text encoding needs.
	b.Run("impl=bytewise", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		for b.Loop() {
			if utf8.Valid(v) {
				dst = append(dst[:0], naiveString(string(v))...)
			}
		}
	})
}
