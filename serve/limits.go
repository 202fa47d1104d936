package serve

// What one client may make the server hold: connections per address,
// bytes of requests in flight, decompressed bytes in flight, file
// descriptors for topics; and the accept loop's back-off, so that running
// out of descriptors slows the server down instead of ending it.

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
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
