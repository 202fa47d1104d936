package format

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestZstdWholeBatch: a zstd batch decodes whole into the caller's buffer
// (no new array once it is large enough, whatever the frame declares), the
// output equals the input for frames with and without a content size, and
// a frame declaring more than the first pass holds goes to the streaming
// decoder, which still decodes it.
func TestZstdWholeBatch(t *testing.T) {
	src := bytes.Repeat([]byte("order:17 payment:EUR user:42 "), 3000) // 87 KB
	withFCS, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	frames := map[string][]byte{"content size": withFCS.EncodeAll(src, nil)}
	var stream bytes.Buffer
	sw, _ := zstd.NewWriter(&stream)
	sw.Write(src)
	sw.Close()
	frames["streamed, no content size"] = stream.Bytes()
	for name, frame := range frames {
		t.Run(name, func(t *testing.T) {
			var d Decompressor
			dst := make([]byte, 0, 1<<20)
			out, err := d.Decompress(CompressionZstd, MagicV2, frame, dst)
			if err != nil || !bytes.Equal(out, src) {
				t.Fatalf("decoded %d bytes, err %v; want the %d bytes", len(out), err, len(src))
			}
			if &out[:1][0] != &dst[:1][0] {
				t.Error("decoded into a new array, not the caller's buffer")
			}
			if d.zstdAll == nil || d.zstd != nil {
				t.Error("not decoded whole (the streaming decoder was used)")
			}
		})
	}
	big := bytes.Repeat([]byte{7}, firstPassBytes+1)
	var d Decompressor
	out, err := d.Decompress(CompressionZstd, MagicV2, withFCS.EncodeAll(big, nil), nil)
	if err != nil || !bytes.Equal(out, big) {
		t.Fatalf("a frame above the first pass: %d bytes, %v", len(out), err)
	}
	if d.zstd == nil {
		t.Error("a frame declaring more than the first pass was decoded whole")
	}
}
