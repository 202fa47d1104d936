package serve

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// dialFrom connects from a given loopback address (127.0.0.0/8 is all
// loopback on Linux), so that a test has two client addresses.
func dialFrom(t testing.TB, local, addr string) *wire {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wire{t: t, c: c}
}

// TestConnectionsPerIP: one address that opens every connection the
// server allows gets MaxConnectionsPerIP of them; a client from another
// address is still served, and is again once the first address's
// connections close.
func TestConnectionsPerIP(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), MaxConnections: 16, MaxConnectionsPerIP: 4})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	var attack []*wire
	for i := 0; i < 16; i++ {
		attack = append(attack, dialFrom(t, "127.0.0.2", addr))
	}
	// Accept is in order: once the last one is known closed, all have
	// been through it.
	attack[15].send(md)
	if !attack[15].closed() {
		t.Fatalf("the 16th connection from one address was served with MaxConnectionsPerIP 4")
	}
	for i, w := range attack[:4] {
		if _, ok := w.do(md).(*kmsg.MetadataResponse); !ok {
			t.Fatalf("connection %d from the address was not served", i)
		}
	}
	for _, w := range attack[4:15] {
		w.send(md)
		if !w.closed() {
			t.Errorf("a connection past the address's limit was served")
		}
	}
	dialFrom(t, "127.0.0.1", addr).do(md)
	// Closed connections give their slots back.
	for _, w := range attack[:4] {
		w.c.Close()
	}
	for i := 0; ; i++ {
		w := dialFrom(t, "127.0.0.2", addr)
		w.send(md)
		if _, err := w.readFrame(); err == nil {
			break
		}
		if i > 1000 {
			t.Fatal("the address's slots never came back")
		}
	}
}

// recordConn is a net.Conn that hands out its input one byte per Read and
// records the read deadlines set on it.
type recordConn struct {
	net.Conn
	mu        sync.Mutex
	in        *bytes.Reader
	deadlines []time.Time
	out       bytes.Buffer
}

func (c *recordConn) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return c.in.Read(p)
}
func (c *recordConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *recordConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadlines = append(c.deadlines, t)
	return nil
}

// TestIdleCountsFromLastByte: every byte received moves the idle deadline
// (a request trickling in is not idle; connections.max.idle.ms counts
// from the last byte), where the deadline was set once per request.
func TestIdleCountsFromLastByte(t *testing.T) {
	srv, err := New(Config{LogDir: fixtureLogDir(t, "none-0"), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	frame := encodeRequest(md, 1, "slow")
	rc := &recordConn{in: bytes.NewReader(frame)}
	cn := &conn{s: srv, c: rc, name: "test"}
	cn.r = cn.newReader()
	if err := cn.serveOne(); err != nil {
		t.Fatal(err)
	}
	if rc.out.Len() == 0 {
		t.Fatal("no answer")
	}
	if n := len(rc.deadlines); n < len(frame) {
		t.Fatalf("the deadline moved %d times for a %d-byte request read a byte at a time", n, len(frame))
	}
	for i := 1; i < len(rc.deadlines); i++ {
		if rc.deadlines[i].Before(rc.deadlines[i-1]) {
			t.Fatalf("deadline %d went back", i)
		}
	}
}

// flakyListener fails its first n Accepts with err, then accepts.
type flakyListener struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, l.err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// TestAcceptBackoff: EMFILE (and the other temporary accept errors) does
// not end the server: Serve waits 5 ms, doubling to 1 s, as net/http's
// Server.Serve does, and serves the next connection.
func TestAcceptBackoff(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED} {
		srv, err := New(Config{LogDir: fixtureLogDir(t, "none-0"), StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var slept []time.Duration
		srv.lim.sleep = func(d time.Duration) { slept = append(slept, d) }
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		fl := &flakyListener{Listener: ln, n: 10, err: &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(fl) }()
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		dial(t, ln.Addr().String()).do(md)
		srv.Shutdown(context.Background())
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("%v: Serve returned %v", errno, err)
		}
		want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
		if len(slept) != len(want) {
			t.Fatalf("%v: slept %v", errno, slept)
		}
		for i := range want {
			if slept[i] != want[i]*time.Millisecond {
				t.Errorf("%v: back-off %d is %v, want %v ms", errno, i, slept[i], want[i])
			}
		}
	}
	// Any other error ends Serve, as before.
	srv, err := New(Config{LogDir: fixtureLogDir(t, "none-0"), StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	if err := srv.Serve(&flakyListener{Listener: ln, n: 1, err: errors.New("boom")}); err == nil || err.Error() != "boom" {
		t.Errorf("Serve on a broken listener: %v", err)
	}
}

// TestTopicFDBudget: auto-created topics stop at the server's descriptor
// budget (half the process's RLIMIT_NOFILE, fdsPerPartition each) with
// POLICY_VIOLATION, leave no directory, and the server keeps serving.
func TestTopicFDBudget(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	srv, addr := startServer(t, Config{LogDir: dir, Writable: true})
	srv.mu.Lock()
	srv.lim.fdLimit = 2 * (fdReserve + 3*fdsPerPartition) // t-0 and two more
	srv.mu.Unlock()
	w := dial(t, addr)
	for i := 0; i < 4; i++ {
		name := "auto" + strconv.Itoa(i)
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = 12, true
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
		mt := w.do(req).(*kmsg.MetadataResponse).Topics[0]
		_, statErr := os.Stat(filepath.Join(dir, name+"-0"))
		if i < 2 && (mt.ErrorCode != kerr.UnknownTopicOrPartition.Code || statErr != nil) { // created (as KRaft answers it)
			t.Errorf("%s: error %d, %v", name, mt.ErrorCode, statErr)
		}
		if i >= 2 && (mt.ErrorCode != kerr.PolicyViolation.Code || statErr == nil) {
			t.Errorf("%s past the budget: error %d, directory made %v", name, mt.ErrorCode, statErr == nil)
		}
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	dial(t, addr).do(md)
}
