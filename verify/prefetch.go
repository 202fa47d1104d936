package verify

import (
	"io"
)

// prefetcher reads a file ahead of a sequential scanner in a second
// goroutine, so reading (the copy out of the page cache) overlaps checking.
// It is a format.Viewer: the scanner checks the batches in the prefetched
// chunks where they are, and copies only a batch that spans two chunks
// (ReadAt serves from the chunks, and falls back to the file for a range
// it no longer holds); so prefetching costs no more work than reading in
// the scanner, and --jobs above 1 is not slower on one file than --jobs 1
// when there is no spare core to overlap with. It is used only when a
// worker would otherwise be idle (one segment, several jobs).
type prefetcher struct {
	r    io.ReaderAt
	size int64
	full chan *chunk
	free chan *chunk
	stop chan struct{}
	done chan struct{}
	cur  *chunk
}

type chunk struct {
	pos  int64
	data []byte
}

const (
	prefetchChunk = 1 << 20
	prefetchDepth = 4
)

func newPrefetcher(r io.ReaderAt, size int64) *prefetcher {
	p := &prefetcher{r: r, size: size, full: make(chan *chunk, prefetchDepth), free: make(chan *chunk, prefetchDepth),
		stop: make(chan struct{}), done: make(chan struct{})}
	for i := 0; i < prefetchDepth; i++ {
		p.free <- &chunk{data: make([]byte, prefetchChunk)}
	}
	go p.run()
	return p
}

func (p *prefetcher) run() {
	defer close(p.done)
	defer close(p.full)
	for pos := int64(0); pos < p.size; {
		var c *chunk
		select {
		case c = <-p.free:
		case <-p.stop:
			return
		}
		n := int64(len(c.data[:cap(c.data)]))
		if p.size-pos < n {
			n = p.size - pos
		}
		m, err := p.r.ReadAt(c.data[:n], pos)
		c.pos, c.data = pos, c.data[:m]
		select {
		case p.full <- c:
		case <-p.stop:
			return
		}
		if m == 0 || (err != nil && err != io.EOF) {
			return
		}
		pos += int64(m)
	}
}

// View returns the prefetched bytes from off to the end of their chunk when
// they are at least n, without copying; nil when they are fewer (the range
// spans two chunks, or the file ends) or no longer held. Moving to a later
// chunk hands the earlier back to the reading goroutine.
func (p *prefetcher) View(off int64, n int) []byte {
	if !p.advance(off) || off < p.cur.pos {
		return nil
	}
	if d := p.cur.data[off-p.cur.pos:]; len(d) >= n {
		return d
	}
	return nil
}

// advance makes the chunk holding off (or the first after it) the current
// one, false when the prefetched chunks ended before off.
func (p *prefetcher) advance(off int64) bool {
	for p.cur == nil || off >= p.cur.pos+int64(len(p.cur.data)) {
		if p.cur != nil {
			p.free <- &chunk{data: p.cur.data[:cap(p.cur.data)]}
			p.cur = nil
		}
		c, ok := <-p.full
		if !ok {
			return false
		}
		p.cur = c
	}
	return true
}

// ReadAt serves [off, off+len(b)) from the chunks, advancing through them
// in order; anything before the current chunk is read from the file.
func (p *prefetcher) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		at := off + int64(n)
		if !p.advance(at) {
			m, err := p.r.ReadAt(b[n:], at)
			return n + m, err
		}
		if at < p.cur.pos {
			m, err := p.r.ReadAt(b[n:], at)
			return n + m, err
		}
		n += copy(b[n:], p.cur.data[at-p.cur.pos:])
	}
	return n, nil
}

func (p *prefetcher) close() {
	close(p.stop)
	<-p.done
}
