package recovery

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Actions LogLoader takes on a segment (Segment.Action).
const (
	ActionKeep     = "keep"     // the segment is intact
	ActionTruncate = "truncate" // LogSegment.recover cuts TruncateBytes at ValidBytes
	ActionMove     = "move"     // LocalLog.splitOverflowedSegment moves its batches into new segments
	ActionDelete   = "delete"   // it follows a truncated segment, or an orphaned file
)

// NewSegment is one segment a split creates from an overflowed one.
type NewSegment struct {
	Type       string `json:"type"` // "newSegment"
	Log        string `json:"log"`
	BaseOffset int64  `json:"baseOffset"`
	// Position is where its bytes start in the original .log; Bytes how
	// many it keeps after recovery; TruncateBytes what recovery of the new
	// segment cuts; Delete is set when it follows a truncated segment.
	Position      int64 `json:"position"`
	Bytes         int64 `json:"bytes"`
	TruncateBytes int64 `json:"truncateBytes"`
	Delete        bool  `json:"delete"`
	LastOffset    int64 `json:"lastOffset"`
}

// Segment is what the broker's log loading (LogLoader, which runs
// LogSegment.recover on every segment after an unclean shutdown) does to one
// .log file.
type Segment struct {
	Type       string `json:"type"` // "segment"
	Log        string `json:"log"`
	BaseOffset int64  `json:"baseOffset"`
	// Action is keep, truncate, move or delete.
	Action string `json:"action"`
	// Bytes is the file's size; ValidBytes where the valid prefix ends;
	// TruncateBytes what follows it (the whole file for delete).
	Bytes         int64 `json:"bytes"`
	ValidBytes    int64 `json:"validBytes"`
	TruncateBytes int64 `json:"truncateBytes"`
	// NewBaseOffset and NewSegments describe a move (offset overflow:
	// the old files are renamed .deleted).
	NewBaseOffset *int64       `json:"newBaseOffset,omitempty"`
	NewSegments   []NewSegment `json:"newSegments,omitempty"`
	// FirstDropped..LastDropped are the offsets of the readable batches
	// recovery drops (-1 when none or unknown).
	FirstDropped int64 `json:"firstDropped"`
	LastDropped  int64 `json:"lastDropped"`
	// Reason says why recovery acts on this segment.
	Reason string `json:"reason,omitempty"`
	// IndexEntries and TimeIndexEntries are what the rebuilt indexes hold
	// (index.interval.bytes); IndexChanged/TimeIndexChanged say whether
	// they differ from the files on disk. Recovery always rebuilds them.
	IndexEntries     int  `json:"indexEntries"`
	TimeIndexEntries int  `json:"timeIndexEntries"`
	IndexChanged     bool `json:"indexChanged"`
	TimeIndexChanged bool `json:"timeIndexChanged"`
	// LastOffset of what is kept, or -1.
	LastOffset int64 `json:"lastOffset"`
}

// Changes reports whether loading changes this segment's log data (index
// rebuilds are not counted: recovery rebuilds every index).
func (s *Segment) Changes() bool { return s.Action != ActionKeep }

// Kinds of DeletedFile.
const (
	DeleteOrphanIndex   = "orphan-index"       // an index file with no .log
	DeleteSegmentIndex  = "segment-index"      // an index of a deleted or moved segment
	DeleteSnapshotAbove = "snapshot-above-end" // a producer snapshot above the recovered log end offset
	DeleteSnapshotStale = "snapshot-rewritten" // a snapshot loading drops while it rebuilds producer state
	DeleteLeftover      = "leftover"           // a .deleted or .cleaned file of an earlier operation
)

// DeletedFile is a file other than a segment's .log that LogLoader deletes.
type DeletedFile struct {
	Type   string `json:"type"` // "deletedFile"
	Path   string `json:"path"`
	Kind   string `json:"fileKind"`
	Reason string `json:"reason"`
}

// Changes reports whether this deletion loses anything: producer
// snapshots Kafka rebuilds from the log and leftovers of finished
// operations are housekeeping.
func (f *DeletedFile) Changes() bool {
	return f.Kind != DeleteSnapshotStale && f.Kind != DeleteLeftover
}

