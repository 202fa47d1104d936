package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// DefaultMaxDecompressedBytes caps what one batch may decompress to. It
// guards against decompression bombs: Kafka batches are bounded by
// message.max.bytes before compression, and real ratios stay far below this.
const DefaultMaxDecompressedBytes = 128 << 20

// Decompressor decompresses record streams into a buffer it reuses. The zero
// value is ready to use. It is not safe for concurrent use.
type Decompressor struct {
	// MaxBytes caps the output; 0 means DefaultMaxDecompressedBytes.
	MaxBytes int

	gz      *gzip.Reader
	zstd    *zstd.Decoder
	zstdMax int // the limit zstd was created with
	// zstdAll decodes batches whole, within zstdAllMax.
	zstdAll    *zstd.Decoder
	zstdAllMax int
	br         bytes.Reader
}

func (d *Decompressor) max() int {
	if d.MaxBytes > 0 {
		return d.MaxBytes
	}
	return DefaultMaxDecompressedBytes
}

// errOverCap is a decompression past the cap: an ErrTooLarge.
var errOverCap error = overCapError{}

type overCapError struct{}

func (overCapError) Error() string { return "decompressed data exceeds the size limit" }
func (overCapError) Unwrap() error { return ErrTooLarge }

// Decompress appends the decompressed form of src to dst[:0] and returns
// it. magic selects Kafka's lz4 framing variant (magic 0 writes a broken
// header checksum, KAFKA-3160). On failure it returns what was decoded
// before the error, and the error.
func (d *Decompressor) Decompress(c Compression, magic int8, src, dst []byte) ([]byte, error) {
	dst = dst[:0]
	switch c {
	case CompressionGzip:
		return d.gunzip(src, dst)
	case CompressionSnappy:
		return decodeXerial(src, dst, d.max())
	case CompressionLZ4:
		return decodeLZ4Frame(src, dst, magic, d.max())
	case CompressionZstd:
		return d.unzstd(src, dst)
	case CompressionNone:
		if len(src) > d.max() {
			return append(dst, src[:d.max()]...), errOverCap
		}
		return append(dst, src...), nil
	}
	return dst, unknownCodecError(c)
}

func (d *Decompressor) gunzip(src, dst []byte) ([]byte, error) {
	return readTwoPass(func() (io.Reader, error) {
		d.br.Reset(src)
		if d.gz == nil {
			var err error
			d.gz, err = gzip.NewReader(&d.br)
			return d.gz, err
		}
		return d.gz, d.gz.Reset(&d.br)
	}, dst, d.max())
}

// firstPassBytes is what a streaming codec decompresses into the reused
// buffer before checking the total: real batches end well within it.
const firstPassBytes = 4 << 20

// readTwoPass decompresses the stream open returns into dst, in memory
// bounded by the output's true size, never by a size the data claims and
// never by the cap: it reads up to firstPassBytes (or the buffer's
// capacity) into dst; past that it counts the rest without keeping it,
// fails past max, and otherwise decompresses again into a buffer of the
// exact size. A bomb thus costs its first pass, not the cap.
func readTwoPass(open func() (io.Reader, error), dst []byte, max int) ([]byte, error) {
	r, err := open()
	if err != nil {
		return dst[:0], err
	}
	first := min(max, firstPassBytes)
	first = min(max, maxInt(first, cap(dst)))
	dst, over, err := readCapped(r, dst[:0], first)
	if err != nil || !over {
		return dst, err
	}
	// readCapped consumed one byte past dst to see that there is more.
	n, err := io.Copy(io.Discard, io.LimitReader(r, int64(max-len(dst))))
	total := int64(len(dst)) + 1 + n
	if err != nil {
		return dst, err
	}
	if total > int64(max) {
		return dst, errOverCap
	}
	out := make([]byte, total)
	if r, err = open(); err != nil {
		return dst, err
	}
	if _, err := io.ReadFull(r, out); err != nil {
		return dst, err
	}
	return out, nil
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// readCapped reads r into dst until its end or until limit bytes are held,
// growing dst by at most doubling and never past limit (never by a size
// the data claims). over reports that r holds more than limit bytes; dst
// then holds the first limit of them, and one more byte has been consumed
// from r.
func readCapped(r io.Reader, dst []byte, limit int) (out []byte, over bool, err error) {
	if cap(dst) > limit {
		dst = dst[:len(dst):limit]
	}
	for {
		if len(dst) == cap(dst) {
			if len(dst) >= limit {
				// Full: is there more?
				var one [1]byte
				n, err := io.ReadFull(r, one[:])
				if n > 0 {
					return dst, true, nil
				}
				if err == io.EOF {
					return dst, false, nil
				}
				return dst, false, err
			}
			nc := min(limit, maxInt(2*cap(dst), 64<<10))
			nd := make([]byte, len(dst), nc)
			copy(nd, dst)
			dst = nd
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, false, nil
		}
		if err != nil {
			return dst, false, err
		}
	}
}

// zstdMaxWindow bounds the window a zstd frame may ask the decoder to
// allocate: Kafka's producers write frames with windows of a few MiB.
const zstdMaxWindow = 32 << 20

func (d *Decompressor) unzstd(src, dst []byte) ([]byte, error) {
	if out, ok := d.unzstdWhole(src, dst); ok {
		return out, nil
	}
	if err := d.zstdDecoder(); err != nil {
		return dst, err
	}
	out, err := readTwoPass(func() (io.Reader, error) {
		d.br.Reset(src)
		return d.zstd, d.zstd.Reset(&d.br)
	}, dst, d.max())
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		// The decoder's own checks of the limits set above: the frame
		// declares more than the cap (content or window size).
		return out[:min(len(out), d.max())], errOverCap
	}
	return out, err
}

