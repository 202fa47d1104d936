//go:build !windows

package serve

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// lockLogDir takes the log dir's .lock as a broker does (LogManager.lockLogDirs:
// FileChannel.tryLock, a POSIX record lock on Linux), so a writable server
// and a live broker (or a second writable server) never share a log dir.
func lockLogDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errors.New("serve: " + err.Error())
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, errors.New("serve: failed to acquire lock on file " + LockFile + " in " + dir +
			": a Kafka broker or another writer in another process is using this directory (" + err.Error() + ")")
	}
	return f, nil
}