// Plan is the plan for a partition directory: what Kafka 4.3.1's
// UnifiedLog does when it opens the directory after an unclean shutdown
// (recovery point 0, log start offset checkpoint 0, default LogConfig).
type Plan struct {
	Type string `json:"type"` // "recovery"
	Dir  string `json:"dir"`
	// Loads is false when Kafka refuses to load the partition; KafkaError
	// is then the exception's simple class name and message.
	Loads      bool   `json:"loads"`
	KafkaError string `json:"kafkaError,omitempty"`
	// LogStartOffset and LogEndOffset after loading (-1 when Kafka
	// refuses to load).
	LogStartOffset int64     `json:"logStartOffset"`
	LogEndOffset   int64     `json:"logEndOffset"`
	Segments       []Segment `json:"segments"`
	// DeletedFiles are the other files loading deletes: orphaned index
	// files, producer snapshots it does not keep, leftovers of earlier
	// deletions and cleanings, and the files of deleted segments.
	DeletedFiles []DeletedFile `json:"deletedFiles"`
	// NewEmptySegment is set when no segment survives: Kafka creates an
	// empty one at the log start offset.
	NewEmptySegment bool `json:"newEmptySegment"`
	// KRaftSnapshots are a __cluster_metadata partition's snapshots the
	// metadata log keeps (kraft.go); TruncatedToSnapshot names the one
	// it starts the log at when it empties it.
	KRaftSnapshots      []KRaftSnapshot `json:"kraftSnapshots,omitempty"`
	TruncatedToSnapshot string          `json:"truncatedToSnapshot,omitempty"`

	live   []*vseg
	epochs []format.EpochEntry
	srcs   []*srcSeg
	hadLEC bool
}

// Changes reports whether loading would change anything or refuse.
func (r *Plan) Changes() bool {
	if !r.Loads || r.NewEmptySegment {
		return true
	}
	for i := range r.DeletedFiles {
		if r.DeletedFiles[i].Changes() {
			return true
		}
	}
	for i := range r.Segments {
		if r.Segments[i].Changes() {
			return true
		}
	}
	return false
}

// Options configures a recovery plan.
type Options struct {
	// IndexIntervalBytes is index.interval.bytes (default 4096).
	IndexIntervalBytes int64
	// MaxBatchBytes bounds the batches read whole (control batches with a
	// producer id, compressed v0/v1 wrappers being split; default 16 MiB);
	// every other batch is checked streaming, whatever its size.
	MaxBatchBytes int
	// OnBytes, if set, is told how far into the .log files the plan has
	// read, in steps of about a MiB (the furthest byte read in each file,
	// so a re-read after a split counts once); by the time PlanDir
	// returns the calls add up to the size of every .log file.
	OnBytes func(n int64)
	// Context, if set, stops the plan when it ends: PlanDir then returns
	// its error (checked at every read of a .log).
	Context context.Context
}

// srcSeg is an original .log file.
type srcSeg struct {
	seg  partition.Segment
	f    segFile
	size int64
	prog *furthestReader // with Options.OnBytes
}

// vseg is a segment as LogLoader sees it: a byte range of an original file
// (a split segment holds a range of the file it was split from).
type vseg struct {
	src      *srcSeg
	base     int64
	pos, end int64
	early    bool // recovered while loading: no .index, or a .txnindex that fails its sanity check
	moved    bool // created by a split
	split    bool // split into new segments
	deleted  bool
	recov    segResult
	reason   string
	origEnd  int64 // a split part's end before any recovery
}

// kafkaErr is an exception Kafka throws; caught says LogSegment.recover
// catches it (CorruptRecordException, InvalidRecordException).
type kafkaErr struct {
	class, msg string
	caught     bool
}

func (e *kafkaErr) String() string { return e.class + ": " + e.msg }

type segResult struct {
	valid         int64 // bytes kept from pos
	overflow      bool
	idxOff        int64
	idxPos        int64
	invalidOffset string
	refuse        *kafkaErr
	pending       *kafkaErr
	reason        string
	lastOffset    int64
	index         []byte
	timeIndex     []byte
}

type planner struct {
	opts   Options
	dir    string
	frames format.FrameReader
	rr     format.RecordReader
	rec    format.Record
	raw    []byte
	epochs []format.EpochEntry
}