// unzstdWhole decodes a batch's zstd frames whole into dst's array
// (zstd.Decoder.DecodeAll), skipping the frames' own checksums: the batch's
// CRC-32C covers the compressed bytes already. It holds at most
// firstPassBytes (or dst's capacity) of output, as readTwoPass's first
// pass does: a frame that declares more is left to readTwoPass, and so is
// anything that fails (with the streaming decoder's error, as before).
func (d *Decompressor) unzstdWhole(src, dst []byte) ([]byte, bool) {
	limit := min(d.max(), max(firstPassBytes, cap(dst)))
	var h zstd.Header
	if h.Decode(src) != nil || (h.HasFCS && h.FrameContentSize > uint64(limit)) {
		return dst, false
	}
	if d.zstdAll != nil && d.zstdAllMax != limit {
		d.zstdAll.Close()
		d.zstdAll = nil
	}
	if d.zstdAll == nil {
		l := uint64(max(limit, zstd.MinWindowSize))
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.IgnoreChecksum(true),
			zstd.WithDecoderMaxMemory(l), zstd.WithDecoderMaxWindow(min(l, zstdMaxWindow)))
		if err != nil {
			return dst, false
		}
		d.zstdAll, d.zstdAllMax = dec, limit
	}
	out, err := d.zstdAll.DecodeAll(src, dst[:0])
	if err != nil || len(out) > limit {
		return dst, false
	}
	return out, true
}

// zstdDecoder makes d.zstd, with the limits of the current cap.
func (d *Decompressor) zstdDecoder() error {
	if d.zstd != nil && d.zstdMax != d.max() {
		d.zstd.Close() // the cap changed: a decoder with the new limits
		d.zstd = nil
	}
	if d.zstd == nil {
		// zstd rejects windows under 1 KiB (zstd.MinWindowSize) and every
		// frame declares at least that, so the decoder's own limit is never
		// below it; readTwoPass enforces a smaller cap.
		limit := uint64(max(d.max(), zstd.MinWindowSize))
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(limit), zstd.WithDecoderMaxWindow(min(limit, zstdMaxWindow)))
		if err != nil {
			return err
		}
		d.zstd, d.zstdMax = dec, d.max()
	}
	return nil
}

// xerialMagic starts snappy-java's SnappyOutputStream framing: magic, then
// int32 version 1 and int32 minimum compatible version 1.
var xerialMagic = [8]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	xerialBlockSize = 32 << 10 // snappy-java DEFAULT_BLOCK_SIZE
	xerialMaxChunk  = 512 << 20
)

// decodeXerial reads snappy-java's framing as SnappyInputStream does: input
// that does not start with the magic (or is shorter than the header) is one
// raw snappy block; otherwise a sequence of int32-length-prefixed raw blocks,
// where a length equal to the magic's first 4 bytes starts another header
// (concatenated streams).
func decodeXerial(src, dst []byte, max int) ([]byte, error) {
	if len(src) == 0 {
		return dst, errors.New("Cannot decompress empty stream")
	}
	if len(src) < xerialHeaderLen || !bytes.Equal(src[:8], xerialMagic[:]) {
		return snappyBlock(src, dst, max)
	}
	f := xerialFrame{src: src, p: xerialHeaderLen}
	for {
		block, err := f.next()
		if err != nil || block == nil {
			return dst, err
		}
		if dst, err = snappyBlock(block, dst, max); err != nil {
			return dst, err
		}
	}
}

// xerialFrame walks the blocks of snappy-java's framing after its first
// header.
type xerialFrame struct {
	src []byte
	p   int
}

