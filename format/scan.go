package format

import (
	"encoding/binary"
	"errors"
	"io"
	"strconv"
)

// DefaultMaxBatchBytes bounds the buffer a Scanner grows to hold one entry.
// Kafka's own limit for a batch is message.max.bytes (1 MiB by default,
// at most 2 GiB); 256 MiB is far above anything a broker accepts by default
// while keeping memory bounded on hostile input.
const DefaultMaxBatchBytes = 256 << 20

// ScanOptions configures a Scanner.
type ScanOptions struct {
	// MaxBatchBytes caps the size of one entry; a larger one is reported as
	// ErrTooLarge instead of being read. 0 means DefaultMaxBatchBytes.
	MaxBatchBytes int
	// HeadersOnly reads just each entry's header (the 61-byte v2 header, or
	// the v0/v1 message header) with one small read per entry: Batch.Raw
	// then holds only those bytes, so Valid, ComputedCRC and records are
	// not available. For callers that need offsets, attributes and
	// producer fields of every batch without reading the data.
	HeadersOnly bool
	// ReadAhead is how many bytes one read fetches, so that small batches
	// are served from memory instead of two reads each: 0 means
	// DefaultReadAhead, a negative value reads exactly what each entry
	// needs (for callers that must read as little as possible).
	ReadAhead int
}

// DefaultReadAhead is the scanner's read window.
const DefaultReadAhead = 128 << 10

// TailKind classifies the bytes after the last complete entry.
type TailKind int

// Kinds of tail, in the order Kafka's reader (FileLogInputStream.nextBatch)
// decides them.
const (
	// TailNone: the data ends exactly at an entry boundary.
	TailNone TailKind = iota
	// TailShort: 17 bytes or fewer remain, too few for Kafka to read an
	// entry header; iteration stops quietly.
	TailShort
	// TailPartial: an entry header promises more bytes than remain (a
	// partial write, or a fetch response cut at max bytes).
	TailPartial
	// TailZeros: the rest of the data is zero bytes (a preallocated
	// segment, log.preallocate=true, or an unclean shutdown).
	TailZeros
	// TailCorrupt: an entry header is impossible (size smaller than the
	// minimum, or over MaxBatchBytes); Kafka throws CorruptRecordException.
	TailCorrupt
)

func (k TailKind) String() string {
	switch k {
	case TailNone:
		return "none"
	case TailShort:
		return "short"
	case TailPartial:
		return "partial"
	case TailZeros:
		return "zeros"
	}
	return "corrupt"
}

// Tail describes where the valid data ends.
type Tail struct {
	Kind TailKind
	// Pos is where the valid entries end (the position of the first byte
	// that is not part of a complete entry).
	Pos int64
	// Bytes is how many bytes follow Pos.
	Bytes int64
	// Offset is the offset field of the incomplete or corrupt entry, or -1.
	Offset int64
	// Want is, for TailPartial, the full size the cut entry declares.
	Want int64
}

// Scanner streams the entries of a segment from an io.ReaderAt, in bounded
// memory: it reads each entry into one buffer that it reuses and grows only
// up to MaxBatchBytes. It is not safe for concurrent use; scan one ReaderAt
// from several goroutines with one Scanner each.
type Scanner struct {
	r     io.ReaderAt
	size  int64
	pos   int64
	max   int
	buf   []byte
	batch Batch
	tail  Tail
	err   error
	done  bool
	// win holds the bytes [winPos, winPos+len(win)) of the input.
	win    []byte
	winBuf []byte
	winPos int64
	// own is set when win lies in winBuf (not the caller's UseWindow
	// data nor a Viewer's memory), so that its tail may be moved.
	own bool
	// viewer is r when it holds the input in memory.
	viewer Viewer

	headersOnly bool
	// seen is the largest last offset of the batches read so far.
	seen int64
}

// Viewer is a ReaderAt holding the input in memory in pieces (a reader
// that reads ahead): View returns its bytes from pos to the end of the
// piece holding pos, without copying, when that is at least n bytes, else
// nil. A Scanner over a Viewer reads through View, and through ReadAt only
// an entry that spans two pieces. The bytes stay valid until a View or
// ReadAt past their piece: the Scanner asks for one only once the entries
// before it are done (a Batch is valid until the next Next).
type Viewer interface {
	io.ReaderAt
	View(pos int64, n int) []byte
}

