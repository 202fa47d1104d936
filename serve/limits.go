package serve

// What one client may make the server hold: connections per address,
// bytes of requests in flight, decompressed bytes in flight, file
// descriptors for topics; and the accept loop's back-off, so that running
// out of descriptors slows the server down instead of ending it.

import (
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/klog-dev/klog/format"
)

// Defaults of the limits.
const (
	// DefaultMaxConnectionsPerIP is max.connections.per.ip (a broker has
	// no limit by default; here one address may not take every slot of
	// DefaultMaxConnections).
	DefaultMaxConnectionsPerIP = 512
)

// fdsPerPartition is what a served writable partition keeps open: the
// active segment's .log, .index and .timeindex, the directory lock and
// its inotify watch, with room for a roll.
const fdsPerPartition = 8

// fdReserve is kept out of the topic half of the descriptors: the
// listener, the log dir watch, the state dir's partitions, files opened
// per fetch.
const fdReserve = 256

// errTopicBudget refuses an auto-created topic that would take the
// descriptors connections need (POLICY_VIOLATION in Metadata).
var errTopicBudget = errors.New("serve: no file descriptors left for another topic")

// limiter is the server's accounting of what clients hold.
type limiter struct {
	mu    sync.Mutex
	perIP map[string]int
	// fdLimit is RLIMIT_NOFILE's soft limit at New (0: unknown, no
	// budget).
	fdLimit int
	// sleep is the accept loop's back-off (tests record it).
	sleep func(time.Duration)
	// queued is the budget of request bytes in flight; inflate holds the
	// record readers that may decompress (decompressSlots of them).
	queued  *budget
	inflate chan *format.RecordReader
}

func (s *Server) initLimits() {
	if s.cfg.MaxConnectionsPerIP <= 0 {
		s.cfg.MaxConnectionsPerIP = DefaultMaxConnectionsPerIP
	}
	s.lim.perIP = map[string]int{}
	s.lim.fdLimit = fdLimit()
	s.lim.sleep = time.Sleep
}

// remoteIP is the address a connection counts against.
func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

// admitIP counts c against its address; false when the address already
// has MaxConnectionsPerIP (the connection is closed on accept, as a
// broker's Acceptor does).
func (s *Server) admitIP(c net.Conn) bool {
	ip := remoteIP(c)
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	if s.lim.perIP[ip] >= s.cfg.MaxConnectionsPerIP {
		return false
	}
	s.lim.perIP[ip]++
	return true
}

// releaseIP forgets an admitted connection.
func (s *Server) releaseIP(c net.Conn) {
	ip := remoteIP(c)
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	if s.lim.perIP[ip]--; s.lim.perIP[ip] <= 0 {
		delete(s.lim.perIP, ip)
	}
}

// acceptRetry reports whether an Accept error is one to wait out, and
// waits: the temporary errors net/http's Server.Serve retries (out of
// descriptors or buffers, a connection aborted before accept), from 5 ms
// doubling to 1 s.
func (s *Server) acceptRetry(err error, delay *time.Duration) bool {
	var ne net.Error
	temporary := errors.As(err, &ne) && ne.Timeout()
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN} {
		temporary = temporary || errors.Is(err, e)
	}
	if !temporary {
		return false
	}
	if *delay == 0 {
		*delay = 5 * time.Millisecond
	} else if *delay *= 2; *delay > time.Second {
		*delay = time.Second
	}
	s.lim.sleep(*delay)
	return true
}

// checkTopicBudget refuses another auto-created partition when the open
// partitions' descriptors would pass half the process's limit (the other
// half is the connections'). s.mu is held.
func (s *Server) checkTopicBudget() error {
	if s.lim.fdLimit <= 0 {
		return nil
	}
	parts := 1
	for _, t := range s.topics {
		parts += len(t.parts)
	}
	if parts*fdsPerPartition+fdReserve > s.lim.fdLimit/2 {
		return errTopicBudget
	}
	return nil
}

// touchReader is the connection's reader: every byte received moves the
// idle deadline (connections.max.idle.ms counts from the last byte, not
// from the start of a request).
type touchReader struct{ cn *conn }

func (r touchReader) Read(p []byte) (int, error) {
	n, err := r.cn.c.Read(p)
	if n > 0 {
		r.cn.touch()
	}
	return n, err
}

// touch moves the idle deadline to IdleTimeout from now, unless the
// server is shutting down (Shutdown's deadline stays: it sets closing
// before it sets the deadlines, and done is closed with it).
func (cn *conn) touch() {
	cn.c.SetReadDeadline(time.Now().Add(cn.s.cfg.IdleTimeout))
	select {
	case <-cn.s.done:
		cn.c.SetReadDeadline(time.Now())
	default:
	}
}

