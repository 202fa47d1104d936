package serve

import (
	"bufio"
	"bytes"
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
	body   bytes.Buffer
	out    []byte
	client clientInfo
	// clientID is the current request's header client id.
	clientID string
	tls      bool
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
	cn.r = bufio.NewReaderSize(c, 512)
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
	var sz [4]byte
	if _, err := io.ReadFull(cn.r, sz[:]); err != nil {
		return err
	}
	size := int32(binary.BigEndian.Uint32(sz[:]))
	if size < 8 || size > cn.s.cfg.MaxRequestBytes {
		cn.logError(header{key: -1}, "request size "+strconv.Itoa(int(size))+" outside [8, "+strconv.Itoa(int(cn.s.cfg.MaxRequestBytes))+"]")
		return errMalformed
	}
	// The buffer grows with the bytes that actually arrive, never by the
	// declared size alone.
	cn.body.Reset()
	if _, err := io.CopyN(&cn.body, cn.r, int64(size)); err != nil {
		return err
	}
	start := time.Now()
	frame := cn.body.Bytes()
	h, req, err := parseRequest(frame)
	if err != nil {
		cn.logError(h, err.Error())
		return err
	}
	err = cn.dispatch(h, req, start)
	if cn.body.Cap() > 1<<20 {
		// An idle connection does not keep a large request's buffer.
		cn.body = bytes.Buffer{}
	}
	return err
}

// parseRequest splits a frame into its header and decoded body. ApiVersions
// at an unknown version comes back with a nil request (KIP-511).
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
	_, ok := supported(h.key, h.version)
	if !ok {
		if h.key == apiVersionsKey {
			return h, nil, nil
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

// dispatch runs a handler and writes its response.
func (cn *conn) dispatch(h header, req kmsg.Request, start time.Time) error {
	if req == nil {
		// KIP-511: an ApiVersions version we do not know gets the v0
		// body with UNSUPPORTED_VERSION so the client retries lower.
		resp := apiVersionsResponse(0)
		resp.ErrorCode = errUnsupportedVersion
		err := cn.writeResponseAt(h, resp, 0)
		cn.logRequest(h, start, resp.ErrorCode, len(cn.out))
		return err
	}
	cn.clientID = h.clientID
	var resp kmsg.Response
	var err error
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		resp, err = cn.handleProduce(r)
	case *kmsg.FetchRequest:
		// Fetch writes its own response (header, then file ranges).
		n, code, ferr := cn.handleFetch(h, r)
		cn.logRequest(h, start, code, n)
		return ferr
	case *kmsg.ListOffsetsRequest:
		resp = cn.handleListOffsets(r)
	case *kmsg.MetadataRequest:
		resp = cn.handleMetadata(r)
	case *kmsg.OffsetCommitRequest:
		resp = cn.handleOffsetCommit(r)
	case *kmsg.OffsetFetchRequest:
		resp = cn.handleOffsetFetch(r)
	case *kmsg.FindCoordinatorRequest:
		resp = cn.handleFindCoordinator(r)
	case *kmsg.JoinGroupRequest:
		resp = cn.handleJoinGroup(r)
	case *kmsg.HeartbeatRequest:
		resp = cn.handleHeartbeat(r)
	case *kmsg.LeaveGroupRequest:
		resp = cn.handleLeaveGroup(r)
	case *kmsg.SyncGroupRequest:
		resp = cn.handleSyncGroup(r)
	case *kmsg.ApiVersionsRequest:
		resp = cn.handleApiVersions(r)
	case *kmsg.InitProducerIDRequest:
		resp = cn.handleInitProducerID(r)
	default:
		err = errUnsupported
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
	werr := cn.writeResponse(h, resp)
	cn.logRequest(h, start, responseError(resp), len(cn.out))
	return werr
}

// writeResponse frames and writes a kmsg response.
func (cn *conn) writeResponse(h header, resp kmsg.Response) error {
	return cn.writeResponseAt(h, resp, h.version)
}

// writeResponseAt writes resp at a version (KIP-511 answers ApiVersions at
// v0 whatever was asked).
func (cn *conn) writeResponseAt(h header, resp kmsg.Response, version int16) error {
	resp.SetVersion(version)
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

// responseError picks a top-level or first error code for the request log.
func responseError(resp kmsg.Response) int16 {
	switch r := resp.(type) {
	case *kmsg.ApiVersionsResponse:
		return r.ErrorCode
	case *kmsg.JoinGroupResponse:
		return r.ErrorCode
	case *kmsg.SyncGroupResponse:
		return r.ErrorCode
	case *kmsg.HeartbeatResponse:
		return r.ErrorCode
	case *kmsg.LeaveGroupResponse:
		return r.ErrorCode
	case *kmsg.InitProducerIDResponse:
		return r.ErrorCode
	case *kmsg.ProduceResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return p.ErrorCode
				}
			}
		}
	}
	return 0
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