// NewScanner returns a Scanner over the first size bytes of r.
func NewScanner(r io.ReaderAt, size int64, opts ScanOptions) *Scanner {
	s := &Scanner{r: r, size: size, max: opts.MaxBatchBytes, headersOnly: opts.HeadersOnly}
	s.viewer, _ = r.(Viewer)
	if s.max <= 0 {
		s.max = DefaultMaxBatchBytes
	}
	switch {
	case opts.HeadersOnly:
		// A window of one v2 header: the 17 bytes up to the magic and
		// the rest of the header come from one read, into a buffer
		// this small (klog serve translates an offset per fetch).
		s.winBuf = make([]byte, BatchHeaderSize)
	case opts.ReadAhead == 0:
		s.winBuf = make([]byte, DefaultReadAhead)
	case opts.ReadAhead > 0:
		s.winBuf = make([]byte, opts.ReadAhead)
	}
	return s
}

// Reset starts the scanner again over another input, keeping its buffer.
func (s *Scanner) Reset(r io.ReaderAt, size int64) {
	s.r, s.size, s.pos, s.err, s.done = r, size, 0, nil, false
	s.viewer, _ = r.(Viewer)
	s.tail = Tail{}
	s.seen = 0
	s.win = nil
}

// SetPos moves the scanner to byte position pos, which must be an entry
// boundary (an index entry's position, say).
func (s *Scanner) SetPos(pos int64) {
	s.pos, s.err, s.done = pos, nil, false
	s.tail = Tail{}
}

// UseWindow serves reads of the input bytes [pos, pos+len(data)) from data
// itself, without copying: data is that part of the input already in
// memory (a memory-mapped stretch of the file, say). Reads outside it go to
// the ReaderAt as before, and the next such read replaces the window. The
// caller keeps data valid until it calls UseWindow again (nil drops it);
// a Batch returned meanwhile may point into it.
func (s *Scanner) UseWindow(data []byte, pos int64) {
	s.win, s.winPos, s.own = data, pos, false
}

// Pos is the position of the next entry: after the scan ended, where the
// valid data ends.
func (s *Scanner) Pos() int64 { return s.pos }

// Next returns the next entry. At the end of the valid data it returns
// io.EOF; Tail then describes what follows. An impossible entry header
// returns a *PosError (ErrCorrupt or ErrTooLarge) and ends the scan, as it
// ends Kafka's iteration. A read error from r is returned as is.
func (s *Scanner) Next() (*Batch, error) {
	b, err := s.next()
	if err == nil {
		if lo := b.LastOffset(); lo > s.seen {
			s.seen = lo
		}
		return b, nil
	}
	// An entry whose header is rejected has an offset field as untrusted
	// as the rest: junk read as a header holds any number there. Report
	// -1 unless it is an offset this log could hold (Kafka keeps a
	// segment's offsets within an int32 of its base).
	var pe *PosError
	if errors.As(err, &pe) && !s.plausible(pe.Offset) {
		pe.Offset = -1
	}
	if !s.plausible(s.tail.Offset) {
		s.tail.Offset = -1
	}
	return nil, err
}

func (s *Scanner) plausible(offset int64) bool {
	return offset >= 0 && offset-s.seen <= 1<<31-1
}