// Memory bounds. The bytes of requests in flight across all connections
// are queued.max.request.bytes's: a frame's size is taken from the budget
// when its size field arrives and given back when its answer is written
// (a broker's MemoryPool), and a connection waits for room before it reads
// the body. A request other than Produce is charged decodeFactor times its
// size, the most kmsg's decoded form of a request takes (measured: an
// array of empty topic names in Metadata v0-v9 is 24 times its frame);
// Produce's record bytes stay in the frame.
const (
	// DefaultMaxQueuedRequestBytes is the default of
	// queued.max.request.bytes here (a broker's is 500 MB), raised to
	// MaxRequestBytes plus smallReserve when that is larger.
	DefaultMaxQueuedRequestBytes = 128 << 20
	// DefaultMaxDecompressedBytes bounds what one batch of a Produce may
	// decompress to (MESSAGE_TOO_LARGE beyond); decompressSlots batches
	// decompress at a time.
	DefaultMaxDecompressedBytes = 32 << 20
	decompressSlots             = 2
	decodeFactor                = 32
	// smallRequest and smallReserve: requests of at most smallRequest
	// bytes (charged) may use the last smallReserve bytes of the budget,
	// so that big frames stalled by their senders never keep a consumer's
	// fetch out.
	smallRequest = 1 << 20
	smallReserve = 16 << 20
)

// collectAfter is the frame size after which the garbage is collected
// when its request is done: the heap may grow to twice what was live at
// the last collection before it collects again, so without one three 95
// MiB frames in a row are resident at once; with one, the next frame
// reuses the last one's memory.
const collectAfter = 16 << 20

// collect runs a collection (a frame of collectAfter bytes or more is
// rare: message.max.bytes keeps batches to 1 MiB).
var collect = runtime.GC

// budget is a counting semaphore of bytes whose waiters give up when
// the server shuts down.
type budget struct {
	mu      sync.Mutex
	used    int64
	max     int64
	changed chan struct{} // closed and replaced on every release
}

func newBudget(max int64) *budget { return &budget{max: max, changed: make(chan struct{})} }

// acquire takes n bytes once used+n is at most limit; false if done
// closed first.
func (b *budget) acquire(n, limit int64, done <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if b.used+n <= limit {
			b.used += n
			b.mu.Unlock()
			return true
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		}
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// initMemory sets the memory bounds' defaults; an explicit budget too
// small for the largest request is a configuration error.
func (s *Server) initMemory() error {
	if s.cfg.MaxQueuedRequestBytes <= 0 {
		s.cfg.MaxQueuedRequestBytes = max(DefaultMaxQueuedRequestBytes, int64(s.cfg.MaxRequestBytes)+smallReserve)
	}
	if s.cfg.MaxQueuedRequestBytes < int64(s.cfg.MaxRequestBytes)+smallReserve {
		return errors.New("serve: the budget of requests in flight (" + strconv.FormatInt(s.cfg.MaxQueuedRequestBytes, 10) +
			" bytes) must be at least the largest request (" + strconv.Itoa(int(s.cfg.MaxRequestBytes)) + ") plus 16 MiB")
	}
	if s.cfg.MaxDecompressedBytes <= 0 {
		s.cfg.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	s.lim.queued = newBudget(s.cfg.MaxQueuedRequestBytes)
	s.lim.inflate = make(chan *format.RecordReader, decompressSlots)
	for i := 0; i < decompressSlots; i++ {
		rr := new(format.RecordReader)
		rr.Decompressor.MaxBytes = s.cfg.MaxDecompressedBytes
		s.lim.inflate <- rr
	}
	return nil
}

// requestCharge is what a frame of size bytes for key takes from the
// budget, and whether it may ever fit (a request other than Produce may
// be at most (budget - smallReserve) / decodeFactor bytes).
func (s *Server) requestCharge(key int16, size int32) (charge int64, ok bool) {
	charge = int64(size)
	if key != 0 {
		charge *= decodeFactor
	}
	return charge, charge <= s.cfg.MaxQueuedRequestBytes-smallReserve || charge <= smallRequest
}

// admitRequest waits for room for a frame's charge; false when the server
// shuts down first.
func (s *Server) admitRequest(charge int64) bool {
	limit := s.cfg.MaxQueuedRequestBytes
	if charge > smallRequest {
		limit -= smallReserve
	}
	return s.lim.queued.acquire(charge, limit, s.done)
}

// recordReader is a reader for b's records: a pooled one for uncompressed
// records (they are read in place), one of the decompressSlots readers for
// compressed ones, waited for. put gives it back.
func (s *Server) recordReader(b *format.Batch) (rr *format.RecordReader, put func()) {
	if b.Compression() == format.CompressionNone {
		rr = readers.Get().(*format.RecordReader)
		return rr, func() { readers.Put(rr) }
	}
	rr = <-s.lim.inflate
	return rr, func() { s.lim.inflate <- rr }
}

// groupRecordBytes is the size of what a group's record holds (every
// member's protocols and assignment) once r joins: r replaces its own
// member's protocols.
func groupRecordBytes(g *group, r joinRequest) int {
	n := 0
	for _, p := range r.protocols {
		n += len(p.name) + len(p.metadata)
	}
	for id, m := range g.members {
		if id == r.memberID && id != "" {
			n += len(m.assignment)
			continue
		}
		for _, p := range m.protocols {
			n += len(p.name) + len(p.metadata)
		}
		n += len(m.assignment)
	}
	return n
}
