package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// verifier holds per-goroutine reusable state.
type verifier struct {
	ctx  context.Context
	opts Options
	r    *reads
	read int64 // log bytes reported to Progress for the current file
	// hsc and br are reused by the index checks (index.go), lsc by the
	// log checks (rate.go).
	hsc *format.Scanner
	lsc *format.Scanner
	br  *bufio.Reader
	// resume is the state of the log being checked when only its
	// appended bytes need checking (--state), else nil.
	resume *fileState
	// tally counts the bytes read for the file being checked.
	tally atomic.Int64
	// kept is the log this worker checked last, open until the index
	// checks of its segment (the next tasks) are done.
	kept *keptLog
	// logBuf holds a small log read whole; idx and idxr a small index.
	logBuf []byte
	idx    []byte
	idxr   bytes.Reader
	rr     format.RecordReader
	rec    format.Record
	// onBatch, when set, sees every batch read whole (LogChecker).
	onBatch func(*format.Batch)
}

func newVerifier(ctx context.Context, opts Options, rd *reads) *verifier {
	v := &verifier{ctx: ctx, opts: opts, r: rd}
	v.rr.Decompressor.MaxBytes = opts.budget.small()
	return v
}

// open opens path through the run's reads, counting for the file being
// checked.
func (v *verifier) open(path string) (*source, error) { return v.r.open(path, &v.tally) }

// keptLog is a log left open after its check for the index checks of its
// segment, with its bytes when it was read whole.
type keptLog struct {
	path string
	src  *source
	data []byte
}

// keep keeps src (the log at path, read whole into data when data is not
// nil) for the index checks that follow, closing the one kept before.
func (v *verifier) keep(path string, src *source, data []byte) {
	v.dropKept()
	v.kept = &keptLog{path: path, src: src, data: data}
}

// dropKept closes the kept log.
func (v *verifier) dropKept() {
	if v.kept != nil {
		v.kept.src.Close()
		v.kept = nil
	}
}

func (v *verifier) check(t task) FileReport {
	if v.kept != nil && v.kept.path != t.log {
		v.dropKept() // the segment's files are done
	}
	v.tally.Store(0)
	f := v.checkFile(t)
	f.BytesRead = v.tally.Load()
	return f
}

func (v *verifier) checkFile(t task) FileReport {
	f := FileReport{Path: t.path, Kind: t.kind, FirstOffset: -1, LastOffset: -1, lastPos: -1}
	if t.name != "" {
		f.Path = t.name
	}
	switch {
	case t.err != nil:
		f.ioErr = t.err
		f.Err = t.err.Error()
		return f
	case t.kind == kindIgnored:
		f.Ignored = t.why
		return f
	case t.kind == kindLink:
		f.LinkTarget = t.why
		return f
	}
	var err error
	if v.opts.State != nil || !opensItself[t.kind] {
		// The checks that open their file take its size there.
		st, err := os.Stat(t.path)
		if err == nil {
			f.Bytes = st.Size()
			if v.incremental(&f, t, st) {
				return f // unchanged since a clean run (--state)
			}
		}
	}
	switch t.kind {
	case "log", "checkpoint":
		err = v.checkLog(&f, t)
	case "index":
		err = v.checkIndex(&f, t)
	case "timeindex":
		err = v.checkTimeIndex(&f, t)
	case "txnindex":
		err = v.checkTxnIndex(&f, t)
	case "snapshot":
		err = v.checkSnapshot(&f, t)
	case "leader-epoch-checkpoint", "offset-checkpoint", "partition-metadata":
		err = v.checkCheckpoint(&f, t)
	case "misnamed":
		f.Kind = "unknown"
		stem := filepath.Base(t.path)
		stem = stem[:strings.IndexByte(stem, '.')]
		f.add(Problem{Kind: KindSegmentName, Offset: -1,
			Message: "file name is not an offset: the broker refuses to load the partition (NumberFormatException: For input string: \"" + stem + "\")"})
	case "incomplete":
		f.Kind = "incomplete-copy"
		f.add(Problem{Kind: KindIncompleteCopy, Offset: -1,
			Message: "this directory is a copy klog (recover --output or redact) was writing and did not finish: files may be missing or cut short"})
	case "missing-log":
		f.Kind = "log"
		f.add(Problem{Kind: KindMissingLog, Offset: t.base, Message: "index files without their .log segment"})
	default:
		// A file verify has nothing to say about.
	}
	v.doneIncremental(&f)
	if err != nil {
		if v.ctx.Err() != nil && errors.Is(err, v.ctx.Err()) {
			// Stopped by a signal: partial, not an I/O error (the
			// counts say how far the check got).
			f.Partial = true
			return f
		}
		f.ioErr = err
		f.Err = err.Error()
	}
	return f
}

