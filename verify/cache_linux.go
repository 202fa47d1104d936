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
func residency(f fder, size int64) []uint64 { return residencyFrom(f, 0, size) }

// residencyFrom is residency of the pages from the one holding byte from
// on; the bits of the pages before it are clear (cached).
func residencyFrom(f fder, from, size int64) []uint64 {
	if size <= 0 || from >= size {
		return nil
	}
	ps := int64(pageSize)
	pages := (size + ps - 1) / ps
	first := from / ps
	// cachestat (Linux 6.5) counts the cached pages in one call: a file
	// that is all cached or all cold, the usual cases, needs no mincore.
	cached, ok := cachestat(f, first*ps, size)
	switch {
	case ok && cached >= pages-first:
		if q, isQ := f.(quicker); isQ && first == 0 && size <= quickBytes {
			q.setQuick()
		}
		return nil // nothing to drop
	case ok && cached == 0:
		cold := make([]uint64, (pages+63)/64)
		for p := first; p < pages; p++ {
			cold[p/64] |= 1 << (p % 64)
		}
		return cold
	}
	return mincoreCold(f, first*ps, size)
}

// mincoreCold is residency page by page, with mincore(2), from byte from
// on (a multiple of the page size).
func mincoreCold(f fder, from, size int64) []uint64 {
	ps := int64(pageSize)
	pages := (size + ps - 1) / ps
	cold := make([]uint64, (pages+63)/64)
	vec := make([]byte, residencyWindow/ps)
	for off := from; off < size; off += residencyWindow {
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

// cachestat returns how many pages of the file's bytes [from, size) are in
// the page cache, with cachestat(2); false when the kernel lacks it. It
// reads the page cache only (no file system code runs, nothing waits):
// for a small file it is a raw system call (rawSyscall's reasons).
func cachestat(f fder, from, size int64) (int64, bool) {
	rng := struct{ off, len uint64 }{uint64(from), uint64(size - from)}
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

// lazyResidency reports whether a file of size bytes has its residency
// asked only once a read finds a page not cached (cached.lazy): a file
// larger than one read window (a smaller one needs its residency for the
// quick reads, and a cachestat of it costs little).
func lazyResidency(f fder, size int64) bool {
	if _, ok := f.(*file); !ok || size <= quickBytes {
		return false
	}
	// No read-ahead while the reads find their pages cached: a read
	// that finds one missing starts reading exactly the pages it asked
	// for, which settle counts as cold, and nothing past them.
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	return true
}

// readAhead gives the file its read-ahead back (lazyResidency took it).
func readAhead(f fder) { _ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_NORMAL) }

// readCachedOnly is one read at off that takes only pages already in the
// page cache (preadv2 with RWF_NOWAIT): it stops short at the first page
// that is not, and fails (EAGAIN) when that is the first; a kernel or
// file system without RWF_NOWAIT fails too.
func readCachedOnly(f fder, b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	for {
		n, _, e := unix.Syscall6(unix.SYS_PREADV2, f.Fd(), uintptr(unsafe.Pointer(&iov)), 1, uintptr(off), 0, unix.RWF_NOWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

// missingPage reports whether readCachedOnly's error (or short count,
// with err nil) means a page was not cached, rather than that the kernel
// or file system does not take RWF_NOWAIT.
func missingPage(err error) bool { return err == nil || err == unix.EAGAIN }