func (s *Scanner) next() (*Batch, error) {
	if s.done {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	remain := s.size - s.pos
	// Kafka stops quietly when 17 bytes or fewer remain.
	if remain <= HeaderSizeUpToMagic {
		kind := TailShort
		if remain == 0 {
			kind = TailNone
		}
		return s.finish(Tail{Kind: kind, Pos: s.pos, Bytes: remain, Offset: -1}, nil)
	}
	hdr, err := s.view(s.pos, HeaderSizeUpToMagic)
	if err != nil && !errors.Is(err, io.EOF) {
		return s.finish(Tail{}, err)
	}
	if len(hdr) < HeaderSizeUpToMagic {
		// The input shrank under us.
		return s.finish(Tail{Kind: TailShort, Pos: s.pos, Bytes: int64(len(hdr)), Offset: -1}, nil)
	}
	offset := int64(binary.BigEndian.Uint64(hdr[posOffset:]))
	size := int32(binary.BigEndian.Uint32(hdr[posSize:]))
	if size < RecordOverheadV0 {
		kind := TailCorrupt
		if offset == 0 && size == 0 && s.zerosFrom(s.pos) {
			kind = TailZeros
		}
		pe := &PosError{Kind: ErrCorrupt, Pos: s.pos, Offset: offset, Field: "size", Actual: size,
			Msg: "Found record size " + itoa(int64(size)) + " smaller than minimum record overhead (14)"}
		return s.finish(Tail{Kind: kind, Pos: s.pos, Bytes: remain, Offset: offset}, pe)
	}
	total := LogOverhead + int64(size)
	if total > remain {
		return s.finish(Tail{Kind: TailPartial, Pos: s.pos, Bytes: remain, Offset: offset, Want: total}, nil)
	}
	if total > int64(s.max) {
		pe := &PosError{Kind: ErrTooLarge, Pos: s.pos, Offset: offset, Field: "size",
			Expected: s.max, Actual: total, Msg: "entry larger than the batch size limit"}
		return s.finish(Tail{Kind: TailCorrupt, Pos: s.pos, Bytes: remain, Offset: offset}, pe)
	}
	if s.headersOnly {
		n := int64(BatchHeaderSize)
		if int8(hdr[posMagic]) < MagicV2 {
			n = posLegacyKeyV1
		}
		n = min(n, total)
		h, err := s.view(s.pos, int(n))
		if int64(len(h)) < n {
			if err == nil || errors.Is(err, io.EOF) {
				return s.finish(Tail{Kind: TailPartial, Pos: s.pos, Bytes: int64(len(h)), Offset: offset, Want: total}, nil)
			}
			return s.finish(Tail{}, err)
		}
		if err := s.batch.parseHeader(h, s.pos, size); err != nil {
			s.pos += total
			return nil, err
		}
		s.pos += total
		return &s.batch, nil
	}
	buf, err := s.view(s.pos, int(total))
	if int64(len(buf)) < total {
		if err == nil || errors.Is(err, io.EOF) {
			// The input shrank under us (a truncated file being read).
			return s.finish(Tail{Kind: TailPartial, Pos: s.pos, Bytes: int64(len(buf)), Offset: offset, Want: total}, nil)
		}
		return s.finish(Tail{}, err)
	}
	if err := s.batch.parse(buf, s.pos); err != nil {
		// Header fields the format rejects: report, then resynchronise on
		// the length field, which is intact.
		s.pos += total
		return nil, err
	}
	s.pos += total
	return &s.batch, nil
}

// view returns the n bytes at pos (fewer when the input ends first): from the
// read window when they are in it, else from the input's own memory when it
// is a Viewer, else by refilling the window from pos, else (an entry larger
// than the window) with one read into the batch buffer. The slice is valid
// until the next call.
func (s *Scanner) view(pos int64, n int) ([]byte, error) {
	if pos >= s.winPos && pos+int64(n) <= s.winPos+int64(len(s.win)) {
		at := pos - s.winPos
		return s.win[at : at+int64(n) : at+int64(n)], nil
	}
	if s.viewer != nil {
		if w := s.viewer.View(pos, n); len(w) >= n {
			s.win, s.winPos, s.own = w, pos, false
			return w[:n:n], nil
		}
		// Across two of the viewer's pieces: this entry alone is
		// copied, and the next comes from the viewer again.
		s.win = nil
		if cap(s.buf) < n {
			s.buf = make([]byte, n, growCap(cap(s.buf), n, s.max))
		}
		buf := s.buf[:n]
		m, err := s.r.ReadAt(buf, pos)
		if m == n {
			err = nil
		} else if err == nil {
			err = io.EOF
		}
		return buf[:m:m], err
	}
	if n <= len(s.winBuf) {
		if w, ok, err := s.refill(pos, n); ok {
			return w, err
		}
		want := int64(len(s.winBuf))
		if s.size-pos < want {
			want = s.size - pos
		}
		m, err := s.r.ReadAt(s.winBuf[:want], pos)
		s.win, s.winPos, s.own = s.winBuf[:m], pos, true
		if m >= n {
			return s.win[:n:n], nil
		}
		if err == nil {
			err = io.EOF
		}
		return s.win[:m:m], err
	}
	if cap(s.buf) < n {
		s.buf = make([]byte, n, growCap(cap(s.buf), n, s.max))
	}
	buf := s.buf[:n]
	m, err := s.r.ReadAt(buf, pos)
	if m == n {
		err = nil
	}
	return buf[:m:m], err
}

// refill serves view(pos, n) when pos is inside the window but the entry
// there runs past its end (the usual case: the entry the last read cut in
// two). The bytes already read move to the front of winBuf and the read
// goes on from the window's end instead of reading them again from pos;
// they are placed so that the read lands on a page boundary of the buffer
// as it starts at one of the file (the window's end is one after a whole
// read), which is how the kernel copies fastest. ok is false when the move
// does not apply, and view reads from pos as before.
func (s *Scanner) refill(pos int64, n int) (w []byte, ok bool, err error) {
	end := s.winPos + int64(len(s.win))
	if !s.own || pos < s.winPos || pos >= end {
		return nil, false, nil
	}
	k := int(end - pos)
	at := 0
	if len(s.winBuf)%pageBytes == 0 {
		at = (k+pageBytes-1)/pageBytes*pageBytes - k
	}
	if at+n > len(s.winBuf) {
		return nil, false, nil
	}
	copy(s.winBuf[at:], s.win[pos-s.winPos:])
	want := int64(len(s.winBuf) - at - k)
	want = max(min(want, s.size-end), 0)
	m, err := s.r.ReadAt(s.winBuf[at+k:at+k+int(want)], end)
	s.win, s.winPos = s.winBuf[at:at+k+m], pos
	if k+m >= n {
		return s.win[:n:n], true, nil
	}
	if err == nil {
		err = io.EOF
	}
	return s.win[: k+m : k+m], true, err
}

// pageBytes is the page size refill aligns its reads to.
const pageBytes = 4096

func (s *Scanner) finish(t Tail, err error) (*Batch, error) {
	s.done, s.tail, s.err = true, t, err
	if err != nil {
		return nil, err
	}
	return nil, io.EOF
}

// Done reports whether the scan has ended (Next will return io.EOF or the
// error that ended it again).
func (s *Scanner) Done() bool { return s.done }

// Tail describes the bytes after the last complete entry once Next has
// returned io.EOF or an error.
func (s *Scanner) Tail() Tail { return s.tail }

// zerosFrom reports whether every byte from pos to the end is zero, reading
// in bounded chunks.
func (s *Scanner) zerosFrom(pos int64) bool {
	var chunk [4096]byte
	for pos < s.size {
		n := int64(len(chunk))
		if s.size-pos < n {
			n = s.size - pos
		}
		m, err := s.r.ReadAt(chunk[:n], pos)
		if m == 0 && err != nil {
			return false
		}
		for _, c := range chunk[:m] {
			if c != 0 {
				return false
			}
		}
		pos += int64(m)
	}
	return true
}

func growCap(have, need, max int) int {
	c := have * 2
	if c < need {
		c = need
	}
	if c < 64<<10 {
		c = 64 << 10
	}
	if c > max {
		c = max
	}
	if c < need {
		c = need
	}
	return c
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// EntrySize returns the size of the whole entry at the start of b (its
// log overhead plus size field), or 0 when b does not hold a whole entry or
// the size field is impossible: the test for "complete batch" in a fetch
// response frame, which may end inside a batch.
func EntrySize(b []byte) int {
	if len(b) < LogOverhead {
		return 0
	}
	n := int64(LogOverhead) + int64(int32(binary.BigEndian.Uint32(b[posSize:])))
	if n < LogOverhead+RecordOverheadV0 || n > int64(len(b)) {
		return 0
	}
	return int(n)
}

// EndOfData reports whether an error from Scanner.Next ends the data: io.EOF,
// or a *PosError (the bytes there are not a whole valid entry). Anything
// else is reading failing, which is never the end of a log: a caller must
// not take it for one (and a writer must never truncate on it).
func EndOfData(err error) bool {
	var pe *PosError
	return err == io.EOF || errors.As(err, &pe)
}
