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
// tracking every page continuously. A file larger than one read window
// has its residency asked lazily (cached.lazy): only once a read finds a
// page missing, from that page on, and the pages that read asked for
// after the missing one count as cold (the read started reading them in),
// so at most one window of cached pages behind a hole is dropped with it.
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

	// mu guards lazy and clean, and cold while lazy is set.
	mu sync.Mutex
	// lazy is set while a large file's residency has not been asked:
	// reads take only cached pages (readCached) for as long as they find
	// every page cached, and the first that does not asks residency from
	// there on (settle). A log found all in the page cache, the usual
	// case of a scheduled verify, then needs no residency at all, which
	// for 1 GiB is a cachestat walking 262,144 pages (10 ms, 6% of the
	// CPU time of verify --jobs 1).
	lazy bool
	// clean is, while lazy, where the reads so far end: every page before
	// it was found cached.
	clean int64
}

func newCacheCare() *cacheCare { return &cacheCare{files: map[string]*cached{}} }

func (c *cacheCare) acquire(path string, f fder, size int64) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.files[path]; e != nil {
		e.refs++
		return e
	}
	e := &cached{path: path, refs: 1, size: size}
	if lazyResidency(f, size) {
		e.lazy = true
	} else {
		e.cold = residency(f, size)
	}
	c.files[path] = e
	return e
}

// readCached reads what it can of b at off from pages already cached
// while e is lazy, and returns how many bytes it read: the caller reads
// the rest the ordinary way. A read that finds a page missing, or that
// does not go on from where the reads so far end (the index checks'
// reads, say), settles e first.
func (e *cached) readCached(f fder, b []byte, off int64) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.lazy {
		return 0
	}
	if off > e.clean {
		e.settle(f, e.clean, e.clean)
		return 0
	}
	n, err := readCachedOnly(f, b, off)
	if err != nil {
		n = 0
	}
	end := off + int64(n)
	if n == len(b) || (err == nil && end >= e.size) {
		e.clean = max(e.clean, end)
		return n
	}
	// The page at end is not cached: the read started reading the pages
	// it asked for from there, which were cold whatever residency says
	// of them now. A read that failed otherwise (no RWF_NOWAIT here)
	// read nothing in.
	e.clean = max(e.clean, end)
	coldTo := e.clean
	if missingPage(err) {
		coldTo = off + int64(len(b))
	}
	e.settle(f, e.clean, coldTo)
	return n
}

// settleNow settles e (when still lazy) before a read other than
// readCached's.
func (e *cached) settleNow(f fder) {
	e.mu.Lock()
	if e.lazy {
		e.settle(f, e.clean, e.clean)
	}
	e.mu.Unlock()
}

// settle asks the residency of the pages from the one holding byte from
// on (the pages before were found cached), marks the pages of [from,
// coldTo) cold whatever it says, and ends the lazy state. e.mu is held.
func (e *cached) settle(f fder, from, coldTo int64) {
	if testSettle != nil {
		testSettle(from)
	}
	e.lazy = false
	readAhead(f)
	e.cold = residencyFrom(f, from, e.size)
	ps := int64(pageSize)
	pages := (e.size + ps - 1) / ps
	for p := from / ps; p < min((coldTo+ps-1)/ps, pages); p++ {
		if e.cold == nil {
			e.cold = make([]uint64, (pages+63)/64)
		}
		e.cold[p/64] |= 1 << (p % 64)
	}
}

func (c *cacheCare) release(e *cached, f fder) {
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last {
		delete(c.files, e.path)
	}
	c.mu.Unlock()
	if !last {
		return
	}
	e.mu.Lock()
	cold := e.cold
	e.mu.Unlock()
	if cold != nil {
		dropCold(f, cold, e.size)
	}
}

// testSettle, when set, is told where each settle asks residency from.
var testSettle func(from int64)

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
