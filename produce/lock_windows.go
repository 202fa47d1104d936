//go:build windows

package produce

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// tryLock locks .klog-<partition>.lock beside the partition directory (a
// directory handle cannot be locked on Windows, and the log dir's .lock is
// the broker's, which klog serve --writable holds while it opens
// appenders): one writer per partition. ErrLocked when another process
// holds it.
func tryLock(dir string) (*os.File, error) {
	dir = filepath.Clean(dir)
	path := filepath.Join(filepath.Dir(dir), ".klog-"+filepath.Base(dir)+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	var ol windows.Overlapped
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil
}
