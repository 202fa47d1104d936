package recordfmt_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/recordfmt"
	"github.com/klog-dev/klog/serve"
)

// The records both kcat (through klog serve) and recordfmt print: null and
// empty keys and values, binary and UTF-8 bytes, headers with null and
// empty values, a compressed batch.
func writePartition(t *testing.T, dir string) {
	t.Helper()
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	batches := [][]format.Record{
		{{Key: []byte("k1"), Value: []byte("plain value"), Timestamp: 1700000000000}},
		{{Key: nil, Value: []byte("null key"), Timestamp: 1700000000001},
			{Key: []byte{}, Value: []byte{}, Timestamp: 1700000000002},
			{Key: []byte("null value"), Value: nil, Timestamp: 1700000000003}},
		{{Key: []byte("h"), Value: []byte("héllo wörld ✓"), Timestamp: 1700000000004, Headers: []format.Header{
			{Key: []byte("trace"), Value: []byte("abc")}, {Key: []byte("nil"), Value: nil}, {Key: []byte("empty"), Value: []byte{}}}}},
		{{Key: []byte{0, 1, 2, 0xff}, Value: []byte{0x7f, 0x80, 0, 'x'}, Timestamp: 1700000000005}},
	}
	for i, recs := range batches {
		c := format.CompressionNone
		if i == 2 {
			c = format.CompressionGzip
		}
		if _, err := a.Append(&produce.Batch{Records: recs, Compression: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// klogRecords reads the partition as recordfmt sees it.
func klogRecords(t *testing.T, dir string) []recordfmt.Record {
	t.Helper()
	var out []recordfmt.Record
	for _, r := range klogtest.ReadRecords(t, dir) {
		rec := recordfmt.Record{Topic: "fmt", Partition: 0, Offset: r.Offset, Timestamp: r.Timestamp,
			Key: r.Key, Value: r.Value, LeaderEpoch: r.LeaderEpoch}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, recordfmt.Header{Key: h.Key, Value: h.Value})
		}
		out = append(out, rec)
	}
	return out
}

// TestKcatFormatsMatchKcat runs kcat against klog serve over the same
// partition and compares its -f output with recordfmt's, byte for byte.
// kcat is required under CI=true (.ci/run installs it).
func TestKcatFormatsMatchKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kcat is required under CI: %v", err)
		}
		t.Skip("kcat not installed")
	}
	logDir := t.TempDir()
	dir := filepath.Join(logDir, "fmt-0")
	writePartition(t, dir)
	srv, err := serve.New(serve.Config{LogDir: logDir, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}()
	recs := klogRecords(t, dir)
	formats := []struct {
		f    string
		null bool
	}{
		{`%t|%p|%o|%T|%k|%K|%s|%S|%h\n`, false},
		{`%t|%p|%o|%T|%k|%K|%s|%S|%h\n`, true},
		{`%R%s`, false},
		{`[\x41\t\065\012%%\q] %o\n`, false},
		{`key=%k value=%s headers=%h;`, false},
	}
	for _, fc := range formats {
		args := []string{"-C", "-b", ln.Addr().String(), "-t", "fmt", "-p", "0", "-o", "beginning", "-e", "-q", "-f", fc.f}
		if fc.null {
			args = append(args, "-Z")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, kcat, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("kcat %v: %v\n%s", args, err, stderr.String())
		}
		k, err := recordfmt.ParseKcat(fc.f)
		if err != nil {
			t.Fatal(err)
		}
		if fc.null {
			k.Null = "NULL"
		}
		var got []byte
		for i := range recs {
			got = k.Append(got, &recs[i])
		}
		if !bytes.Equal(got, stdout.Bytes()) {
			t.Errorf("-f %q (-Z %v):\nklog %q\nkcat %q", fc.f, fc.null, got, stdout.Bytes())
		}
	}
}
