package format

import (
	"bytes"
	"errors"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Streaming codecs: the same framings as Compress and Decompress, for
// record streams too large to hold twice. Kafka's producers compress this
// way, a record at a time (MemoryRecordsBuilder over GZIPOutputStream,
// SnappyOutputStream's 32 KiB blocks, Lz4BlockOutputStream's 64 KiB
// blocks, ZstdOutputStream), so sizes measured through a Writer are what a
// producer would store.

// Writer returns a writer that compresses what is written to it with codec
// and writes the compressed stream to w, in Kafka's framing for magic (as
// Compress). It holds the codec's window and one block, whatever is
// written; for gzip, snappy and lz4 the bytes equal Compress's of the
// whole input. Close ends the stream (it does not close w). The Compressor
// must not be used otherwise until Close.
func (c *Compressor) Writer(codec Compression, magic int8, w io.Writer) (io.WriteCloser, error) {
	switch codec {
	case CompressionNone:
		return nopWriteCloser{w}, nil
	case CompressionGzip:
		if c.gz == nil {
			c.gz = gzip.NewWriter(w)
		} else {
			c.gz.Reset(w)
		}
		return c.gz, nil
	case CompressionSnappy:
		return c.blocks(w, xerialBlockSize, appendXerialHeader(nil), func(dst, b []byte) ([]byte, error) {
			return appendXerialBlock(dst, b), nil
		}, nil), nil
	case CompressionLZ4:
		return c.blocks(w, lz4BlockMax, appendLZ4Header(nil, magic), func(dst, b []byte) ([]byte, error) {
			return appendLZ4Block(&c.lz4, dst, b)
		}, appendLZ4End(nil)), nil
	case CompressionZstd:
		if magic < MagicV2 {
			return nil, errors.New("zstd needs magic v2 (KIP-110)")
		}
		if err := c.zstdEncoder(); err != nil {
			return nil, err
		}
		c.zstd.Reset(w)
		return c.zstd, nil
	}
	return nil, unknownCodecError(codec)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// blocks returns a blockWriter over w reusing the Compressor's buffers.
func (c *Compressor) blocks(w io.Writer, size int, head []byte, block func(dst, b []byte) ([]byte, error), end []byte) *blockWriter {
	bw := &blockWriter{c: c, w: w, size: size, block: block, end: end, in: c.scratch[:0], out: c.scratch2[:0]}
	bw.out = append(bw.out, head...)
	return bw
}

// blockWriter is a block-framed stream (snappy-java's, Kafka's LZ4): input
// is gathered into blocks of size bytes, each appended to out by block and
// written to w.
type blockWriter struct {
	c     *Compressor // its buffers are given back on Close
	w     io.Writer
	size  int
	block func(dst, b []byte) ([]byte, error)
	end   []byte
	in    []byte
	out   []byte
	err   error
}

func (b *blockWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && b.err == nil {
		if cap(b.in) < b.size {
			b.in = make([]byte, 0, b.size)
		}
		k := min(len(p), b.size-len(b.in))
		b.in = append(b.in, p[:k]...)
		p = p[k:]
		if len(b.in) == b.size {
			b.flush()
		}
	}
	if b.err != nil {
		return 0, b.err
	}
	return n, nil
}

// flush frames the gathered block and writes what is framed.
func (b *blockWriter) flush() {
	if len(b.in) > 0 {
		b.out, b.err = b.block(b.out, b.in)
		b.in = b.in[:0]
	}
	if b.err == nil && len(b.out) > 0 {
		_, b.err = b.w.Write(b.out)
		b.out = b.out[:0]
	}
}

func (b *blockWriter) Close() error {
	b.flush()
	if b.err == nil && len(b.end) > 0 {
		_, b.err = b.w.Write(b.end)
	}
	b.c.scratch, b.c.scratch2 = b.in[:0], b.out[:0]
	return b.err
}

// Reader returns a reader of src decompressed with codec (magic as for
// Decompress), streaming: it holds the codec's window or one block, never
// the whole output, and fails with an error matching ErrTooLarge once more
// than MaxBytes come out. The Decompressor must not be used otherwise
// while the reader is read.
func (d *Decompressor) Reader(c Compression, magic int8, src []byte) (io.Reader, error) {
	var r io.Reader
	switch c {
	case CompressionNone:
		r = bytes.NewReader(src)
	case CompressionGzip:
		d.br.Reset(src)
		if d.gz == nil {
			gz, err := gzip.NewReader(&d.br)
			if err != nil {
				return nil, err
			}
			d.gz = gz
		} else if err := d.gz.Reset(&d.br); err != nil {
			return nil, err
		}
		r = d.gz
	case CompressionZstd:
		if err := d.zstdDecoder(); err != nil {
			return nil, err
		}
		d.br.Reset(src)
		if err := d.zstd.Reset(&d.br); err != nil {
			return nil, err
		}
		r = d.zstd
	case CompressionSnappy:
		if len(src) == 0 {
			return nil, errors.New("Cannot decompress empty stream")
		}
		f := xerialFrame{src: src, p: xerialHeaderLen}
		single := len(src) < xerialHeaderLen || !bytes.Equal(src[:8], xerialMagic[:])
		r = &blockReader{next: func(dst []byte) ([]byte, bool, error) {
			if single {
				single, f.p = false, len(src)
				out, err := snappyBlock(src, dst, d.max())
				return out, true, err
			}
			block, err := f.next()
			if err != nil || block == nil {
				return dst, false, err
			}
			out, err := snappyBlock(block, dst, d.max())
			return out, true, err
		}}
	case CompressionLZ4:
		f, err := openLZ4Frame(src, magic)
		if err != nil {
			return nil, err
		}
		r = &blockReader{next: func(dst []byte) ([]byte, bool, error) {
			block, raw, err := f.next()
			if err != nil || block == nil {
				return dst, false, err
			}
			out, err := f.appendBlock(dst, block, raw)
			return out, true, err
		}}
	default:
		return nil, unknownCodecError(c)
	}
	return &cappedReader{r: r, left: int64(d.max())}, nil
}

// blockReader serves a block-framed stream one decoded block at a time.
type blockReader struct {
	next func(dst []byte) (out []byte, ok bool, err error)
	buf  []byte
	p    int
	err  error
}

func (b *blockReader) Read(p []byte) (int, error) {
	for b.p == len(b.buf) {
		if b.err != nil {
			return 0, b.err
		}
		out, ok, err := b.next(b.buf[:0])
		b.buf, b.p = out, 0
		switch {
		case err != nil:
			b.err = err
		case !ok:
			b.err = io.EOF
		}
		if b.err != nil && len(b.buf) == 0 {
			return 0, b.err
		}
	}
	n := copy(p, b.buf[b.p:])
	b.p += n
	return n, nil
}

// cappedReader fails once more than left bytes are read through it.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n + int(c.left), errOverCap
	}
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		err = errOverCap
	}
	return n, err
}
