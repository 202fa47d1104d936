package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// streamInputs are record streams of the sizes that matter to the
// framings: empty, one byte, around a snappy block (32 KiB) and an LZ4
// block (64 KiB), and several blocks of text and of noise.
func streamInputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(5, 6))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	text := bytes.Repeat([]byte("offset 42 key=order-17 value={\"amount\": 12.50} "), 8000)
	return map[string][]byte{
		"empty": {}, "one": {7},
		"32KiB-1": text[:32<<10-1], "32KiB": text[:32<<10], "64KiB+1": text[:64<<10+1],
		"text": text, "noise": noise(200 << 10),
	}
}

// writeChunked writes data through w in chunks of random sizes.
func writeChunked(t *testing.T, w io.Writer, data []byte, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(data) > 0 {
		n := min(len(data), 1+rng.IntN(70<<10))
		if _, err := w.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
	}
}

// TestStreamCodecs: what a Writer writes, however the input is chunked,
// decompresses to the input and (gzip, snappy, lz4, none) is Compress's
// output byte for byte; a Reader, read in any chunks, gives what
// Decompress gives, and stops with ErrTooLarge past MaxBytes.
func TestStreamCodecs(t *testing.T) {
	var c Compressor
	var d Decompressor
	for name, in := range streamInputs() {
		for codec := CompressionNone; codec <= CompressionZstd; codec++ {
			for _, magic := range []int8{MagicV0, MagicV2} {
				if codec == CompressionZstd && magic < MagicV2 {
					continue
				}
				label := name + "/" + codec.String() + "/v" + itoa(int64(magic))
				var out bytes.Buffer
				w, err := c.Writer(codec, magic, &out)
				if err != nil {
					t.Fatal(label, err)
				}
				writeChunked(t, w, in, uint64(len(in)))
				if err := w.Close(); err != nil {
					t.Fatal(label, err)
				}
				whole, err := c.Compress(codec, magic, nil, in)
				if err != nil {
					t.Fatal(label, err)
				}
				if codec != CompressionZstd && !bytes.Equal(out.Bytes(), whole) {
					t.Errorf("%s: the stream differs from Compress's output (%d vs %d bytes)", label, out.Len(), len(whole))
				}
				back, err := d.Decompress(codec, magic, out.Bytes(), nil)
				if err != nil || !bytes.Equal(back, in) {
					t.Errorf("%s: the stream decompresses to %d bytes (%v), want the %d written", label, len(back), err, len(in))
				}
				if codec == CompressionSnappy && len(in) == 0 {
					continue // snappy-java refuses an empty stream, as Decompress does
				}
				r, err := d.Reader(codec, magic, whole)
				if err != nil {
					t.Fatal(label, err)
				}
				var got bytes.Buffer
				if _, err := io.CopyBuffer(&got, struct{ io.Reader }{r}, make([]byte, 1000)); err != nil || !bytes.Equal(got.Bytes(), in) {
					t.Errorf("%s: Reader gave %d bytes (%v), want %d", label, got.Len(), err, len(in))
				}
				if len(in) > 100 {
					small := Decompressor{MaxBytes: len(in) - 1}
					r, err := small.Reader(codec, magic, whole)
					if err == nil {
						_, err = io.Copy(io.Discard, r)
					}
					if !errors.Is(err, ErrTooLarge) {
						t.Errorf("%s: Reader past MaxBytes: %v, want ErrTooLarge", label, err)
					}
				}
			}
		}
	}
}

// FuzzStreamReader: on any input a Reader never panics and gives exactly
// what Decompress gives whenever Decompress succeeds.
func FuzzStreamReader(f *testing.F) {
	var c Compressor
	for _, in := range streamInputs() {
		for codec := CompressionGzip; codec <= CompressionZstd; codec++ {
			out, err := c.Compress(codec, MagicV2, nil, in[:min(len(in), 4096)])
			if err == nil {
				f.Add(int8(codec), out)
			}
		}
	}
	f.Fuzz(func(t *testing.T, codec int8, src []byte) {
		c := Compression(codec & 7)
		d := Decompressor{MaxBytes: 1 << 20}
		want, werr := d.Decompress(c, MagicV2, src, nil)
		r, err := d.Reader(c, MagicV2, src)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r)
		}
		if werr == nil && (err != nil || !bytes.Equal(got, want)) {
			t.Fatalf("%v: Reader gave %d bytes, %v; Decompress %d bytes", c, len(got), err, len(want))
		}
	})
}
