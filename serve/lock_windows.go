//go:build windows

package serve

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockLogDir takes the log dir's .lock as a broker does (LogManager.lockLogDirs:
// FileChannel.tryLock, LockFileEx on Windows), so a writable server and a
// live broker (or a second writable server) never share a log dir.
func lockLogDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errors.New("serve: " + err.Error())
	}
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol); err != nil {
		f.Close()
		return nil, errors.New("serve: failed to acquire lock on file " + LockFile + " in " + dir +
			": a Kafka broker or another writer in another process is using this directory (" + err.Error() + ")")
	}
	return f, nil
}