const maxRestarts = 10000

// maxWholeBatch is the default Options.MaxBatchBytes: a control
// batch is a few dozen bytes, so this bounds memory on hostile sizes only.
const maxWholeBatch = 16 << 20

// PlanDir computes, without changing anything, what Kafka 4.3.1 does
// when it opens a partition directory after an unclean shutdown: LogLoader
// deletes leftovers and orphaned index files, refuses a *.log whose name is
// not a number, runs LogSegment.recover on every segment (batch framing,
// CRC and offset range only; records are never decoded), truncates at the
// first invalid batch and deletes every later segment, splits a segment
// whose offsets overflow it (or refuses to load where the split's
// precondition fails), and rebuilds the indexes, producer snapshots and
// leader epochs.
func PlanDir(dir string, opts Options) (*Plan, error) {
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = 4096
	}
	if opts.MaxBatchBytes <= 0 {
		opts.MaxBatchBytes = maxWholeBatch
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	rec := &Plan{Type: "recovery", Dir: dir, Loads: true, DeletedFiles: []DeletedFile{}, Segments: []Segment{}}
	p := &planner{opts: opts, dir: dir}
	// LogLoader.removeTempFilesAndCollectSwapFiles.
	var names []string
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		name := de.Name()
		switch {
		case strings.HasSuffix(name, ".deleted") && !strings.HasSuffix(name, ".checkpoint.deleted"):
			rec.deleted(filepath.Join(dir, name), DeleteLeftover, "a leftover of an earlier deletion (LogLoader deletes stray .deleted files)")
		case strings.HasSuffix(name, ".cleaned"):
			rec.deleted(filepath.Join(dir, name), DeleteLeftover, "a leftover of an interrupted cleaning (LogLoader deletes .cleaned files)")
		case strings.HasSuffix(name, ".swap"):
			return nil, errors.New(filepath.Join(dir, name) + ": an interrupted swap operation; klog does not model how LogLoader completes it")
		default:
			names = append(names, name)
		}
	}
	sort.Strings(names)
	// LogLoader.loadSegmentFiles: every *.log and index file name must be
	// a number (LogFileUtils.offsetFromFile).
	for _, name := range names {
		if !partition.IsSegmentFile(name) {
			continue
		}
		stem := name[:strings.IndexByte(name, '.')]
		off, err := strconv.ParseInt(stem, 10, 64)
		if err != nil {
			rec.refuse(&kafkaErr{class: "NumberFormatException", msg: "For input string: \"" + stem + "\""},
				filepath.Join(dir, name))
			rec.finishRefused()
			return rec, nil
		}
		if suffix := name[len(stem):]; partition.FileName(off, suffix) != name {
			return nil, errors.New(filepath.Join(dir, name) + ": not a canonical segment file name; klog does not model what LogLoader opens for it")
		}
	}
	d, err := partition.Open(dir)
	if err != nil {
		return nil, err
	}
	if d.LeaderEpochs != "" {
		rec.hadLEC = true
		if data, err := safeio.ReadFile(d.LeaderEpochs, safeio.MaxCheckpointBytes); err == nil {
			if es, err := format.ParseLeaderEpochCheckpoint(data); err == nil {
				p.epochs = es
			}
		}
	}
	var live []*vseg
	for _, s := range d.Segments {
		if s.Log == "" {
			for _, f := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" {
					rec.deleted(f, DeleteOrphanIndex, "an orphaned index file with no corresponding log file")
				}
			}
			continue
		}
		f, size, err := safeio.OpenSized(s.Log)
		if err != nil {
			rec.closeAll()
			return nil, err
		}
		src := &srcSeg{seg: s, f: f, size: size}
		if opts.OnBytes != nil || opts.Context != nil {
			src.prog = &furthestReader{File: f, onBytes: opts.OnBytes, ctx: opts.Context}
			src.f = src.prog
		}
		rec.srcs = append(rec.srcs, src)
		v := &vseg{src: src, base: s.BaseOffset, end: src.size, early: s.Index == ""}
		if s.TxnIndex != "" && !v.early {
			corrupt, ke, err := txnSanity(s.TxnIndex, s.BaseOffset)
			if err != nil {
				f.Close()
				rec.closeAll()
				return nil, err
			}
			if ke != nil && rec.Loads {
				rec.refuse(ke, s.TxnIndex)
			}
			v.early = corrupt
		}
		live = append(live, v)
	}
	defer rec.closeAll()
	if opts.OnBytes != nil {
		defer func() {
			for _, s := range rec.srcs {
				if s.prog != nil {
					s.prog.rest(s.size)
				}
			}
		}()
	}
	all := append([]*vseg(nil), live...)
	if rec.Loads {
		if err := p.simulate(rec, &live, &all); err != nil {
			return nil, err
		}
	}
	rec.live = live
	rec.epochs = p.epochs
	if err := p.finish(rec, d, all); err != nil {
		return nil, err
	}
	rec.kraftStep(dir, names, d) // kraft.go
	sort.SliceStable(rec.DeletedFiles, func(i, j int) bool { return rec.DeletedFiles[i].Path < rec.DeletedFiles[j].Path })
	return rec, nil
}