// opensItself are the kinds whose check opens the file and sets
// FileReport.Bytes from that open (one fstat, not a stat and an fstat).
var opensItself = map[string]bool{"log": true, "checkpoint": true, "index": true, "timeindex": true, "txnindex": true,
	"snapshot": true, "leader-epoch-checkpoint": true, "offset-checkpoint": true, "partition-metadata": true}

func u32(v uint32) *uint32 { return &v }
func i64(v int64) *int64   { return &v }

// smallLog is the largest log read whole with one read (the scanner's
// window): its index checks then read the log from memory.
const smallLog = logReadAhead

// checkLog verifies a .log segment or KRaft .checkpoint: every batch's CRC,
// framing and records, and offsets increasing across batches. The log is
// kept open for the index checks of its segment.
func (v *verifier) checkLog(f *FileReport, t task) error {
	file, err := v.open(t.path)
	if err != nil {
		return err
	}
	f.Bytes = file.size
	var r io.ReaderAt = file
	var pr *safeio.ProgressReaderAt
	if v.opts.Progress != nil {
		// Steps of at least safeio.ProgressStep, so that workers do not
		// contend; v.read is what the run reports for the file's rest.
		pr = safeio.NewProgressReaderAt(file, func(n int64) {
			v.read += n
			v.r.progress(n, 0)
		})
		r = pr
	}
	var data []byte
	if file.size <= smallLog && v.resume == nil && file.st.Mode().IsRegular() {
		if cap(v.logBuf) < int(file.size) {
			v.logBuf = make([]byte, smallLog)
		}
		n, rerr := r.ReadAt(v.logBuf[:file.size], 0)
		if rerr == nil || rerr == io.EOF {
			data = v.logBuf[:n]
			r = bytes.NewReader(data)
		}
	}
	if data != nil {
		err = v.checkLogAt(f, t, r, int64(len(data)))
	} else {
		err = v.checkLogAt(f, t, r, file.size)
	}
	if pr != nil {
		pr.Flush()
	}
	v.keep(t.path, file, data)
	return err
}

// checkLogAt is checkLog over any ReaderAt. With a spare worker, a
// prefetcher reads the file ahead in a second goroutine.
func (v *verifier) checkLogAt(f *FileReport, t task, file io.ReaderAt, size int64) error {
	if v.opts.prefetch && size > 4<<20 && v.resume == nil {
		p := newPrefetcher(file, size)
		defer p.close()
		file = p
	}
	return v.scanLog(f, t, file, size, true)
}

// BatchProblems appends to ps what a batch read whole shows before its
// records are decoded: a stored CRC that does not match the bytes
// (crc-mismatch) and a magic other than 0, 1 or 2 (bad-magic). The views
// that read batches (segments, stats, find) judge them through it, as
// verify does.
func BatchProblems(ps []Problem, b *format.Batch) []Problem {
	if !b.Valid() {
		ps = append(ps, crcProblem(b))
	}
	if b.Magic > format.MagicV2 {
		ps = append(ps, badMagicProblem(b))
	}
	return ps
}

