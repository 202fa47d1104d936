//go:build !windows

package produce

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock(2) on the directory itself, so no lock
// file is added to the partition; ErrLocked when another process holds it.
func tryLock(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
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
