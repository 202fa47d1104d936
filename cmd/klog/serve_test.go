package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// lockedBuffer is a bytes.Buffer safe to read while serve writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func copyPartitionDir(t *testing.T, src, dst string) {
	t.Helper()
	os.MkdirAll(dst, 0o755)
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".txt") || de.IsDir() {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(src, de.Name()))
		os.WriteFile(filepath.Join(dst, de.Name()), data, 0o644)
	}
}

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	copyPartitionDir(t, segments(t, "kafka-written", "v2-none"), filepath.Join(dir, "t-0"))
	gap := t.TempDir()
	copyPartitionDir(t, segments(t, "kafka-written", "v2-none"), filepath.Join(gap, "t-1"))
	cases := []struct {
		name      string
		args      []string
		stderrHas string
	}{
		{"no log dir", []string{"serve"}, "log-dir"},
		{"not a dir", []string{"serve", "--log-dir", filepath.Join(dir, "nope")}, "is not a directory"},
		{"state is the log dir", []string{"serve", "--log-dir", dir, "--state", dir}, "--state must not be the log dir"},
		{"state with writable", []string{"serve", "--log-dir", dir, "--writable", "--state", t.TempDir()}, "--state is for read-only"},
		{"half tls", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--tls-cert", "x.pem"}, "go together"},
		{"non-contiguous", []string{"serve", "--log-dir", gap, "--state", t.TempDir()}, `topic "t" has partitions that are not 0..0`},
		{"arguments", []string{"serve", "--log-dir", dir, "extra"}, "unexpected arguments"},
		{"port in use", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--listen", "256.0.0.1:1"}, "serve:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := klog(t, c.args...)
			if code != ExitTrouble || !strings.Contains(errs, c.stderrHas) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.stderrHas)
			}
		})
	}
}

// TestServeEndToEnd: `klog serve` serves a kgo consumer, logs requests,
// and stops cleanly (exit 0) when its context ends, as on SIGINT/SIGTERM.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	copyPartitionDir(t, segments(t, "kafka-written", "v2-none"), filepath.Join(dir, "orders-0"))
	reqLog := filepath.Join(t.TempDir(), "requests.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"klog", "serve", "--log-dir", dir, "--listen", "127.0.0.1:0", "--state", t.TempDir(),
			"--request-log", reqLog}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	}()
	re := regexp.MustCompile(`on (127\.0\.0\.1:\d+) \(read-only`)
	var addr string
	for i := 0; i < 200 && addr == ""; i++ {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if addr == "" {
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	n := 0
	for n < 59 && pctx.Err() == nil {
		n += cl.PollFetches(pctx).NumRecords()
	}
	pcancel()
	cl.Close()
	if n != 59 {
		t.Fatalf("consumed %d records, want 59", n)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK || !strings.Contains(stderr.String(), "klog: serve: stopped") {
			t.Fatalf("exit %d, stderr %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	data, _ := os.ReadFile(reqLog)
	if !strings.Contains(string(data), `"apiName":"Fetch"`) {
		t.Errorf("request log has no Fetch line:\n%s", data)
	}
}