func badMagicProblem(b *format.Batch) Problem {
	return Problem{Kind: KindBadMagic, Position: b.Pos, Offset: b.BaseOffset,
		Message: "magic " + strconv.Itoa(int(b.Magic)) + " is not 0, 1 or 2"}
}

func crcProblem(b *format.Batch) Problem {
	c := b.ComputedCRC()
	return Problem{Kind: KindCRCMismatch, Position: b.Pos, Offset: b.BaseOffset, Stored: u32(b.CRC), Computed: u32(c),
		Message: "stored crc " + format.CRC(b.CRC).String() + " != computed " + format.CRC(c).String()}
}

func (v *verifier) scanLog(f *FileReport, t task, file io.ReaderAt, size int64, checkCRC bool) error {
	sc := v.logScanner(file, size)
	prevLast := int64(-1)
	first := true
	if v.resume != nil {
		prevLast, first = v.resumeScan(f, sc, file, size)
	}
	for {
		if err := v.ctx.Err(); err != nil {
			return err
		}
		b, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *format.PosError
			if !errors.As(err, &pe) {
				return err
			}
			v.scanProblem(f, sc, pe)
			if sc.Done() {
				break
			}
			continue
		}
		f.Batches++
		f.lastPos, f.lastCRC = b.Pos, int64(b.CRC)
		if v.onBatch != nil {
			v.onBatch(b)
		}
		if checkCRC && !b.Valid() {
			f.add(crcProblem(b))
		}
		if b.Magic > format.MagicV2 {
			f.add(badMagicProblem(b))
		}
		v.checkOffsetRange(f, t, b)
		firstRec := v.checkRecords(f, b)
		firstOffset := b.BaseOffset
		if !b.IsV2() {
			// A compressed v0/v1 wrapper carries its last offset; its
			// first is the first inner message's.
			firstOffset = b.LastOffset()
			if firstRec >= 0 {
				firstOffset = firstRec
			}
		}
		if first {
			f.FirstOffset = firstOffset
			if t.kind == "log" && t.base >= 0 && firstOffset < t.base && b.IsV2() {
				f.add(Problem{Kind: KindSegmentName, Position: b.Pos, Offset: firstOffset,
					Message: "first batch starts at offset " + itoa(firstOffset) + ", below the segment's base offset " + itoa(t.base) + " from its file name"})
			}
			first = false
		} else if firstOffset <= prevLast {
			f.add(Problem{Kind: KindOffsetOrder, Position: b.Pos, Offset: firstOffset,
				Message: "batch starts at offset " + itoa(firstOffset) + ", not after the previous batch's last offset " + itoa(prevLast)})
		} else if b.IsV2() && firstOffset > prevLast+1 {
			f.add(Problem{Kind: KindOffsetGap, Info: true, Position: b.Pos, Offset: firstOffset,
				Message: "offsets " + itoa(prevLast+1) + ".." + itoa(firstOffset-1) + " are absent (normal after compaction)"})
		}
		if b.LastOffset() > prevLast {
			prevLast = b.LastOffset()
		}
		f.LastOffset = max(f.LastOffset, b.LastOffset())
	}
	f.ValidBytes = sc.Tail().Pos
	v.tailProblem(f, file, sc.Tail())
	return nil
}