func (r *Plan) deleted(path, kind, reason string) {
	r.DeletedFiles = append(r.DeletedFiles, DeletedFile{Type: "deletedFile", Path: path, Kind: kind, Reason: reason})
}

func (r *Plan) refuse(e *kafkaErr, where string) {
	r.Loads = false
	r.KafkaError = e.String()
	_ = where
}

// finishRefused fills a plan that stopped before any segment was read.
func (r *Plan) finishRefused() {
	r.LogStartOffset, r.LogEndOffset = -1, -1
}

func (r *Plan) closeAll() {
	for _, s := range r.srcs {
		if s.f != nil {
			s.f.Close()
			s.f = nil
		}
	}
}

// finish turns the simulated segments into the plan: per original file
// its action, the log start and end offsets, and the files deleted.
func (p *planner) finish(rec *Plan, d *partition.Dir, all []*vseg) error {
	live := rec.live
	switch {
	case !rec.Loads:
		rec.LogStartOffset, rec.LogEndOffset = -1, -1
	case len(live) == 0:
		rec.NewEmptySegment = true
		rec.LogStartOffset, rec.LogEndOffset = 0, 0
	default:
		rec.LogStartOffset = max(0, live[0].base)
		lastV := live[len(live)-1]
		rec.LogEndOffset = lastV.base
		if lastV.recov.lastOffset >= 0 && lastV.end > lastV.pos {
			rec.LogEndOffset = lastV.recov.lastOffset + 1
		}
	}
	for _, src := range rec.srcs {
		s := Segment{Type: "segment", Log: src.seg.Log, BaseOffset: src.seg.BaseOffset, Bytes: src.size,
			FirstDropped: -1, LastDropped: -1, LastOffset: -1, Action: ActionKeep}
		var orig *vseg
		var parts []*vseg
		for _, v := range all {
			if v.src != src {
				continue
			}
			if !v.moved {
				orig = v
			} else if !v.split {
				parts = append(parts, v)
			}
		}
		switch {
		case orig != nil && orig.split:
			s.Action = ActionMove
			nb := parts[0].base
			s.NewBaseOffset = &nb
			s.Reason = orig.recov.reason
			for _, v := range parts {
				ns := NewSegment{Type: "newSegment", Log: filepath.Join(filepath.Dir(src.seg.Log), partition.FileName(v.base, partition.LogSuffix)),
					BaseOffset: v.base, Position: v.pos, Bytes: v.end - v.pos, Delete: v.deleted, LastOffset: v.recov.lastOffset}
				if v.deleted {
					ns.Bytes, ns.LastOffset = 0, -1
				}
				ns.TruncateBytes = v.origEnd - v.pos - ns.Bytes
				s.NewSegments = append(s.NewSegments, ns)
				if !v.deleted && ns.Bytes > 0 {
					s.LastOffset = max(s.LastOffset, v.recov.lastOffset)
				}
			}
		case orig != nil && orig.deleted:
			s.Action = ActionDelete
			s.TruncateBytes = src.size
			s.Reason = "it follows a truncated segment (LogLoader deletes every later segment)"
			s.FirstDropped, s.LastDropped = p.droppedRange(src, 0)
		case orig != nil:
			s.ValidBytes = orig.end
			s.TruncateBytes = src.size - orig.end
			s.LastOffset = orig.recov.lastOffset
			if s.TruncateBytes > 0 {
				s.Action = ActionTruncate
				s.Reason = orig.reason
				if s.Reason == "" {
					s.Reason = orig.recov.reason
				}
				s.FirstDropped, s.LastDropped = p.droppedRange(src, orig.end)
			}
			s.IndexEntries = len(orig.recov.index) / format.OffsetIndexEntrySize
			s.TimeIndexEntries = len(orig.recov.timeIndex) / format.TimeIndexEntrySize
			s.IndexChanged = differs(src.seg.Index, orig.recov.index, format.OffsetIndexEntrySize)
			s.TimeIndexChanged = differs(src.seg.TimeIndex, orig.recov.timeIndex, format.TimeIndexEntrySize)
		}
		if s.Action == ActionDelete || s.Action == ActionMove {
			for _, f := range []string{src.seg.Index, src.seg.TimeIndex, src.seg.TxnIndex} {
				if f != "" {
					what := "the deleted segment's index"
					if s.Action == ActionMove {
						what = "the moved segment's old index (renamed .deleted)"
					}
					rec.deleted(f, DeleteSegmentIndex, what)
				}
			}
		}
		rec.Segments = append(rec.Segments, s)
	}
	// Producer snapshots: loading (truncateAndReload, removeStraySnapshots)
	// deletes every snapshot; it writes new ones at the base offset of
	// every segment after the first and at the log end offset.
	if rec.Loads {
		keep := map[int64]bool{}
		for _, v := range live {
			if v.base > rec.LogStartOffset {
				keep[v.base] = true
			}
		}
		if rec.LogEndOffset > rec.LogStartOffset {
			keep[rec.LogEndOffset] = true
		}
		for _, sn := range d.Snapshots {
			if !keep[sn.Offset] {
				kind, why := DeleteSnapshotStale, "a producer snapshot at no segment boundary after the log start and not at the log end offset (Kafka rebuilds producer state from the log)"
				if sn.Offset > rec.LogEndOffset {
					kind, why = DeleteSnapshotAbove, "a producer snapshot above the recovered log end offset "+itoa(rec.LogEndOffset)
				}
				rec.deleted(sn.Path, kind, why)
			}
		}
		// LeaderEpochFileCache.truncateFromEnd(logEndOffset).
		keepE := p.epochs[:0]
		for _, e := range p.epochs {
			if e.StartOffset < rec.LogEndOffset {
				keepE = append(keepE, e)
			}
		}
		rec.epochs = keepE
	}
	sort.SliceStable(rec.DeletedFiles, func(i, j int) bool { return rec.DeletedFiles[i].Path < rec.DeletedFiles[j].Path })
	return nil
}

