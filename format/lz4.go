package format

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/pierrec/lz4/v4"
)

// Kafka reads and writes LZ4 frames with its own classes
// (Lz4BlockInputStream/Lz4BlockOutputStream), not lz4-java's frame streams.
// The block codec is pierrec/lz4; this file only handles the frame around it.
//
//	magic 04 22 4D 18 | FLG | BD | [content size u64] | HC | blocks... | 0 u32
//
// Kafka writes FLG 0x60 (version 01, independent blocks) and BD 0x40 (64 KiB
// blocks). HC is byte 1 of xxHash32 over the descriptor: FLG, BD (and content
// size); for magic v0 data Kafka's old writer hashed the magic too
// (KAFKA-3160), so readers skip HC for v0 and check it for v1/v2.

const (
	lz4Magic        = 0x184D2204
	lz4FlgVersion   = 0x40
	lz4FlgIndep     = 0x20
	lz4FlgBlockSum  = 0x10
	lz4FlgSize      = 0x08
	lz4FlgContent   = 0x04
	lz4Uncompressed = 0x80000000
	lz4BlockMax     = 64 << 10
)

var errLZ4Descriptor = errors.New("Stream frame descriptor corrupted")

// lz4Frame walks the blocks of one Kafka LZ4 frame.
type lz4Frame struct {
	src      []byte
	p        int
	flg      byte
	blockMax int
	done     bool
}

