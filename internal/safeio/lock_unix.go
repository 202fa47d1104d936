//go:build unix

package safeio

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// setLock takes a record lock over the whole of f without waiting:
// exclusive (F_WRLCK, what Java's FileChannel.tryLock asks for) or shared
// (F_RDLCK), with setLockCmd (lock_linux.go, lock_bsd.go).
func setLock(f *os.File, exclusive bool) error {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart}
	if exclusive {
		lk.Type = unix.F_WRLCK
	}
	for {
		err := unix.FcntlFlock(f.Fd(), setLockCmd, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}

// lockHolder says whether err from setLock is a conflict with another
// holder, and asks the kernel who holds it: the pid (classic record locks
// report one, open file description locks -1) and whether that lock is
// shared (a klog writer's; a broker's is exclusive).
func lockHolder(f *os.File, err error) (pid int, shared, conflict bool) {
	if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
		return 0, false, false
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if unix.FcntlFlock(f.Fd(), getLockCmd, &lk) != nil || lk.Type == unix.F_UNLCK {
		return 0, false, true
	}
	return int(lk.Pid), lk.Type == unix.F_RDLCK, true
}
