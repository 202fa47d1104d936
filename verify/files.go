package verify

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/partition"
)

// chunkPartitions is how many partition directories Files verifies at a
// time: a broker's log dir of 10,000 partitions is verified in pieces of a
// few megabytes of reports each.
var chunkPartitions = 256 // a var only so that tests can shrink it

// MemoryLimit is the soft memory limit klog verify runs under
// (runtime/debug.SetMemoryLimit, unless GOMEMLIMIT sets one): near it the
// garbage collector works harder instead of letting the heap grow to twice
// what is live. What is live is a piece's reports and, with --state, the
// state's entries (~200 bytes per file): a log dir of 100,000 segments
// stays under it.
const MemoryLimit = 96 << 20

// Files verifies paths and yields each file's report as soon as the file,
// and the partition-level checks that can add to it, are done. paths are
// segment, index, snapshot or checkpoint files, partition directories, log
// directories (recursively), or "-" for a segment on Options.Stdin.
//
// Reports come in a stable order: arguments in order, directories expanded
// in offset order, a log directory's checkpoint files after its partitions
// (they are checked against the log end offsets of all of them). A path
// that does not exist, an unreadable directory and a directory holding no
// Kafka file are reported as a file with Err set; the other paths are
// still checked. Memory stays bounded however many partitions a log
// directory holds: they are verified up to chunkPartitions at a time, with
// one --rate limit and one page-cache record for the whole run.
//
// A yielded report is the caller's to keep. The error is yielded once,
// last: trouble reading stdin, or the context's error when it was
// cancelled (the files finished before were yielded, in order). Breaking
// out of the loop stops the run.
func Files(ctx context.Context, paths []string, opts Options) iter.Seq2[*FileReport, error] {
	return func(yield func(*FileReport, error) bool) {
		r := &runner{ctx: ctx, opts: opts, yield: yield, rd: newReads(ctx, opts), leo: map[string]int64{}}
		for _, p := range paths {
			real := r.real
			err := r.walk(p)
			if err == nil {
				err = r.flush()
			}
			if st, serr := os.Stat(p); err == nil && serr == nil && st.IsDir() && r.real == real && !r.said[p] {
				// A directory with no Kafka file in it is an error,
				// never a silent "ok".
				err = r.own(errorReport(p, kindError, errors.New("holds no Kafka file (no segment, index, snapshot or checkpoint)")))
			}
			if err != nil {
				if err != errStopped {
					yield(nil, err)
				}
				return
			}
		}
		if opts.State != nil {
			opts.State.forgetGone(paths)
		}
	}
}

// runner is the state of one run of Files.
type runner struct {
	ctx   context.Context
	opts  Options
	yield func(*FileReport, error) bool
	rd    *reads
	parts []string         // partition directories (or file arguments) waiting for a piece
	files bool             // parts are file arguments
	leo   map[string]int64 // log end offset per partition directory path
	real  int              // Kafka files handed out (not ignored, not errors)
	said  map[string]bool  // paths a report with an error was handed out for
}

// errorReport is the report of a path that cannot be checked: a directory
// that cannot be read, a path holding no Kafka file.
func errorReport(p, kind string, err error) *FileReport {
	f := &FileReport{Path: p, Kind: kind, FirstOffset: -1, LastOffset: -1, ioErr: err, Err: err.Error()}
	finish(f)
	return f
}

// emit hands a report to the caller; errStopped when the caller stopped.
func (r *runner) emit(f *FileReport) bool {
	if f.Ignored == "" && f.Err == "" {
		r.real++
	}
	if f.Err != "" {
		if r.said == nil {
			r.said = map[string]bool{}
		}
		r.said[f.Path] = true
	}
	return r.yield(f, nil)
}

// own hands out a report the runner made itself (no piece checked it).
func (r *runner) own(f *FileReport) error {
	if !r.emit(f) {
		return errStopped
	}
	return nil
}

func (r *runner) walk(p string) error {
	args, err := partition.Expand([]string{p})
	if err != nil {
		if err := r.flush(); err != nil {
			return err
		}
		if _, serr := os.Stat(p); serr != nil {
			// No such path: reported as a path that holds no Kafka file;
			// the other paths are still checked and the exit code is 2 at
			// the end (README, "Exit codes").
			return r.own(errorReport(p, kindError, pathErr(serr)))
		}
		// Unreadable: report it, go on with the rest (exit 2 at the end).
		return r.own(errorReport(p, kindDirectory, err))
	}
	switch args[0].Kind {
	case partition.ArgFile, partition.ArgStdin:
		return r.wait(p, true)
	case partition.ArgPartition:
		return r.wait(p, false)
	}
	ld := args[0].LogDir
	for _, pd := range ld.Partitions {
		if target, ok := ld.Links[pd]; ok {
			// Read through, and said (README, "What a file is").
			if err := r.flush(); err != nil {
				return err
			}
			f := &FileReport{Path: pd, Kind: kindLink, FirstOffset: -1, LastOffset: -1, LinkTarget: target}
			finish(f)
			if err := r.own(f); err != nil {
				return err
			}
		}
		if err := r.walk(pd); err != nil {
			return err
		}
	}
	own, subs, err := logDirEntries(p, ld.Links)
	if err != nil {
		if err := r.flush(); err != nil {
			return err
		}
		return r.own(errorReport(p, kindDirectory, err))
	}
	// The log dir's own files, as a piece lists them.
	for _, e := range own {
		if err := r.flush(); err != nil {
			return err
		}
		if !e.ignored {
			if err := r.piece([]string{e.path}, nil); err != nil {
				return err
			}
			continue
		}
		f := &FileReport{Path: e.path, Kind: kindIgnored, FirstOffset: -1, LastOffset: -1, Ignored: "not a Kafka file"}
		finish(f)
		if err := r.own(f); err != nil {
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
	leo := map[string]int64{}
	for _, pd := range ld.Partitions {
		if end, ok := r.leo[pd]; ok {
			leo[filepath.Base(pd)] = end
		}
	}
	return r.piece(ld.Checkpoints, func(f *FileReport) { checkCheckpointRange(f, ld.Path, leo, r.rd) })
}

// wait adds p, a file argument or a partition directory, to the next piece:
// file arguments in a row make one piece, as do up to chunkPartitions
// partition directories in a row.
func (r *runner) wait(p string, file bool) error {
	if len(r.parts) > 0 && r.files != file {
		if err := r.flush(); err != nil {
			return err
		}
	}
	r.parts, r.files = append(r.parts, p), file
	if len(r.parts) >= chunkPartitions {
		return r.flush()
	}
	return nil
}

// flush verifies the paths waiting.
func (r *runner) flush() error {
	if len(r.parts) == 0 {
		return nil
	}
	parts := r.parts
	r.parts = nil
	if r.files {
		return r.piece(parts, nil)
	}
	opts := r.opts
	opts.partitions = true
	return r.pieceWith(opts, parts, nil)
}

// piece verifies paths, yielding each report, then records the piece in
// the state and the log end offsets of its partitions.
func (r *runner) piece(paths []string, hook func(*FileReport)) error {
	return r.pieceWith(r.opts, paths, hook)
}

func (r *runner) pieceWith(opts Options, paths []string, hook func(*FileReport)) error {
	pc, err := runPiece(r.ctx, paths, opts, r.rd, hook, r.emit)
	if err != nil {
		return err
	}
	if r.opts.State != nil {
		r.opts.State.update(pc)
	}
	// Log end offsets for the checkpoints of the log dir around them.
	addLogEnds(r.leo, pc.files, true)
	return nil
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
