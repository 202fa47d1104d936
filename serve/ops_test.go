package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/jsoncontract"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPartialTopic: a broker's log dir holding some of a topic's
// partitions (t-0 and t-2) is served: Metadata lists 0..2, partition 1
// without a leader (LEADER_NOT_AVAILABLE), and the others are consumed.
func TestPartialTopic(t *testing.T) {
	dir := t.TempDir()
	klogtest.CopyPartition(t, filepath.Join("..", "testdata", "segments", fixtureTopics["none-0"]), filepath.Join(dir, "t-0"))
	klogtest.CopyPartition(t, filepath.Join("..", "testdata", "segments", fixtureTopics["none-0"]), filepath.Join(dir, "t-2"))
	if _, err := New(Config{LogDir: dir}); err == nil {
		t.Fatal("a read-only server without a state dir started")
	}
	_, addr := startServer(t, Config{LogDir: dir})
	w := dial(t, addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	md := w.do(req).(*kmsg.MetadataResponse)
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 3 {
		t.Fatalf("metadata %+v", md.Topics)
	}
	for i, p := range md.Topics[0].Partitions {
		wantCode, wantLeader := int16(0), int32(0)
		if i == 1 {
			wantCode, wantLeader = kerr.LeaderNotAvailable.Code, -1
		}
		if p.Partition != int32(i) || p.ErrorCode != wantCode || p.Leader != wantLeader {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
	want := dumpRecords(t, filepath.Join(dir, "t-0"))
	for _, n := range []int32{0, 2} {
		sameRecs(t, "t-"+string(rune('0'+n)), consumeKgo(t, addr, "t", n, kgo.ReadUncommitted(), len(want)), want)
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version, lo.ReplicaID = 4, -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp = 1, -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	if got := w.do(lo).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode; got != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("ListOffsets of the missing partition: error %d", got)
	}
}

// TestRequestLog: one JSON line per request, shaped like the broker's
// request log, with the client's software name from ApiVersions v3+.
func TestRequestLog(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	wrote := make(chan struct{}, 1)
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case wrote <- struct{}{}:
		default:
		}
		return buf.Write(p)
	})
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), RequestLog: w})
	consumeKgo(t, addr, "none", 0, kgo.ReadUncommitted(), 59)
	c := dial(t, addr)
	c.c.Write([]byte{0, 0, 0, 10, 0, 19, 0, 0, 0, 0, 0, 1, 0, 0})
	c.closed()
	// A line is written after its response, by the connection's own
	// goroutine: wait for lines until every expected one is there.
	timeout := time.After(30 * time.Second)
	for {
		mu.Lock()
		all := true
		for _, api := range []string{"ApiVersions", "Metadata", "ListOffsets", "Fetch", "CreateTopics"} {
			all = all && bytes.Contains(buf.Bytes(), []byte(`"apiName":"`+api+`"`))
		}
		mu.Unlock()
		if all {
			break
		}
		select {
		case <-wrote:
		case <-timeout:
			t.Fatal("the request log never had every expected line")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	keys := map[string]bool{}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var m struct {
			Type          string
			RequestHeader struct {
				RequestApiKey, RequestApiVersion int
				CorrelationId                    int
				ClientId                         string
			}
			ApiName           string
			Connection        string
			TotalTimeMs       *float64
			ClientInformation struct{ SoftwareName string }
			ErrorCode         *int
			Error             string
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %s", sc.Text())
		}
		if err := jsoncontract.Line(sc.Bytes()); err != nil {
			t.Error(err)
		}
		switch m.Type {
		case "request":
			if m.TotalTimeMs == nil || m.ErrorCode == nil || m.Connection == "" || m.RequestHeader.ClientId != "kgo" {
				t.Errorf("incomplete line: %s", sc.Text())
			}
			keys[m.ApiName] = true
			// kgo opens with ApiVersions v5 and, on a connection where
			// the KIP-511 answer taught it v4, tells its name.
			if m.ApiName != "ApiVersions" && m.ClientInformation.SoftwareName == "kgo" {
				keys["software"] = true
			}
		case "requestError":
			keys["error:"+m.ApiName] = m.Error != ""
		default:
			t.Errorf("line without a known type: %s", sc.Text())
		}
	}
	for _, k := range []string{"ApiVersions", "Metadata", "ListOffsets", "Fetch", "error:CreateTopics", "software"} {
		if !keys[k] {
			t.Errorf("no %s line in the request log (%v)", k, keys)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestGracefulShutdown: a long poll in flight is answered (not cut) when
// the server shuts down, idle connections are closed, and Shutdown
// returns promptly.
func TestGracefulShutdown(t *testing.T) {
	fetching := make(chan struct{}, 1)
	s, err := New(Config{LogDir: fixtureLogDir(t, "none-0"), StateDir: t.TempDir(), hooks: hooks{dispatched: func(key int16) {
		if key == 1 {
			fetching <- struct{}{}
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	addr := ln.Addr().String()
	idle := dial(t, addr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	idle.do(md)
	poll := dial(t, addr)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 11, -1, 1<<20, 1, 60000
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "none"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = 59, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	poll.send(req)
	<-fetching // in its handler: Shutdown must let it answer
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
	body, err := poll.readFrame()
	if err != nil {
		t.Fatalf("the parked fetch got no answer: %v", err)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 11
	if err := resp.ReadFrom(body); err != nil || resp.Topics[0].Partitions[0].HighWatermark != 59 {
		t.Fatalf("the parked fetch's answer: %v %+v", err, resp)
	}
	if !idle.closed() {
		t.Errorf("an idle connection stayed open")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("still accepting after shutdown")
	}
}

// TestConnectionLimit: connections beyond MaxConnections are closed on
// accept; the others keep working.
func TestConnectionLimit(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), MaxConnections: 2})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	a, b := dial(t, addr), dial(t, addr)
	a.do(md)
	b.do(md)
	c := dial(t, addr)
	c.send(md)
	if !c.closed() {
		t.Errorf("a third connection was served with MaxConnections 2")
	}
	a.do(md)
}

// TestIdleConnections: 1,000 idle client connections cost under 100 MiB
// (measured as the Go heap and stacks the server holds for them).
func TestIdleConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), MaxConnectionsPerIP: 1000})
	measure := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse + ms.StackInuse
	}
	before := measure()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	conns := make([]*wire, 1000)
	for i := range conns {
		conns[i] = dial(t, addr)
		conns[i].do(md) // a served, then idle, connection
	}
	after := measure()
	per := float64(after-before) / 1000
	t.Logf("1,000 idle connections: %.1f MiB in use (%.1f KiB each, client side included)", float64(after-before)/(1<<20), per/1024)
	if after-before > 100<<20 {
		t.Fatalf("1,000 idle connections cost %d MiB", (after-before)>>20)
	}
}

// TestTLS: --tls-cert/--tls-key serve TLS (with the copy path for fetch).
func TestTLS(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	dir := fixtureLogDir(t, "none-0")
	_, addr := startServer(t, Config{LogDir: dir, TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	pool := x509.NewCertPool()
	parsed, _ := x509.ParseCertificate(der)
	pool.AddCert(parsed)
	dialer := &tls.Dialer{Config: &tls.Config{RootCAs: pool}}
	got := consumeKgo(t, addr, "none", 0, kgo.ReadUncommitted(), 59, kgo.Dialer(dialer.DialContext))
	sameRecs(t, "over TLS", got, dumpRecords(t, filepath.Join(dir, "none-0")))
}

// TestLogDirLock: a writable server takes the log dir's .lock as a broker
// does; while another process (a broker) holds it, serve --writable
// refuses to start. Read-only serving neither takes nor creates it.
func TestLogDirLock(t *testing.T) {
	if dir := os.Getenv("KLOG_SERVE_HOLD_LOCK"); dir != "" {
		// The helper process: hold the lock like a broker until killed.
		if _, err := safeio.LockBroker(dir); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := fixtureLogDir(t, "none-0")
	startServer(t, Config{LogDir: dir})
	if _, err := os.Stat(filepath.Join(dir, safeio.BrokerLockFile)); !os.IsNotExist(err) {
		t.Fatalf("read-only serve created %s: %v", safeio.BrokerLockFile, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogDirLock$")
	cmd.Env = append(os.Environ(), "KLOG_SERVE_HOLD_LOCK="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("helper: %q", line)
	}
	if _, err := New(Config{LogDir: dir, Writable: true}); !errors.As(err, new(*safeio.BrokerLockError)) {
		t.Fatalf("writable serve beside a lock holder: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	s, err := New(Config{LogDir: dir, Writable: true})
	if err != nil {
		t.Fatalf("after the holder exited: %v", err)
	}
	s.Close()
}

// TestIdleTimeout: a connection that sends nothing for IdleTimeout is
// closed (connections.max.idle.ms); one with a request in flight for
// longer (a long poll) is not idle, and carries on after its answer.
func TestIdleTimeout(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), IdleTimeout: 300 * time.Millisecond})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	busy, idle := dial(t, addr), dial(t, addr)
	idle.do(md)
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 11, -1, 1<<20, 1, 1500
	req.Topics = []kmsg.FetchRequestTopic{{Topic: "none", Partitions: []kmsg.FetchRequestTopicPartition{{FetchOffset: 59, PartitionMaxBytes: 1 << 20}}}}
	busy.do(req) // parked at the log end for its MaxWait, five idle timeouts
	if !idle.closed() {
		t.Errorf("an idle connection stayed open past IdleTimeout")
	}
	busy.do(md)
}

// TestDeletePartialTopic: DeleteTopics of a topic the log dir holds only
// some partitions of (t-0 and t-2) deletes those and skips the others.
func TestDeletePartialTopic(t *testing.T) {
	dir := t.TempDir()
	klogtest.CopyPartition(t, filepath.Join("..", "testdata", "segments", fixtureTopics["none-0"]), filepath.Join(dir, "t-0"))
	klogtest.CopyPartition(t, filepath.Join("..", "testdata", "segments", fixtureTopics["none-0"]), filepath.Join(dir, "t-2"))
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	adm := kadm.NewClient(mustKgo(t, addr))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dr, err := adm.DeleteTopics(ctx, "t")
	if err != nil || dr["t"].Err != nil {
		t.Fatalf("delete: %v %+v", err, dr)
	}
	for _, p := range []string{"t-0", "t-2"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s left after delete: %v", p, err)
		}
	}
}
