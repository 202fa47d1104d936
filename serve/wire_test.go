package serve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wire is a raw client connection speaking kmsg requests.
type wire struct {
	t    testing.TB
	c    net.Conn
	corr int32
}

func dial(t testing.TB, addr string) *wire {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &wire{t: t, c: c}
}

// encodeRequest frames req at its version with header v1 or v2.
func encodeRequest(req kmsg.Request, corr int32, clientID string) []byte {
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func (w *wire) send(req kmsg.Request) {
	w.t.Helper()
	w.corr++
	if _, err := w.c.Write(encodeRequest(req, w.corr, "wire")); err != nil {
		w.t.Fatal(err)
	}
}

// readFrame reads one response frame and checks its correlation id.
func (w *wire) readFrame() ([]byte, error) {
	w.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(w.c, sz[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(w.c, body); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != w.corr {
		return nil, errors.New("correlation id mismatch")
	}
	return body[4:], nil
}

// do sends req and decodes the response at the request's version.
func (w *wire) do(req kmsg.Request) kmsg.Response {
	w.t.Helper()
	w.send(req)
	body, err := w.readFrame()
	if err != nil {
		w.t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != apiVersionsKey {
		if body, err = skipTags(body); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		w.t.Fatalf("%s v%d: decoding the response: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp
}

// closed reports whether the server closed the connection: EOF, or a
// reset when it closed with our request unread.
func (w *wire) closed() bool {
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := w.c.Read(b[:])
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		return false
	}
	return true
}

// advertised is the ApiVersions table the README documents (key: min,
// max); the registrations in the handler files must add up to it.
var advertised = map[int16][2]int16{0: {0, 12}, 1: {4, 12}, 2: {0, 10}, 3: {0, 13}, 8: {0, 9}, 9: {0, 9}, 10: {0, 6},
	11: {0, 9}, 12: {0, 4}, 13: {0, 5}, 14: {0, 5}, 15: {0, 6}, 16: {0, 5}, 17: {0, 1}, 18: {0, 4}, 19: {0, 7},
	20: {0, 6}, 21: {0, 2}, 22: {0, 5}, 23: {0, 4}, 24: {0, 5}, 25: {0, 4}, 26: {0, 5}, 28: {0, 5}, 32: {0, 4}, 33: {0, 2}, 35: {0, 4},
	36: {0, 2}, 37: {0, 3}, 42: {0, 3}, 43: {0, 2}, 44: {0, 1}, 45: {0, 0}, 46: {0, 0}, 47: {0, 0}, 60: {0, 2}, 61: {0, 0},
	65: {0, 0}, 66: {0, 1}, 68: {0, 1}, 69: {0, 1}}

func TestApiVersions(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	if len(served()) != len(advertised) {
		t.Errorf("%d keys registered, the README documents %d", len(served()), len(advertised))
	}
	for _, a := range served() {
		if want, ok := advertised[a.key]; !ok || want != [2]int16{a.min, a.max} {
			t.Errorf("%s (key %d) registered at %d-%d, documented %v", a.name, a.key, a.min, a.max, want)
		}
	}
	for v := int16(0); v <= 4; v++ {
		w := dial(t, addr)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "wire", "1"
		resp := w.do(req).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(served()) {
			t.Fatalf("v%d: error %d, %d keys", v, resp.ErrorCode, len(resp.ApiKeys))
		}
		for i, k := range resp.ApiKeys {
			if k.ApiKey != served()[i].key || k.MinVersion != served()[i].min || k.MaxVersion != served()[i].max {
				t.Errorf("v%d: key %d advertised %d-%d", v, k.ApiKey, k.MinVersion, k.MaxVersion)
			}
		}
	}
	// KIP-511: v5 (franz-go's first try) and an unknown v99 get the v0
	// body with UNSUPPORTED_VERSION and ApiVersions' own range only, as
	// ApiVersionsRequest.getErrorResponse answers (given the whole table,
	// franz-go would keep the v0 answer, which has no features).
	for _, v := range []int16{5, 99} {
		w := dial(t, addr)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3 // a flexible body; the header says v
		b := encodeRequest(req, 1, "wire")
		binary.BigEndian.PutUint16(b[6:], uint16(v))
		w.corr = 1
		w.c.Write(b)
		body, err := w.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 0
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("v%d: the answer is not a v0 body: %v", v, err)
		}
		if resp.ErrorCode != errUnsupportedVersion || len(resp.ApiKeys) != 1 ||
			resp.ApiKeys[0].ApiKey != apiVersionsKey || resp.ApiKeys[0].MinVersion != 0 || resp.ApiKeys[0].MaxVersion != 4 {
			t.Errorf("v%d: error %d with keys %+v, want 35 with ApiVersions 0-4 only", v, resp.ErrorCode, resp.ApiKeys)
		}
	}
}

// TestFetchMatchesFetchPackage: the Fetch response's offsets, aborted
// transactions and record bytes are exactly package fetch's Log.Read for
// the same request (the bytes `klog fetch` prints), at every version from
// 4 to 12, both isolation levels and byte limits that cut batches.
func TestFetchMatchesFetchPackage(t *testing.T) {
	dir := fixtureLogDir(t, "txn-0", "producer-0", "none-0", "legacy-0")
	_, addr := startServer(t, Config{LogDir: dir})
	w := dial(t, addr)
	cases := []struct {
		topic    string
		offset   int64
		maxBytes int32
	}{
		{"txn", 0, 1 << 20}, {"txn", 3, 1 << 20}, {"txn", 0, 150}, {"producer", 0, 1 << 20}, {"producer", 20, 300},
		{"producer", 16, 10}, {"none", 0, 1000}, {"none", 58, 1 << 20}, {"none", 59, 1 << 20}, {"none", 60, 1 << 20},
		{"legacy", 5, 1 << 20},
	}
	for _, c := range cases {
		l, err := partition.OpenLog(filepath.Join(dir, c.topic+"-0"), partition.LogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for v := int16(4); v <= 12; v++ {
			for _, iso := range []int8{0, 1} {
				req := kmsg.NewPtrFetchRequest()
				req.Version, req.ReplicaID, req.MaxBytes, req.IsolationLevel = v, -1, 50<<20, iso
				rt := kmsg.NewFetchRequestTopic()
				rt.Topic = c.topic
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.FetchOffset, rp.PartitionMaxBytes = c.offset, c.maxBytes
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				resp := w.do(req).(*kmsg.FetchResponse)
				got := resp.Topics[0].Partitions[0]
				f, ferr := fetch.Read(l, fetch.Request{FetchOffset: c.offset, PartitionMaxBytes: c.maxBytes, MaxBytes: 50 << 20,
					Isolation: fetch.Isolation(iso)}, nil)
				name := c.topic + " v" + string(rune('0'+v/10)) + string(rune('0'+v%10))
				if ferr != nil {
					var oor *fetch.OutOfRangeError
					if !errors.As(ferr, &oor) || got.ErrorCode != kerr.OffsetOutOfRange.Code {
						t.Errorf("%s at %d: error %d, fetch says %v", name, c.offset, got.ErrorCode, ferr)
					}
					continue
				}
				if got.ErrorCode != 0 || got.HighWatermark != f.HighWatermark || got.LastStableOffset != f.LastStableOffset ||
					(v >= 5 && got.LogStartOffset != f.LogStartOffset) {
					t.Errorf("%s at %d: error %d hw %d lso %d start %d, want hw %d lso %d start %d", name, c.offset, got.ErrorCode,
						got.HighWatermark, got.LastStableOffset, got.LogStartOffset, f.HighWatermark, f.LastStableOffset, f.LogStartOffset)
				}
				if !bytes.Equal(got.RecordBatches, f.Frame) {
					t.Errorf("%s at %d iso %d: %d record bytes, fetch read %d", name, c.offset, iso, len(got.RecordBatches), len(f.Frame))
				}
				if iso == 1 {
					if got.AbortedTransactions == nil && v >= 4 {
						t.Errorf("%s: read_committed without an aborted list", name)
					}
					if len(got.AbortedTransactions) != len(f.AbortedTransactions) {
						t.Errorf("%s: %d aborted, want %d", name, len(got.AbortedTransactions), len(f.AbortedTransactions))
					}
					for i := range min(len(got.AbortedTransactions), len(f.AbortedTransactions)) {
						a, b := got.AbortedTransactions[i], f.AbortedTransactions[i]
						if a.ProducerID != b.ProducerID || a.FirstOffset != b.FirstOffset {
							t.Errorf("%s: aborted %d = %+v, want %+v", name, i, a, b)
						}
					}
				} else if got.AbortedTransactions != nil {
					t.Errorf("%s: read_uncommitted with an aborted list", name)
				}
			}
		}
	}
}

// TestReadOnlyProduce: a read-only server advertises Produce but refuses
// it; acks=0 closes the connection; Produce v0-v2 are refused.
func TestReadOnlyProduce(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	before := hashTree(t, dir)
	_, addr := startServer(t, Config{LogDir: dir})
	batch := rawBatch(t, 0)
	produceReq := func(v int16, acks int16) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = v, acks, 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "none"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}
	w := dial(t, addr)
	for _, c := range []struct{ v, code int16 }{{7, kerr.TopicAuthorizationFailed.Code}, {12, kerr.TopicAuthorizationFailed.Code},
		{2, kerr.UnsupportedVersion.Code}, {0, kerr.UnsupportedVersion.Code}} {
		resp := w.do(produceReq(c.v, -1)).(*kmsg.ProduceResponse)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != c.code {
			t.Errorf("produce v%d: error %d, want %d", c.v, got, c.code)
		}
	}
	w.send(produceReq(7, 0))
	if !w.closed() {
		t.Errorf("acks=0 produce to a read-only server: connection not closed")
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	if resp := dial(t, addr).do(ip).(*kmsg.InitProducerIDResponse); resp.ErrorCode == 0 {
		t.Errorf("read-only InitProducerId succeeded")
	}
	if hashTree(t, dir) != before {
		t.Fatal("read-only serve changed the log dir")
	}
}

// TestLowVersionsAccepted: the versions kafka-go and kafka-python send
// below or regardless of the advertised range are answered.
func TestLowVersionsAccepted(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	w := dial(t, addr)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey = 0, "g"
	if r := w.do(fc).(*kmsg.FindCoordinatorResponse); r.ErrorCode != 0 || r.Port == 0 {
		t.Errorf("FindCoordinator v0 (before ApiVersions): %+v", r)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 0
	if r := w.do(md).(*kmsg.MetadataResponse); len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Errorf("Metadata v0: %+v", r.Topics)
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 1, "g"
	oft := kmsg.NewOffsetFetchRequestTopic()
	oft.Topic, oft.Partitions = "none", []int32{0}
	of.Topics = append(of.Topics, oft)
	if r := w.do(of).(*kmsg.OffsetFetchResponse); r.Topics[0].Partitions[0].Offset != -1 {
		t.Errorf("OffsetFetch v1: %+v", r.Topics)
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 2, "g", -1
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = "none"
	ocp := kmsg.NewOffsetCommitRequestTopicPartition()
	ocp.Offset = 7
	oct.Partitions = append(oct.Partitions, ocp)
	oc.Topics = append(oc.Topics, oct)
	if r := w.do(oc).(*kmsg.OffsetCommitResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Errorf("OffsetCommit v2: %+v", r.Topics)
	}
	if r := w.do(of).(*kmsg.OffsetFetchResponse); r.Topics[0].Partitions[0].Offset != 7 {
		t.Errorf("OffsetFetch v1 after commit: %+v", r.Topics)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 0, "g", "nobody"
	if r := w.do(hb).(*kmsg.HeartbeatResponse); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("Heartbeat v0: %d", r.ErrorCode)
	}
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Version, lg.Group, lg.MemberID = 0, "g", "nobody"
	if r := w.do(lg).(*kmsg.LeaveGroupResponse); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("LeaveGroup v0: %d", r.ErrorCode)
	}
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = 2, "g2", 10000, 10000, "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0}}}
	jr := w.do(jg).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 || jr.LeaderID != jr.MemberID || jr.Generation != 1 {
		t.Fatalf("JoinGroup v2: %+v", jr)
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.Generation, sg.MemberID = 0, "g2", jr.Generation, jr.MemberID
	sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: []byte("a")}}
	if r := w.do(sg).(*kmsg.SyncGroupResponse); r.ErrorCode != 0 || string(r.MemberAssignment) != "a" {
		t.Errorf("SyncGroup v0: %+v", r)
	}
}

// TestBadFramesCloseOnlyThatConnection: a malformed body, an oversized or
// undersized frame and an unknown key close the connection; the server and
// other connections carry on.
func TestBadFramesCloseOnlyThatConnection(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), MaxRequestBytes: 1 << 16})
	good := dial(t, addr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	good.do(md)
	bad := [][]byte{
		{0, 0, 0, 12, 0, 3, 0, 9, 0, 0, 0, 1, 0, 0, 0xff, 0xff},           // Metadata v9 with a truncated body
		{0x7f, 0xff, 0xff, 0xff},                                          // 2 GiB frame
		{0, 1, 0, 1},                                                      // 64 KiB + 1: over the limit
		{0, 0, 0, 3, 0, 3, 0},                                             // under a header
		{0, 0, 0, 10, 0, 19, 0, 0, 0, 0, 0, 1, 0, 0},                      // CreateTopics: not served
		{0, 0, 0, 10, 0, 1, 0, 2, 0, 0, 0, 1, 0, 0},                       // Fetch v2: below the range
		{0, 0, 0, 12, 0, 3, 0, 9, 0, 0, 0, 1, 0, 50, 'a', 'b'},            // client id longer than the frame
		{0, 0, 0, 14, 0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 0x05, 0x01, 0x05, 0}, // tags overrunning
	}
	for i, b := range bad {
		w := dial(t, addr)
		w.c.Write(b)
		if !w.closed() {
			t.Errorf("bad frame %d: connection not closed", i)
		}
	}
	good.do(md)
	dial(t, addr).do(md)
}

// TestLongPollWokenByAppend: a fetch parked at the log end with a long
// MaxWait returns as soon as a produce appends, not at the deadline.
func TestLongPollWokenByAppend(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	parked := make(chan struct{}, 4)
	var woken atomic.Int64
	_, addr := startServer(t, Config{LogDir: dir, Writable: true, hooks: countingHooks(parked, &woken)})
	w := dial(t, addr)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 11, -1, 1<<20, 1, 30000
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "none"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = 59, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	start := time.Now()
	produced := make(chan struct{})
	defer func() { <-produced }()
	go func() {
		defer close(produced)
		<-parked
		p := dial(t, addr)
		pr := kmsg.NewPtrProduceRequest()
		pr.Version, pr.Acks, pr.TimeoutMillis = 7, 1, 1000
		prt := kmsg.NewProduceRequestTopic()
		prt.Topic = "none"
		prp := kmsg.NewProduceRequestTopicPartition()
		prp.Records = rawBatch(t, 0)
		prt.Partitions = append(prt.Partitions, prp)
		pr.Topics = append(pr.Topics, prt)
		if r := p.do(pr).(*kmsg.ProduceResponse); r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Errorf("produce: %d", r.Topics[0].Partitions[0].ErrorCode)
		}
	}()
	resp := w.do(req).(*kmsg.FetchResponse)
	took := time.Since(start)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 60 {
		t.Fatalf("long poll: error %d, %d bytes, hw %d", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
	}
	if woken.Load() != 1 {
		t.Fatalf("long poll answered after %v, woken %d times: not woken by the append", took, woken.Load())
	}
}

// TestFetchResponseMaxBytes: the response limit spans partitions as
// ReplicaManager.readFromLog applies it: the first partition with data may
// exceed it by one whole batch (KIP-74), later ones get what is left,
// possibly ending inside a batch, then nothing.
func TestFetchResponseMaxBytes(t *testing.T) {
	dir := fixtureLogDir(t, "multi-0", "multi-1", "multi-2")
	_, addr := startServer(t, Config{LogDir: dir})
	w := dial(t, addr)
	fetchAll := func(maxBytes int32) []int {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxBytes = 12, -1, maxBytes
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "multi"
		for p := int32(0); p < 3; p++ {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp := w.do(req).(*kmsg.FetchResponse)
		var sizes []int
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("partition %d: error %d", p.Partition, p.ErrorCode)
			}
			sizes = append(sizes, len(p.RecordBatches))
		}
		return sizes
	}
	whole := fetchAll(50 << 20)
	for i, n := range whole {
		if n == 0 {
			t.Fatalf("partition %d empty with a large limit", i)
		}
	}
	l, _ := partition.OpenLog(filepath.Join(dir, "multi-0"), partition.LogOptions{})
	f, _ := fetch.Read(l, fetch.Request{FetchOffset: 0, MaxBytes: fetch.DefaultMaxBytes, PartitionMaxBytes: 1}, nil)
	first := len(f.Frame) // KIP-74: the first batch whole
	for _, c := range []struct {
		max  int32
		want []int
	}{
		{1, []int{first, 0, 0}},
		{int32(whole[0]), []int{whole[0], 0, 0}},
		{int32(whole[0] + 100), []int{whole[0], 100, 0}},
		{int32(whole[0] + whole[1] + 7), []int{whole[0], whole[1], 7}},
	} {
		got := fetchAll(c.max)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("max bytes %d: partition sizes %v, want %v", c.max, got, c.want)
				break
			}
		}
	}
}