// openLZ4Frame checks the frame header of src (its descriptor checksum
// unless magic is v0, KAFKA-3160).
func openLZ4Frame(src []byte, magic int8) (lz4Frame, error) {
	if len(src) < 7 || binary.LittleEndian.Uint32(src) != lz4Magic {
		return lz4Frame{}, errors.New("Stream unsupported (invalid magic bytes)")
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 {
		return lz4Frame{}, errors.New("Stream unsupported (version " + itoa(int64(flg>>6)) + ")")
	}
	if flg&lz4FlgIndep == 0 {
		return lz4Frame{}, errors.New("Stream unsupported (dependent blocks)")
	}
	if flg&0x03 != 0 || bd&0x8f != 0 {
		return lz4Frame{}, errors.New("Stream unsupported (reserved bits set)")
	}
	blockMax := 1 << (2*uint((bd>>4)&7) + 8)
	if (bd>>4)&7 < 4 {
		return lz4Frame{}, errors.New("Stream unsupported (block size id)")
	}
	desc := 6
	if flg&lz4FlgSize != 0 {
		desc += 8
	}
	if len(src) < desc+1 {
		return lz4Frame{}, errLZ4Descriptor
	}
	if magic != MagicV0 {
		if hc := byte(xxh32(src[4:desc]) >> 8); hc != src[desc] {
			return lz4Frame{}, errLZ4Descriptor
		}
	}
	return lz4Frame{src: src, p: desc + 1, flg: flg, blockMax: blockMax}, nil
}

// next returns the next block (raw: stored uncompressed), nil at the
// EndMark (a content checksum may follow and is not verified).
func (f *lz4Frame) next() (block []byte, raw bool, err error) {
	if f.done {
		return nil, false, nil
	}
	src := f.src
	if len(src)-f.p < 4 {
		return nil, false, errors.New("lz4 frame cut short")
	}
	n := binary.LittleEndian.Uint32(src[f.p:])
	f.p += 4
	if n == 0 {
		f.done = true
		return nil, false, nil
	}
	raw = n&lz4Uncompressed != 0
	n &^= lz4Uncompressed
	if int(n) > f.blockMax {
		return nil, false, errors.New("Block size " + itoa(int64(n)) + " exceeded max: " + itoa(int64(f.blockMax)))
	}
	if int(n) > len(src)-f.p {
		return nil, false, errors.New("lz4 block cut short")
	}
	block = src[f.p : f.p+int(n)]
	f.p += int(n)
	if f.flg&lz4FlgBlockSum != 0 {
		if len(src)-f.p < 4 {
			return nil, false, errors.New("lz4 block checksum cut short")
		}
		f.p += 4
	}
	return block, raw, nil
}

// appendBlock appends the decoded block to dst, at most blockMax bytes.
func (f *lz4Frame) appendBlock(dst, block []byte, raw bool) ([]byte, error) {
	if raw {
		return append(dst, block...), nil
	}
	at := len(dst)
	dst = grow(dst, f.blockMax)
	m, err := lz4.UncompressBlock(block, dst[at:])
	if err != nil {
		return dst[:at], err
	}
	return dst[:at+m], nil
}

func decodeLZ4Frame(src, dst []byte, magic int8, max int) ([]byte, error) {
	f, err := openLZ4Frame(src, magic)
	if err != nil {
		return dst, err
	}
	for {
		block, raw, err := f.next()
		if err != nil {
			return dst, err
		}
		if block == nil {
			return dst, nil
		}
		if len(dst)+f.blockMax > max && len(dst)+len(block) > max {
			return dst, errOverCap
		}
		if dst, err = f.appendBlock(dst, block, raw); err != nil {
			return dst, err
		}
		if len(dst) > max {
			return dst[:max], errOverCap
		}
	}
}

func encodeLZ4Frame(dst, src []byte, magic int8) ([]byte, error) {
	var c lz4.Compressor
	return encodeLZ4FrameWith(&c, dst, src, magic)
}

// encodeLZ4FrameWith is encodeLZ4Frame with a block compressor the caller
// reuses (its hash table is too large to allocate per batch).
func encodeLZ4FrameWith(c *lz4.Compressor, dst, src []byte, magic int8) ([]byte, error) {
	dst = appendLZ4Header(dst, magic)
	for len(src) > 0 {
		n := min(len(src), lz4BlockMax)
		var err error
		if dst, err = appendLZ4Block(c, dst, src[:n]); err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return appendLZ4End(dst), nil
}

// appendLZ4Header appends Kafka's frame header: FLG (version 01,
// independent blocks), BD (64 KiB blocks) and the descriptor checksum
// (over the magic too for magic v0, KAFKA-3160).
func appendLZ4Header(dst []byte, magic int8) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	flg, bd := byte(lz4FlgVersion|lz4FlgIndep), byte(0x40)
	dst = append(dst, flg, bd)
	if magic == MagicV0 {
		var d [6]byte
		binary.LittleEndian.PutUint32(d[:], lz4Magic)
		d[4], d[5] = flg, bd
		return append(dst, byte(xxh32(d[:])>>8))
	}
	return append(dst, byte(xxh32([]byte{flg, bd})>>8))
}

// appendLZ4Block appends one block of at most lz4BlockMax bytes: stored
// raw when compressing does not make it smaller.
func appendLZ4Block(c *lz4.Compressor, dst, src []byte) ([]byte, error) {
	n := len(src)
	at := len(dst)
	dst = grow(dst, 4+lz4.CompressBlockBound(n))
	m, err := c.CompressBlock(src, dst[at+4:])
	if err != nil {
		return dst[:at], err
	}
	if m == 0 || m >= n {
		dst = dst[:at+4]
		binary.LittleEndian.PutUint32(dst[at:], uint32(n)|lz4Uncompressed)
		return append(dst, src...), nil
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(m))
	return dst[:at+4+m], nil
}

// appendLZ4End appends the EndMark.
func appendLZ4End(dst []byte) []byte { return binary.LittleEndian.AppendUint32(dst, 0) }

// xxh32 is xxHash32 with seed 0, used only for the few bytes of an LZ4 frame
// descriptor (pierrec/lz4 keeps its implementation internal).
func xxh32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		var zero uint32
		v1, v2, v3, v4 := zero+p1+p2, p2, zero, zero-p1
		for len(b) >= 16 {
			v1 = bits.RotateLeft32(v1+binary.LittleEndian.Uint32(b)*p2, 13) * p1
			v2 = bits.RotateLeft32(v2+binary.LittleEndian.Uint32(b[4:])*p2, 13) * p1
			v3 = bits.RotateLeft32(v3+binary.LittleEndian.Uint32(b[8:])*p2, 13) * p1
			v4 = bits.RotateLeft32(v4+binary.LittleEndian.Uint32(b[12:])*p2, 13) * p1
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
