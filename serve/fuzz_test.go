package serve

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// seedRequests encodes every served key at every accepted version, plus a
// Produce carrying a real Kafka-written batch from testdata.
func seedRequests(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, a := range served() {
		for v := int16(0); v <= a.max; v++ {
			req := kmsg.RequestForKey(a.key)
			req.SetVersion(v)
			seeds = append(seeds, encodeRequest(req, 1, "fuzz")[4:])
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "segments", "kafka-written", "v2-gzip", "00000000000000000000.log"))
	if err != nil {
		tb.Fatal(err)
	}
	pr := kmsg.NewPtrProduceRequest()
	pr.Version = 9
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: data[:min(len(data), 2000)]}}}}
	seeds = append(seeds, encodeRequest(pr, 2, "fuzz")[4:])
	return seeds
}

// FuzzParseRequest: any frame either parses or is refused; never a panic,
// never an allocation sized by a declared length.
func FuzzParseRequest(f *testing.F) {
	for _, s := range seedRequests(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, req, err := parseRequest(frame)
		if err != nil {
			return
		}
		if req == nil && h.key != apiVersionsKey {
			t.Fatalf("key %d v%d parsed to nothing", h.key, h.version)
		}
		if req != nil {
			// A parsed request re-encodes (kmsg round trip).
			_ = req.AppendTo(nil)
		}
	})
}

// TestSeedsParse: every seed is a request the server accepts.
func TestSeedsParse(t *testing.T) {
	for _, s := range seedRequests(t) {
		h, _, err := parseRequest(s)
		if _, ok := supported(h.key, h.version); ok && err != nil {
			t.Errorf("key %d v%d: %v", h.key, h.version, err)
		}
	}
}

// discardConn is a net.Conn whose writes go nowhere.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }

// FuzzHandlers: any request that decodes is answered without a panic by
// the handlers that do not park (the group keys park by design: a join
// waits for the rebalance), on a writable server so Produce appends.
// Fetch's long poll is cut to no wait.
func FuzzHandlers(f *testing.F) {
	for _, s := range seedRequests(f) {
		f.Add(s)
	}
	dir := fixtureLogDir(f, "none-0", "txn-0")
	srv, err := New(Config{LogDir: dir, Writable: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	a, b := net.Pipe()
	f.Cleanup(func() { a.Close(); b.Close() })
	cn := &conn{s: srv, c: discardConn{a}, name: "fuzz"}
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, req, err := parseRequest(frame)
		if err != nil {
			return
		}
		switch r := req.(type) {
		case *kmsg.JoinGroupRequest, *kmsg.SyncGroupRequest, *kmsg.HeartbeatRequest, *kmsg.LeaveGroupRequest:
			return
		case *kmsg.FetchRequest:
			r.MaxWaitMillis = 0
		}
		cn.dispatch(h, req, time.Now())
	})
}

// TestRegisterRefusesMistakes: a key registered twice, or with a handler
// of another key's request type, stops the program at start.
func TestRegisterRefusesMistakes(t *testing.T) {
	for name, f := range map[string]func(){
		"twice":      func() { register(12, 0, 4, (*conn).handleHeartbeat) },
		"wrong type": func() { register(94, 0, 0, (*conn).handleHeartbeat) },
		"past kmsg":  func() { register(93, 0, 99, (*conn).handleHeartbeat) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			f()
		}()
	}
}
