package verify

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
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

// Actions LogLoader takes on a segment (SegmentRecovery.Action).
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

// SegmentRecovery is what the broker's log loading (LogLoader, which runs
// LogSegment.recover on every segment after an unclean shutdown) does to one
// .log file.
type SegmentRecovery struct {
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
func (s *SegmentRecovery) Changes() bool { return s.Action != ActionKeep }

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

// Recovery is the plan for a partition directory: what Kafka 4.3.1's
// UnifiedLog does when it opens the directory after an unclean shutdown
// (recovery point 0, log start offset checkpoint 0, default LogConfig).
type Recovery struct {
	Type string `json:"type"` // "recovery"
	Dir  string `json:"dir"`
	// Loads is false when Kafka refuses to load the partition; KafkaError
	// is then the exception's simple class name and message.
	Loads      bool   `json:"loads"`
	KafkaError string `json:"kafkaError,omitempty"`
	// LogStartOffset and LogEndOffset after loading (-1 when Kafka
	// refuses to load).
	LogStartOffset int64             `json:"logStartOffset"`
	LogEndOffset   int64             `json:"logEndOffset"`
	Segments       []SegmentRecovery `json:"segments"`
	// DeletedFiles are the other files loading deletes: orphaned index
	// files, producer snapshots it does not keep, leftovers of earlier
	// deletions and cleanings, and the files of deleted segments.
	DeletedFiles []DeletedFile `json:"deletedFiles"`
	// NewEmptySegment is set when no segment survives: Kafka creates an
	// empty one at the log start offset.
	NewEmptySegment bool `json:"newEmptySegment"`

	live   []*vseg
	epochs []format.EpochEntry
	srcs   []*srcSeg
	hadLEC bool
}

// Changes reports whether loading would change anything or refuse.
func (r *Recovery) Changes() bool {
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

// RecoverOptions configures a recovery plan.
type RecoverOptions struct {
	// IndexIntervalBytes is index.interval.bytes (default 4096).
	IndexIntervalBytes int64
	// MaxBatchBytes bounds the batches read whole (control batches with a
	// producer id, compressed v0/v1 wrappers being split; default 16 MiB);
	// every other batch is checked streaming, whatever its size.
	MaxBatchBytes int
	// OnBytes, if set, is told how far into the .log files the plan has
	// read, in steps of about a MiB (the furthest byte read in each file,
	// so a re-read after a split counts once); by the time PlanRecovery
	// returns the calls add up to the size of every .log file.
	OnBytes func(n int64)
}

// srcSeg is an original .log file.
type srcSeg struct {
	seg  partition.Segment
	f    segFile
	size int64
	prog *furthestReader // with RecoverOptions.OnBytes
}

// segFile is what the planner reads a .log through: the file, or the file
// behind a furthestReader.
type segFile interface {
	io.ReaderAt
	io.Closer
}

// progressStep is the least a furthestReader reports at once.
const progressStep = safeio.ProgressStep

// furthestReader tells onBytes how far into its file reads have reached.
// Unlike safeio.ProgressReaderAt it counts positions, not bytes: the
// planner reads some ranges twice.
type furthestReader struct {
	*os.File
	onBytes  func(n int64)
	furthest int64 // furthest byte read
	told     int64
}

func (r *furthestReader) ReadAt(b []byte, off int64) (int, error) {
	n, err := r.File.ReadAt(b, off)
	if end := off + int64(n); end > r.furthest {
		r.furthest = end
		if r.furthest-r.told >= progressStep {
			r.onBytes(r.furthest - r.told)
			r.told = r.furthest
		}
	}
	return n, err
}

// rest tells onBytes the part of a file of size bytes not yet told, read
// or not (the segments after a truncation are never read).
func (r *furthestReader) rest(size int64) {
	if size > r.told {
		r.onBytes(size - r.told)
		r.told = size
	}
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
	opts   RecoverOptions
	dir    string
	crcBuf []byte
	hdr    [format.BatchHeaderSize]byte
	rr     format.RecordReader
	rec    format.Record
	raw    []byte
	epochs []format.EpochEntry
}

const maxRestarts = 10000

// maxWholeBatch is the default RecoverOptions.MaxBatchBytes: a control
// batch is a few dozen bytes, so this bounds memory on hostile sizes only.
const maxWholeBatch = 16 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PlanRecovery computes, without changing anything, what Kafka 4.3.1 does
// when it opens a partition directory after an unclean shutdown: LogLoader
// deletes leftovers and orphaned index files, refuses a *.log whose name is
// not a number, runs LogSegment.recover on every segment (batch framing,
// CRC and offset range only; records are never decoded), truncates at the
// first invalid batch and deletes every later segment, splits a segment
// whose offsets overflow it (or refuses to load where the split's
// precondition fails), and rebuilds the indexes, producer snapshots and
// leader epochs.
func PlanRecovery(dir string, opts RecoverOptions) (*Recovery, error) {
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
	rec := &Recovery{Type: "recovery", Dir: dir, Loads: true, DeletedFiles: []DeletedFile{}, Segments: []SegmentRecovery{}}
	p := &planner{opts: opts, dir: dir, crcBuf: make([]byte, 64<<10)}
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
		if !isSegmentFile(name) {
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
		if opts.OnBytes != nil {
			src.prog = &furthestReader{File: f, onBytes: opts.OnBytes}
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
	return rec, nil
}

// txnSanity is TransactionIndex.sanityCheck as LogSegment.sanityCheck
// runs it while loading: an entry whose last offset is below the segment's
// base offset is a CorruptIndexException (the segment is recovered while
// loading), a version above 0 a KafkaException (the load fails). A partial
// entry at the end is not read.
func txnSanity(path string, base int64) (bool, *kafkaErr, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	var e [34]byte
	br := bufio.NewReaderSize(f, 64<<10) // one read per 64 KiB, not per entry
	for {
		if _, err := io.ReadFull(br, e[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return false, nil, nil
			}
			return false, nil, err
		}
		if v := int8(e[0]); v > 0 {
			return false, &kafkaErr{class: "KafkaException", msg: "Unexpected aborted transaction version " + strconv.Itoa(int(v)) +
				" in transaction index " + path + ", current version is 0"}, nil
		}
		if last := int64(binary.BigEndian.Uint64(e[18:])); last < base {
			return true, nil, nil
		}
	}
}

func (r *Recovery) deleted(path, kind, reason string) {
	r.DeletedFiles = append(r.DeletedFiles, DeletedFile{Type: "deletedFile", Path: path, Kind: kind, Reason: reason})
}

func (r *Recovery) refuse(e *kafkaErr, where string) {
	r.Loads = false
	r.KafkaError = e.String()
	_ = where
}

// finishRefused fills a plan that stopped before any segment was read.
func (r *Recovery) finishRefused() {
	r.LogStartOffset, r.LogEndOffset = -1, -1
}

func (r *Recovery) closeAll() {
	for _, s := range r.srcs {
		if s.f != nil {
			s.f.Close()
			s.f = nil
		}
	}
}

func sortLive(live []*vseg) {
	sort.SliceStable(live, func(i, j int) bool { return live[i].base < live[j].base })
}

// simulate runs LogLoader.load's segment passes: recovery while loading
// (segments without an offset index), then recoverLog over every segment,
// restarting after each split as retryOnOffsetOverflow does.
func (p *planner) simulate(rec *Recovery, live, all *[]*vseg) error {
	for restarts := 0; ; restarts++ {
		if restarts > maxRestarts {
			return errors.New(p.dir + ": more than " + strconv.Itoa(maxRestarts) + " segment splits")
		}
		sortLive(*live)
		split := false
		// loadSegmentFiles: recoverSegment for a segment whose index is
		// missing; a truncation here does not delete later segments.
		for _, v := range *live {
			if !v.early {
				continue
			}
			r, err := p.recoverSeg(v)
			if err != nil {
				return err
			}
			v.recov = r
			switch {
			case r.refuse != nil:
				rec.refuse(r.refuse, v.src.seg.Log)
				return nil
			case r.invalidOffset != "":
				rec.refuse(&kafkaErr{class: "InvalidOffsetException", msg: r.invalidOffset}, v.src.seg.Log)
				return nil
			case r.overflow:
				if err := p.split(rec, v, live, all); err != nil {
					return err
				}
				if !rec.Loads {
					return nil
				}
				split = true
			}
			if split {
				break
			}
			if v.pos+r.valid < v.end {
				v.reason = r.reason + " (recovered while loading, because the segment has no offset index; later segments are kept)"
			}
			v.end = v.pos + r.valid
			v.early = false
			if r.pending != nil {
				rec.refuse(r.pending, v.src.seg.Log)
				return nil
			}
		}
		if split {
			continue
		}
		// recoverLog.
		for i, v := range *live {
			r, err := p.recoverSeg(v)
			if err != nil {
				return err
			}
			v.recov = r
			if r.refuse != nil {
				rec.refuse(r.refuse, v.src.seg.Log)
				return nil
			}
			if r.overflow {
				if err := p.split(rec, v, live, all); err != nil {
					return err
				}
				if !rec.Loads {
					return nil
				}
				split = true
				break
			}
			var truncated int64
			if r.invalidOffset != "" {
				// recoverLog catches InvalidOffsetException and truncates
				// the segment to its base offset.
				to, err := p.firstAtOrAbove(v)
				if err != nil {
					return err
				}
				truncated = v.end - to
				v.end = to
				v.reason = "InvalidOffsetException: " + r.invalidOffset + " (LogLoader empties the segment)"
				v.recov = segResult{lastOffset: -1}
			} else {
				truncated = v.end - (v.pos + r.valid)
				v.end = v.pos + r.valid
				if truncated > 0 {
					v.reason = r.reason
				}
			}
			if truncated > 0 {
				for _, w := range (*live)[i+1:] {
					w.deleted = true
				}
				*live = (*live)[:i+1]
			}
			if r.pending != nil {
				rec.refuse(r.pending, v.src.seg.Log)
				return nil
			}
			if truncated > 0 {
				break
			}
		}
		if !split {
			return nil
		}
	}
}

// fits is AbstractIndex.toRelative: the offset minus the base fits an int32
// and is not negative.
func fits(off, base int64) bool {
	rel := off - base
	return rel >= 0 && rel <= 1<<31-1
}

type frameStatus int

const (
	frameOK frameStatus = iota
	frameEnd
	frameCorrupt
)

// frame is one entry's header as FileLogInputStream reads it.
type frame struct {
	pos, size  int64
	offset     int64
	magic      int8
	lastOffset int64
	maxTs      int64
	ple        int32
	attrs      int16
	producerID int64
	count      int32
	crc        uint32
	hdrLen     int
}

// readFrame is FileLogInputStream.nextBatch over [pos, end): it stops
// quietly when 17 bytes or fewer remain or the entry runs past the end, and
// throws CorruptRecordException for a size below 14.
func (p *planner) readFrame(f io.ReaderAt, path string, pos, end int64) (frame, frameStatus, string, error) {
	fr := frame{pos: pos}
	if end-pos <= format.HeaderSizeUpToMagic {
		return fr, frameEnd, "", nil
	}
	n := int64(len(p.hdr))
	if end-pos < n {
		n = end - pos
	}
	if _, err := f.ReadAt(p.hdr[:n], pos); err != nil && !(errors.Is(err, io.EOF)) {
		return fr, frameEnd, "", err
	}
	h := p.hdr[:n]
	fr.hdrLen = int(n)
	fr.offset = int64(binary.BigEndian.Uint64(h[0:]))
	size := int64(int32(binary.BigEndian.Uint32(h[8:])))
	fr.magic = int8(h[16])
	if size < format.RecordOverheadV0 {
		return fr, frameCorrupt, "CorruptRecordException: Found record size " + itoa(size) +
			" smaller than minimum record overhead (14) in file " + path + ".", nil
	}
	if pos > end-format.LogOverhead-size {
		return fr, frameEnd, "", nil
	}
	fr.size = format.LogOverhead + size
	fr.lastOffset = fr.offset
	fr.maxTs = -1
	fr.ple = -1
	fr.producerID = -1
	if fr.magic >= format.MagicV2 {
		// DefaultRecordBatch header fields (read whatever bytes are there
		// for an entry shorter than the header; ensureValid rejects it).
		var full [format.BatchHeaderSize]byte
		copy(full[:], h)
		fr.ple = int32(binary.BigEndian.Uint32(full[12:]))
		fr.crc = binary.BigEndian.Uint32(full[17:])
		fr.attrs = int16(binary.BigEndian.Uint16(full[21:]))
		fr.lastOffset = fr.offset + int64(int32(binary.BigEndian.Uint32(full[23:])))
		fr.maxTs = int64(binary.BigEndian.Uint64(full[35:]))
		fr.producerID = int64(binary.BigEndian.Uint64(full[43:]))
		fr.count = int32(binary.BigEndian.Uint32(full[57:]))
	} else {
		fr.crc = binary.BigEndian.Uint32(h[12:])
		// LegacyRecord.timestamp: none for v0, else the field after the
		// attributes (the entry is at least 26 bytes).
		if fr.magic != format.MagicV0 && len(h) >= 26 {
			fr.maxTs = int64(binary.BigEndian.Uint64(h[18:]))
		}
	}
	return fr, frameOK, "", nil
}

// ensureValid is RecordBatch.ensureValid: the minimum size and the CRC
// (CRC-32C from the attributes for v2, CRC-32 from the magic for v0/v1).
func (p *planner) ensureValid(f io.ReaderAt, fr *frame) (string, error) {
	var from int64
	var tab *crc32.Table
	if fr.magic >= format.MagicV2 {
		if fr.size < format.BatchHeaderSize {
			return "CorruptRecordException: Record batch is corrupt (the size " + itoa(fr.size) +
				" is smaller than the minimum allowed overhead 61)", nil
		}
		from, tab = 21, castagnoli
	} else {
		// LegacyRecord.ensureValid checks the size and the CRC only: a
		// negative magic is read as a legacy message like 0 and 1.
		from, tab = 16, crc32.IEEETable
	}
	var c uint32
	for at := fr.pos + from; at < fr.pos+fr.size; {
		n := int64(len(p.crcBuf))
		if fr.pos+fr.size-at < n {
			n = fr.pos + fr.size - at
		}
		m, err := f.ReadAt(p.crcBuf[:n], at)
		if int64(m) < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		c = crc32.Update(c, tab, p.crcBuf[:n])
		at += n
	}
	if c != fr.crc {
		return "CorruptRecordException: Record is corrupt (stored crc = " + strconv.FormatUint(uint64(fr.crc), 10) +
			", computed crc = " + strconv.FormatUint(uint64(c), 10) + ")", nil
	}
	return "", nil
}

// recoverSeg is LogSegment.recover on one segment, without changing it.
func (p *planner) recoverSeg(v *vseg) (segResult, error) {
	r := segResult{lastOffset: -1, idxOff: v.base}
	f, path := v.src.f, v.src.seg.Log
	var valid, lastIndexEntry int64
	maxTs, maxTsOff := int64(-1), v.base
	nIdx, nTi := 0, 0
	tiLastTs, tiLastOff := int64(-1), v.base
	// timeEntry is TimeIndex.maybeAppend with its sanity check: it reports
	// false (r.invalidOffset set) when the entry's offset goes backwards.
	timeEntry := func(maxTs, maxTsOff int64) bool {
		if nTi > 0 && maxTsOff < tiLastOff {
			r.invalidOffset = "Attempt to append an offset (" + itoa(maxTsOff) + ") to slot " + strconv.Itoa(nTi) +
				" no larger than the last offset appended (" + itoa(tiLastOff) + ") to " + indexPath(p.dir, v.base, partition.TimeIndexSuffix) + "."
			return false
		}
		if maxTs > tiLastTs {
			r.timeIndex = format.AppendTimeEntry(r.timeIndex, v.base, format.TimeEntry{Timestamp: maxTs, Offset: maxTsOff})
			tiLastTs, tiLastOff = maxTs, maxTsOff
			nTi++
		}
		return true
	}
	pos := v.pos
	for {
		fr, st, msg, err := p.readFrame(f, path, pos, v.end)
		if err != nil {
			return r, err
		}
		if st == frameEnd {
			if pos < v.end {
				r.reason = "the batch at position " + itoa(pos) + " is incomplete (" + itoa(v.end-pos) + " bytes to the end)"
			}
			break
		}
		if st == frameCorrupt {
			r.reason = "at position " + itoa(pos) + ": " + msg
			break
		}
		bad, err := p.ensureValid(f, &fr)
		if err != nil {
			return r, err
		}
		if bad != "" {
			r.reason = "the batch at position " + itoa(pos) + " (offset " + itoa(fr.offset) + "): " + bad
			break
		}
		if !fits(fr.lastOffset, v.base) {
			r.overflow = true
			r.reason = "the batch at position " + itoa(pos) + " has last offset " + itoa(fr.lastOffset) +
				", which does not fit segment base offset " + itoa(v.base) + " (LogSegmentOffsetOverflowException)"
			r.valid = valid
			return r, nil
		}
		if fr.maxTs > maxTs {
			maxTs, maxTsOff = fr.maxTs, fr.lastOffset
		}
		if valid-lastIndexEntry > p.opts.IndexIntervalBytes {
			if nIdx > 0 && fr.lastOffset <= r.idxOff {
				r.invalidOffset = "Attempt to append an offset " + itoa(fr.lastOffset) + " to position " + strconv.Itoa(nIdx) +
					" no larger than the last offset appended (" + itoa(r.idxOff) + ") to " + indexPath(p.dir, v.base, partition.IndexSuffix) + "."
				return r, nil
			}
			r.index = format.AppendIndexEntry(r.index, v.base, format.IndexEntry{Offset: fr.lastOffset, Pos: valid})
			r.idxOff, r.idxPos = fr.lastOffset, valid
			nIdx++
			if !timeEntry(maxTs, maxTsOff) {
				return r, nil
			}
			lastIndexEntry = valid
		}
		valid += fr.size
		r.lastOffset = fr.lastOffset
		pos += fr.size
		if fr.magic >= format.MagicV2 {
			if ke := p.assignEpoch(fr.ple, fr.offset); ke != nil {
				r.refuse = ke
				r.valid = valid
				return r, nil
			}
			if fr.producerID >= 0 && fr.attrs&0x20 != 0 {
				ke, err := p.controlMarker(f, &fr)
				if err != nil {
					return r, err
				}
				if ke != nil && !ke.caught {
					r.refuse = ke
					r.valid = valid
					return r, nil
				}
				if ke != nil {
					// LogSegment.recover catches it after counting the batch
					// as valid; the load then fails rebuilding producer state.
					r.pending = ke
					if pos < v.end {
						r.reason = "producer state: " + ke.String()
					}
					break
				}
			}
		}
	}
	r.valid = valid
	// The final time index entry of a closed segment.
	timeEntry(maxTs, maxTsOff)
	return r, nil
}

func indexPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, partition.FileName(base, suffix))
}

// assignEpoch is LeaderEpochFileCache.assign as recovery calls it: a new
// epoch above the latest starts at the batch's base offset, and entries
// at or past that offset go.
func (p *planner) assignEpoch(epoch int32, start int64) *kafkaErr {
	if epoch < 0 {
		return nil
	}
	if n := len(p.epochs); n > 0 && epoch <= p.epochs[n-1].Epoch {
		return nil
	}
	if start < 0 {
		return &kafkaErr{class: "IllegalArgumentException", msg: "Received invalid partition leader epoch entry EpochEntry(epoch=" +
			strconv.Itoa(int(epoch)) + ", startOffset=" + itoa(start) + ")"}
	}
	keep := p.epochs[:0]
	for _, e := range p.epochs {
		if e.StartOffset < start && e.Epoch < epoch {
			keep = append(keep, e)
		}
	}
	p.epochs = append(keep, format.EpochEntry{Epoch: epoch, StartOffset: start})
	return nil
}

var controlTypeNames = map[int16]string{0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
	4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}

// controlMarker is ProducerAppendInfo.append for a control batch with a
// producer id: the first record is decoded as an end transaction marker.
// Caught exceptions (InvalidRecordException) keep the batch and fail the
// load later; others fail it at once.
func (p *planner) controlMarker(f io.ReaderAt, fr *frame) (*kafkaErr, error) {
	if fr.count == 0 {
		return nil, nil // an empty control batch: nothing to append
	}
	if fr.count < 0 {
		return &kafkaErr{class: "InvalidRecordException", msg: "Found invalid record count " + itoa(int64(fr.count)) + " in magic v" + strconv.Itoa(int(fr.magic)) + " batch", caught: true}, nil
	}
	if fr.size > int64(p.opts.MaxBatchBytes) {
		return nil, errors.New("a control batch of " + itoa(fr.size) + " bytes at position " + itoa(fr.pos) + " is larger than klog reads whole")
	}
	if cap(p.raw) < int(fr.size) {
		p.raw = make([]byte, fr.size)
	}
	raw := p.raw[:fr.size]
	if _, err := f.ReadAt(raw, fr.pos); err != nil {
		return nil, err
	}
	b, err := format.ParseBatch(raw, fr.pos)
	if err != nil {
		return &kafkaErr{class: "InvalidRecordException", msg: err.Error(), caught: true}, nil
	}
	if err := p.rr.Reset(b); err != nil {
		switch {
		case errors.Is(err, format.ErrUnsupported):
			return &kafkaErr{class: "IllegalArgumentException", msg: "Unknown compression type id: " + strconv.Itoa(int(b.Compression()))}, nil
		case b.Compression() != format.CompressionNone && !strings.Contains(err.Error(), "record"):
			return &kafkaErr{class: "KafkaException", msg: err.Error()}, nil
		}
		return &kafkaErr{class: "InvalidRecordException", msg: err.Error(), caught: true}, nil
	}
	if err := p.rr.Next(&p.rec); err != nil {
		return &kafkaErr{class: "InvalidRecordException", msg: "Found invalid record structure: " + err.Error(), caught: true}, nil
	}
	key, value := p.rec.Key, p.rec.Value
	if key == nil {
		return &kafkaErr{class: "NullPointerException", msg: "the control record's key is null"}, nil
	}
	k, err := format.ParseControlKey(key)
	if err != nil {
		return &kafkaErr{class: "InvalidRecordException", msg: err.Error(), caught: true}, nil
	}
	if k.Type != 0 && k.Type != 1 {
		name, ok := controlTypeNames[int16(k.Type)]
		if !ok {
			name = "UNKNOWN"
		}
		return &kafkaErr{class: "IllegalArgumentException", msg: "Invalid control record type for end transaction marker" + name}, nil
	}
	if value == nil {
		return &kafkaErr{class: "NullPointerException", msg: "the end transaction marker's value is null"}, nil
	}
	if len(value) < 6 {
		return &kafkaErr{class: "InvalidRecordException", msg: "Invalid value size found for end transaction marker. Must have at least 6 bytes, but found only " + strconv.Itoa(len(value)), caught: true}, nil
	}
	if ver := int16(binary.BigEndian.Uint16(value)); ver < 0 {
		return &kafkaErr{class: "InvalidRecordException", msg: "Invalid version found for end transaction marker: " + strconv.Itoa(int(ver)) + ". May indicate data corruption", caught: true}, nil
	}
	return nil, nil
}

// firstAtOrAbove is the position LogSegment.truncateTo(baseOffset) cuts
// at: the first batch whose last offset is at least the base.
func (p *planner) firstAtOrAbove(v *vseg) (int64, error) {
	for pos := v.pos; ; {
		fr, st, _, err := p.readFrame(v.src.f, v.src.seg.Log, pos, v.end)
		if err != nil {
			return 0, err
		}
		if st != frameOK {
			return v.end, nil
		}
		if fr.lastOffset >= v.base {
			return pos, nil
		}
		pos += fr.size
	}
}

// readNextOffset is LogSegment.readNextOffset on a segment whose recovery
// threw: from the last offset index entry, the first batch whose last
// offset reaches it, then the last batch of the file.
func (p *planner) readNextOffset(v *vseg, idxOff, idxPos int64) (int64, *kafkaErr, error) {
	found := false
	var last int64
	for pos := v.pos + idxPos; ; {
		fr, st, msg, err := p.readFrame(v.src.f, v.src.seg.Log, pos, v.end)
		if err != nil {
			return 0, nil, err
		}
		if st == frameCorrupt {
			i := strings.IndexByte(msg, ':')
			return 0, &kafkaErr{class: msg[:i], msg: msg[i+2:]}, nil
		}
		if st == frameEnd {
			break
		}
		if found || fr.lastOffset >= idxOff {
			found = true
			last = fr.lastOffset
		}
		pos += fr.size
	}
	if !found {
		return v.base, nil, nil
	}
	return last + 1, nil, nil
}

// split is LocalLog.splitOverflowedSegment: it requires hasOverflow (the
// last batch's offset does not fit the segment), then copies the batches
// into new segments, each based at its first batch's base offset and
// holding the batches whose last offset fits it.
func (p *planner) split(rec *Recovery, v *vseg, live, all *[]*vseg) error {
	next, ke, err := p.readNextOffset(v, v.recov.idxOff, v.recov.idxPos)
	if err != nil {
		return err
	}
	if ke != nil {
		rec.refuse(ke, v.src.seg.Log)
		return nil
	}
	if !(next > v.base && !fits(next-1, v.base)) {
		// Kafka names the file by its absolute path; klog by the path given.
		rec.refuse(&kafkaErr{class: "IllegalArgumentException",
			msg: "Split operation is only permitted for segments with overflow, and the problem path is " + v.src.seg.Log}, v.src.seg.Log)
		return nil
	}
	var parts []*vseg
	for pos := v.pos; pos < v.end; {
		fr, st, msg, err := p.readFrame(v.src.f, v.src.seg.Log, pos, v.end)
		if err != nil {
			return err
		}
		if st == frameCorrupt {
			i := strings.IndexByte(msg, ':')
			rec.refuse(&kafkaErr{class: msg[:i], msg: msg[i+2:]}, v.src.seg.Log)
			return nil
		}
		if st == frameEnd {
			// batchesFrom(position).iterator().next() on no batch.
			rec.refuse(&kafkaErr{class: "NoSuchElementException", msg: "no batch at position " + itoa(pos-v.pos) +
				" of " + v.src.seg.Log + " while splitting it"}, v.src.seg.Log)
			return nil
		}
		newBase, err := p.firstOffset(v, &fr)
		if err != nil {
			return err
		}
		end := pos
		for end < v.end {
			g, st, _, err := p.readFrame(v.src.f, v.src.seg.Log, end, v.end)
			if err != nil {
				return err
			}
			if st != frameOK || !fits(g.lastOffset, newBase) {
				break
			}
			end += g.size
		}
		if end == pos {
			rec.refuse(&kafkaErr{class: "IllegalStateException", msg: "Failed to append records from position " + itoa(pos-v.pos) +
				" in LogSegment(baseOffset=" + itoa(v.base) + ", size=" + itoa(v.end-v.pos) + ")"}, v.src.seg.Log)
			return nil
		}
		parts = append(parts, &vseg{src: v.src, base: newBase, pos: pos, end: end, origEnd: end, moved: true})
		pos = end
	}
	v.split = true
	keep := (*live)[:0]
	for _, w := range *live {
		if w == v {
			continue
		}
		replaced := false
		for _, n := range parts {
			if n.base == w.base {
				replaced = true // LogSegments.add replaces the segment with the same base
			}
		}
		if replaced {
			w.deleted = true
			continue
		}
		keep = append(keep, w)
	}
	*live = append(keep, parts...)
	*all = append(*all, parts...)
	return nil
}

// firstOffset is FileChannelRecordBatch.baseOffset: the header's base
// offset for v2 and uncompressed v0/v1; for a compressed v0/v1 wrapper, its
// first inner message's offset.
func (p *planner) firstOffset(v *vseg, fr *frame) (int64, error) {
	if fr.magic >= format.MagicV2 || fr.size > int64(p.opts.MaxBatchBytes) {
		return fr.offset, nil
	}
	raw := make([]byte, fr.size)
	if _, err := v.src.f.ReadAt(raw, fr.pos); err != nil {
		return 0, err
	}
	b, err := format.ParseBatch(raw, fr.pos)
	if err != nil || b.Compression() == format.CompressionNone {
		return fr.offset, nil
	}
	if p.rr.Reset(b) == nil && p.rr.Next(&p.rec) == nil {
		return p.rec.Offset, nil
	}
	return fr.offset, nil
}

// finish turns the simulated segments into the plan: per original file
// its action, the log start and end offsets, and the files deleted.
func (p *planner) finish(rec *Recovery, d *partition.Dir, all []*vseg) error {
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
		s := SegmentRecovery{Type: "segment", Log: src.seg.Log, BaseOffset: src.seg.BaseOffset, Bytes: src.size,
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
