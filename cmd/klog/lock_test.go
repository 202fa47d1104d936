package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"
)

// tryLockProbe is the test binary as a second process probing path the
// way Java's FileChannel.tryLock does on Linux (traced: one
// fcntl(F_SETLK, {F_WRLCK, SEEK_SET, 0, 0}) on a descriptor opened
// read-write, creating the file): for each line on stdin it answers
// "held" or "free", after dropping the lock it got by closing.
func tryLockProbe(path string) int {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
		// Released before answering: the test asks the next prober as
		// soon as it reads the answer, and a lock still held by this
		// one would read as "held" there.
		f.Close()
		switch err {
		case nil:
			fmt.Println("free")
		case unix.EAGAIN, unix.EACCES:
			fmt.Println("held")
		default:
			fmt.Println("error:", err)
		}
	}
	return 0
}

// prober is a probing process, asked one line at a time.
type prober struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
}

func startProber(t *testing.T, name string, cmd *exec.Cmd) *prober {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &prober{name: name, cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return p
}

func (p *prober) probe(t *testing.T) string {
	t.Helper()
	if _, err := io.WriteString(p.in, "probe\n"); err != nil {
		t.Fatalf("%s prober: %v", p.name, err)
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("%s prober: %v", p.name, err)
	}
	return strings.TrimSpace(line)
}

// lockSoak is how long TestBrokerLockHeldWhileServing keeps serve busy:
// $KLOG_LOCK_SOAK (.ci/run sets minutes), else a few seconds.
func lockSoak(t *testing.T) time.Duration {
	if v := os.Getenv("KLOG_LOCK_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("KLOG_LOCK_SOAK: %v", err)
		}
		return d
	}
	return 3 * time.Second
}

// TestBrokerLockHeldWhileServing: klog serve --writable holds its log
// dir's .lock for as long as it runs, whatever it does meanwhile. While a
// client produces into auto-created topics (each one opens a new appender)
// and into existing ones, another process probes the lock as a broker's
// tryLock does (a Go process with the same system call and, when java is
// installed, Java's own FileChannel.tryLock), and klog produce into another
// partition of the served log dir is refused, every time. After serve
// stops, the lock is free. Before, the first auto-created topic's appender
// opened and closed .lock, which dropped serve's POSIX lock: the probe got
// it and klog produce exited 0.
func TestBrokerLockHeldWhileServing(t *testing.T) {
	dir, bin := subprocessDir(t, "klog-lock-")
	logDir := filepath.Join(dir, "logs")
	os.Mkdir(logDir, 0o755)
	lockPath := filepath.Join(logDir, ".lock")

	srv := exec.Command(bin, "serve", "--writable", "--log-dir", logDir, "--listen", "127.0.0.1:0")
	errPipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	stderr := bufio.NewReader(errPipe)
	first, err := stderr.ReadString('\n')
	m := regexp.MustCompile(`on (127\.0\.0\.1:\d+) \(writable`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("serve did not start: %q %v", first, err)
	}
	rest := make(chan string, 1)
	go func() { b, _ := io.ReadAll(stderr); rest <- string(b) }()

	goProbe := exec.Command(os.Args[0])
	goProbe.Env = append(os.Environ(), "KLOG_TRYLOCK_PROBE="+lockPath)
	probers := []*prober{startProber(t, "go F_SETLK", goProbe)}
	if java, err := exec.LookPath("java"); err == nil {
		src, _ := filepath.Abs("testdata/trylock/TryLock.java")
		probers = append(probers, startProber(t, "java FileChannel.tryLock", exec.Command(java, src, lockPath)))
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("java is required under CI (.ci/run installs it): %v", err)
	} else {
		t.Logf("java not installed: probing with the Go prober only")
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(m[1]), kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), lockSoak(t)+2*time.Minute)
	defer cancel()
	const maxTopics = 400 // new topics, then appends to them
	deadline := time.Now().Add(lockSoak(t))
	n := 0
	for ; n < 5 || time.Now().Before(deadline); n++ {
		topic := "auto-" + strconv.Itoa(n%maxTopics)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v" + strconv.Itoa(n))}).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
		for _, p := range probers {
			if got := p.probe(t); got != "held" {
				t.Fatalf("after %d produce requests (%s): %s probe says the lock is %q, want held", n+1, topic, p.name, got)
			}
		}
		if n%10 == 0 {
			cmd := exec.Command(bin, "produce", "--log", filepath.Join(logDir, "other-"+strconv.Itoa(n%3)))
			cmd.Stdin = strings.NewReader("x\n")
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != ExitTrouble || !strings.Contains(string(out), ".lock is locked by a running broker") {
				t.Fatalf("after %d produce requests: klog produce beside a writable serve: exit %d, want 2 naming the lock: %s", n+1, code, out)
			}
		}
	}
	t.Logf("%d produce requests, %d topics created, lock held throughout", n, min(n, maxTopics))
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	if code := srv.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("serve exit %d: %s", code, <-rest)
	}
	for _, p := range probers {
		if got := p.probe(t); got != "free" {
			t.Errorf("after serve stopped: %s probe says %q, want free", p.name, got)
		}
	}
}

// TestBrokerLockSymlinkNotFollowed: a symlinked .lock is never followed:
// serve --writable and produce refuse the log dir (exit 2), and the
// symlink's target is not created. Before, serve created the target
// outside the log dir and locked it, and produce wrote.
func TestBrokerLockSymlinkNotFollowed(t *testing.T) {
	logDir := t.TempDir()
	target := filepath.Join(t.TempDir(), "outside")
	if err := os.Symlink(target, filepath.Join(logDir, ".lock")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"klog", "serve", "--writable", "--log-dir", logDir, "--listen", "127.0.0.1:0"}, strings.NewReader(""), &out, &errb)
	if code != ExitTrouble || !strings.Contains(errb.String(), "symlink") {
		t.Errorf("serve --writable with a symlinked .lock: exit %d, want 2 naming the symlink: %s", code, errb.String())
	}
	if c, _, errs := prodRun(t, "a\n", "produce", "--log", filepath.Join(logDir, "t-0")); c != ExitTrouble || !strings.Contains(errs, "symlink") {
		t.Errorf("produce under a symlinked .lock: exit %d, want 2 naming the symlink: %s", c, errs)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the symlink's target was created outside the log dir: %v", err)
	}
}
