//go:build unix

package serve

import "golang.org/x/sys/unix"

// diskSpace is the file system's total and usable bytes under dir
// (File.getTotalSpace/getUsableSpace), -1 when unknown.
func diskSpace(dir string) (total, usable int64) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	return int64(st.Blocks) * int64(st.Bsize), int64(st.Bavail) * int64(st.Bsize)
}