// checkOffsetRange reports the header offsets the broker's recovery cannot
// keep in this segment: a last offset delta below zero (the last offset
// below the base offset), a record count of 0 with records present, a
// negative v0/v1 offset, and offsets that do not fit the segment
// (LogSegment.recover's ensureOffsetInRange).
func (v *verifier) checkOffsetRange(f *FileReport, t task, b *format.Batch) {
	if b.IsV2() {
		if b.LastOffsetDelta < 0 {
			f.add(Problem{Kind: KindRecordCount, Position: b.Pos, Offset: b.BaseOffset,
				Message: "last offset delta " + strconv.Itoa(int(b.LastOffsetDelta)) + " puts the batch's last offset below its base offset"})
		} else if b.RecordCount == 0 && b.BatchLength > format.BatchHeaderSize-format.LogOverhead {
			f.add(Problem{Kind: KindRecordCount, Position: b.Pos, Offset: b.BaseOffset,
				Message: "record count 0 with " + itoa(int64(b.BatchLength)-(format.BatchHeaderSize-format.LogOverhead)) + " bytes of records present"})
		}
		if b.BaseOffset < 0 {
			f.add(Problem{Kind: KindOffsetRange, Position: b.Pos, Offset: b.BaseOffset,
				Message: "negative base offset " + itoa(b.BaseOffset)})
			return
		}
		if b.LastOffset() < b.BaseOffset && b.LastOffsetDelta >= 0 {
			f.add(Problem{Kind: KindOffsetRange, Position: b.Pos, Offset: b.BaseOffset,
				Message: "base offset " + itoa(b.BaseOffset) + " plus last offset delta " + strconv.Itoa(int(b.LastOffsetDelta)) + " overflows a 64-bit offset"})
			return
		}
	} else if b.BaseOffset < 0 {
		f.add(Problem{Kind: KindOffsetRange, Position: b.Pos, Offset: b.BaseOffset,
			Message: "negative offset " + itoa(b.BaseOffset) + " in a v" + strconv.Itoa(int(b.Magic)) + " message"})
		return
	}
	if t.kind != "log" || t.base < 0 || format.FitsSegment(b.LastOffset(), t.base) {
		return
	}
	f.add(Problem{Kind: KindOffsetRange, Position: b.Pos, Offset: b.BaseOffset,
		Message: "last offset " + itoa(b.LastOffset()) + " does not fit segment base offset " + itoa(t.base) +
			" (a relative offset must be 0..2147483647): the broker splits the segment or refuses to load the partition"})
}

// scanProblem reports an entry header the scanner rejected.
func (v *verifier) scanProblem(f *FileReport, sc *format.Scanner, pe *format.PosError) {
	if t := sc.Tail(); sc.Done() && t.Kind == format.TailZeros {
		f.add(Problem{Kind: KindTrailingBytes, Position: t.Pos, Offset: -1, Bytes: i64(t.Bytes),
			Message: itoa(t.Bytes) + " zero bytes after the last batch (a preallocated segment or an unclean shutdown)"})
		return
	}
	f.add(ProblemAt(pe, StageEntry, pe.Pos, pe.Offset))
}

// tailProblem reports the bytes after the last complete batch, unless the
// scan already reported them (a corrupt tail) or they are a zero tail.
func (v *verifier) tailProblem(f *FileReport, r io.ReaderAt, t format.Tail) {
	if t.Bytes == 0 || t.Kind == format.TailCorrupt || t.Kind == format.TailZeros {
		return
	}
	f.add(TailProblem(r, t))
}

// JunkTail says whether the bytes after the last complete batch of a
// segment (t, from the scanner; r reads the segment) are junk a reader
// must not wait on or take for the log's end quietly: bytes that do not
// start a batch (TailProblem's KindTrailingBytes), not a zero-filled tail
// (where a preallocated segment's next write goes) nor a batch cut short
// (a crash, or a write under way). pr says what they are. The readers that
// stop at a segment's end (fetch, offsets, tail) judge it by this rule.
func JunkTail(r io.ReaderAt, t format.Tail) (pr Problem, junk bool) {
	if t.Bytes == 0 || t.Kind == format.TailZeros {
		return pr, false
	}
	pr = TailProblem(r, t)
	return pr, pr.Kind == KindTrailingBytes
}