// TestLongPollWokenByOtherProcess: a read-only server's parked fetch is
// woken when another writer (here klog's appender, as `klog produce` in
// another process would) appends to the partition: the inotify watch.
func TestLongPollWokenByOtherProcess(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	parked := make(chan struct{}, 4)
	var woken atomic.Int64
	s, addr := startServer(t, Config{LogDir: dir, hooks: countingHooks(parked, &woken)})
	model := s.lookup("none", 0).log
	w := dial(t, addr)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 11, -1, 1<<20, 1, 30000
	req.Topics = []kmsg.FetchRequestTopic{{Topic: "none", Partitions: []kmsg.FetchRequestTopicPartition{{FetchOffset: 59, PartitionMaxBytes: 1 << 20}}}}
	start := time.Now()
	appended := make(chan error, 1)
	go func() {
		<-parked
		a, err := produce.Open(filepath.Join(dir, "none-0"), produce.Options{})
		if err != nil {
			appended <- err
			return
		}
		_, err = a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("late")}}})
		if cerr := a.Close(); err == nil {
			err = cerr
		}
		appended <- err
	}()
	resp := w.do(req).(*kmsg.FetchResponse)
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 60 {
		t.Fatalf("long poll: error %d, %d bytes, hw %d", p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
	}
	if woken.Load() != 1 {
		t.Fatalf("long poll answered after %v, woken %d times: not woken by the other writer", time.Since(start), woken.Load())
	}
	// The model opened at start followed the other writer: no reopen.
	if s.lookup("none", 0).log != model || model.LogEndOffset() != 60 {
		t.Fatalf("model %p (was %p), log end %d, want 60", s.lookup("none", 0).log, model, model.LogEndOffset())
	}
}

