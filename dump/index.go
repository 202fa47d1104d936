package dump

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/verify"
)

// DefaultMaxMessageSize is kafka-dump-log's --max-message-size default: how
// many bytes it reads at an indexed position to find the batch there.
const DefaultMaxMessageSize = 5 * 1024 * 1024

// baseOffsetFromName parses the text before the first '.' of name, as
// DumpLogSegments does with split("\\.")[0] and Long.parseLong.
func baseOffsetFromName(name string) (int64, bool) {
	v, err := strconv.ParseInt(strings.SplitN(name, ".", 2)[0], 10, 64)
	return v, err == nil
}

// readWhole reads a checkpoint or snapshot of at most limit bytes. A larger
// file is a problem of kind (verify's kind for it: snapshot-invalid,
// checkpoint-invalid) that Kafka's tool would die on (no real one comes
// near).
func (d *dumper) readWhole(p string, limit int64, kind verify.Kind) ([]byte, error) {
	var b []byte
	var err error
	if d.opts.Open != nil {
		b, err = d.readOpened(p, limit)
	} else {
		b, err = safeio.ReadFile(d.openPath(p), limit)
	}
	var tl *safeio.TooLargeError
	if errors.As(err, &tl) {
		d.findings++
		pe := &format.PosError{Kind: format.ErrTooLarge, Offset: -1, Field: "size", Msg: "the file is " + strconv.FormatInt(tl.Size, 10) + " bytes, more than any real one (limit " + strconv.FormatInt(tl.Limit, 10) + "); not read"}
		d.r.problem(problemFromError(pe, kind))
		return nil, &FatalError{Path: p, Err: pe}
	}
	if err != nil {
		return nil, &IOError{Path: p, Err: err}
	}
	return b, nil
}

// mapIndex maps an index file (as Kafka does), so that a huge or sparse
// index costs the pages read, not its size.
func (d *dumper) mapIndex(p string) ([]byte, func(), error) {
	data, unmap, err := d.mapOrRead(p, d.openPath(p))
	if err != nil {
		return nil, nil, &IOError{Path: p, Err: err}
	}
	return data, unmap, nil
}

// openLog opens the .log next to an index file, as dumpIndex and
// dumpTimeIndex do before anything else.
func (d *dumper) openLog(p, name string) (readerAtCloser, int64, string, error) {
	prefix := strings.SplitN(name, ".", 2)[0]
	logPath := filepath.Join(filepath.Dir(p), prefix+".log")
	if d.opts.Open != nil {
		f, err := d.opened(logPath)
		if err != nil {
			return nil, 0, logPath, &FatalError{Path: p, Err: fmt.Errorf("cannot open the log segment beside it: %w", err)}
		}
		return f, f.Size(), logPath, nil
	}
	f, err := os.Open(d.openPath(logPath))
	if err != nil {
		return nil, 0, logPath, &FatalError{Path: p, Err: fmt.Errorf("cannot open the log segment beside it: %w", err)}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, logPath, &IOError{Path: logPath, Err: err}
	}
	return f, st.Size(), logPath, nil
}

