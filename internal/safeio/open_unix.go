//go:build unix

package safeio

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path without following a symlink in its last element
// (O_NOFOLLOW) and without blocking on a FIFO (O_NONBLOCK).
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
}

// isLoop reports the error O_NOFOLLOW gives for a symlink.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// setBlocking clears O_NONBLOCK: it only kept a FIFO from blocking the open.
func setBlocking(f *os.File) error { return syscall.SetNonblock(int(f.Fd()), false) }