// TestWritableOffsetsInLogDir: with --writable, commits go to the log
// dir's __consumer_offsets-N (not served as a topic) and survive a restart.
func TestWritableOffsetsInLogDir(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	commit := func(addr string) {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation = 2, "wg", -1
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "none", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Offset: 42}}}}
		if code := dial(t, addr).do(oc).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("commit: %d", code)
		}
	}
	s, err := New(Config{LogDir: dir, Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	commit(ln.Addr().String())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, OffsetsTopic+"-"+strconv.Itoa(int(offsetstore.Partition("wg"))))
	if _, err := os.Stat(part); err != nil {
		t.Fatalf("no %s: %v", part, err)
	}
	s2, addr := startServer(t, Config{LogDir: dir, Writable: true})
	if s2.topic(OffsetsTopic) != nil {
		t.Fatal("__consumer_offsets served as a topic")
	}
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 5, "wg"
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "none", Partitions: []int32{0}}}
	if got := dial(t, addr).do(of).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0].Offset; got != 42 {
		t.Fatalf("after restart: offset %d, want 42", got)
	}
}

// TestMetadataTopicIDs: topic ids come from partition.metadata (Kafka's
// Uuid, URL-safe base64); a topic without one has the zero id.
func TestMetadataTopicIDs(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "producer-0", "none-0")})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	resp := dial(t, addr).do(md).(*kmsg.MetadataResponse)
	ids := map[string][16]byte{}
	for _, tp := range resp.Topics {
		ids[*tp.Topic] = tp.TopicID
	}
	want := [16]byte{15: 1} // "AAAAAAAAAAAAAAAAAAAAAQ" in the fixture's partition.metadata
	if ids["producer"] != want || ids["none"] != ([16]byte{}) || len(ids) != 2 {
		t.Errorf("topic ids: %v", ids)
	}
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 0 || resp.ControllerID != 0 {
		t.Errorf("brokers: %+v controller %d", resp.Brokers, resp.ControllerID)
	}
}

