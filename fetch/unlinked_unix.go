//go:build unix

package fetch

import (
	"os"
	"syscall"
)

// unlinked reports whether f's file no longer has a name (fstat's link
// count 0): the segment was deleted, or replaced by another file of the
// same name. An fstat is a fraction of the open and close it saves.
func unlinked(f *os.File) bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return true
	}
	return st.Nlink == 0
}

// keepOpen: a segment file stays open between a consumer's fetches.
const keepOpen = true
