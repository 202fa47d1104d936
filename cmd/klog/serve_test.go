package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/serve"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// lockedBuffer is a bytes.Buffer safe to read while serve writes to it;
// waitMatch waits for a write that makes it match.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote == nil {
		l.wrote = make(chan struct{}, 1)
	}
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return l.b.Write(p)
}

// waitMatch returns re's first submatch once the buffer holds a match, or
// nil after a generous timeout.
func (l *lockedBuffer) waitMatch(re *regexp.Regexp) []string {
	timeout := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		if l.wrote == nil {
			l.wrote = make(chan struct{}, 1)
		}
		m, wrote := re.FindStringSubmatch(l.b.String()), l.wrote
		l.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-wrote:
		case <-timeout:
			return nil
		}
	}
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	klogtest.CopyPartition(t, segments(t, "kafka-written", "v2-none"), filepath.Join(dir, "t-0"))
	cases := []struct {
		name      string
		args      []string
		stderrHas string
	}{
		{"no log dir", []string{"serve"}, "log-dir"},
		{"not a dir", []string{"serve", "--log-dir", filepath.Join(dir, "nope")}, "is not a directory"},
		{"state is the log dir", []string{"serve", "--log-dir", dir, "--state", dir}, "--state must not be the log dir"},
		{"state bound not bytes", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--state-max-bytes", "lots"}, "--state-max-bytes"},
		{"state groups negative", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--state-max-groups", "-1"}, "--state-max-groups"},
		{"state with writable", []string{"serve", "--log-dir", dir, "--writable", "--state", t.TempDir()}, "--state is for read-only"},
		{"half tls", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--tls-cert", "x.pem"}, "go together"},
		{"arguments", []string{"serve", "--log-dir", dir, "extra"}, "unexpected arguments"},
		{"port in use", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--listen", "256.0.0.1:1"}, "serve:"},
		{"every interface, no auth", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--listen", ":0"}, "--allow-unauthenticated"},
		{"no loopback, no auth", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--listen", "192.0.2.1:0"}, "is not a loopback address"},
		{"users file missing", []string{"serve", "--log-dir", dir, "--state", t.TempDir(), "--sasl-users", filepath.Join(dir, "nope")}, "--sasl-users"},
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
// runServeCmd runs klog serve with args, read-only on a port of 127.0.0.1
// with its state in a temporary directory, and returns once it listens:
// its address, its stderr, and stop, which ends it as SIGINT would and
// gives its exit code (the test fails if it does not stop in 15 s).
func runServeCmd(t *testing.T, args ...string) (addr string, stderr *lockedBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"klog", "serve", "--listen", "127.0.0.1:0", "--state", t.TempDir()}, args...),
			strings.NewReader(""), &bytes.Buffer{}, stderr)
	}()
	stopped := false
	stop = func() int {
		t.Helper()
		if stopped {
			return -1
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(15 * time.Second):
			t.Fatal("serve did not stop")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	m := stderr.waitMatch(regexp.MustCompile(`on (127\.0\.0\.1:\d+) \(read-only`))
	if m == nil {
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	return m[1], stderr, stop
}

// and stops cleanly (exit 0) when its context ends, as on SIGINT/SIGTERM.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	klogtest.CopyPartition(t, segments(t, "kafka-written", "v2-none"), filepath.Join(dir, "orders-0"))
	reqLog := filepath.Join(t.TempDir(), "requests.jsonl")
	addr, stderr, stop := runServeCmd(t, "--log-dir", dir, "--request-log", reqLog)
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
	if code := stop(); code != ExitOK || !strings.Contains(stderr.String(), "klog: serve: stopped") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	data, _ := os.ReadFile(reqLog)
	if !strings.Contains(string(data), `"apiName":"Fetch"`) {
		t.Errorf("request log has no Fetch line:\n%s", data)
	}
}

// needKcat finds kcat: the test skips without it, except under CI (which
// installs it).
func needKcat(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kcat is required under CI (.ci/run installs it): %v", err)
		}
		t.Skipf("kcat not available: %v", err)
	}
	return path
}

// startServe serves cfg in-process on 127.0.0.1:0 until the returned stop.
func startServe(t *testing.T, cfg serve.Config) (addr string, stop func()) {
	t.Helper()
	srv, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return ln.Addr().String(), func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, serve.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}
}

// kcatGroup consumes n records as member of group through kcat's balanced
// consumer (librdkafka commits what it consumed when it closes) and
// returns their offsets.
func kcatGroup(t *testing.T, kcat, addr, group string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kcat, "-b", addr, "-G", group, "-X", "auto.offset.reset=earliest", "-c", strconv.Itoa(n),
		"-q", "-f", `%o\n`, "orders").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -G: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// followFirst runs `klog fetch --follow --group` and returns the offset of
// the first record it printed, and its last position line.
func followFirst(t *testing.T, args ...string) (first, position string) {
	t.Helper()
	code, out, errs := klog(t, append([]string{"fetch", "--follow", "--timeout", "500ms"}, args...)...)
	if code != ExitOK {
		t.Fatalf("klog fetch %v: exit %d\n%s\n%s", args, code, out, errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(l, "| offset: "); ok && first == "" {
			first, _, _ = strings.Cut(f, " ")
		}
		if strings.HasPrefix(l, "position: ") {
			position = l
		}
	}
	return first, position
}

// TestGroupOffsetsSharedWithServe: one committed-offset store. A group
// kcat commits through `klog serve` resumes with `klog fetch --follow
// --group`, and a group klog fetch commits resumes with kcat through
// serve; writable (the log dir's __consumer_offsets) and read-only (serve's
// --state, which fetch names with --state).
func TestGroupOffsetsSharedWithServe(t *testing.T) {
	kcat := needKcat(t)
	dir := t.TempDir()
	part := filepath.Join(dir, "orders-0")
	klogtest.CopyPartition(t, segments(t, "kafka-written", "v2-none"), part)
	// serve (kcat) -> fetch, writable.
	addr, stop := startServe(t, serve.Config{LogDir: dir, Writable: true})
	if got := kcatGroup(t, kcat, addr, "to-fetch", 10); len(got) != 10 || got[0] != "0" || got[9] != "9" {
		t.Fatalf("kcat consumed %v, want offsets 0-9", got)
	}
	stop()
	if first, pos := followFirst(t, "--log", part, "--group", "to-fetch"); first != "10" || pos != "position: 59 highWatermark: 59 lag: 0" {
		t.Fatalf("klog fetch resumed the group at %q (%s), want 10", first, pos)
	}
	// fetch -> serve (kcat), writable: fetch commits at its high watermark
	// (--high-watermark 9, the end of the first batch, stops it there).
	if first, pos := followFirst(t, "--log", part, "--group", "to-kcat", "--high-watermark", "9"); first != "0" || !strings.HasPrefix(pos, "position: 9 ") {
		t.Fatalf("klog fetch --high-watermark 9: first %q, %s", first, pos)
	}
	addr, stop = startServe(t, serve.Config{LogDir: dir, Writable: true})
	if got := kcatGroup(t, kcat, addr, "to-kcat", 3); len(got) != 3 || got[0] != "9" {
		t.Fatalf("kcat resumed %v, want 9, 10, 11", got)
	}
	stop()
	// Read-only: serve keeps the commits in --state; fetch --state finds
	// them, and the log dir is not changed.
	state := t.TempDir()
	addr, stop = startServe(t, serve.Config{LogDir: dir, StateDir: state})
	if got := kcatGroup(t, kcat, addr, "ro", 4); len(got) != 4 || got[0] != "0" {
		t.Fatalf("kcat through a read-only serve: %v", got)
	}
	stop()
	if first, _ := followFirst(t, "--log", part, "--group", "ro", "--state", state); first != "4" {
		t.Fatalf("klog fetch --state resumed at %q, want 4", first)
	}
	code, out, _ := klog(t, "verify", "--quiet", dir, state)
	if code != ExitOK {
		t.Errorf("klog verify of the log dir and the state dir: exit %d\n%s", code, out)
	}
}

// TestServeAuthFlags: off loopback without --sasl-users serve needs
// --allow-unauthenticated and warns; with --sasl-users clients
// authenticate (SASL/PLAIN here; serve's tests run every mechanism and
// client).
func TestServeAuthFlags(t *testing.T) {
	dir := t.TempDir()
	klogtest.CopyPartition(t, segments(t, "kafka-written", "v2-none"), filepath.Join(dir, "orders-0"))
	users := filepath.Join(t.TempDir(), "users")
	os.WriteFile(users, []byte("alice read alice-secret\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0", "--allow-unauthenticated"}, "WARNING: 0.0.0.0:0 without authentication"},
		{[]string{"--listen", "127.0.0.1:0", "--sasl-users", users}, "SASL users alice"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var stderr lockedBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, append([]string{"klog", "serve", "--log-dir", dir, "--state", t.TempDir()}, c.args...),
				strings.NewReader(""), &bytes.Buffer{}, &stderr)
		}()
		m := stderr.waitMatch(regexp.MustCompile(`on ([0-9.:\[\]]+:\d+) \(read-only`))
		if m == nil || !strings.Contains(stderr.String(), c.want) {
			cancel()
			t.Fatalf("%v: %s", c.args, stderr.String())
		}
		if strings.Contains(c.want, "SASL") {
			addr := m[1]
			bad, _ := kgo.NewClient(kgo.SeedBrokers(addr))
			pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := bad.Ping(pctx); err == nil {
				t.Errorf("a client without SASL was served")
			}
			bad.Close()
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"orders": {0: kgo.NewOffset().AtStart()}}))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for n < 59 && pctx.Err() == nil {
				n += cl.PollFetches(pctx).NumRecords()
			}
			pcancel()
			cl.Close()
			if n != 59 {
				t.Errorf("alice consumed %d records, want 59", n)
			}
		}
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("%v: exit %d", c.args, code)
		}
	}
}