// TestMetadataTopicIDsFromProduce: a topic klog produced carries its
// partition.metadata id into Metadata (both partitions share it), and a
// topic a writable server creates reports the id it wrote.
func TestMetadataTopicIDsFromProduce(t *testing.T) {
	dir := t.TempDir()
	want := [16]byte{0: 0x42, 6: 0x40, 8: 0x80, 15: 9}
	for i, id := range [][16]byte{want, {}} { // orders-1 takes orders-0's id
		a, err := produce.Open(filepath.Join(dir, "orders-"+strconv.Itoa(i)), produce.Options{Sync: produce.SyncNever, TopicID: id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("v")}}}); err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	w := dial(t, addr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	resp := w.do(md).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].TopicID != want || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("orders: %+v, want id %x with 2 partitions", resp.Topics, want)
	}

	// Auto-created: the id in the response is the one on disk.
	name := "fresh"
	md = kmsg.NewPtrMetadataRequest()
	md.Version, md.AllowAutoTopicCreation = 12, true
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &name}}
	resp = w.do(md).(*kmsg.MetadataResponse)
	disk, ok, err := partition.ReadTopicID(filepath.Join(dir, "fresh-0"))
	if err != nil || !ok || disk == ([16]byte{}) {
		t.Fatalf("fresh-0/partition.metadata: %x, %v, %v", disk, ok, err)
	}
	// The Metadata that created it answers as a KRaft broker does while
	// the controller creates the topic: UNKNOWN_TOPIC_OR_PARTITION, no
	// partitions; the next has it, with the id on disk.
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || len(resp.Topics[0].Partitions) != 0 {
		t.Fatalf("fresh, auto-created: %+v, want UNKNOWN_TOPIC_OR_PARTITION without partitions", resp.Topics)
	}
	resp = w.do(md).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || resp.Topics[0].TopicID != disk || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fresh: %+v, want id %x", resp.Topics, disk)
	}
	// Asked for by that id, the topic is found.
	md = kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{{TopicID: disk}}
	resp = w.do(md).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != "fresh" {
		t.Fatalf("by id: %+v", resp.Topics)
	}
}

