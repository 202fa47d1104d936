package klogtest

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// IdealServer stands in front of a Kafka server (the backend) as the
// fastest server a consumer could have: every request goes through to the
// backend, except a Fetch it has seen before (the same bytes but the
// correlation id), which it answers itself from memory with the backend's
// own response to it. After one drain has warmed it, a second drain of the
// same partitions by the same client configuration costs the server
// nothing: what it measures is the client and the loopback transport, the
// bound no server can beat. The backend must advertise the IdealServer's
// address (Host, Port) as its broker's, or a client's fetches go around it
// to the address the backend's Metadata names; Fetches counts what came
// through. It serves one consumer at a time (a cached response takes the
// correlation id of the request it answers in place).
type IdealServer struct {
	// Addr is its 127.0.0.1 listener's address, Host and Port its parts.
	Addr string
	Host string
	Port int32
	// Fetches counts the Fetches it received, Misses those it passed on
	// to the backend.
	Fetches, Misses atomic.Int64

	ln net.Listener
}

// ListenIdealServer makes an IdealServer's listener, to be served (Serve)
// once a backend advertising Host and Port runs; it is closed when tb ends.
func ListenIdealServer(tb testing.TB) *IdealServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	a := ln.Addr().(*net.TCPAddr)
	return &IdealServer{Addr: a.String(), Host: a.IP.String(), Port: int32(a.Port), ln: ln}
}

// Serve answers the listener's connections in front of backend until the
// listener is closed.
func (is *IdealServer) Serve(backend string) {
	var mu sync.Mutex
	cache := map[string][]byte{}
	go acceptLoop(is.ln, func(c net.Conn) {
		defer c.Close()
		up, err := net.Dial("tcp", backend)
		if err != nil {
			return
		}
		defer up.Close()
		for {
			req, err := ReadFrame(c)
			if err != nil || len(req) < 12 {
				return
			}
			fetch := binary.BigEndian.Uint16(req[4:]) == 1
			corr := binary.BigEndian.Uint32(req[8:])
			binary.BigEndian.PutUint32(req[8:], 0)
			k := string(req)
			binary.BigEndian.PutUint32(req[8:], corr)
			mu.Lock()
			resp := cache[k]
			mu.Unlock()
			if fetch {
				is.Fetches.Add(1)
			}
			if resp == nil {
				if fetch {
					is.Misses.Add(1)
				}
				if _, err := up.Write(req); err != nil {
					return
				}
				if resp, err = ReadFrame(up); err != nil || len(resp) < 8 {
					return
				}
				if fetch {
					mu.Lock()
					cache[k] = resp
					mu.Unlock()
				}
			}
			binary.BigEndian.PutUint32(resp[4:], corr)
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	})
}

// AcceptLoop serves each connection to a new 127.0.0.1 listener with
// handle, each in its own goroutine, until tb ends; it returns the
// listener's address.
func AcceptLoop(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go acceptLoop(ln, handle)
	return ln.Addr().String()
}

func acceptLoop(ln net.Listener, handle func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go handle(c)
	}
}

// ReadFrame reads one size-prefixed Kafka frame, the prefix included.
func ReadFrame(r io.Reader) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	f := make([]byte, 4+binary.BigEndian.Uint32(sz[:]))
	copy(f, sz[:])
	_, err := io.ReadFull(r, f[4:])
	return f, err
}
