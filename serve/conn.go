package serve

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// conn is one client connection.
type conn struct {
	s      *Server
	c      net.Conn
	r      *bufio.Reader
	name   string // Kafka's connection id: local-remote
	buf    []byte // the buffer of requests up to smallFrame bytes
	out    []byte
	client clientInfo
	// clientID is the current request's header client id.
	clientID string
	tls      bool
	auth     connAuth // SASL (sasl.go)
}

// clientInfo is what ApiVersions v3+ told us.
type clientInfo struct {
	software, version string
}

// header is a request header (RequestHeader v0-v2).
type header struct {
	key, version int16
	correlation  int32
	clientID     string
}

// errMalformed closes a connection whose request cannot be parsed.
var errMalformed = errors.New("malformed request")

// errUnsupported closes a connection that sends a key or version outside
// what it was told.
var errUnsupported = errors.New("unsupported request")

func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.releaseIP(c)
	}()
	cn := &conn{s: s, c: c, name: c.LocalAddr().String() + "-" + c.RemoteAddr().String()}
	// A bug in a handler closes this connection, not the server.
	defer func() {
		if r := recover(); r != nil {
			cn.logError(header{key: -1}, "internal error: "+fmt.Sprint(r))
		}
	}()
	if s.cfg.TLS != nil {
		c = tls.Server(c, s.cfg.TLS)
		cn.c, cn.tls = c, true
	}
	// A small reader: idle connections cost little (the 1,000 idle
	// connection budget).
	cn.r = cn.newReader()
	for {
		if err := cn.serveOne(); err != nil {
			return
		}
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return
		}
	}
}

// newReader is the connection's buffered reader, over touchReader (the
// idle deadline moves with every byte received).
func (cn *conn) newReader() *bufio.Reader { return bufio.NewReaderSize(touchReader{cn}, 512) }

// serveOne reads one request frame, answers it and writes the response.
func (cn *conn) serveOne() error {
	// The idle deadline is set under the server lock so that Shutdown's
	// deadline (now) is never replaced by a later one.
	s := cn.s
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return net.ErrClosed
	}
	cn.c.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
	s.mu.Unlock()
	if cn.auth.raw {
		return cn.serveRawToken()
	}
	var sz [4]byte
	if _, err := io.ReadFull(cn.r, sz[:]); err != nil {
		return err
	}
	size := int32(binary.BigEndian.Uint32(sz[:]))
	if size < 8 || size > cn.s.cfg.MaxRequestBytes {
		cn.logError(header{key: -1}, "request size "+strconv.Itoa(int(size))+" outside [8, "+strconv.Itoa(int(cn.s.cfg.MaxRequestBytes))+"]")
		return errMalformed
	}
	// The frame's bytes come out of the server's budget before they are
	// read (limits.go), by its key's charge.
	kb, err := cn.r.Peek(2)
	if err != nil {
		return err
	}
	key := int16(binary.BigEndian.Uint16(kb))
	charge, ok := s.requestCharge(key, size)
	if !ok {
		cn.logError(header{key: key}, "request size "+strconv.Itoa(int(size))+" too large for "+kmsg.NameForKey(key)+
			": at most "+strconv.FormatInt((s.cfg.MaxQueuedRequestBytes-smallReserve)/decodeFactor, 10)+" bytes for keys other than Produce")
		return errMalformed
	}
	if !s.admitRequest(charge) {
		return net.ErrClosed
	}
	defer s.lim.queued.release(charge)
	// A small frame reuses the connection's buffer; a large one has a
	// buffer of its own, within the budget, dropped with the request.
	var frame []byte
	if size <= smallFrame {
		if cap(cn.buf) < int(size) {
			cn.buf = make([]byte, size)
		}
		frame = cn.buf[:size]
	} else {
		frame = make([]byte, size)
		if size >= collectAfter {
			defer collect()
		}
	}
	if _, err := io.ReadFull(cn.r, frame); err != nil {
		return err
	}
	start := time.Now()
	h, req, err := parseRequest(frame)
	if err != nil {
		cn.logError(h, err.Error())
		return err
	}
	return cn.dispatch(h, req, start)
}

// smallFrame is the size of a connection's own request buffer.
const smallFrame = 16 << 10

