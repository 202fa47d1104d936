//go:build windows

package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/windows"
)

// held lists the log dirs whose .lock this process holds (klog serve
// --writable): LockFileEx locks are per handle, so the probe below would
// otherwise see the process's own lock as a broker's.
var held sync.Map

// NoteBrokerLockHeld records that this process holds logDir's .lock
// (release with the returned func).
func NoteBrokerLockHeld(logDir string) func() {
	k := filepath.Clean(logDir)
	held.Store(k, true)
	return func() { held.Delete(k) }
}

// CheckBrokerLock returns a *BrokerLockError when another process holds
// logDir/.lock: on Windows, a LockFileEx probe that fails immediately.
func CheckBrokerLock(logDir string) error {
	if _, ok := held.Load(filepath.Clean(logDir)); ok {
		return nil
	}
	p := filepath.Join(logDir, BrokerLockFile)
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	var ol windows.Overlapped
	h := windows.Handle(f.Fd())
	if err := windows.LockFileEx(h, windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol); err != nil {
		return &BrokerLockError{Path: p}
	}
	windows.UnlockFileEx(h, 0, 1, 0, &ol)
	return nil
}
