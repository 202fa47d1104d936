//go:build linux

package verify

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

var pageSize = os.Getpagesize()

// residencyWindow is how much of a file is mapped at once to ask mincore
// about it: the mapping only reserves address space (no page is touched,
// so a file truncated meanwhile cannot fault), and the per-window vector
// is one byte per page.
const residencyWindow = 64 << 20

// residency returns a bitmap with a bit set for each page of the file's
// first size bytes that is not in the page cache, or nil when that cannot
// be told (then nothing is dropped later: the cautious choice).
func residency(f fder, size int64) []uint64 {
	if size <= 0 {
		return nil
	}
	ps := int64(pageSize)
	pages := (size + ps - 1) / ps
	// cachestat (Linux 6.5) counts the cached pages in one call: a file
	// that is all cached or all cold, the usual cases, needs no mincore.
	cached, ok := cachestat(f, size)
	switch {
	case ok && cached >= pages:
		if q, isQ := f.(quicker); isQ && size <= quickBytes {
			q.setQuick()
		}
		return nil // nothing to drop
	case ok && cached == 0:
		cold := make([]uint64, (pages+63)/64)
		for p := int64(0); p < pages; p++ {
			cold[p/64] |= 1 << (p % 64)
		}
		return cold
	}
	return mincoreCold(f, size)
}

// mincoreCold is residency page by page, with mincore(2).
func mincoreCold(f fder, size int64) []uint64 {
	ps := int64(pageSize)
	pages := (size + ps - 1) / ps
	cold := make([]uint64, (pages+63)/64)
	vec := make([]byte, residencyWindow/ps)
	for off := int64(0); off < size; off += residencyWindow {
		n := min(size-off, residencyWindow)
		mem, err := unix.Mmap(int(f.Fd()), off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return nil
		}
		np := (n + ps - 1) / ps
		err = mincore(mem, vec[:np])
		unix.Munmap(mem)
		if err != nil {
			return nil
		}
		first := off / ps
		for i, v := range vec[:np] {
			if v&1 == 0 {
				p := first + int64(i)
				cold[p/64] |= 1 << (p % 64)
			}
		}
	}
	return cold
}

// dropPages asks the kernel to drop the clean cached pages of a range
// (dirty pages, a broker's fresh writes, are left alone by the kernel).
func dropPages(f fder, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}

// mincore is mincore(2), which x/sys/unix does not wrap.
func mincore(mem, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return e
	}
	return nil
}

// quicker is a file that can be marked as small and in the page cache.
type quicker interface{ setQuick() }

// cachestat returns how many pages of the file's first size bytes are in
// the page cache, with cachestat(2); false when the kernel lacks it. It
// reads the page cache only (no file system code runs, nothing waits):
// for a small file it is a raw system call (rawSyscall's reasons).
func cachestat(f fder, size int64) (int64, bool) {
	rng := struct{ off, len uint64 }{0, uint64(size)}
	var st struct{ cache, dirty, writeback, evicted, recentlyEvicted uint64 }
	call := unix.Syscall6
	if size <= quickBytes {
		call = unix.RawSyscall6
	}
	_, _, e := call(unix.SYS_CACHESTAT, f.Fd(), uintptr(unsafe.Pointer(&rng)), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
	if e != 0 {
		return 0, false
	}
	return int64(st.cache), true
}
