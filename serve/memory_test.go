package serve

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klog-dev/klog/internal/hostile"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The memory attacks of issue 24 against a `klog serve` process: each
// must leave the server under rssBound of resident memory (its VmHWM, the
// peak) while a normal consumer on another connection keeps being
// answered. Before serve's bounds (limits.go) they peaked at 2.0, 1.7 and
// 3.4 GiB (README); KLOG_SERVE_TEST_BIN runs them against such a build.
const rssBound = 256 << 20

var (
	klogOnce sync.Once
	klogBin  string
	klogErr  error
)

// klogBinary builds cmd/klog once for the package's tests
// (KLOG_SERVE_TEST_BIN names a binary to use instead).
func klogBinary(t *testing.T) string {
	t.Helper()
	klogOnce.Do(func() {
		if b := os.Getenv("KLOG_SERVE_TEST_BIN"); b != "" {
			// The attacks against another build (main's, to see them
			// fail there).
			klogBin = b
			return
		}
		dir, err := os.MkdirTemp("", "klog-serve-test-")
		if err != nil {
			klogErr = err
			return
		}
		klogBin = filepath.Join(dir, "klog")
		if out, err := exec.Command("go", "build", "-o", klogBin, "../cmd/klog").CombinedOutput(); err != nil {
			klogErr = err
			klogBin = string(out)
		}
	})
	if klogErr != nil {
		t.Fatalf("go build ../cmd/klog: %v\n%s", klogErr, klogBin)
	}
	return klogBin
}

// serveProcess runs `klog serve` with args on 127.0.0.1:0 and returns its
// process and address; it is stopped at the end of the test.
func serveProcess(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(klogBinary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("klog serve: %q %v", line, err)
	}
	go io.Copy(io.Discard, r)
	// "klog: serve: DIR on ADDR (mode)"
	_, rest, ok := strings.Cut(line, " on ")
	addr, _, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 {
		t.Fatalf("klog serve said %q", line)
	}
	return cmd, addr
}

// peakRSS is a process's VmHWM in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// consumer fetches topic none from offset 0 in a loop on its own
// connection until stop closes, and reports how many answers it had and
// the slowest (for the log: the test asserts only that it was answered).
func consumer(t *testing.T, addr string, stop <-chan struct{}) (done func() (answers int, slowest time.Duration)) {
	w := dial(t, addr)
	var n int
	var slow time.Duration
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxBytes = 11, -1, 1<<20
		req.Topics = []kmsg.FetchRequestTopic{{Topic: "none", Partitions: []kmsg.FetchRequestTopicPartition{{PartitionMaxBytes: 1 << 20}}}}
		for {
			start := time.Now()
			w.corr++
			if _, err := w.c.Write(encodeRequest(req, w.corr, "consumer")); err != nil {
				return
			}
			if _, err := w.readFrame(); err != nil {
				return
			}
			n++
			slow = max(slow, time.Since(start))
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	return func() (int, time.Duration) { <-finished; return n, slow }
}

// attack runs f on n connections at once, with a consumer answering
// throughout, and checks the server's peak RSS.
func attack(t *testing.T, cmd *exec.Cmd, addr string, n int, f func(w *wire)) {
	t.Helper()
	stop := make(chan struct{})
	done := consumer(t, addr, stop)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		w := dialFrom(t, "127.0.0.2", addr)
		wg.Add(1)
		go func() { defer wg.Done(); f(w) }()
	}
	wg.Wait()
	close(stop)
	answers, slowest := done()
	rss := peakRSS(t, cmd.Process.Pid)
	t.Logf("peak RSS %d MiB; the consumer had %d answers, the slowest in %v", rss>>20, answers, slowest)
	if answers == 0 {
		t.Errorf("the consumer was not answered during the attack")
	}
	if rss > rssBound {
		t.Errorf("peak RSS %d MiB, over %d MiB", rss>>20, rssBound>>20)
	}
}

// rawProduce sends a Produce v9 frame for topic t whose partition records
// are body, and reads the answer (or the close).
func rawProduce(w *wire, body []byte) {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: body}}}}
	w.corr++
	if _, err := w.c.Write(encodeRequest(req, w.corr, "attack")); err != nil {
		return
	}
	w.readFrame()
}

// TestMemoryZstdBombs: 16 connections produce 15 KB zstd batches that
// decompress to 480 MiB and 4 KB ones that decompress to 120 MiB (under
// the format package's own cap), two of each.
func TestMemoryZstdBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds klog and runs an attack")
	}
	dir := fixtureLogDir(t, "none-0")
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	cmd, addr := serveProcess(t, "--log-dir", dir, "--writable")
	corpus := hostile.Produce()
	attack(t, cmd, addr, 16, func(w *wire) {
		for i := 0; i < 2; i++ {
			rawProduce(w, corpus["zstd-bomb-15k"])
			rawProduce(w, corpus["zstd-bomb-120m"])
		}
	})
}

// TestMemoryHugeFrames: 12 connections send a 95 MiB request frame each.
func TestMemoryHugeFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds klog and runs an attack")
	}
	dir := fixtureLogDir(t, "none-0")
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	cmd, addr := serveProcess(t, "--log-dir", dir, "--writable")
	body := make([]byte, 95<<20)
	attack(t, cmd, addr, 12, func(w *wire) { rawProduce(w, body) })
}

// TestMemoryGroupMetadata: 8 groups whose members join with 40 MiB of
// protocol metadata, and 8 with 2 MiB (a frame within the budget, a group
// record over message.max.bytes), on a read-only server: its memory stays
// bounded and its state dir small.
func TestMemoryGroupMetadata(t *testing.T) {
	if testing.Short() {
		t.Skip("builds klog and runs an attack")
	}
	state := t.TempDir()
	cmd, addr := serveProcess(t, "--log-dir", fixtureLogDir(t, "none-0"), "--state", state)
	var seq sync.Mutex
	group := 0
	// roundTrip sends req and decodes its answer into resp; false when
	// the server closed the connection.
	roundTrip := func(w *wire, req kmsg.Request, resp kmsg.Response) bool {
		w.corr++
		if _, err := w.c.Write(encodeRequest(req, w.corr, "attack")); err != nil {
			return false
		}
		frame, err := w.readFrame()
		return err == nil && resp.ReadFrom(frame) == nil
	}
	attack(t, cmd, addr, 16, func(w *wire) {
		seq.Lock()
		group++
		g, size := "g"+strconv.Itoa(group), 2<<20
		if group%2 == 0 {
			size = 40 << 20
		}
		seq.Unlock()
		req := joinReq(g, "", nil)
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: bytes.Repeat([]byte{1}, size)}}
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.Version = req.Version
		if !roundTrip(w, req, resp) || resp.MemberID == "" {
			return
		}
		// The rejoin with the member id (KIP-394), then the leader's
		// assignment of as many bytes.
		req.MemberID = resp.MemberID
		if !roundTrip(w, req, resp) || resp.ErrorCode != 0 {
			return
		}
		sync := kmsg.NewPtrSyncGroupRequest()
		sync.Version, sync.Group, sync.MemberID, sync.Generation = 3, g, resp.MemberID, resp.Generation
		sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: resp.MemberID, MemberAssignment: bytes.Repeat([]byte{2}, size)}}
		sresp := kmsg.NewPtrSyncGroupResponse()
		sresp.Version = 3
		roundTrip(w, sync, sresp)
	})
	var total int64
	filepath.Walk(state, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		return nil
	})
	t.Logf("state dir: %d bytes", total)
	if total > 16<<20 {
		t.Errorf("the read-only server wrote %d MiB of state", total>>20)
	}
}
