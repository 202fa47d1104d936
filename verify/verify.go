// Package verify checks the integrity of Kafka partition files: every batch's
// CRC and structure, offsets across batches and segments, indexes against the
// log, producer snapshots and checkpoints. It returns a Report; findings are
// data, not errors, and it never prints.
package verify

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/klog-dev/klog/partition"
)

// Problem is one finding: the one problem type of klog, shared by verify,
// dump, the views (segments, stats, find) and tail. Position is a byte
// position in the file (for index problems, the entry's position in the
// index file); Offset is a Kafka offset, or -1. Path names the file when
// the problem is not inside a FileReport (which has its own Path).
type Problem struct {
	Path     string  `json:"path,omitempty"`
	Kind     Kind    `json:"kind,omitempty"`
	Position int64   `json:"position"`
	Offset   int64   `json:"offset"`
	Message  string  `json:"message"`
	Stored   *uint32 `json:"stored,omitempty"`
	Computed *uint32 `json:"computed,omitempty"`
	Bytes    *int64  `json:"bytes,omitempty"`
	// Info marks an observation that is not a finding (an offset gap,
	// normal after compaction or with transactions).
	Info bool `json:"info,omitempty"`
}

// FileReport is the verdict on one file.
type FileReport struct {
	Path string `json:"path"`
	// Kind is log, checkpoint (KRaft snapshot), index, timeindex,
	// txnindex, snapshot, leader-epoch-checkpoint, offset-checkpoint,
	// partition-metadata or unknown.
	Kind     string    `json:"fileKind"`
	OK       bool      `json:"ok"`
	Batches  int64     `json:"batches"`
	Records  int64     `json:"records"`
	Bytes    int64     `json:"sizeBytes"`
	Problems []Problem `json:"problems"`
	// For logs: the first and last offsets present and where the valid
	// data ends (-1 when there is no batch).
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
	ValidBytes  int64 `json:"validBytes"`
	// Err is an I/O error that stopped the check of this file.
	Err string `json:"error,omitempty"`
	// Skipped: with --state, the file is unchanged since a run found it
	// clean, so it was not read; the counts above are that run's.
	Skipped bool `json:"skipped,omitempty"`
	// VerifiedFrom: with --state, the log grew since a run found it clean,
	// and this run checked only from here on (after re-checking the last
	// batch that run saw); the counts above cover the whole file.
	VerifiedFrom int64 `json:"verifiedFrom,omitempty"`

	// Ignored says why a file found in a directory was not checked (it is
	// not a Kafka file); such a file is listed, never silently ignored.
	Ignored string `json:"ignored,omitempty"`
	// Omitted counts, per kind, the problems past the first
	// MaxProblemsPerKind that were counted but not kept.
	Omitted map[Kind]int64 `json:"omitted,omitempty"`
	// Partial marks a file whose check was interrupted (a signal).
	Partial bool `json:"partial,omitempty"`

	ioErr       error
	perKind     map[Kind]int
	omittedInfo int64
	// What this run read of a log: batches checked, and the position and
	// stored CRC of the last one (for the state file).
	scanned          int64
	lastPos, lastCRC int64
	// id is the file's identity when it was checked (with --state).
	id *fileID
}

// MaxProblemsPerKind bounds the problems kept per kind and file: a hostile
// batch can hold millions of bad records, and memory must not grow with
// them. The rest are counted in FileReport.Omitted.
const MaxProblemsPerKind = 100

func (f *FileReport) add(p Problem) {
	if f.perKind == nil {
		f.perKind = make(map[Kind]int)
	}
	if f.perKind[p.Kind] >= MaxProblemsPerKind {
		if f.Omitted == nil {
			f.Omitted = make(map[Kind]int64)
		}
		f.Omitted[p.Kind]++
		if p.Info {
			f.omittedInfo++
		}
		return
	}
	f.perKind[p.Kind]++
	f.Problems = append(f.Problems, p)
}

// Findings counts the problems that are not info, omitted ones included.
func (f *FileReport) Findings() int {
	n := 0
	for _, p := range f.Problems {
		if !p.Info {
			n++
		}
	}
	for _, c := range f.Omitted {
		n += int(c)
	}
	return n - int(f.omittedInfo)
}

// Report is the result of a run, one FileReport per file in a stable order:
// arguments in order, directories expanded in offset order.
type Report struct {
	Files []FileReport
	// Start is when the run began; Duration how long it took.
	Start    time.Time     `json:"-"`
	Duration time.Duration `json:"-"`
	// BytesRead counts every byte verify read from a file during the run.
	BytesRead int64 `json:"-"`

	// Partial is set when the run was interrupted: files not started are
	// absent and the last ones may be marked Partial.
	Partial bool `json:"-"`

	roots []string // the paths Run was given
	// Totals of the files RunEach handed out and did not keep.
	findings, ioErrors int
}

