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
	"sync"
	"sync/atomic"

	"github.com/klog-dev/klog/format"
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

// KindMetadataImage is the fileKind of a log dir's check against the KRaft
// metadata image (package cluster, run by klog verify): lastOffset is the
// image's last offset, the problems are the image-* kinds.
const KindMetadataImage = "metadata-image"

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
	// LinkTarget is where a symbolic link to a partition directory
	// points (fileKind "link"): its files are checked through it, listed
	// under the link's path.
	LinkTarget string `json:"linkTarget,omitempty"`
	// Omitted counts, per kind, the problems past the first
	// MaxProblemsPerKind that were counted but not kept.
	Omitted map[Kind]int64 `json:"omitted,omitempty"`
	// Partial marks a file whose check was interrupted (a signal).
	Partial bool `json:"partial,omitempty"`
	// BytesRead counts the bytes the check of this file read: its own,
	// and for an index those of its log.
	BytesRead int64 `json:"-"`

	ioErr       error
	perKind     map[Kind]int
	omittedInfo int64
	// What this run read of a log: batches checked, and the position and
	// stored CRC of the last one (for the state file).
	scanned          int64
	lastPos, lastCRC int64
	// id is the file's identity when it was checked (with --state).
	id *fileID
	// epochs is a leader-epoch-checkpoint's entries as its check parsed
	// them (epochsParsed), for the partition's check against the log end.
	epochs       []format.EpochEntry
	epochsParsed bool
}

