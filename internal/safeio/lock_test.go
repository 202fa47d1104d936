//go:build unix

package safeio

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMain lets the test binary act as the other process of the lock
// tests: KLOG_SAFEIO_LOCK=probe:PATH answers "held" or "free" to each line
// on stdin with a broker's tryLock (fcntl F_SETLK, F_WRLCK over the whole
// file, as Java's FileChannel.tryLock on Linux); lock:PATH and
// share:PATH hold LockBroker or HoldBroker until stdin closes.
func TestMain(m *testing.M) {
	if v := os.Getenv("KLOG_SAFEIO_LOCK"); v != "" {
		mode, path, _ := strings.Cut(v, ":")
		os.Exit(lockHelper(mode, path))
	}
	os.Exit(m.Run())
}

func lockHelper(mode, path string) int {
	in := bufio.NewScanner(os.Stdin)
	switch mode {
	case "probe":
		for in.Scan() {
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				os.Stdout.WriteString(err.Error() + "\n")
				continue
			}
			lk := unix.Flock_t{Type: unix.F_WRLCK}
			if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err == nil {
				os.Stdout.WriteString("free\n")
			} else {
				os.Stdout.WriteString("held\n")
			}
			f.Close()
		}
	case "lock", "share":
		lock := LockBroker
		if mode == "share" {
			lock = HoldBroker
		}
		if _, err := lock(filepath.Dir(path)); err != nil {
			os.Stdout.WriteString(err.Error() + "\n")
			return 1
		}
		os.Stdout.WriteString("locked\n")
		io.Copy(io.Discard, os.Stdin)
	}
	return 0
}

// helper starts the test binary as another process in mode on path and
// returns its stdin and first-line reader.
func helper(t *testing.T, mode, path string) (io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KLOG_SAFEIO_LOCK="+mode+":"+path)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return in, bufio.NewReader(out)
}

func ask(t *testing.T, in io.Writer, out *bufio.Reader) string {
	t.Helper()
	io.WriteString(in, "?\n")
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return line[:len(line)-1]
}

// TestBrokerLockNeverDropped: once LockBroker holds a log dir, nothing
// this process does with .lock lets another process's tryLock succeed:
// the checks and shared holds every writer makes (CheckBrokerLock,
// HoldBroker and Release) and even a stray open and close of the file
// elsewhere in the process (which drops a classic POSIX lock; Linux). A second
// LockBroker in the process is refused; Release frees the lock.
func TestBrokerLockNeverDropped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, BrokerLockFile)
	l, err := LockBroker(dir)
	if err != nil {
		t.Fatal(err)
	}
	in, out := helper(t, "probe", p)
	if got := ask(t, in, out); got != "held" {
		t.Fatalf("probe after LockBroker: %s", got)
	}
	for i := 0; i < 3; i++ {
		if err := CheckBrokerLock(dir); err != nil {
			t.Fatalf("CheckBrokerLock in the holding process: %v", err)
		}
		h, err := HoldBroker(dir)
		if err != nil {
			t.Fatalf("HoldBroker in the holding process: %v", err)
		}
		h.Release()
		h.Release() // idempotent: must not release the exclusive hold's reference
		if got := ask(t, in, out); got != "held" {
			t.Fatalf("probe after a check and a shared hold in the holding process (round %d): %s", i, got)
		}
	}
	if runtime.GOOS == "linux" { // elsewhere a classic lock: only the table guards it
		if f, err := os.Open(p); err == nil {
			f.Close()
		}
		if got := ask(t, in, out); got != "held" {
			t.Errorf("probe after a stray open and close of .lock: %s (the lock must be an open file description lock)", got)
		}
	}
	var le *BrokerLockError
	if _, err := LockBroker(dir); !errors.As(err, &le) || !le.Self {
		t.Errorf("second LockBroker in one process: %v, want a *BrokerLockError with Self", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := ask(t, in, out); got != "free" {
		t.Errorf("probe after Release: %s", got)
	}
}

// TestBrokerLockConflicts: another process's exclusive lock (a broker's)
// refuses both kinds of hold; another klog writer's shared hold refuses
// LockBroker (saying it is a writer's) and allows HoldBroker.
func TestBrokerLockConflicts(t *testing.T) {
	for _, c := range []struct {
		mode            string
		exclusive, held bool // held: HoldBroker succeeds beside it
	}{
		{"lock", true, false},
		{"share", false, true},
	} {
		t.Run(c.mode, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, BrokerLockFile), nil, 0o644)
			in, out := helper(t, c.mode, filepath.Join(dir, BrokerLockFile))
			if line, _ := out.ReadString('\n'); line != "locked\n" {
				t.Fatalf("helper: %q", line)
			}
			var le *BrokerLockError
			_, err := LockBroker(dir)
			if !errors.As(err, &le) || le.Writer == c.exclusive || le.Self {
				t.Errorf("LockBroker beside another process's %s: %v", c.mode, err)
			}
			h, err := HoldBroker(dir)
			if (err == nil) != c.held {
				t.Errorf("HoldBroker beside another process's %s: %v", c.mode, err)
			}
			if err == nil {
				h.Release()
			}
			in.Close()
		})
	}
}

// TestBrokerLockAbsentAndSymlinked: no .lock means no broker (and a shared
// hold creates none); a symlinked or non-regular .lock is refused by every
// kind of hold and never followed: its target is not created.
func TestBrokerLockAbsentAndSymlinked(t *testing.T) {
	dir := t.TempDir()
	if err := CheckBrokerLock(dir); err != nil {
		t.Errorf("no .lock: %v", err)
	}
	h, err := HoldBroker(dir)
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	if _, err := os.Lstat(filepath.Join(dir, BrokerLockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("HoldBroker created .lock: %v", err)
	}
	os.WriteFile(filepath.Join(dir, BrokerLockFile), nil, 0o644)
	if err := CheckBrokerLock(dir); err != nil {
		t.Errorf("an unlocked .lock: %v", err)
	}

	link := t.TempDir()
	target := filepath.Join(t.TempDir(), "outside")
	os.Symlink(target, filepath.Join(link, BrokerLockFile))
	fifo := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(fifo, BrokerLockFile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{link, fifo} {
		if l, err := LockBroker(d); err == nil {
			l.Release()
			t.Errorf("LockBroker of %s: no error", d)
		}
		if l, err := HoldBroker(d); err == nil {
			l.Release()
			t.Errorf("HoldBroker of %s: no error", d)
		}
		if err := CheckBrokerLock(d); err == nil {
			t.Errorf("CheckBrokerLock of %s: no error", d)
		}
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlinked .lock's target was created: %v", err)
	}
}