// dumpIndex mirrors DumpLogSegments.dumpIndex.
func (d *dumper) dumpIndex(p, name string) (err error) {
	base, ok := baseOffsetFromName(name)
	if !ok {
		return &FatalError{Path: p, Err: errors.New("cannot parse the base offset from the file name " + strconv.Quote(name))}
	}
	log, logSize, _, err := d.openLog(p, name)
	if err != nil {
		return err
	}
	defer log.Close()
	data, unmap, err := d.mapIndex(p)
	if err != nil {
		return err
	}
	defer unmap()
	defer d.guardFault(p, &err)
	idx := format.OffsetIndex{BaseOffset: base, Data: data}
	abs := d.absPath(p)
	d.r.indexStart(p, "index", int64(len(data)), idx.Entries())
	if idx.Entries() == 0 {
		d.r.indexEmpty(p)
		return nil
	}
	if d.opts.IndexSanityOnly {
		if err := idx.SanityCheck(abs); err != nil {
			d.findings++
			d.r.problem(problemFromError(asPosError(err), verify.KindIndexSanity))
			return d.fatalOrNil(p, err)
		}
		d.r.sanityPassed(p)
		return nil
	}
	maxMsg := int64(d.opts.MaxMessageSize)
	if maxMsg <= 0 {
		maxMsg = DefaultMaxMessageSize
	}
	sc := format.NewScanner(log, logSize, format.ScanOptions{MaxBatchBytes: d.opts.MaxBatchBytes})
	n := idx.Entries()
	for i := 0; i < n; i++ {
		e := idx.Entry(i)
		if i > 0 && e.Offset == base {
			return nil // the zero tail of a preallocated index
		}
		entryPos := int64(i * format.OffsetIndexEntrySize)
		if e.Pos < 0 || e.Pos > logSize {
			d.findings++
			pe := &format.PosError{Kind: format.ErrCorrupt, Pos: entryPos, Offset: e.Offset, Field: "position",
				Msg: "index entry points at position " + strconv.FormatInt(e.Pos, 10) + ", outside the log of " + strconv.FormatInt(logSize, 10) + " bytes"}
			d.r.problem(problemFromError(pe, verify.KindIndexMismatch))
			if err := d.fatalOrNil(p, pe); err != nil {
				return err
			}
			continue
		}
		end := min(logSize, e.Pos+maxMsg)
		sc.Reset(log, end)
		sc.SetPos(e.Pos)
		b, err := sc.Next()
		if err != nil || b == nil {
			d.findings++
			msg := "no complete batch at position " + strconv.FormatInt(e.Pos, 10) + " within --max-message-size bytes"
			if err != nil && err != io.EOF {
				msg += ": " + err.Error()
			}
			pe := &format.PosError{Kind: format.ErrCorrupt, Pos: entryPos, Offset: e.Offset, Field: "position", Msg: msg}
			d.r.problem(problemFromError(pe, verify.KindIndexMismatch))
			if err := d.fatalOrNil(p, pe); err != nil {
				return err
			}
			continue
		}
		if last := b.LastOffset(); last != e.Offset {
			d.findings++
			d.noteIndexMismatch(abs, e.Offset, last)
			d.r.problem(verify.Problem{Kind: verify.KindIndexMismatch, Position: entryPos, Offset: e.Offset,
				Message: "index offset " + strconv.FormatInt(e.Offset, 10) + " points at position " +
					strconv.FormatInt(e.Pos, 10) + " whose batch ends at offset " + strconv.FormatInt(last, 10)})
		}
		if !d.opts.VerifyIndexOnly {
			d.r.indexEntry(e)
		}
	}
	return nil
}

// fatalOrNil: in text mode a Kafka exception ends the dump; JSON goes on.
func (d *dumper) fatalOrNil(p string, err error) error {
	if d.opts.JSON {
		return nil
	}
	return &FatalError{Path: p, Err: err}
}

func asPosError(err error) *format.PosError {
	var pe *format.PosError
	if errors.As(err, &pe) {
		return pe
	}
	return &format.PosError{Kind: format.ErrCorrupt, Offset: -1, Msg: err.Error()}
}

func (d *dumper) noteIndexMismatch(abs string, indexOffset, logOffset int64) {
	if d.idxMis == nil {
		d.idxMis = map[string]*treeMap{}
	}
	m := d.idxMis[abs]
	if m == nil {
		m = &treeMap{m: map[int64]int64{}}
		d.idxMis[abs] = m
		d.idxMisPaths = append(d.idxMisPaths, abs)
	}
	m.put(indexOffset, logOffset)
}

// timeIndexErrors mirrors DumpLogSegments.TimeIndexDumpErrors.
type timeIndexErrors struct {
	mismatch, outOfOrder, notFound             map[string][][2]int64
	mismatchKeys, outOfOrderKeys, notFoundKeys []string
}

func addPair(m *map[string][][2]int64, keys *[]string, k string, a, b int64) {
	if *m == nil {
		*m = map[string][][2]int64{}
	}
	if _, ok := (*m)[k]; !ok {
		*keys = append(*keys, k)
	}
	// Kafka keeps every pair; a hostile time index could name millions, so
	// past maxSummaryKeys per file they are no longer kept.
	if len((*m)[k]) >= maxSummaryKeys {
		return
	}
	(*m)[k] = append((*m)[k], [2]int64{a, b})
}

