package objstore

import (
	"context"
	"errors"
	"io"
	"sort"
	"strconv"
	"sync"
)

// Blocks describes an object (or what decoding one gives) as consecutive
// blocks that are fetched one request each.
type Blocks interface {
	// Len is the number of blocks.
	Len() int
	// Range is block i's position and length in the bytes the reader
	// serves.
	Range(i int) (pos int64, n int)
	// Fetch fills dst (of block i's length) with block i.
	Fetch(ctx context.Context, i int, dst []byte) error
}

// DefaultBlockSize is the size of one block of a SeqReader over a plain
// object (one ranged read, or one step of a stream); DefaultDepth is how
// many blocks it reads ahead of the reader (in a stream, the buffers the
// body flows into while the reader works).
const (
	DefaultBlockSize = 1 << 20
	DefaultDepth     = 8
)

// SeqReader is an io.ReaderAt over Blocks that reads ahead: while the
// caller reads block i, the next Depth-1 blocks are fetched. Over a
// Streamer they come from one request that flows into Depth buffers (the
// way a download runs, and as fast); over other Blocks, from Depth
// concurrent ranged reads. A plain object's stream (ObjectBlocks) is read
// in the caller's goroutine instead, one block at a time: its blocks cost
// nothing but the copy out of the socket, the kernel's socket buffer reads
// ahead while the caller works, and a goroutine of its own would only
// drain that buffer in small reads as the bytes arrive (a third more CPU
// time per byte through versitygw). A jump forward starts again from
// there; a read behind fetches its block on its own (one block is kept
// for that). Memory is Depth+1 blocks (a plain object's stream: 2),
// whatever the object's size.
//
// It is a format.Viewer: View lends the block it holds, so that a scanner
// checks the batches inside one block where they are.
type SeqReader struct {
	ctx    context.Context
	cancel context.CancelFunc
	b      Blocks
	size   int64
	depth  int

	mu     sync.Mutex
	base   int
	window []*slot
	free   [][]byte
	back   *slot
	closed bool

	// Stream mode (b is a Streamer): one producer reads blocks in order
	// into depth buffers; cur is the block being read.
	streamer Streamer
	sq       *streamQueue
	cur      *slot

	// Inline stream mode (a plain object's Streamer): bs is read in the
	// caller's goroutine, next is its next block.
	inline bool
	bs     BlockStream
	next   int
}

// streamQueue is one producer's blocks, in order from next.
type streamQueue struct {
	next   int
	ch     chan *slot
	free   chan []byte
	cancel context.CancelFunc
	done   chan struct{}
}

// Streamer is Blocks that can also be read in order through one request
// (one GET of the rest of the object), the fast way to read a whole object
// sequentially: the body flows while the caller works, as a plain download
// does.
type Streamer interface {
	Blocks
	// Stream returns the blocks from i on, in order.
	Stream(ctx context.Context, i int) (BlockStream, error)
}

// BlockStream yields consecutive blocks.
type BlockStream interface {
	// Next fills dst (of the next block's length) with the next block.
	Next(dst []byte) error
	Close() error
}

type slot struct {
	i      int
	buf    []byte
	done   chan struct{}
	err    error
	cancel context.CancelFunc
}

// NewSeqReader reads b, whose blocks add up to size bytes, keeping depth
// blocks in flight (0: DefaultDepth). Close stops the fetches.
func NewSeqReader(ctx context.Context, b Blocks, size int64, depth int) *SeqReader {
	if depth <= 0 {
		depth = DefaultDepth
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &SeqReader{ctx: ctx, cancel: cancel, b: b, size: size, depth: depth, base: -1}
	r.streamer, _ = b.(Streamer)
	_, r.inline = b.(*ObjectBlocks)
	return r
}

// Size is the number of bytes the reader serves.
func (r *SeqReader) Size() int64 { return r.size }

// ReadAt implements io.ReaderAt.
func (r *SeqReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("objstore: negative offset")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, errors.New("objstore: read after Close")
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= r.size {
			return n, io.EOF
		}
		i := r.blockAt(at)
		s, err := r.slotFor(i)
		if err != nil {
			return n, err
		}
		pos, _ := r.b.Range(i)
		n += copy(p[n:], s.buf[at-pos:])
	}
	return n, nil
}

// View implements format.Viewer: the bytes of the block holding pos, from
// pos to the block's end, when they are at least n; nil when they are
// fewer (the range spans two blocks), the input ends or the block cannot
// be read (ReadAt then reports why). They stay valid until a View or
// ReadAt of another block.
func (r *SeqReader) View(pos int64, n int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || pos < 0 || pos >= r.size {
		return nil
	}
	i := r.blockAt(pos)
	s, err := r.slotFor(i)
	if err != nil {
		return nil
	}
	bp, _ := r.b.Range(i)
	if d := s.buf[pos-bp:]; len(d) >= n {
		return d
	}
	return nil
}

