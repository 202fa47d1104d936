package redact

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"

	"github.com/klog-dev/klog/format"
)

// Re-encoding streams records: each record is redacted and encoded as it
// is read, through the batch's codec (format.Compressor.Writer), into a
// batchSink. Memory is the reader's decompressed stream (bounded by the
// decompression cap) and what the sink holds, never a slice of all the
// records (a 20 KB gzip batch of 2 million records at offset delta 0 held
// 1.15 GB that way).

// spillAt is the size past which a batch being written leaves memory: the
// rest goes to the segment file as it is encoded, and its header (length,
// record count, CRC) is written last, in place.
const spillAt = 4 << 20

// segOut is the segment being written: a buffer over its file (opened
// read-write, so a spilled batch's CRC can be computed from what was
// written).
type segOut struct {
	w   *bufio.Writer
	f   *os.File
	pos int64 // bytes of the segment written so far
}

// write appends bytes to the segment.
func (o *segOut) write(b []byte) error {
	_, err := o.w.Write(b)
	o.pos += int64(len(b))
	return err
}

// batchSink receives one batch, header first: in memory up to spillAt, then
// straight into the segment.
type batchSink struct {
	o       *segOut
	buf     []byte
	headLen int
	head    []byte // the header, kept for the patch once spilled
	spilled bool
	n       int64
	err     error
}

func (s *batchSink) begin(o *segOut, buf []byte, head []byte) {
	*s = batchSink{o: o, buf: append(buf[:0], head...), headLen: len(head), n: int64(len(head))}
}

func (s *batchSink) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.n += int64(len(p))
	if !s.spilled {
		s.buf = append(s.buf, p...)
		if len(s.buf) > spillAt {
			s.spilled = true
			s.head = append(s.head[:0], s.buf[:s.headLen]...)
			_, s.err = s.o.w.Write(s.buf)
			s.buf = s.buf[:0]
		}
		return len(p), s.err
	}
	_, s.err = s.o.w.Write(p)
	return len(p), s.err
}

// finish writes the batch: patch fills the header's derived fields (given
// the batch's whole size), then the checksum over [crcFrom:] goes at crcAt
// (update: format.UpdateC or UpdateIEEE) unless keepCRC, which leaves the
// header's. It returns the batch's size.
func (s *batchSink) finish(patch func(head []byte, size int64), crcAt, crcFrom int, update func(uint32, []byte) uint32, keepCRC bool) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	start := s.o.pos
	if !s.spilled {
		patch(s.buf, s.n)
		if !keepCRC {
			binary.BigEndian.PutUint32(s.buf[crcAt:], update(0, s.buf[crcFrom:]))
		}
		return s.n, s.o.write(s.buf)
	}
	if err := s.o.w.Flush(); err != nil {
		return 0, err
	}
	patch(s.head, s.n)
	if _, err := s.o.f.WriteAt(s.head, start); err != nil {
		return 0, err
	}
	if !keepCRC {
		crc, err := checksumAt(s.o.f, start+int64(crcFrom), s.n-int64(crcFrom), update, s.buf)
		if err != nil {
			return 0, err
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], crc)
		if _, err := s.o.f.WriteAt(b[:], start+int64(crcAt)); err != nil {
			return 0, err
		}
	}
	s.o.pos += s.n
	return s.n, nil
}

// abort drops what the sink received: a spilled batch is cut off the file.
func (s *batchSink) abort() error {
	if !s.spilled {
		return nil
	}
	if err := s.o.w.Flush(); err != nil {
		return err
	}
	if err := s.o.f.Truncate(s.o.pos); err != nil {
		return err
	}
	_, err := s.o.f.Seek(s.o.pos, io.SeekStart)
	return err
}

// checksumAt reads n bytes of f at pos back through buf and checksums them.
func checksumAt(f *os.File, pos, n int64, update func(uint32, []byte) uint32, buf []byte) (uint32, error) {
	if cap(buf) < 64<<10 {
		buf = make([]byte, 64<<10)
	}
	buf = buf[:cap(buf)]
	var crc uint32
	for n > 0 {
		k, err := f.ReadAt(buf[:min(n, int64(len(buf)))], pos)
		crc = update(crc, buf[:k])
		pos, n = pos+int64(k), n-int64(k)
		if err != nil && n > 0 {
			return 0, err
		}
	}
	return crc, nil
}

// errCount is a batch whose records are not its record count.
var errCount = errors.New("record count changed")

