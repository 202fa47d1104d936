package redact

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRedactLog: a log of arbitrary bytes is redacted without a panic,
// and the copy is never longer than the source allows (each batch is
// re-encoded, undecodable bytes zeroed in place).
func FuzzRedactLog(f *testing.F) {
	for _, name := range []string{"v2-none", "v2-zstd", "v2-headers", "v1-gzip", "v0-lz4", "v2-transactions", "corrupt-crc-flipped", "corrupt-count-too-high", "corrupt-garbage-tail"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "segments", "generated", name, "00000000000000000000.log"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := filepath.Join(t.TempDir(), "t-0")
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "00000000000000000000.log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "out")
		if _, err := Partition(src, dst, Options{Mode: Zero, MaxBatchBytes: 1 << 20}); err != nil {
			return
		}
		out, err := os.ReadFile(filepath.Join(dst, "00000000000000000000.log"))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 && len(out) != 0 {
			t.Fatalf("empty source, %d bytes out", len(out))
		}
	})
}