// TailProblem classifies the bytes after the last complete batch of a
// segment (t, from the scanner; r reads the segment): the start of a batch
// that was cut short (KindTruncated: 17 bytes or fewer, or a header with a
// plausible magic that promises more bytes than remain), or something
// else (KindTrailingBytes, also for a zero-filled preallocated tail). It
// is the one classifier of segment tails.
func TailProblem(r io.ReaderAt, t format.Tail) Problem {
	if t.Kind == format.TailZeros {
		return Problem{Kind: KindTrailingBytes, Position: t.Pos, Offset: -1, Bytes: i64(t.Bytes),
			Message: itoa(t.Bytes) + " zero bytes after the last batch (a preallocated segment or an unclean shutdown)"}
	}
	var hdr [format.HeaderSizeUpToMagic]byte
	n, _ := r.ReadAt(hdr[:min(int64(len(hdr)), t.Bytes)], t.Pos)
	plausible := false
	if n == len(hdr) {
		m := int8(hdr[16])
		plausible = m >= 0 && m <= format.MagicV2
	}
	// 17 bytes or fewer are the start of an entry header cut short (an
	// offset field begins with zero bytes, so zeros prove nothing).
	if t.Kind == format.TailShort || plausible && t.Kind == format.TailPartial {
		msg := "the last batch is cut short: " + itoa(t.Bytes) + " bytes present"
		if t.Want > 0 {
			msg += " of " + itoa(t.Want)
		}
		return Problem{Kind: KindTruncated, Position: t.Pos, Offset: t.Offset, Bytes: i64(t.Bytes), Message: msg}
	}
	return Problem{Kind: KindTrailingBytes, Position: t.Pos, Offset: -1, Bytes: i64(t.Bytes),
		Message: itoa(t.Bytes) + " bytes after the last batch that do not start a batch"}
}

// checkRecords decodes every record: structure, count, offset deltas,
// timestamps, control records, and the inner CRCs of v0/v1 wrappers. It
// returns the first record's offset of a v0/v1 wrapper, or -1.
//
// An uncompressed v2 data batch is first walked by format.CleanRecords,
// which proves the same rules hold without filling a Record for each (a
// third of the cost of decoding them); only a batch it cannot prove clean
// is decoded record by record, which finds and words its problems.
func (v *verifier) checkRecords(f *FileReport, b *format.Batch) int64 {
	first := int64(-1)
	if format.CleanRecords(b) {
		f.Records += int64(b.RecordCount)
		return first
	}
	err := v.rr.Reset(b)
	if v.opts.budget.retry(err) {
		v.rr.Decompressor.MaxBytes = v.opts.budget.full
		// Over the small per-job cap: decompress again holding the one
		// large-batch slot, then let the large buffers go.
		defer v.opts.budget.release(&v.rr)
		err = v.rr.Reset(b)
	}
	if err != nil {
		v.recordProblem(f, b, err)
		return first
	}
	var n int32
	var cc controlCount
	prevDelta := int32(-1)
	for {
		if n&4095 == 4095 && v.ctx.Err() != nil {
			return first // the caller's loop reports the interruption
		}
		err := v.rr.Next(&v.rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			v.recordProblem(f, b, err)
			return first
		}
		if n == 0 {
			first = v.rec.Offset
		}
		n++
		f.Records++
		r := &v.rec
		if r.Legacy {
			if !r.Valid && b.Compression() != format.CompressionNone {
				f.add(Problem{Kind: KindCRCMismatch, Position: b.Pos, Offset: r.Offset, Stored: u32(r.CRC),
					Message: "inner message at offset " + itoa(r.Offset) + " of the compressed wrapper has an invalid CRC-32"})
			}
			continue
		}
		if r.OffsetDelta <= prevDelta || r.OffsetDelta > b.LastOffsetDelta || r.OffsetDelta < 0 {
			f.add(Problem{Kind: KindRecordOffset, Position: b.Pos, Offset: r.Offset,
				Message: "record offset delta " + strconv.Itoa(int(r.OffsetDelta)) + " is out of order or beyond the batch's last offset delta " + strconv.Itoa(int(b.LastOffsetDelta))})
		}
		prevDelta = r.OffsetDelta
		if b.TimestampType() == format.CreateTime && r.Timestamp > b.MaxTimestamp {
			f.add(Problem{Kind: KindTimestamp, Position: b.Pos, Offset: r.Offset,
				Message: "record timestamp " + itoa(r.Timestamp) + " is above the batch's max timestamp " + itoa(b.MaxTimestamp)})
		}
		if b.IsControl() {
			v.checkControl(f, b, r)
			cc.add(r)
		}
	}
	if b.IsV2() && b.IsControl() {
		cc.check(f, b, n)
	}
	return first
}

