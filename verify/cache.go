package verify

import (
	"sync"
)

// cacheCare keeps verify from evicting the page cache a broker's consumers
// read from: when a file is first opened, it records which of the file's
// pages are resident (residency, mincore on Linux); when the last reader of
// the file closes it, the pages that were not resident then are dropped
// (dropPages, posix_fadvise(POSIX_FADV_DONTNEED)). A log segment and the
// index checks that read it again share one record, so the pages stay
// accounted to whoever found them cold. Pages a consumer faults in while
// verify reads the same range are dropped too; that is the price of not
// tracking every page continuously.
type cacheCare struct {
	mu    sync.Mutex
	files map[string]*cached
}

// fder is an open file the page-cache calls take the descriptor of.
type fder interface{ Fd() uintptr }

// cached is one open file's residency snapshot, shared by its readers.
type cached struct {
	path string
	refs int
	size int64
	// cold has bit i set when page i was not resident at the first open;
	// nil when residency is unknown (then nothing is dropped).
	cold []uint64
}

func newCacheCare() *cacheCare { return &cacheCare{files: map[string]*cached{}} }

func (c *cacheCare) acquire(path string, f fder, size int64) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		e.refs++
		return e
	}
	e := &cached{path: path, refs: 1, size: size, cold: residency(f, size)}
	c.files[path] = e
	return e
}

func (c *cacheCare) release(e *cached, f fder) {
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		delete(c.files, e.path)
	}
	c.mu.Unlock()
	if last && e.cold != nil {
		dropCold(f, e.cold, e.size)
	}
}

// testDrop, when set, is told each range dropCold drops (a var only so
// that a test can see what is dropped without the kernel).
var testDrop func(off, n int64)

// dropCold drops each run of pages marked cold, up to size.
func dropCold(f fder, cold []uint64, size int64) {
	ps := int64(pageSize)
	pages := (size + ps - 1) / ps
	for i := int64(0); i < pages; {
		if cold[i/64]&(1<<(i%64)) == 0 {
			i++
			continue
		}
		j := i + 1
		for j < pages && cold[j/64]&(1<<(j%64)) != 0 {
			j++
		}
		n := min((j-i)*ps, size-i*ps)
		if testDrop != nil {
			testDrop(i*ps, n)
		}
		dropPages(f, i*ps, n)
		i = j
	}
}