// Findings counts all findings.
func (r *Report) Findings() int {
	n := r.findings
	for i := range r.Files {
		n += r.Files[i].Findings()
	}
	return n
}

// IOErrors counts files whose check failed on I/O.
func (r *Report) IOErrors() int {
	n := r.ioErrors
	for i := range r.Files {
		if r.Files[i].ioErr != nil {
			n++
		}
	}
	return n
}

// Options configures a run.
type Options struct {
	// Jobs is how many files are verified at once; 0 means GOMAXPROCS.
	Jobs int
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch.
	MaxBatchBytes        int
	MaxDecompressedBytes int
	// Progress, if set, is called after each file with the number done
	// and the total (from the worker goroutines, serialised).
	Progress func(done, total int)
	// OnStart, if set, is called once before any file is read with the
	// number of files and their total size in bytes.
	OnStart func(files int, bytes int64)
	// OnBytes, if set, is called as files are read with the bytes read
	// since the last call; the calls add up to OnStart's total once every
	// file is done. It is called from the worker goroutines concurrently.
	OnBytes func(n int64)
	// OnFile, if set, is called with each file's final report as soon as
	// the file and the partition-level checks that can add to it are done,
	// in the order of Report.Files (serialised). Stopping early through
	// the context still reports, in order, the files finished before.
	OnFile func(f *FileReport)

	// Rate caps the bytes read per second across all jobs (0: no cap).
	Rate int64
	// KeepCache leaves the pages verify reads in the page cache; by
	// default the pages that were not cached before are dropped after
	// each file (Linux; elsewhere nothing is dropped).
	KeepCache bool
	// State, when set, makes the run incremental: files unchanged since a
	// run found them clean are not read, and logs that grew are checked
	// from where that run stopped. Full reads everything anyway (and
	// still lets the caller record the result in State).
	State *State
	Full  bool

	// Stdin is what the path "-" reads (os.Stdin when nil).
	Stdin io.Reader

	budget *decompressBudget
	// reads, when set, is the I/O state of a RunEach that this Run is a
	// piece of (one rate limit, one byte count, one page-cache record).
	reads *reads
	// prefetch reads segments ahead in a second goroutine, when there are
	// more workers than files to give them.
	prefetch bool
}

// task is one file to check; partition-level checks run after all tasks.
type task struct {
	path, kind string
	name       string // the path to report, when not path ("-" for stdin)
	why        string // why an ignored file is ignored
	err        error  // why the path cannot be checked
	base       int64  // base offset from the name, or -1
	log        string // the .log beside an index file
	index      string // the .index beside a .timeindex
}

type group struct {
	dir     *partition.Dir
	logDir  *partition.LogDir
	first   int // index of the group's first task
	n       int
	logTask map[int64]int // base offset -> task index of its .log
}

