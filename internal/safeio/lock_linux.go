package safeio

import "golang.org/x/sys/unix"

// On Linux the lock is an open file description lock: it conflicts with
// the classic record lock a broker takes (F_SETLK) in both directions, and
// unlike a classic one it is not released when another descriptor of the
// same file in this process is closed.
const (
	setLockCmd = unix.F_OFD_SETLK
	getLockCmd = unix.F_OFD_GETLK
)