// dumpTimeIndex mirrors DumpLogSegments.dumpTimeIndex.
func (d *dumper) dumpTimeIndex(p, name string) (err error) {
	base, ok := baseOffsetFromName(name)
	if !ok {
		return &FatalError{Path: p, Err: errors.New("cannot parse the base offset from the file name " + strconv.Quote(name))}
	}
	log, logSize, _, err := d.openLog(p, name)
	if err != nil {
		return err
	}
	defer log.Close()
	prefix := strings.SplitN(name, ".", 2)[0]
	idxName := filepath.Join(filepath.Dir(p), prefix+".index")
	idxData, unmapIdx, err := d.mapOrRead(idxName, d.openPath(idxName))
	if err != nil {
		return &FatalError{Path: p, Err: fmt.Errorf("cannot open the offset index beside it: %w", err)}
	}
	defer unmapIdx()
	data, unmap, err := d.mapIndex(p)
	if err != nil {
		return err
	}
	defer unmap()
	defer d.guardFault(p, &err)
	idx := format.OffsetIndex{BaseOffset: base, Data: idxData}
	tix := format.TimeIndex{BaseOffset: base, Data: data}
	abs := d.absPath(p)
	d.r.indexStart(p, "timeindex", int64(len(data)), tix.Entries())
	if d.opts.IndexSanityOnly {
		if err := tix.SanityCheck(abs); err != nil {
			d.findings++
			d.r.problem(problemFromError(asPosError(err), verify.KindTimeIndexSanity))
			return d.fatalOrNil(p, err)
		}
		d.r.sanityPassed(p)
		return nil
	}
	n := tix.Entries()
	if n == 0 {
		return nil
	}
	// Kafka lists every batch from the looked-up position to the end of the
	// log for each entry, so an unreadable log tail makes it throw at the
	// first entry. Find that once instead of once per entry.
	fatalPos, fatalErr := d.logFatalPos(log, logSize)
	sc := format.NewScanner(log, logSize, format.ScanOptions{MaxBatchBytes: d.opts.MaxBatchBytes})
	prev := int64(-1)
	for i := 0; i < n; i++ {
		e := tix.Entry(i)
		if i > 0 && e.Offset == base {
			return nil
		}
		entryPos := int64(i * format.TimeIndexEntrySize)
		start := idx.Lookup(e.Offset).Pos
		if start < 0 || start > logSize {
			d.findings++
			pe := &format.PosError{Kind: format.ErrCorrupt, Pos: entryPos, Offset: e.Offset, Field: "position",
				Msg: "offset index position " + strconv.FormatInt(start, 10) + " is outside the log"}
			d.r.problem(problemFromError(pe, verify.KindTimeIndexMismatch))
			if err := d.fatalOrNil(p, pe); err != nil {
				return err
			}
			continue
		}
		if fatalErr != nil && start <= fatalPos {
			d.findings++
			d.r.problem(problemFromError(asPosError(fatalErr), verify.KindBadLength))
			if err := d.fatalOrNil(p, fatalErr); err != nil {
				return err
			}
		}
		sc.Reset(log, logSize)
		sc.SetPos(start)
		var match *format.Batch
		for {
			b, err := sc.Next()
			if err != nil {
				break
			}
			if b.LastOffset() >= e.Offset {
				match = b
				break
			}
		}
		switch {
		case match == nil:
			d.findings++
			addPair(&d.tix.notFound, &d.tix.notFoundKeys, abs, e.Offset, -1)
			d.r.problem(verify.Problem{Kind: verify.KindTimeIndexMismatch, Position: entryPos, Offset: e.Offset,
				Message: "indexed offset " + strconv.FormatInt(e.Offset, 10) + " is not in the log"})
		case match.LastOffset() != e.Offset:
			d.findings++
			addPair(&d.tix.notFound, &d.tix.notFoundKeys, abs, e.Offset, match.LastOffset())
			d.r.problem(verify.Problem{Kind: verify.KindTimeIndexMismatch, Position: entryPos, Offset: e.Offset,
				Message: "indexed offset " + strconv.FormatInt(e.Offset, 10) + " is not the last offset of a batch (found " +
					strconv.FormatInt(match.LastOffset(), 10) + ")"})
		default:
			maxTS, err := d.maxRecordTimestamp(match)
			if err != nil {
				d.findings++
				d.r.problem(problemFromError(asPosError(err), verify.KindRecordDecode))
				if err := d.fatalOrNil(p, err); err != nil {
					return err
				}
				break
			}
			if maxTS != e.Timestamp {
				d.findings++
				addPair(&d.tix.mismatch, &d.tix.mismatchKeys, abs, e.Timestamp, maxTS)
				d.r.problem(verify.Problem{Kind: verify.KindTimeIndexMismatch, Position: entryPos, Offset: e.Offset,
					Message: "index timestamp " + strconv.FormatInt(e.Timestamp, 10) + " but the batch's largest record timestamp is " + strconv.FormatInt(maxTS, 10)})
			}
			if prev >= e.Timestamp {
				d.findings++
				addPair(&d.tix.outOfOrder, &d.tix.outOfOrderKeys, abs, e.Timestamp, prev)
				d.r.problem(verify.Problem{Kind: verify.KindTimeIndexOrder, Position: entryPos, Offset: e.Offset,
					Message: "index timestamp " + strconv.FormatInt(e.Timestamp, 10) + " is not above the previous entry's " + strconv.FormatInt(prev, 10)})
			}
		}
		if !d.opts.VerifyIndexOnly {
			d.r.timeEntry(e)
		}
		prev = e.Timestamp
	}
	return nil
}