// Run verifies paths: segment or index files, partition directories, or log
// directories (recursively). A path that does not exist and unreadable
// files are reported in their FileReport; the error is for trouble with
// stdin.
func Run(ctx context.Context, paths []string, opts Options) (*Report, error) {
	var ex expander
	for _, p := range paths {
		args, err := partition.Expand([]string{p})
		if err != nil {
			if _, serr := os.Stat(p); serr != nil {
				// No such path: reported like a path that holds no Kafka
				// file, and the other paths are still checked (README,
				// "Exit codes": exit 2 at the end).
				ex.tasks = append(ex.tasks, task{path: p, kind: kindError, base: -1, err: pathErr(serr)})
				continue
			}
			ex.fail(p, err) // unreadable: reported, the rest goes on
			continue
		}
		switch a := args[0]; a.Kind {
		case partition.ArgStdin:
			// "-", or a pipe (cat seg.log | klog verify /dev/stdin).
			r, name := opts.Stdin, "-"
			if p != "-" {
				f, err := os.Open(p)
				if err != nil {
					return nil, err
				}
				defer f.Close()
				r, name = f, p
			}
			t, cleanup, err := stdinTask(ctx, r)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			t.name = name
			ex.tasks = append(ex.tasks, t)
		case partition.ArgFile:
			st, err := os.Stat(p)
			if err != nil {
				return nil, err
			}
			ex.tasks = append(ex.tasks, explicitTask(p, st))
		default:
			n := ex.real()
			if a.Kind == partition.ArgPartition {
				ex.expandPartition(p)
			} else {
				ex.expandLogDir(p, a.LogDir)
			}
			if ex.real() == n {
				ex.tasks = append(ex.tasks, task{path: p, kind: kindError, err: errors.New("holds no Kafka file (no segment, index, snapshot or checkpoint)")})
			}
		}
	}
	tasks, groups := ex.tasks, ex.groups
	rep := &Report{Files: make([]FileReport, len(tasks)), Start: time.Now(), roots: paths}
	rd := opts.reads
	if rd == nil {
		rd = newReads(ctx, opts)
	}
	read0 := rd.n.Load()
	var sizes []int64
	if opts.OnStart != nil || opts.OnBytes != nil {
		sizes = make([]int64, len(tasks))
		var total int64
		for i, t := range tasks {
			if st, err := os.Stat(t.path); err == nil && st.Mode().IsRegular() {
				sizes[i] = st.Size()
				total += st.Size()
			}
		}
		if opts.OnStart != nil {
			opts.OnStart(len(tasks), total)
		}
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	opts.prefetch = jobs >= 2*len(tasks)
	opts.budget = newDecompressBudget(opts.MaxDecompressedBytes)
	em := newEmitter(rep, tasks, groups, opts.OnFile, rd)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	checkOne := func(v *verifier, i int) {
		rep.Files[i] = v.check(tasks[i])
		if opts.OnBytes != nil {
			// The rest of the file: all of a file that is not
			// a log, what a log's check did not need to read.
			if n := sizes[i] - v.read; n > 0 {
				opts.OnBytes(n)
			}
			v.read = 0
		}
		mu.Lock()
		em.done(i)
		if opts.Progress != nil {
			done++
			opts.Progress(done, len(tasks))
		}
		mu.Unlock()
	}
	if jobs == 1 {
		// One job checks in the caller's goroutine: handing each file
		// to another thread costs a scheduler wake-up, milliseconds on
		// a busy machine.
		v := newVerifier(ctx, opts)
		v.r = rd
		for i := range tasks {
			if ctx.Err() != nil {
				break
			}
			checkOne(v, i)
		}
		v.release()
	} else {
		next := make(chan int)
		for w := 0; w < jobs; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := newVerifier(ctx, opts)
				v.r = rd
				for i := range next {
					checkOne(v, i)
				}
				v.release()
			}()
		}
	feed:
		for i := range tasks {
			select {
			case next <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		// Files in flight are marked Partial; the report says it is
		// partial (files never started are empty reports).
		rep.Partial = true
		return rep, err
	}
	for i := range rep.Files {
		finish(&rep.Files[i])
	}
	rep.BytesRead = rd.n.Load() - read0
	rep.Duration = time.Since(rep.Start)
	return rep, nil
}

// finish sets a report's verdict once no check can add to it.
func finish(f *FileReport) {
	f.OK = f.Findings() == 0 && f.ioErr == nil
	if f.Problems == nil {
		f.Problems = []Problem{}
	}
}

// emitter runs each group's partition-level checks as soon as all of its
// files are done, and hands out finished reports in order.
type emitter struct {
	rep      *Report
	rd       *reads
	groups   []group
	of       [][]int // the groups whose range holds each task
	owner    []int   // the group whose check can add to each task, or -1
	left     []int   // tasks not yet done per group
	checked  []bool
	finished []bool
	next     int // the next report to hand out
	onFile   func(*FileReport)
}

func newEmitter(rep *Report, tasks []task, groups []group, onFile func(*FileReport), rd *reads) *emitter {
	e := &emitter{rep: rep, rd: rd, groups: groups, of: make([][]int, len(tasks)), owner: make([]int, len(tasks)),
		left: make([]int, len(groups)), checked: make([]bool, len(groups)), finished: make([]bool, len(tasks)), onFile: onFile}
	for i := range e.owner {
		e.owner[i] = -1
	}
	// A partition's check adds to the files of its directory; a log dir's
	// check adds to its own checkpoint files only. Partition groups come
	// before the log dir groups around them.
	for gi, g := range groups {
		e.left[gi] = g.n
		for i := g.first; i < g.first+g.n; i++ {
			e.of[i] = append(e.of[i], gi)
			if e.owner[i] < 0 && (g.dir != nil || tasks[i].kind == "offset-checkpoint") {
				e.owner[i] = gi
			}
		}
	}
	return e
}

// done records that task i is checked (callers serialise).
func (e *emitter) done(i int) {
	e.finished[i] = true
	for _, gi := range e.of[i] {
		if e.left[gi]--; e.left[gi] == 0 {
			checkPartition(e.rep, e.groups[gi], e.rd)
			e.checked[gi] = true
		}
	}
	for e.next < len(e.finished) && e.finished[e.next] && (e.owner[e.next] < 0 || e.checked[e.owner[e.next]]) {
		f := &e.rep.Files[e.next]
		finish(f)
		if e.onFile != nil {
			e.onFile(f)
		}
		e.next++
	}
}

// isSegmentFile reports whether LogLoader reads name as a segment file
// (LogFileUtils.isLogFile, isIndexFile): its stem must be an offset.
func isSegmentFile(name string) bool {
	for _, s := range []string{partition.LogSuffix, partition.IndexSuffix, partition.TimeIndexSuffix, partition.TxnIndexSuffix} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func isOffsetCheckpoint(name string) bool {
	for _, c := range partition.LogDirCheckpoints {
		if name == c {
			return true
		}
	}
	return false
}
