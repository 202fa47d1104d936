//go:build windows

package safeio

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// setLock locks the first byte of f without waiting (LockFileEx, what
// Java's FileChannel.tryLock uses on Windows), exclusive or shared.
// LockFileEx locks belong to the handle: closing another handle of the
// file keeps them.
func setLock(f *os.File, exclusive bool) error {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
}

// lockHolder says whether err from setLock is another holder's lock;
// Windows names neither the holder nor its kind.
func lockHolder(_ *os.File, err error) (pid int, shared, conflict bool) {
	return 0, false, errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}