// v2 re-encodes a v2 batch whose records the reader has been reset to:
// its header as it is, the redacted records through its codec, then the
// batch length, record count and CRC (the stored one when it was wrong,
// so the damage shows). It returns the size written, or errUndecodable
// with nothing written when a record fails.
func (r *redactor) v2(o *segOut, b *format.Batch, valid bool) (int64, error) {
	r.sink.begin(o, r.out, b.Raw[:format.BatchHeaderSize])
	w, err := r.comp.Writer(b.Compression(), b.Magic, &r.sink)
	if err != nil {
		return 0, r.undo(err)
	}
	var n int32
	for {
		rec, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Close()
			return 0, r.undo(err)
		}
		r.enc = format.AppendRecordV2(r.enc[:0], rec)
		if _, err := w.Write(r.enc); err != nil {
			return 0, r.undo(err)
		}
		n++
	}
	if err := w.Close(); err != nil {
		return 0, r.undo(err)
	}
	if n != b.RecordCount {
		return 0, r.undo(errCount)
	}
	r.res.Records += int64(n)
	size, err := r.sink.finish(func(h []byte, size int64) {
		binary.BigEndian.PutUint32(h[8:], uint32(size-format.LogOverhead))
	}, 17, 21, format.UpdateC, !valid)
	r.out = r.sink.buf
	return size, err
}

// legacyWrapper re-encodes a compressed v0/v1 wrapper: its inner messages
// redacted and compressed as its value, as Compressor.AppendLegacy writes
// them (v1 inner offsets relative, v0 absolute; the wrapper's offset the
// last inner offset, its timestamp the largest inner one unless
// LogAppendTime), its CRC the stored one when it was wrong.
func (r *redactor) legacyWrapper(o *segOut, b *format.Batch, valid bool) (int64, error) {
	v1 := b.Magic == format.MagicV1
	headLen := format.LogOverhead + 4 + 2 + 4 + 4 // crc, magic+attrs, null key, value length
	if v1 {
		headLen += 8
	}
	var head [format.LogOverhead + 4 + 2 + 8 + 8]byte
	r.sink.begin(o, r.out, head[:headLen])
	codec := b.Compression()
	w, err := r.comp.Writer(codec, b.Magic, &r.sink)
	if err != nil {
		return 0, r.undo(err)
	}
	var i, last int64
	maxTS := format.NoTimestamp
	for {
		rec, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Close()
			return 0, r.undo(err)
		}
		off := rec.Offset
		if v1 {
			off = i
		}
		r.enc = format.AppendLegacyEntry(r.enc[:0], off, b.Magic, 0, rec.Timestamp, rec.Key, rec.Value)
		if _, err := w.Write(r.enc); err != nil {
			return 0, r.undo(err)
		}
		i, last, maxTS = i+1, rec.Offset, max(maxTS, rec.Timestamp)
	}
	if err := w.Close(); err != nil {
		return 0, r.undo(err)
	}
	if i == 0 {
		return 0, r.undo(errCount)
	}
	r.res.Records += i
	attrs := byte(codec)
	ts := maxTS
	if v1 && b.TimestampType() == format.LogAppendTime {
		attrs |= 0x08 // the timestamp-type bit
		ts = b.MaxTimestamp
	}
	size, err := r.sink.finish(func(h []byte, size int64) {
		binary.BigEndian.PutUint64(h[0:], uint64(last))
		binary.BigEndian.PutUint32(h[8:], uint32(size-format.LogOverhead))
		if !valid {
			copy(h[12:16], b.Raw[12:16]) // keep the wrong CRC
		}
		h[16], h[17] = byte(b.Magic), attrs
		p := 18
		if v1 {
			binary.BigEndian.PutUint64(h[p:], uint64(ts))
			p += 8
		}
		binary.BigEndian.PutUint32(h[p:], 0xffffffff) // null key
		binary.BigEndian.PutUint32(h[p+4:], uint32(size-int64(headLen)))
	}, 12, 16, format.UpdateIEEE, !valid)
	r.out = r.sink.buf
	return size, err
}

// errUndecodable wraps what made a batch undecodable: the caller writes it
// as undecodable instead.
type errUndecodable struct{ err error }

func (e errUndecodable) Error() string { return e.err.Error() }

// undo drops the sink's batch and returns err as errUndecodable, or the
// drop's own error.
func (r *redactor) undo(err error) error {
	r.out = r.sink.buf
	if aerr := r.sink.abort(); aerr != nil {
		return aerr
	}
	return errUndecodable{err}
}

// next reads the next record and redacts it in place (its bytes in the
// arena, reset per record).
func (r *redactor) next() (*format.Record, error) {
	r.arena = r.arena[:0]
	rec := &r.rec
	if err := r.rr.Next(rec); err != nil {
		return nil, err
	}
	rec.Key = r.replace(rec.Key)
	rec.Value = r.replace(rec.Value)
	if len(rec.Headers) > 0 {
		hs := r.hdrs[:0]
		for _, h := range rec.Headers {
			nh := format.Header{Value: r.replace(h.Value)}
			if r.opts.RedactHeaderKeys {
				nh.Key = r.replace(h.Key)
				if nh.Key == nil {
					nh.Key = []byte{}
				}
			} else {
				start := len(r.arena)
				r.arena = append(r.arena, h.Key...)
				nh.Key = r.arena[start:len(r.arena):len(r.arena)]
			}
			hs = append(hs, nh)
		}
		r.hdrs, rec.Headers = hs, hs
	}
	return rec, nil
}
