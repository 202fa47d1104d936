//go:build unix

package serve

import "syscall"

// fdLimit is the soft RLIMIT_NOFILE (Go raises it to the hard limit at
// start), or 0.
func fdLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
