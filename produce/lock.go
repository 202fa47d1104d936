package produce

import (
	"errors"
	"os"
	"syscall"
)

// ErrLocked is returned by Open when another writer holds the partition and
// Options.Wait is false.
var ErrLocked = errors.New("partition directory is locked by another writer")

// lockDir takes an exclusive flock(2) on the directory itself, so no lock
// file is added to the partition. The lock goes with the process: a killed
// writer releases it.
func lockDir(dir string, wait bool) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil
}