// blockAt is the block holding byte at (< size).
func (r *SeqReader) blockAt(at int64) int {
	n := r.b.Len()
	return sort.Search(n, func(i int) bool {
		pos, l := r.b.Range(i)
		return pos+int64(l) > at
	})
}

// slotFor returns block i fetched, moving the window forward when i is at
// or past its start.
func (r *SeqReader) slotFor(i int) (*slot, error) {
	if r.streamer != nil {
		return r.streamSlot(i)
	}
	if r.base >= 0 && i >= r.base && i < r.base+len(r.window) {
		s := r.window[i-r.base]
		if i > r.base {
			r.advance(i)
		}
		return r.wait(s)
	}
	if r.base < 0 || i > r.base {
		r.advance(i)
		return r.wait(r.window[0])
	}
	return r.behind(i) // behind the window
}

// advance makes i the window's first block and fills the window.
func (r *SeqReader) advance(i int) {
	keep := r.window[:0]
	for _, s := range r.window {
		if s.i < i || s.i >= i+r.depth {
			r.stop(s)
			r.free = append(r.free, s.buf)
			continue
		}
		keep = append(keep, s)
	}
	r.window, r.base = keep, i
	next := i + len(r.window)
	for len(r.window) < r.depth && next < r.b.Len() {
		var buf []byte
		if k := len(r.free); k > 0 {
			buf, r.free = r.free[k-1], r.free[:k-1]
		}
		r.window = append(r.window, r.start(next, buf))
		next++
	}
}

func (r *SeqReader) start(i int, buf []byte) *slot {
	_, n := r.b.Range(i)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	s := &slot{i: i, buf: buf[:n], done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		s.err = r.b.Fetch(ctx, i, s.buf)
	}()
	return s
}

// stop cancels a fetch and waits for it, so that its buffer can be reused.
func (r *SeqReader) stop(s *slot) {
	s.cancel()
	<-s.done
}

