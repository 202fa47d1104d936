package verify

import (
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// reads is the I/O state a run shares across its jobs: one token bucket for
// --rate, the count of bytes read, and the page-cache bookkeeping. Every file
// verify reads goes through open or readFile, so the cap and the count cover
// logs, indexes, snapshots and checkpoints alike.
type reads struct {
	ctx     context.Context
	lim     *rate.Limiter // nil: unlimited
	burst   int
	charged atomic.Int64 // bytes asked of the limiter
	cache   *cacheCare   // nil: --keep-cache

	// tasks is the array of the last piece's tasks, for the next
	// piece's (runPiece).
	tasks []task

	// Options.Progress and what it was last told.
	mu          sync.Mutex
	onProgress  func(read, total int64)
	read, total int64
}

// minBurst is the smallest token bucket: one scanner read window, so a
// window costs one wait.
const minBurst = 128 << 10

func newReads(ctx context.Context, opts Options) *reads {
	r := &reads{ctx: ctx}
	if opts.Rate > 0 {
		// A bucket of a twentieth of a second's worth of bytes keeps the
		// rate smooth at any time scale an operator watches (iostat's
		// one-second samples) while a window still costs one wait.
		r.burst = int(max(min(opts.Rate/20, 1<<30), minBurst))
		r.lim = rate.NewLimiter(rate.Limit(opts.Rate), r.burst)
	}
	if !opts.KeepCache {
		r.cache = newCacheCare()
	}
	r.onProgress = opts.Progress
	return r
}

// progress adds to the bytes read and the total, and tells
// Options.Progress.
func (r *reads) progress(read, total int64) {
	if r.onProgress == nil {
		return
	}
	r.mu.Lock()
	r.read += read
	r.total += total
	r.onProgress(r.read, r.total)
	r.mu.Unlock()
}

// take waits until n bytes may be read, in bucket-sized steps (a read
// larger than the bucket, a big batch, waits for each step in turn).
func (r *reads) take(n int) error {
	if r.lim == nil {
		return nil
	}
	r.charged.Add(int64(n))
	for n > 0 {
		k := min(n, r.burst)
		if err := r.lim.WaitN(r.ctx, k); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// source is an open file whose reads are counted (into the report of the
// file being checked) and rate limited, and whose pages verify brought into
// the page cache are dropped on close.
type source struct {
	f     *file
	st    os.FileInfo
	r     *reads
	size  int64
	care  *cached
	tally *atomic.Int64
}

// open opens path for reading through r, counting what is read in tally
// (when not nil).
func (r *reads) open(path string, tally *atomic.Int64) (*source, error) {
	f, st, err := openFile(path)
	if err != nil {
		return nil, err
	}
	s := &source{f: f, st: st, r: r, size: st.Size(), tally: tally}
	if r.cache != nil && st.Mode().IsRegular() {
		s.care = r.cache.acquire(path, f, st.Size())
	}
	return s, nil
}

// ReadAt reads through the rate limit and counts what it read.
func (s *source) ReadAt(b []byte, off int64) (int, error) {
	if err := s.r.take(len(b)); err != nil {
		return 0, err
	}
	n := 0
	if s.care != nil {
		n = s.care.readCached(s.f, b, off)
	}
	var err error
	if n < len(b) {
		var m int
		m, err = s.f.ReadAt(b[n:], off+int64(n))
		n += m
	}
	if s.tally != nil {
		s.tally.Add(int64(n))
	}
	return n, err
}

// readOnce is one read at off (a short count is not an error), through the
// rate limit and counted: a whole small file in one system call.
func (s *source) readOnce(b []byte, off int64) (int, error) {
	if err := s.r.take(len(b)); err != nil {
		return 0, err
	}
	if s.care != nil {
		s.care.settleNow(s.f)
	}
	n, err := s.f.readOnce(b, off)
	if s.tally != nil {
		s.tally.Add(int64(n))
	}
	return n, err
}

// Read reads sequentially (bufio over an index file).
func (s *source) Read(b []byte) (int, error) {
	if err := s.r.take(len(b)); err != nil {
		return 0, err
	}
	if s.care != nil {
		s.care.settleNow(s.f)
	}
	n, err := s.f.Read(b)
	if s.tally != nil {
		s.tally.Add(int64(n))
	}
	return n, err
}

// Stat is the open file's stat, taken when it was opened.
func (s *source) Stat() os.FileInfo { return s.st }

// Close drops the pages this run brought in (when the last user of the file
// closes it) and closes the file.
func (s *source) Close() error {
	if s.care != nil {
		s.r.cache.release(s.care, s.f)
		s.care = nil
	}
	return s.f.Close()
}

// readFile is os.ReadFile through r for small files (checkpoints,
// snapshots) of at most limit bytes: a larger one is a
// *safeio.TooLargeError, and nothing past the limit is read. A file is read
// with one read of its size and one byte more (to see it did not grow).
func (r *reads) readFile(path string, limit int64, tally *atomic.Int64, size *int64) ([]byte, error) {
	s, err := r.open(path, tally)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if size != nil {
		*size = s.size
	}
	if s.size > limit {
		return nil, &safeio.TooLargeError{Path: path, Size: s.size, Limit: limit}
	}
	if !s.st.Mode().IsRegular() {
		data, err := io.ReadAll(io.NewSectionReader(s, 0, limit+1))
		if err == nil && int64(len(data)) > limit {
			return nil, &safeio.TooLargeError{Path: path, Size: int64(len(data)), Limit: limit}
		}
		return data, err
	}
	data := make([]byte, s.size+1)
	n, err := s.readOnce(data, 0)
	if err == nil && int64(n) < s.size {
		// A short read: the rest as ReadAt reads it.
		var m int
		m, err = s.ReadAt(data[n:s.size], int64(n))
		n += m
	}
	if err == io.EOF {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if int64(n) > limit {
		return nil, &safeio.TooLargeError{Path: path, Size: int64(n), Limit: limit}
	}
	if int64(n) > s.size {
		// It grew while we read: the rest, up to the limit.
		rest, err := io.ReadAll(io.NewSectionReader(s, int64(n), limit+1-int64(n)))
		data = append(data[:n], rest...)
		if err == nil && int64(len(data)) > limit {
			return nil, &safeio.TooLargeError{Path: path, Size: int64(len(data)), Limit: limit}
		}
		return data, err
	}
	return data[:n], nil
}

// logReadAhead is the scanner's read window for a log: 1 MiB, the read size
// of a plain sequential reader, so that a batch cut at the window's end
// (read again at the start of the next) costs under 1% of the bytes and
// reads cost few system calls.
const logReadAhead = 1 << 20

// scanners keeps log scanners (their 1 MiB windows) from run to run: a
// scheduled verify of small files, or a library caller running verify in a
// loop, allocates nothing per file, so the garbage collector (whose
// stop-the-world phases wait for every thread of a busy machine) stays
// idle.
var scanners sync.Pool

// logScanner is the verifier's log scanner, reset to file.
func (v *verifier) logScanner(file io.ReaderAt, size int64) *format.Scanner {
	if v.lsc == nil {
		if v.opts.MaxBatchBytes <= 0 {
			v.lsc, _ = scanners.Get().(*format.Scanner)
		}
		if v.lsc == nil {
			v.lsc = format.NewScanner(file, size, format.ScanOptions{MaxBatchBytes: v.opts.MaxBatchBytes, ReadAhead: logReadAhead})
		}
	}
	v.lsc.Reset(file, size)
	return v.lsc
}

// release returns what the verifier can lend to the next run.
func (v *verifier) release() {
	v.dropKept()
	if v.lsc != nil && v.opts.MaxBatchBytes <= 0 {
		v.lsc.Reset(nil, 0)
		scanners.Put(v.lsc)
	}
	v.lsc = nil
}

// takeTasks hands the run's task array to a piece (empty, maybe nil).
func (r *reads) takeTasks() []task {
	if r == nil {
		return nil
	}
	t := r.tasks
	r.tasks = nil
	return t[:0]
}

// putTasks gives a finished piece's task array back to the run, cleared
// (the strings and errors it holds are not kept alive).
func (r *reads) putTasks(t []task) {
	if r != nil && cap(t) <= 1<<16 {
		clear(t[:cap(t)])
		r.tasks = t[:0]
	}
}
