//go:build unix && !linux

package safeio

import "golang.org/x/sys/unix"

// Elsewhere the lock is a classic record lock, as Java's: the table in
// lock.go keeps this process from ever closing a descriptor of a locked
// .lock.
const (
	setLockCmd = unix.F_SETLK
	getLockCmd = unix.F_GETLK
)
