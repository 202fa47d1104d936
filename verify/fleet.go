package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/klog-dev/klog/partition"
)

// chunkPartitions is how many partition directories RunEach verifies at a
// time: a broker's log dir of 10,000 partitions is verified in pieces of a
// few megabytes of reports each.
var chunkPartitions = 256 // a var only so that tests can shrink it

// MemoryLimit is the soft memory limit klog verify runs under
// (runtime/debug.SetMemoryLimit, unless GOMEMLIMIT sets one): near it the
// garbage collector works harder instead of letting the heap grow to twice
// what is live. With RunEach, what is live is a piece's reports and, with
// --state, the state's entries (~200 bytes per file): a log dir of 100,000
// segments stays under it.
const MemoryLimit = 96 << 20

// RunEach verifies paths as Run does, a piece at a time, so that memory
// stays bounded however many partitions a log directory holds: each piece
// is a file argument, or up to chunkPartitions partition directories, or a
// log directory's own checkpoint files (checked against the log end offsets
// of all its partitions, after them). each is called with every piece's
// report, in order; its error stops the run. The pieces share one --rate
// limit and one page-cache record. The returned Report holds no Files, only
// the run's totals (Findings, IOErrors, BytesRead, Start, Duration).
//
// Files come in Run's order (a log directory's checkpoint files after its
// partitions); Options.OnFile and OnStart are called per piece.
func RunEach(ctx context.Context, paths []string, opts Options, each func(*Report) error) (*Report, error) {
	total := &Report{Start: time.Now(), roots: paths}
	rd := newReads(ctx, opts)
	opts.reads = rd
	defer func() {
		total.BytesRead = rd.n.Load()
		total.Duration = time.Since(total.Start)
	}()
	r := &runner{ctx: ctx, opts: opts, each: each, total: total, leo: map[string]int64{}}
	for _, p := range paths {
		real := r.real
		if err := r.walk(p); err != nil {
			return total, err
		}
		if err := r.flush(); err != nil {
			return total, err
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() && r.real == real {
			// A directory with no Kafka file in it is an error, never a
			// silent "ok".
			if err := r.handOwn(errorReport(p, kindError, errors.New("holds no Kafka file (no segment, index, snapshot or checkpoint)"))); err != nil {
				return total, err
			}
		}
	}
	if opts.State != nil {
		opts.State.forgetGone(paths)
	}
	return total, nil
}

// runner is the state of one RunEach.
type runner struct {
	ctx   context.Context
	opts  Options
	each  func(*Report) error
	total *Report
	parts []string         // partition directories waiting for a piece
	leo   map[string]int64 // log end offset per partition directory path
	real  int              // Kafka files handed out (not ignored, not errors)
}

// errorReport is a one-file report of a path that cannot be checked: a
// directory that cannot be read, a path holding no Kafka file.
func errorReport(p, kind string, err error) *Report {
	f := FileReport{Path: p, Kind: kind, FirstOffset: -1, LastOffset: -1, ioErr: err, Err: err.Error()}
	finish(&f)
	return &Report{Files: []FileReport{f}}
}

func (r *runner) walk(p string) error {
	args, err := partition.Expand([]string{p})
	if err != nil {
		if _, serr := os.Stat(p); serr != nil {
			// No such path: reported as a path that holds no Kafka file;
			// the other paths are still checked and the exit code is 2 at
			// the end (README, "Exit codes").
			if err := r.flush(); err != nil {
				return err
			}
			return r.handOwn(errorReport(p, kindError, pathErr(serr)))
		}
		// Unreadable: report it, go on with the rest (exit 2 at the end).
		if err := r.flush(); err != nil {
			return err
		}
		return r.handOwn(errorReport(p, kindDirectory, err))
	}
	if err != nil {
		return err
	}
	switch args[0].Kind {
	case partition.ArgFile, partition.ArgStdin:
		if err := r.flush(); err != nil {
			return err
		}
		return r.piece([]string{p})
	case partition.ArgPartition:
		r.parts = append(r.parts, p)
		if len(r.parts) >= chunkPartitions {
			return r.flush()
		}
		return nil
	}
	ld := args[0].LogDir
	for _, pd := range ld.Partitions {
		if err := r.walk(pd); err != nil {
			return err
		}
	}
	own, subs, err := logDirEntries(p)
	if err != nil {
		if err := r.flush(); err != nil {
			return err
		}
		return r.handOwn(errorReport(p, kindDirectory, err))
	}
	// The log dir's own files, as Run lists them.
	for _, e := range own {
		if err := r.flush(); err != nil {
			return err
		}
		if !e.ignored {
			if err := r.piece([]string{e.path}); err != nil {
				return err
			}
			continue
		}
		f := FileReport{Path: e.path, Kind: kindIgnored, FirstOffset: -1, LastOffset: -1, Ignored: "not a Kafka file"}
		finish(&f)
		if err := r.handOwn(&Report{Files: []FileReport{f}}); err != nil {
			return err
		}
	}
	for _, s := range subs {
		if err := r.walk(s); err != nil {
			return err
		}
	}
	if len(ld.Checkpoints) == 0 {
		return nil
	}
	if err := r.flush(); err != nil {
		return err
	}
	// The log dir's checkpoints, against its partitions' log ends.
	rep, err := Run(r.ctx, ld.Checkpoints, r.opts)
	if err != nil {
		return err
	}
	leo := map[string]int64{}
	for _, pd := range ld.Partitions {
		if end, ok := r.leo[pd]; ok {
			leo[filepath.Base(pd)] = end
		}
	}
	for i := range rep.Files {
		f := &rep.Files[i]
		checkCheckpointRange(f, ld.Path, leo, r.opts.reads)
		f.OK = f.Findings() == 0 && f.ioErr == nil
	}
	return r.hand(rep)
}

// flush verifies the partition directories waiting.
func (r *runner) flush() error {
	if len(r.parts) == 0 {
		return nil
	}
	parts := r.parts
	r.parts = nil
	return r.piece(parts)
}

func (r *runner) piece(paths []string) error {
	rep, err := Run(r.ctx, paths, r.opts)
	if err != nil {
		return err
	}
	// Log end offsets for the checkpoints of the log dir around them.
	addLogEnds(r.leo, rep.Files, true)
	return r.hand(rep)
}

// handOwn hands out a report RunEach made itself (no Run emitted its
// files): OnFile first, as Run would have.
func (r *runner) handOwn(rep *Report) error {
	if r.opts.OnFile != nil {
		for i := range rep.Files {
			r.opts.OnFile(&rep.Files[i])
		}
	}
	return r.hand(rep)
}

// hand gives a piece to the caller and keeps only its totals.
func (r *runner) hand(rep *Report) error {
	for i := range rep.Files {
		if f := &rep.Files[i]; f.Ignored == "" && f.Err == "" {
			r.real++
		}
	}
	r.total.findings += rep.Findings()
	r.total.ioErrors += rep.IOErrors()
	return r.each(rep)
}

// forgetGone drops the entries under roots whose directory no longer exists
// (a deleted partition); Update forgets the files of the directories a
// piece covered.
func (s *State) forgetGone(roots []string) {
	var abs []string
	for _, r := range roots {
		abs = append(abs, s.abs(r))
	}
	for d := range s.dirs {
		if !under(d, abs) {
			continue
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			delete(s.dirs, d)
		}
	}
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || len(p) > len(r) && p[:len(r)] == r && p[len(r)] == filepath.Separator {
			return true
		}
	}
	return false
}

// pathErr is a stat error without the "stat PATH:" prefix: the report
// names the path already.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