// parseRequest splits a frame into its header and decoded body. An
// ApiVersions request at a version this server does not know comes back
// undecoded, with only its version set: the handler answers it (KIP-511).
func parseRequest(frame []byte) (header, kmsg.Request, error) {
	var h header
	if len(frame) < 8 {
		return h, nil, errMalformed
	}
	h.key = int16(binary.BigEndian.Uint16(frame))
	h.version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.correlation = int32(binary.BigEndian.Uint32(frame[4:]))
	rest := frame[8:]
	// client_id: a nullable int16-length string in every header version.
	if len(rest) < 2 {
		return h, nil, errMalformed
	}
	n := int(int16(binary.BigEndian.Uint16(rest)))
	rest = rest[2:]
	if n > 0 {
		if n > len(rest) {
			return h, nil, errMalformed
		}
		h.clientID = string(rest[:n])
		rest = rest[n:]
	}
	a, ok := supported(h.key, h.version)
	if !ok {
		if a != nil && h.key == apiVersionsKey {
			return h, &kmsg.ApiVersionsRequest{Version: h.version}, nil
		}
		return h, nil, errUnsupported
	}
	req := kmsg.RequestForKey(h.key)
	req.SetVersion(h.version)
	if req.IsFlexible() {
		// Header v2: tagged fields after the client id.
		var err error
		if rest, err = skipTags(rest); err != nil {
			return h, nil, err
		}
	}
	if err := req.ReadFrom(rest); err != nil {
		return h, nil, errMalformed
	}
	return h, req, nil
}

// skipTags skips a tagged-field section (KIP-482).
func skipTags(b []byte) ([]byte, error) {
	n, l := binary.Uvarint(b)
	if l <= 0 || n > uint64(len(b)) {
		return nil, errMalformed
	}
	b = b[l:]
	for i := uint64(0); i < n; i++ {
		if _, l := binary.Uvarint(b); l <= 0 {
			return nil, errMalformed
		} else {
			b = b[l:]
		}
		size, l := binary.Uvarint(b)
		if l <= 0 || size > uint64(len(b)-l) {
			return nil, errMalformed
		}
		b = b[l+int(size):]
	}
	return b, nil
}

// dispatch runs the key's handler and writes its response.
func (cn *conn) dispatch(h header, req kmsg.Request, start time.Time) error {
	cn.clientID = h.clientID
	a, _ := supported(h.key, h.version)
	if a == nil {
		return errUnsupported
	}
	if !cn.authenticated() && h.key != apiVersionsKey && h.key != saslHandshakeKey && h.key != saslAuthenticateKey {
		cn.logError(h, errUnauthenticated.Error())
		return errUnauthenticated
	}
	if f := cn.s.cfg.hooks.dispatched; f != nil {
		f(h.key)
	}
	resp, err, refused := cn.refuseReader(h.key, req)
	if !refused {
		resp, err = a.handle(cn, req)
	}
	if err != nil {
		cn.logError(h, err.Error())
		return err
	}
	if resp == nil {
		// acks=0: no response.
		cn.logRequest(h, start, 0, 0)
		return nil
	}
	if w, ok := resp.(frameWriter); ok {
		n, code, err := w.writeFrame(cn, h.correlation)
		cn.logRequest(h, start, code, n)
		return err
	}
	werr := cn.writeResponse(h, resp)
	if cn.s.cfg.RequestLog != nil {
		cn.logRequest(h, start, firstErrorCode(resp), len(cn.out))
	}
	if werr == nil && cn.auth.close {
		// A failed SASL exchange ends once its answer is written.
		return errAuthFailed
	}
	return werr
}

// writeResponse frames and writes a kmsg response at its own version
// (ResponseKind's, or v0 for KIP-511's ApiVersions answer).
func (cn *conn) writeResponse(h header, resp kmsg.Response) error {
	out := append(cn.out[:0], 0, 0, 0, 0)
	out = binary.BigEndian.AppendUint32(out, uint32(h.correlation))
	// Response header v1 (a tag section) for flexible versions, except
	// ApiVersions, whose response header is always v0 (KIP-511).
	if resp.IsFlexible() && h.key != apiVersionsKey {
		out = append(out, 0)
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	cn.out = out
	if cap(cn.out) > 1<<20 {
		defer func() { cn.out = nil }()
	}
	_, err := cn.c.Write(out)
	return err
}

// decodeUUID parses Kafka's Uuid.toString (22 characters of URL-safe
// base64 without padding).
func decodeUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, errors.New("bad uuid")
	}
	copy(id[:], b)
	return id, nil
}

// watchHangUp reports a client hanging up while its request is parked: one
// Peek at the connection, which a client waiting for its answer does not
// otherwise use (a broker mutes the channel). unwatch ends the watch; a
// byte that arrived meanwhile stays buffered for the next request.
func (cn *conn) watchHangUp() (gone <-chan struct{}, unwatch func()) {
	g := make(chan struct{})
	done := make(chan struct{})
	// A parked request is not idle; Shutdown answers it rather than
	// closing the connection under it.
	cn.c.SetReadDeadline(time.Time{})
	go func() {
		defer close(done)
		if _, err := cn.r.Peek(1); err != nil && !isTimeout(err) {
			close(g)
		}
	}()
	return g, func() {
		cn.c.SetReadDeadline(time.Unix(1, 0))
		<-done
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
