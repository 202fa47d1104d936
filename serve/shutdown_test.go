package serve

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShutdownWithAClientThatDoesNotRead (issue 24 item 9): a client that
// asks for megabytes and never reads cannot hold Shutdown: the response
// being written gets ShutdownWriteGrace, then the connection ends, and
// Shutdown returns without its context's deadline (10 s before).
func TestShutdownWithAClientThatDoesNotRead(t *testing.T) {
	logDir := t.TempDir()
	a, err := produce.Open(filepath.Join(logDir, "big-0"), produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]format.Record, 100)
	for i := range recs {
		recs[i].Value = bytes.Repeat([]byte{'x'}, 1000)
	}
	for range 80 { // 8 MB
		if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	fetched := make(chan struct{}, 64)
	s, err := New(Config{LogDir: logDir, StateDir: t.TempDir(), hooks: hooks{dispatched: func(key int16) {
		if key == 1 {
			fetched <- struct{}{}
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	for i := range 4 {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes = 11, -1, 64<<20, 1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "big"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 64 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if _, err := c.Write(encodeRequest(req, int32(i), "never-reads")); err != nil {
			t.Fatal(err)
		}
	}
	<-fetched // the first response is being written into a full socket
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v (the client that does not read held it)", err)
	}
	<-served
}