// next returns the next raw snappy block, nil at the end.
func (f *xerialFrame) next() ([]byte, error) {
	src := f.src
	for len(src)-f.p >= 4 {
		n := binary.BigEndian.Uint32(src[f.p:])
		if n == 0x82534E41 {
			if len(src)-f.p < xerialHeaderLen || !bytes.Equal(src[f.p:f.p+8], xerialMagic[:]) {
				return nil, errors.New("invalid snappy stream header")
			}
			f.p += xerialHeaderLen
			continue
		}
		f.p += 4
		if int32(n) < 0 || n > xerialMaxChunk {
			return nil, errors.New("invalid snappy chunk length " + itoa(int64(int32(n))))
		}
		if int(n) > len(src)-f.p {
			return nil, io.ErrUnexpectedEOF
		}
		block := src[f.p : f.p+int(n)]
		f.p += int(n)
		return block, nil
	}
	return nil, nil
}

func snappyBlock(src, dst []byte, max int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, err
	}
	if n > max-len(dst) {
		return dst, errOverCap
	}
	start := len(dst)
	dst = grow(dst, n)
	out, err := snappy.Decode(dst[start:start+n], src)
	if err != nil {
		return dst[:start], err
	}
	return dst[:start+len(out)], nil
}

// grow extends dst by n bytes, reallocating if needed.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), 2*cap(dst)+n)
		copy(nd, dst)
		dst = nd
	}
	return dst[:len(dst)+n]
}

// Compressor compresses record streams the way Kafka's producers do. The
// zero value is ready to use; it is not safe for concurrent use.
type Compressor struct {
	// lz4 is reused: its hash table is large, and a new one per batch
	// made lz4 the slowest codec to write.
	lz4      lz4.Compressor
	gz       *gzip.Writer
	zstd     *zstd.Encoder
	buf      sliceWriter
	scratch  []byte
	scratch2 []byte
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// Compress appends the compressed form of src to dst. magic selects the lz4
// header-checksum variant (see Decompress).
func (c *Compressor) Compress(codec Compression, magic int8, dst, src []byte) ([]byte, error) {
	switch codec {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGzip:
		c.buf.b = dst
		if c.gz == nil {
			c.gz = gzip.NewWriter(&c.buf)
		} else {
			c.gz.Reset(&c.buf)
		}
		if _, err := c.gz.Write(src); err != nil {
			return dst, err
		}
		err := c.gz.Close()
		out := c.buf.b
		c.buf.b = nil
		return out, err
	case CompressionSnappy:
		return encodeXerial(dst, src), nil
	case CompressionLZ4:
		return encodeLZ4FrameWith(&c.lz4, dst, src, magic)
	case CompressionZstd:
		if magic < MagicV2 {
			return dst, errors.New("zstd needs magic v2 (KIP-110)")
		}
		if err := c.zstdEncoder(); err != nil {
			return dst, err
		}
		return c.zstd.EncodeAll(src, dst), nil
	}
	return dst, errors.New("Unknown compression type id: " + itoa(int64(codec)))
}

// zstdEncoder makes c.zstd (Kafka's default level, one goroutine).
func (c *Compressor) zstdEncoder() error {
	if c.zstd == nil {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return err
		}
		c.zstd = enc
	}
	return nil
}

// encodeXerial writes snappy-java's framing: the 16-byte header, then one
// length-prefixed raw snappy block per 32 KiB of input.
func encodeXerial(dst, src []byte) []byte {
	dst = appendXerialHeader(dst)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		dst = appendXerialBlock(dst, src[:n])
		src = src[n:]
	}
	return dst
}

// appendXerialHeader appends snappy-java's 16-byte stream header.
func appendXerialHeader(dst []byte) []byte {
	dst = append(dst, xerialMagic[:]...)
	return append(dst, 0, 0, 0, 1, 0, 0, 0, 1)
}

// appendXerialBlock appends one length-prefixed raw snappy block.
func appendXerialBlock(dst, src []byte) []byte {
	at := len(dst)
	dst = grow(dst, 4+snappy.MaxEncodedLen(len(src)))
	out := snappy.Encode(dst[at+4:], src)
	binary.BigEndian.PutUint32(dst[at:], uint32(len(out)))
	return dst[:at+4+len(out)]
}

// unknownCodecError is a codec id Kafka does not know (5..7); its text is
// Kafka's (CompressionType.forId), and it is an ErrUnsupported.
type unknownCodecError Compression

func (e unknownCodecError) Error() string { return "Unknown compression type id: " + itoa(int64(e)) }

func (e unknownCodecError) Unwrap() error { return ErrUnsupported }