// controlCount is the record rule of a control batch, as Kafka's readers
// read one. A transaction marker batch holds exactly one record: Kafka
// writes one (MemoryRecords.withEndTransactionMarker) and every reader
// (ProducerAppendInfo.append, the fetcher, the cleaner) reads the first
// and ignores any other. A KRaft control batch holds what raft writes: a
// snapshot's header batch SnapshotHeader then KRaftVersion and Voters, a
// new leader's LeaderChange then KRaftVersion and Voters, a KRaftVersion
// upgrade, Voters, SnapshotFooter; raft's reader (RecordsIterator,
// ControlRecord.of) takes any number of them and fails on any other type.
// A batch the cleaner emptied holds none (ProducerAppendInfo: "the entire
// transaction has been cleaned from the log").
type controlCount struct {
	first      format.ControlType
	firstKnown bool
	other      format.ControlType // a record type that does not belong with the first
	mixed      bool
}

func isKRaftControl(t format.ControlType) bool {
	return t >= format.ControlLeaderChange && t <= format.ControlKRaftVoters
}

func (c *controlCount) add(r *format.Record) {
	k, err := format.ParseControlKey(r.Key)
	if err != nil {
		return // checkControl reports it
	}
	if !c.firstKnown {
		c.first, c.firstKnown = k.Type, true
		return
	}
	if isKRaftControl(c.first) && !isKRaftControl(k.Type) && !c.mixed {
		c.other, c.mixed = k.Type, true
	}
}

func (c *controlCount) check(f *FileReport, b *format.Batch, n int32) {
	switch {
	case !c.firstKnown:
		return
	case (c.first == format.ControlAbort || c.first == format.ControlCommit) && n != 1:
		f.add(Problem{Kind: KindRecordCount, Position: b.Pos, Offset: b.BaseOffset,
			Message: "transaction marker batch holds " + strconv.Itoa(int(n)) + " records, not 1 (Kafka's readers read only the first)"})
	case c.mixed:
		f.add(Problem{Kind: KindControlDecode, Position: b.Pos, Offset: b.BaseOffset,
			Message: "KRaft control batch (first record " + c.first.String() + ") also holds a " + c.other.String() +
				" record: raft's reader fails on it (Unknown control record type)"})
	}
}

func (v *verifier) checkControl(f *FileReport, b *format.Batch, r *format.Record) {
	k, err := format.ParseControlKey(r.Key)
	if err == nil && (k.Type == format.ControlAbort || k.Type == format.ControlCommit) {
		_, err = format.ParseEndTxnMarker(r.Value)
		if err == nil && !b.IsTransactional() {
			err = errors.New("transaction marker in a batch without the transactional bit")
		}
	}
	if err == nil && k.Type != format.ControlAbort && k.Type != format.ControlCommit && b.ProducerID >= 0 {
		// Rebuilding producer state reads it as an end transaction marker.
		err = errors.New("control record type " + strconv.Itoa(int(k.Type)) + " in a batch with producer id " + itoa(b.ProducerID) +
			": the broker fails to load the partition (IllegalArgumentException: Invalid control record type for end transaction marker)")
	}
	if err != nil {
		f.add(Problem{Kind: KindControlDecode, Position: b.Pos, Offset: r.Offset, Message: err.Error()})
	}
}

func (v *verifier) recordProblem(f *FileReport, b *format.Batch, err error) {
	f.add(ProblemAt(err, StageRecords, b.Pos, b.BaseOffset))
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
