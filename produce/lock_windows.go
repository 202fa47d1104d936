//go:build windows

package produce

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// tryLock locks the log directory's .lock file, as Kafka's LogManager does
// on every platform (a directory handle cannot be locked on Windows): one
// writer per log directory, and none while a broker runs on it. ErrLocked
// when another process holds it.
func tryLock(dir string) (*os.File, error) {
	path := filepath.Join(filepath.Dir(filepath.Clean(dir)), ".lock")
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