func (r *SeqReader) wait(s *slot) (*slot, error) {
	select {
	case <-s.done:
	case <-r.ctx.Done():
		<-s.done
	}
	if s.err != nil {
		return nil, s.err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// streamSlot is slotFor in stream mode: the current block, the producer's
// next one, a new stream for a jump ahead, or one fetch for a read behind.
func (r *SeqReader) streamSlot(i int) (*slot, error) {
	if r.cur != nil && r.cur.i == i {
		return r.cur, r.cur.err
	}
	if r.cur != nil && i < r.cur.i {
		return r.behind(i)
	}
	if r.inline {
		return r.inlineSlot(i)
	}
	if r.sq == nil || i != r.sq.next {
		r.stopStream()
		r.startStream(i)
	}
	var s *slot
	select {
	case s = <-r.sq.ch:
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	}
	if r.cur != nil {
		r.sq.free <- r.cur.buf
	}
	r.cur = s
	r.sq.next = i + 1
	if s.err != nil {
		r.stopStream()
		r.cur = nil
		return nil, s.err
	}
	return s, nil
}

// inlineSlot reads block i from the stream in the caller's goroutine,
// into the buffer of the block before it. A failed block stays the
// current one with its error, so that reading it again (a View, then a
// ReadAt) reports the error rather than asking again.
func (r *SeqReader) inlineSlot(i int) (*slot, error) {
	if r.bs == nil || i != r.next {
		r.closeInline()
		bs, err := r.streamer.Stream(r.ctx, i)
		if err != nil {
			r.cur = &slot{i: i, err: err}
			return nil, err
		}
		r.bs, r.next = bs, i
	}
	s := r.cur
	if s == nil {
		s = &slot{}
	}
	_, n := r.b.Range(i)
	if cap(s.buf) < n {
		s.buf = getBlock(n)
	}
	s.i, s.buf, s.err = i, s.buf[:n], nil
	r.cur = s
	if err := r.bs.Next(s.buf); err != nil {
		r.closeInline()
		s.err = err
		return nil, err
	}
	r.next = i + 1
	return s, nil
}

func (r *SeqReader) closeInline() {
	if r.bs != nil {
		r.bs.Close()
		r.bs = nil
	}
}

// behind fetches one block before the current one on its own.
func (r *SeqReader) behind(i int) (*slot, error) {
	if r.back != nil && r.back.i == i {
		return r.wait(r.back)
	}
	var buf []byte
	if r.back != nil {
		r.stop(r.back)
		buf = r.back.buf
	}
	r.back = r.start(i, buf)
	return r.wait(r.back)
}

func (r *SeqReader) startStream(i int) {
	ctx, cancel := context.WithCancel(r.ctx)
	q := &streamQueue{next: i, ch: make(chan *slot, r.depth), free: make(chan []byte, r.depth+1), cancel: cancel, done: make(chan struct{})}
	for range r.depth {
		q.free <- nil
	}
	r.sq = q
	go func() {
		defer close(q.done)
		bs, err := r.streamer.Stream(ctx, i)
		if err != nil {
			q.ch <- &slot{i: i, err: err}
			return
		}
		defer bs.Close()
		for j := i; j < r.b.Len(); j++ {
			var buf []byte
			select {
			case buf = <-q.free:
			case <-ctx.Done():
				return
			}
			_, n := r.b.Range(j)
			if cap(buf) < n {
				buf = make([]byte, n)
			}
			s := &slot{i: j, buf: buf[:n]}
			s.err = bs.Next(s.buf)
			select {
			case q.ch <- s:
			case <-ctx.Done():
				return
			}
			if s.err != nil {
				return
			}
		}
	}()
}

func (r *SeqReader) stopStream() {
	if r.sq == nil {
		return
	}
	r.sq.cancel()
	<-r.sq.done
	r.sq = nil
}

// Close stops the fetches in flight and releases the blocks.
func (r *SeqReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.cancel()
	r.stopStream()
	r.closeInline()
	for _, s := range r.window {
		<-s.done
	}
	if r.back != nil {
		<-r.back.done
	}
	if r.inline && r.cur != nil {
		putBlock(r.cur.buf)
	}
	r.window, r.free, r.back, r.cur = nil, nil, nil, nil
	return nil
}

// blocks keeps the block buffers of closed inline readers: a verify opens
// one reader a segment, and a block of garbage a segment is work for the
// collector.
var blocks sync.Pool

func getBlock(n int) []byte {
	if p, _ := blocks.Get().(*[]byte); p != nil && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}

func putBlock(b []byte) {
	if cap(b) > 0 {
		blocks.Put(&b)
	}
}

// ObjectBlocks reads one object in fixed-size ranged reads.
type ObjectBlocks struct {
	Store     Store
	Key       string
	Size      int64
	BlockSize int
}

// NewObjectReader is a SeqReader over the object key of size bytes, in
// DefaultBlockSize reads.
func NewObjectReader(ctx context.Context, st Store, key string, size int64) *SeqReader {
	return NewSeqReader(ctx, &ObjectBlocks{Store: st, Key: key, Size: size, BlockSize: DefaultBlockSize}, size, 0)
}

// Len implements Blocks.
func (o *ObjectBlocks) Len() int {
	return int((o.Size + int64(o.BlockSize) - 1) / int64(o.BlockSize))
}

// Range implements Blocks.
func (o *ObjectBlocks) Range(i int) (int64, int) {
	pos := int64(i) * int64(o.BlockSize)
	return pos, int(min(int64(o.BlockSize), o.Size-pos))
}

// Fetch implements Blocks: one ranged read; an object shorter than it was
// listed is an error (it changed while being read).
func (o *ObjectBlocks) Fetch(ctx context.Context, i int, dst []byte) error {
	pos, _ := o.Range(i)
	n, err := o.Store.ReadAt(ctx, o.Key, dst, pos)
	if n == len(dst) {
		return nil
	}
	if err == nil || err == io.EOF {
		return &ShortError{Location: o.Store.Location(o.Key), Want: o.Size, Got: pos + int64(n)}
	}
	return err
}

// Stream implements Streamer: one request for the rest of the object.
func (o *ObjectBlocks) Stream(ctx context.Context, i int) (BlockStream, error) {
	pos, _ := o.Range(i)
	rc, err := o.Store.Stream(ctx, o.Key, pos)
	if err != nil {
		return nil, err
	}
	return &objectStream{o: o, rc: rc, pos: pos}, nil
}

type objectStream struct {
	o   *ObjectBlocks
	rc  io.ReadCloser
	pos int64
}

func (s *objectStream) Next(dst []byte) error {
	n, err := io.ReadFull(s.rc, dst)
	s.pos += int64(n)
	if n == len(dst) {
		return nil
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &ShortError{Location: s.o.Store.Location(s.o.Key), Want: s.o.Size, Got: s.pos}
	}
	return err
}

func (s *objectStream) Close() error { return s.rc.Close() }

// ShortError is an object that ended before the size it was listed with.
type ShortError struct {
	Location  string
	Want, Got int64
}

func (e *ShortError) Error() string {
	return e.Location + ": the object ends at byte " + strconv.FormatInt(e.Got, 10) + ", before its listed size " + strconv.FormatInt(e.Want, 10) + " (it changed while being read)"
}
