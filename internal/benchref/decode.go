package benchref

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/klog-dev/klog/format"
)

// DecodeAndCRC reads a log of v2 batches from r through one reused 1 MiB
// buffer (a batch larger than what is left of it is read into a second
// reused buffer) and, for each batch, checks its CRC-32C (format.ChecksumC,
// klog's own) and decompresses its records whole, zstd with
// zstd.Decoder.DecodeAll into one reused buffer; an uncompressed batch is
// only CRC-checked. It returns the number of batches and the decompressed
// bytes: the floor of a check that looks at every record's bytes.
func DecodeAndCRC(r io.Reader) (batches int, decoded int64, err error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return 0, 0, err
	}
	defer dec.Close()
	buf := make([]byte, 1<<20)
	var big, out []byte
	have := 0 // bytes of buf[:have] not yet used
	eof := false
	fill := func() error {
		if eof {
			return nil
		}
		n, err := io.ReadFull(r, buf[have:])
		have += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			eof = true
			return nil
		}
		return err
	}
	if err := fill(); err != nil {
		return 0, 0, err
	}
	for p := 0; ; {
		if have-p < 12 {
			copy(buf, buf[p:have])
			have, p = have-p, 0
			if err := fill(); err != nil {
				return batches, decoded, err
			}
			if have < 12 {
				if have == 0 {
					return batches, decoded, nil
				}
				return batches, decoded, errors.New("a torn batch at the end")
			}
		}
		size := 12 + int(int32(binary.BigEndian.Uint32(buf[p+8:])))
		if size < 61 {
			return batches, decoded, fmt.Errorf("batch size %d", size)
		}
		var b []byte
		switch {
		case have-p >= size:
			b, p = buf[p:p+size], p+size
		case size <= len(buf):
			copy(buf, buf[p:have])
			have, p = have-p, 0
			if err := fill(); err != nil {
				return batches, decoded, err
			}
			if have < size {
				return batches, decoded, errors.New("a torn batch at the end")
			}
			b, p = buf[:size], size
		default:
			big = append(big[:0], buf[p:have]...)
			rest := size - len(big)
			big = append(big, make([]byte, rest)...)
			if _, err := io.ReadFull(r, big[size-rest:]); err != nil {
				return batches, decoded, err
			}
			b, p, have = big, 0, 0
		}
		if format.ChecksumC(b[21:]) != binary.BigEndian.Uint32(b[17:]) {
			return batches, decoded, fmt.Errorf("batch %d: CRC mismatch", batches)
		}
		batches++
		switch codec := binary.BigEndian.Uint16(b[21:]) & 7; codec {
		case 0:
		case 4:
			if out, err = dec.DecodeAll(b[61:], out[:0]); err != nil {
				return batches, decoded, err
			}
			decoded += int64(len(out))
		default:
			return batches, decoded, fmt.Errorf("codec %d: this program decodes zstd only", codec)
		}
	}
}
