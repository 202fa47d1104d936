//go:build unix

package verify

import (
	"os"
	"syscall"
)

// inode returns the device and inode number of a file.
func inode(st os.FileInfo) (dev, ino uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}