// droppedRange finds the offsets of the readable batches after pos.
func (p *planner) droppedRange(src *srcSeg, pos int64) (int64, int64) {
	sc := format.NewScanner(src.f, src.size, format.ScanOptions{HeadersOnly: true})
	sc.SetPos(pos)
	first, last := int64(-1), int64(-1)
	for {
		b, err := sc.Next()
		if err != nil {
			if err != io.EOF && !sc.Done() {
				continue
			}
			break
		}
		if first < 0 {
			first = b.BaseOffset
		}
		last = b.LastOffset()
	}
	return first, last
}

func differs(path string, want []byte, entry int) bool {
	if path == "" {
		return len(want) > 0
	}
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return true
	}
	defer f.Close()
	// A preallocated zero tail is not a difference: compare the entries
	// the rebuilt index holds, then require zeros after them.
	n := size / int64(entry) * int64(entry)
	if n < int64(len(want)) {
		return true
	}
	got := make([]byte, len(want))
	if _, err := f.ReadAt(got, 0); err != nil && len(want) > 0 {
		return true
	}
	if string(got) != string(want) {
		return true
	}
	buf := make([]byte, 64<<10)
	for at := int64(len(want)); at < n; {
		m := min(int64(len(buf)), n-at)
		if _, err := f.ReadAt(buf[:m], at); err != nil {
			return true
		}
		if !isZero(buf[:m]) {
			return true
		}
		at += m
	}
	return false
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