// Failed reports a file that was checked and has findings, or could not
// be read: what --quiet prints and --fail-fast stops at. An ignored file
// is neither ok nor failed, nor is a file a signal cut short before any
// finding (Partial).
func (f *FileReport) Failed() bool {
	return !f.OK && f.Ignored == "" && (!f.Partial || f.Findings() > 0)
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

// piece is the result of verifying a part of a run (Files verifies a log
// directory a piece at a time): one FileReport per file in a stable order,
// arguments in order, directories expanded in offset order.
type piece struct {
	files []FileReport
	roots []string // the paths the piece was given
}

// Options configures a run.
type Options struct {
	// Jobs is how many files are verified at once; 0 means GOMAXPROCS.
	Jobs int
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch.
	MaxBatchBytes        int
	MaxDecompressedBytes int
	// Progress, if set, is told how far the run has got, for a progress
	// bar: read is how many bytes of the files listed so far have been
	// read (or passed over: a file's rest when its check is done), total
	// how many bytes those files hold. The total grows as the run lists a
	// log directory's partitions, piece by piece; once every file is done,
	// read equals total. Calls are serialised, from the run's goroutines.
	Progress func(read, total int64)

	// Rate caps the bytes read per second across all jobs (0: no cap).
	Rate int64
	// KeepCache leaves the pages verify reads in the page cache; by
	// default the pages that were not cached before are dropped after
	// each file (Linux; elsewhere nothing is dropped).
	KeepCache bool
	// State, when set, makes the run incremental: files unchanged since a
	// run found them clean are not read, and logs that grew are checked
	// from where that run stopped. Full reads everything anyway. The run
	// records in State what it found clean (and forgets what it did not);
	// State.Save writes it.
	State *State
	Full  bool

	// Stdin is what the path "-" reads (os.Stdin when nil).
	Stdin io.Reader

	budget *decompressBudget
	// prefetch reads segments ahead in a second goroutine, when there are
	// more workers than files to give them.
	prefetch bool
	// partitions says the paths are partition directories (Files has
	// classified them), so the piece lists them without asking again.
	partitions bool
}

// task is one file to check; partition-level checks run after all tasks.
type task struct {
	path, kind string
	name       string // the path to report, when not path ("-" for stdin)
	why        string // why an ignored file is ignored
	err        error  // why the path cannot be checked
	base       int64  // base offset from the name, or -1
	log        string // the .log beside an index file
	// logMissing: the .log beside an index file does not exist and the
	// partition's missing-log report says so once, for the segment.
	logMissing bool
	index      string // the .index beside a .timeindex
}

type group struct {
	dir     *partition.Dir
	logDir  *partition.LogDir
	first   int // index of the group's first task
	n       int
	logTask map[int64]int // base offset -> task index of its .log
}

// listTasks turns paths into tasks and partition groups: segment or index
// files, partition directories, log directories (recursively), stdin. A path
// that does not exist and unreadable ones become error tasks; the error is
// for trouble with stdin. cleanup removes stdin's spool file.
func listTasks(ctx context.Context, paths []string, opts Options, buf []task) (ex expander, cleanup func(), err error) {
	ex.tasks = buf[:0]
	var cleanups []func()
	cleanup = func() {
		for _, c := range cleanups {
			c()
		}
	}
	for _, p := range paths {
		if opts.partitions {
			// Files listed them as partition directories already.
			n := ex.real()
			ex.expandPartition(p)
			if ex.real() == n {
				ex.tasks = append(ex.tasks, task{path: p, kind: kindError, err: errors.New("holds no Kafka file (no segment, index, snapshot or checkpoint)")})
			}
			continue
		}
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
					return ex, cleanup, err
				}
				cleanups = append(cleanups, func() { f.Close() })
				r, name = f, p
			}
			t, done, err := stdinTask(ctx, r)
			if err != nil {
				return ex, cleanup, err
			}
			cleanups = append(cleanups, done)
			t.name = name
			ex.tasks = append(ex.tasks, t)
		case partition.ArgFile:
			st, err := os.Stat(p)
			if err != nil {
				return ex, cleanup, err
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
	return ex, cleanup, nil
}

// errStopped is what runPiece returns when emit asked it to stop.
var errStopped = errors.New("verify: stopped by the caller")

// runPiece verifies paths (one piece of a run) with the I/O state rd:
// every finished report, once the partition-level checks that can add to
// it are done, goes to hook (when set: checks that span pieces), then to
// emit, in the order of the piece's files, from the calling goroutine.
// emit returning false stops the run (errStopped). A cancelled context
// returns its error; files not started are then empty reports.
func runPiece(ctx context.Context, paths []string, opts Options, rd *reads, hook func(*FileReport), emit func(*FileReport) bool) (*piece, error) {
	ex, cleanup, err := listTasks(ctx, paths, opts, rd.takeTasks())
	defer cleanup()
	if err != nil {
		return nil, err
	}
	tasks := ex.tasks
	pc := &piece{files: make([]FileReport, len(tasks)), roots: paths}
	var sizes []int64
	if opts.Progress != nil {
		sizes = make([]int64, len(tasks))
		var total int64
		for i, t := range tasks {
			if st, err := os.Stat(t.path); err == nil && st.Mode().IsRegular() {
				sizes[i] = st.Size()
				total += st.Size()
			}
		}
		rd.progress(0, total)
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	// Reading ahead in a second goroutine overlaps the copy out of the
	// page cache with the checks only when a core is idle; on a busy
	// machine it costs CPU time (the chunks move between cores' caches)
	// for no gain, so the default never does it: only --jobs given, at
	// least twice the files (BenchmarkVerifyDefaultJobsVsOne).
	opts.prefetch = opts.Jobs > 0 && jobs >= 2*len(tasks)
	opts.budget = newDecompressBudget(opts.MaxDecompressedBytes)
	em := newEmitter(pc, tasks, ex.groups, rd)
	checkOne := func(v *verifier, i int) {
		pc.files[i] = v.check(tasks[i])
		if sizes != nil {
			// The rest of the file: all of a file that is not a log,
			// what a log's check did not need to read.
			if n := sizes[i] - v.read; n > 0 {
				rd.progress(n, 0)
			}
			v.read = 0
		}
	}
	give := func(ready []int) bool {
		for _, i := range ready {
			f := &pc.files[i]
			if hook != nil {
				hook(f)
				finish(f)
			}
			if !emit(f) {
				return false
			}
		}
		return true
	}
	us := units(tasks)
	if jobs == 1 || (len(us) == 1 && !opts.prefetch) {
		// One job checks in the caller's goroutine: handing each file
		// to another thread costs a scheduler wake-up, milliseconds on
		// a busy machine. So does a run of one unit (one segment's
		// files) whatever --jobs says: there is nothing to share.
		v := newVerifier(ctx, opts, rd)
		defer v.release()
		for i := range tasks {
			if ctx.Err() != nil {
				break
			}
			checkOne(v, i)
			if !give(em.done(i)) {
				return pc, errStopped
			}
		}
	} else if !runJobs(ctx, jobs, us, func() *verifier { return newVerifier(ctx, opts, rd) }, checkOne, em.done, give) {
		return pc, errStopped
	}
	if err := ctx.Err(); err != nil {
		// Files in flight are marked Partial and, with every file
		// checked before the signal whose partition check cannot run
		// now, handed out (README, "Signals"); files never started are
		// not reported.
		give(em.interrupted())
		return pc, err
	}
	for i := range pc.files {
		finish(&pc.files[i])
	}
	// Every check is done: the next piece lists its tasks into the
	// same array (a run of many pieces allocated a growing one for each,
	// a fifth of a fleet run's allocations).
	rd.putTasks(tasks)
	return pc, nil
}

// units groups the tasks a worker checks in a row: a segment's .log and
// the index files after it that describe it, whose checks read the log the
// worker keeps open; every other task alone. Each unit is [first, end).
func units(tasks []task) [][2]int {
	var us [][2]int
	for i := 0; i < len(tasks); {
		j := i + 1
		if tasks[i].kind == "log" {
			for j < len(tasks) && tasks[j].log != "" && tasks[j].log == tasks[i].path {
				j++
			}
		}
		us = append(us, [2]int{i, j})
		i = j
	}
	return us
}

// runJobs checks the tasks of units with jobs workers, a unit at a time:
// check runs in the workers, done (serialised) returns the reports a
// finished task made ready, give hands them out from the calling goroutine
// and returns false to stop. It returns false when give did.
func runJobs(ctx context.Context, jobs int, us [][2]int, worker func() *verifier, check func(*verifier, int), done func(int) []int, give func([]int) bool) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	n := 0
	if len(us) > 0 {
		n = us[len(us)-1][1]
	}
	ready := make(chan []int, n)
	// Workers take the next unit from a counter, not a channel: a log dir
	// of small files is thousands of units, and a hand-off per unit costs
	// scheduler wake-ups; what a unit makes ready goes out in one send.
	var nextUnit atomic.Int64
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := worker()
			defer v.release()
			for ctx.Err() == nil {
				k := int(nextUnit.Add(1) - 1)
				if k >= len(us) {
					return
				}
				var out []int
				for i := us[k][0]; i < us[k][1]; i++ {
					check(v, i)
					mu.Lock()
					out = append(out, done(i)...)
					mu.Unlock()
				}
				if len(out) > 0 {
					ready <- out
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(ready)
	}()
	ok := true
	for r := range ready {
		if ok && !give(r) {
			ok = false
			cancel() // and drain what the workers still finish
		}
	}
	return ok
}

// finish sets a report's verdict once no check can add to it.
// An ignored file was not checked, so it is not ok (README: "ok" is a
// file checked with no findings); it is not a failure either (Failed).
func finish(f *FileReport) {
	f.OK = f.Ignored == "" && !f.Partial && f.Findings() == 0 && f.ioErr == nil
	if f.Problems == nil {
		f.Problems = []Problem{}
	}
}

// emitter runs each group's partition-level checks as soon as all of its
// files are done, and says which finished reports can be handed out, in
// order.
type emitter struct {
	pc       *piece
	rd       *reads
	groups   []group
	of       [][]int // the groups whose range holds each task
	owner    []int   // the group whose check can add to each task, or -1
	left     []int   // tasks not yet done per group
	checked  []bool
	finished []bool
	next     int // the next report to hand out
}

func newEmitter(pc *piece, tasks []task, groups []group, rd *reads) *emitter {
	e := &emitter{pc: pc, rd: rd, groups: groups, of: make([][]int, len(tasks)), owner: make([]int, len(tasks)),
		left: make([]int, len(groups)), checked: make([]bool, len(groups)), finished: make([]bool, len(tasks))}
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

// done records that task i is checked and returns the reports now final,
// in order (callers serialise).
func (e *emitter) done(i int) []int {
	e.finished[i] = true
	for _, gi := range e.of[i] {
		if e.left[gi]--; e.left[gi] == 0 {
			// A partition check over a file a signal cut short would
			// judge a log end that is not the partition's: not made, and
			// the group's reports stay Partial (interrupted).
			if !e.anyPartial(e.groups[gi]) {
				checkPartition(e.pc, e.groups[gi], e.rd)
				e.checked[gi] = true
			}
		}
	}
	var ready []int
	for e.next < len(e.finished) && e.finished[e.next] && (e.owner[e.next] < 0 || e.checked[e.owner[e.next]]) {
		finish(&e.pc.files[e.next])
		ready = append(ready, e.next)
		e.next++
	}
	return ready
}

func (e *emitter) anyPartial(g group) bool {
	for i := g.first; i < g.first+g.n; i++ {
		if e.pc.files[i].Partial {
			return true
		}
	}
	return false
}

// interrupted returns, in order, the reports of the tasks checked (or
// stopped in flight) that wait for a partition check a stopped run will
// not make: marked Partial, since that check could have added to them.
func (e *emitter) interrupted() []int {
	var ready []int
	for e.next < len(e.finished) && e.finished[e.next] {
		f := &e.pc.files[e.next]
		if e.owner[e.next] >= 0 && !e.checked[e.owner[e.next]] {
			f.Partial = true
		}
		finish(f)
		ready = append(ready, e.next)
		e.next++
	}
	return ready
}

func isOffsetCheckpoint(name string) bool {
	for _, c := range partition.LogDirCheckpoints {
		if name == c {
			return true
		}
	}
	return false
}