// TestFetchSessions: no fetch session is offered (KIP-227), so a full
// fetch (epoch 0 or -1, whatever session it names: kafka-go sends -1, -1)
// is answered whole with SessionID 0, and an incremental one (epoch 1 and
// up) names a session that does not exist, as FetchManager.newContext
// answers.
func TestFetchSessions(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	w := dial(t, addr)
	for _, c := range []struct {
		id, epoch int32
		want      int16
	}{
		{0, -1, 0}, {0, 0, 0}, {-1, -1, 0}, {7, 0, 0}, {7, -1, 0},
		{7, 1, kerr.FetchSessionIDNotFound.Code}, {0, 1, kerr.FetchSessionIDNotFound.Code}, {-1, 3, kerr.FetchSessionIDNotFound.Code},
	} {
		for _, v := range []int16{7, 11, 12} {
			req := kmsg.NewPtrFetchRequest()
			req.Version, req.ReplicaID, req.MaxBytes, req.SessionID, req.SessionEpoch = v, -1, 1<<20, c.id, c.epoch
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "none"
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 1 << 20
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp := w.do(req).(*kmsg.FetchResponse)
			if resp.ErrorCode != c.want || resp.SessionID != 0 {
				t.Errorf("v%d session %d epoch %d: %s session %d, want %s", v, c.id, c.epoch, codeName(resp.ErrorCode), resp.SessionID, codeName(c.want))
				continue
			}
			if c.want == 0 && (len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0) {
				t.Errorf("v%d session %d epoch %d: no records: %+v", v, c.id, c.epoch, resp.Topics)
			}
		}
	}
}
