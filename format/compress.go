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

	gz   *gzip.Reader
	zstd *zstd.Decoder
	br   bytes.Reader
}

func (d *Decompressor) max() int {
	if d.MaxBytes > 0 {
		return d.MaxBytes
	}
	return DefaultMaxDecompressedBytes
}

var errOverCap = errors.New("decompressed data exceeds the size limit")

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
	d.br.Reset(src)
	var err error
	if d.gz == nil {
		d.gz, err = gzip.NewReader(&d.br)
	} else {
		err = d.gz.Reset(&d.br)
	}
	if err != nil {
		return dst, err
	}
	return readCapped(d.gz, dst, d.max())
}

// readCapped reads r to its end into dst, growing it step by step (never
// by a size the data claims) and failing past max bytes.
func readCapped(r io.Reader, dst []byte, max int) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			if len(dst) > max {
				return dst[:max], errOverCap
			}
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > max {
			return dst[:max], errOverCap
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

func (d *Decompressor) unzstd(src, dst []byte) ([]byte, error) {
	if d.zstd == nil {
		// zstd rejects windows under 1 KiB (zstd.MinWindowSize) and every
		// frame declares at least that, so the decoder's own limit is never
		// below it; the check after DecodeAll enforces a smaller cap.
		limit := uint64(max(d.max(), zstd.MinWindowSize))
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(limit), zstd.WithDecoderMaxWindow(limit))
		if err != nil {
			return dst, err
		}
		d.zstd = dec
	}
	out, err := d.zstd.DecodeAll(src, dst)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		// The decoder's own checks of the limits set above: the frame
		// declares more than the cap (content or window size).
		return out[:min(len(out), d.max())], errOverCap
	}
	if len(out) > d.max() {
		return out[:d.max()], errOverCap
	}
	return out, err
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
	p := xerialHeaderLen
	for len(src)-p >= 4 {
		n := binary.BigEndian.Uint32(src[p:])
		if n == 0x82534E41 {
			if len(src)-p < xerialHeaderLen || !bytes.Equal(src[p:p+8], xerialMagic[:]) {
				return dst, errors.New("invalid snappy stream header")
			}
			p += xerialHeaderLen
			continue
		}
		p += 4
		if int32(n) < 0 || n > xerialMaxChunk {
			return dst, errors.New("invalid snappy chunk length " + itoa(int64(int32(n))))
		}
		if int(n) > len(src)-p {
			return dst, io.ErrUnexpectedEOF
		}
		var err error
		if dst, err = snappyBlock(src[p:p+int(n)], dst, max); err != nil {
			return dst, err
		}
		p += int(n)
	}
	return dst, nil
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
		if c.zstd == nil {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
			if err != nil {
				return dst, err
			}
			c.zstd = enc
		}
		return c.zstd.EncodeAll(src, dst), nil
	}
	return dst, errors.New("Unknown compression type id: " + itoa(int64(codec)))
}

// encodeXerial writes snappy-java's framing: the 16-byte header, then one
// length-prefixed raw snappy block per 32 KiB of input.
func encodeXerial(dst, src []byte) []byte {
	dst = append(dst, xerialMagic[:]...)
	dst = append(dst, 0, 0, 0, 1, 0, 0, 0, 1)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		at := len(dst)
		dst = grow(dst, 4+snappy.MaxEncodedLen(n))
		out := snappy.Encode(dst[at+4:], src[:n])
		binary.BigEndian.PutUint32(dst[at:], uint32(len(out)))
		dst = dst[:at+4+len(out)]
		src = src[n:]
	}
	return dst
}

// unknownCodecError is a codec id Kafka does not know (5..7); its text is
// Kafka's (CompressionType.forId), and it is an ErrUnsupported.
type unknownCodecError Compression

func (e unknownCodecError) Error() string { return "Unknown compression type id: " + itoa(int64(e)) }

func (e unknownCodecError) Unwrap() error { return ErrUnsupported }
