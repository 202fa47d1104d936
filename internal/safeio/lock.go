package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// BrokerLockFile is the file a Kafka broker locks in each log directory
// while it runs (LogManager.lockLogDirs: FileLock.tryLock, a Java
// FileChannel.tryLock, which is a POSIX record lock on Linux).
const BrokerLockFile = ".lock"

// BrokerLockError says a broker (or another process) holds the log
// directory's lock.
type BrokerLockError struct {
	Path string
	PID  int // the holder, when the kernel reports one
}

func (e *BrokerLockError) Error() string {
	msg := e.Path + " is locked by a running broker"
	if e.PID > 0 {
		msg += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	return msg + "; stop it before writing to this log directory"
}

// CheckBrokerLock returns a *BrokerLockError when another process holds a
// record lock on logDir/.lock. A missing .lock file means no broker.
//
// It asks with the classic F_GETLK, which reports a conflicting lock of any
// other process (classic or open file description locks) but never one the
// calling process holds itself: klog serve, which takes the lock as a
// broker does, can then still append to its own log directory.
func CheckBrokerLock(logDir string) error {
	p := filepath.Join(logDir, BrokerLockFile)
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	// Ask for a write lock over the whole file: the kernel answers with a
	// conflicting lock if any process holds one.
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return err
	}
	if lk.Type == unix.F_UNLCK {
		return nil
	}
	return &BrokerLockError{Path: p, PID: int(lk.Pid)}
}
