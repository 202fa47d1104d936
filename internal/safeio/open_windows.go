//go:build windows

package safeio

import (
	"errors"
	"io/fs"
	"os"
)

var errSymlink = errors.New("is a symlink")

// openNoFollow refuses a symlink in path's last element (checked with
// Lstat just before the open: Windows has no O_NOFOLLOW), then opens it.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlink
	}
	return os.OpenFile(path, flag, perm)
}

func isLoop(err error) bool { return errors.Is(err, errSymlink) }

func setBlocking(*os.File) error { return nil }
