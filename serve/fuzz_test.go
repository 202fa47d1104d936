package serve

import (
	"bufio"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/hostile"
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
	// The produce path's hostile bodies (validate.go's classes, the
	// bombs).
	for _, body := range hostile.Produce() {
		pr := kmsg.NewPtrProduceRequest()
		pr.Version, pr.Acks = 9, -1
		pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "none", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: body}}}}
		seeds = append(seeds, encodeRequest(pr, 2, "fuzz")[4:])
	}
	// Group requests a coordinator takes: a join that parks, a commit
	// that is written.
	inst := "i"
	for _, r := range []kmsg.Request{joinReq("fg", "", nil), joinReq("fg", "", &inst),
		&kmsg.SyncGroupRequest{Version: 3, Group: "fg", MemberID: "m", Generation: 1},
		&kmsg.HeartbeatRequest{Version: 3, Group: "fg", MemberID: "m", Generation: 1},
		&kmsg.LeaveGroupRequest{Version: 3, Group: "fg", Members: []kmsg.LeaveGroupRequestMember{{InstanceID: &inst}}},
		&kmsg.OffsetCommitRequest{Version: 7, Group: "fg", Generation: -1, Topics: []kmsg.OffsetCommitRequestTopic{
			{Topic: "none", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 3, LeaderEpoch: -1}}}}},
		// A transaction's requests: the coordinator writes their records.
		&kmsg.InitProducerIDRequest{Version: 4, TransactionalID: &inst, TransactionTimeoutMillis: 60000, ProducerID: -1, ProducerEpoch: -1},
		&kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: "i", ProducerID: 1, Topics: []kmsg.AddPartitionsToTxnRequestTopic{
			{Topic: "none", Partitions: []int32{0}}}},
		&kmsg.AddPartitionsToTxnRequest{Version: 5, Transactions: []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: "i",
			ProducerID: 1, VerifyOnly: true, Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "none", Partitions: []int32{0}}}}}},
		&kmsg.AddOffsetsToTxnRequest{Version: 3, TransactionalID: "i", ProducerID: 1, Group: "fg"},
		&kmsg.TxnOffsetCommitRequest{Version: 3, TransactionalID: "i", Group: "fg", ProducerID: 1, Generation: -1,
			Topics: []kmsg.TxnOffsetCommitRequestTopic{{Topic: "none", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Offset: 3, LeaderEpoch: -1}}}}},
		&kmsg.EndTxnRequest{Version: 5, TransactionalID: "i", ProducerID: 1, Commit: true},
	} {
		seeds = append(seeds, encodeRequest(r, 3, "fuzz")[4:])
	}
	for _, r := range moreSeedRequests {
		seeds = append(seeds, encodeRequest(r, 4, "fuzz")[4:])
	}
	return seeds
}

// moreSeedRequests are seeds other files add (admin_fuzz_test.go): requests
// with their fields set, beside the empty ones of every key and version.
var moreSeedRequests []kmsg.Request

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

// fuzzServer is a writable server and a connection to it whose client has
// hung up: a request the coordinator parks is released at once (the
// hang-up path), so every handler, the group keys included, returns.
func fuzzServer(f *testing.F) (*Server, *conn) {
	dir := fixtureLogDir(f, "none-0", "txn-0")
	srv, err := New(Config{LogDir: dir, Writable: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	a, b := net.Pipe()
	b.Close()
	f.Cleanup(func() { a.Close() })
	return srv, &conn{s: srv, c: discardConn{a}, r: bufio.NewReader(a), name: "fuzz"}
}

// fuzzHandle answers one frame as the connection would, without a wait:
// Fetch's long poll is cut to none.
func fuzzHandle(cn *conn, frame []byte) {
	h, req, err := parseRequest(frame)
	if err != nil {
		return
	}
	if r, ok := req.(*kmsg.FetchRequest); ok {
		r.MaxWaitMillis = 0
	}
	cn.dispatch(h, req, time.Now())
}

// FuzzHandlers: any request that decodes is answered (or its connection
// closed) without a panic, by every handler.
func FuzzHandlers(f *testing.F) {
	for _, s := range seedRequests(f) {
		f.Add(s)
	}
	_, cn := fuzzServer(f)
	f.Fuzz(func(t *testing.T, frame []byte) { fuzzHandle(cn, frame) })
}

// fuzzKey fuzzes one key's handler: the frame's key is forced to key, the
// seeds are that key's at every version.
func fuzzKey(f *testing.F, key int16) {
	for _, s := range seedRequests(f) {
		if int16(binary.BigEndian.Uint16(s)) == key {
			f.Add(s)
		}
	}
	_, cn := fuzzServer(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) >= 2 {
			binary.BigEndian.PutUint16(frame, uint16(key))
		}
		fuzzHandle(cn, frame)
	})
}

// One fuzz target per served key (go test -fuzz takes one at a time);
// TestEveryKeyFuzzed checks the list against the registrations.
var fuzzedKeys = []int16{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 22, 24, 25, 26, 28}

func FuzzProduce(f *testing.F)            { fuzzKey(f, 0) }
func FuzzFetch(f *testing.F)              { fuzzKey(f, 1) }
func FuzzListOffsets(f *testing.F)        { fuzzKey(f, 2) }
func FuzzMetadata(f *testing.F)           { fuzzKey(f, 3) }
func FuzzOffsetCommit(f *testing.F)       { fuzzKey(f, 8) }
func FuzzOffsetFetch(f *testing.F)        { fuzzKey(f, 9) }
func FuzzFindCoordinator(f *testing.F)    { fuzzKey(f, 10) }
func FuzzJoinGroup(f *testing.F)          { fuzzKey(f, 11) }
func FuzzHeartbeat(f *testing.F)          { fuzzKey(f, 12) }
func FuzzLeaveGroup(f *testing.F)         { fuzzKey(f, 13) }
func FuzzSyncGroup(f *testing.F)          { fuzzKey(f, 14) }
func FuzzApiVersions(f *testing.F)        { fuzzKey(f, 18) }
func FuzzInitProducerID(f *testing.F)     { fuzzKey(f, 22) }
func FuzzAddPartitionsToTxn(f *testing.F) { fuzzKey(f, 24) }
func FuzzAddOffsetsToTxn(f *testing.F)    { fuzzKey(f, 25) }
func FuzzEndTxn(f *testing.F)             { fuzzKey(f, 26) }
func FuzzTxnOffsetCommit(f *testing.F)    { fuzzKey(f, 28) }

// TestEveryKeyFuzzed: a registered key without its fuzz target fails.
func TestEveryKeyFuzzed(t *testing.T) {
	have := map[int16]bool{}
	for _, k := range fuzzedKeys {
		have[k] = true
	}
	for _, a := range served() {
		if !have[a.key] {
			t.Errorf("%s (key %d) has no fuzz target (add FuzzX and the key to fuzzedKeys)", a.name, a.key)
		}
	}
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
