//go:build unix

package safeio

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

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
