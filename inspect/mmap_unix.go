//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package inspect

import (
	"os"
	"syscall"
	"unsafe"
)

// mapRange maps n bytes of f from off (a multiple of the page size)
// read-only. Reading the mapping touches the page cache directly: nothing
// is copied out of it, unlike pread.
// (MAP_POPULATE, mapping every page up front, measured slower than the
// faults: they map 16 pages at a time around the touched one.)
func mapRange(f *os.File, off int64, n int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), off, n, syscall.PROT_READ, syscall.MAP_SHARED)
}

func unmap(b []byte) { syscall.Munmap(b) }

const canMap = true

// inMapping reports whether addr lies in the mapping m.
func inMapping(addr uintptr, m []byte) bool {
	if len(m) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	return addr >= p && addr-p < uintptr(len(m))
}