// logFatalPos scans the whole log once and returns where Kafka's batch
// iteration would throw (a size under the minimum), if anywhere.
func (d *dumper) logFatalPos(f io.ReaderAt, size int64) (int64, error) {
	sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: d.opts.MaxBatchBytes})
	for {
		_, err := sc.Next()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil && sc.Done() {
			return sc.Tail().Pos, err
		}
	}
}

func (d *dumper) maxRecordTimestamp(b *format.Batch) (int64, error) {
	maxTS := int64(-1)
	if err := d.rr.Reset(b); err != nil {
		return 0, err
	}
	for {
		err := d.rr.Next(&d.rec)
		if err == io.EOF {
			return maxTS, nil
		}
		if err != nil {
			return 0, err
		}
		maxTS = max(maxTS, d.rec.Timestamp)
	}
}

// dumpSnapshot mirrors DumpLogSegments.dumpProducerIdSnapshot: a corrupt
// snapshot is reported on stderr and the dump goes on.
func (d *dumper) dumpSnapshot(p string) error {
	data, err := d.readWhole(p, safeio.MaxSnapshotBytes, "snapshot-invalid")
	if err != nil {
		return err
	}
	entries, err := format.ParseProducerSnapshot(data)
	if err != nil {
		d.findings++
		kind := verify.KindSnapshotCRC
		if !errors.Is(err, format.ErrChecksum) {
			kind = verify.KindSnapshotInvalid
		}
		d.r.problem(verify.Problem{Kind: kind, Position: 0, Offset: -1, Message: err.Error()})
		d.r.flush()
		if !d.opts.JSON {
			io.WriteString(d.errw, err.Error()+"\n")
		}
		return nil
	}
	for i := range entries {
		d.r.producerEntry(&entries[i])
	}
	return nil
}

// dumpTxnIndex mirrors DumpLogSegments.dumpTxnIndex.
func (d *dumper) dumpTxnIndex(p string) error {
	var f io.Reader
	if d.opts.Open != nil {
		of, err := d.opened(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil // Kafka prints nothing for a missing index
		}
		if err != nil {
			return &IOError{Path: p, Err: err}
		}
		defer of.Close()
		f = io.NewSectionReader(of, 0, of.Size())
	} else {
		of, err := os.Open(d.openPath(p))
		if errors.Is(err, os.ErrNotExist) {
			return nil // Kafka prints nothing for a missing index
		}
		if err != nil {
			return &IOError{Path: p, Err: err}
		}
		defer of.Close()
		f = of
	}
	// Streamed: a zero-filled .txnindex of any size costs one buffer.
	var ferr error
	n := 0
	rest, err := format.ScanAbortedTxns(f, func(i int, t format.AbortedTxn) bool {
		n = i + 1
		if ferr = d.ctx.Err(); ferr != nil {
			return false
		}
		if t.Version > 0 {
			d.findings++
			pe := &format.PosError{Kind: format.ErrUnsupported, Pos: int64(i * format.AbortedTxnEntrySize), Offset: t.LastOffset, Field: "version",
				Msg: "Unexpected aborted transaction version " + strconv.Itoa(int(t.Version)) + " in transaction index " + d.absPath(p) + ", current version is 0"}
			d.r.problem(problemFromError(pe, verify.KindTxnIndexInvalid))
			ferr = d.fatalOrNil(p, pe)
			return ferr == nil
		}
		d.r.abortedTxn(&t)
		return true
	})
	if ferr != nil {
		return ferr
	}
	if err != nil {
		return &IOError{Path: p, Err: err}
	}
	if rest != 0 && d.opts.JSON {
		d.findings++
		d.r.problem(verify.Problem{Kind: verify.KindTrailingBytes, Position: int64(n * format.AbortedTxnEntrySize), Offset: -1, Bytes: i64(int64(rest)),
			Message: strconv.Itoa(rest) + " bytes after the last complete 34-byte entry"})
	}
	return nil
}

// guardFault, deferred after a mapIndex, turns a fault in the mapping (the
// index was truncated while dumped) into an I/O error for p.
func (d *dumper) guardFault(p string, err *error) {
	if r := recover(); r != nil {
		if !safeio.IsFault(r) {
			panic(r)
		}
		*err = &IOError{Path: p, Err: safeio.ErrFault}
	}
}
