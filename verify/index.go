package verify

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
)

// maxIndexRead bounds how much of an index file is read into memory; Kafka's
// segment.index.bytes defaults to 10 MiB and indexes stream beyond this.
const indexBuf = 64 << 10

// openLogFor is the log an index describes: the one this worker just
// checked when it is that log (kept open, and in memory when it was read
// whole: the index checks then cost no system call), else opened for the
// check. done closes what it opened.
func (v *verifier) openLogFor(f *FileReport, t task) (log io.ReaderAt, size int64, done func(), ok bool) {
	if k := v.kept; k != nil && k.path == t.log {
		if k.data != nil {
			return bytes.NewReader(k.data), int64(len(k.data)), func() {}, true
		}
		return k.src, k.src.size, func() {}, true
	}
	if t.logMissing {
		// The finding is the segment's (its missing-log report): one
		// missing .log is one problem, however many indexes it has.
		f.add(Problem{Kind: KindMissingLog, Info: true, Offset: t.base,
			Message: "not checked against its log: " + filepath.Base(t.log) + " does not exist (counted once, for the segment)"})
		return nil, 0, nil, false
	}
	src, err := v.open(t.log)
	if err != nil {
		msg := "cannot open the log segment beside it: " + err.Error()
		if os.IsNotExist(err) {
			msg = "the log segment " + filepath.Base(t.log) + " does not exist"
		}
		f.add(Problem{Kind: KindMissingLog, Offset: t.base, Message: msg})
		return nil, 0, nil, false
	}
	return src, src.size, func() { src.Close() }, true
}

// openIndexAndLog opens an index file and the log it describes, reporting a
// size that is not a whole number of entries (the broker's sanity check).
// A nil file with a nil error means the log is missing (already reported).
func (v *verifier) openIndexAndLog(f *FileReport, t task, entry int64, kind Kind, what string) (*source, io.ReaderAt, int64, func(), error) {
	file, err := v.open(t.path)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	f.Bytes = file.size
	log, logSize, done, ok := v.openLogFor(f, t)
	if !ok {
		if t.logMissing {
			f.Records = f.Bytes / entry // its entries, unchecked
		}
		file.Close()
		return nil, nil, 0, nil, nil
	}
	if rest := f.Bytes % entry; rest != 0 {
		f.add(Problem{Kind: kind, Position: f.Bytes - rest, Offset: -1,
			Message: what + " file is " + itoa(f.Bytes) + " bytes, not a multiple of " + itoa(entry) + " (the broker rebuilds it)"})
	}
	return file, log, logSize, done, nil
}

// checkIndex verifies an .index against its log: the broker's sanity check,
// entries strictly increasing, and each entry pointing at the start of the
// batch whose last offset it names. A zero tail (preallocated active
// segment) ends the entries, as it does for Kafka.
func (v *verifier) checkIndex(f *FileReport, t task) error {
	file, log, logSize, done, err := v.openIndexAndLog(f, t, format.OffsetIndexEntrySize, KindIndexSanity, "index")
	if file == nil || err != nil {
		return err
	}
	defer file.Close()
	defer done()
	base := t.base
	sc := v.headerScanner(log, logSize)
	br := v.indexReader(file)
	var e [format.OffsetIndexEntrySize]byte
	prevOff, prevPos := int64(-1), int64(-1)
	for i := int64(0); ; i++ {
		if _, err := io.ReadFull(br, e[:]); err != nil {
			break
		}
		ie := format.ParseIndexEntry(e[:], base)
		off, pos := ie.Offset, ie.Pos
		at := i * format.OffsetIndexEntrySize
		if i > 0 && off == base {
			break // unused preallocated entries
		}
		f.Records++ // entries
		if off < base {
			f.add(Problem{Kind: KindIndexSanity, Position: at, Offset: off,
				Message: "entry offset " + itoa(off) + " is below the base offset " + itoa(base)})
		}
		if off <= prevOff || pos <= prevPos {
			f.add(Problem{Kind: KindIndexOrder, Position: at, Offset: off,
				Message: "entry (offset " + itoa(off) + ", position " + itoa(pos) + ") does not follow (offset " + itoa(prevOff) + ", position " + itoa(prevPos) + ")"})
		}
		prevOff, prevPos = max(prevOff, off), max(prevPos, pos)
		if pos < 0 || pos >= logSize {
			f.add(Problem{Kind: KindIndexMismatch, Position: at, Offset: off,
				Message: "entry points at position " + itoa(pos) + ", outside the log of " + itoa(logSize) + " bytes"})
			continue
		}
		sc.Reset(log, logSize)
		sc.SetPos(pos)
		b, err := sc.Next()
		if err != nil {
			f.add(Problem{Kind: KindIndexMismatch, Position: at, Offset: off,
				Message: "no readable batch at position " + itoa(pos) + " of the log"})
			continue
		}
		if b.LastOffset() != off {
			f.add(Problem{Kind: KindIndexMismatch, Position: at, Offset: off,
				Message: "entry for offset " + itoa(off) + " points at position " + itoa(pos) + ", whose batch's last offset is " + itoa(b.LastOffset())})
		}
	}
	return nil
}

// checkTimeIndex verifies a .timeindex against its log: the broker's sanity
// check, timestamps strictly increasing, and each entry naming the last
// offset of a batch whose max timestamp is the entry's timestamp. It walks
// the log once alongside the entries (both are in offset order).
func (v *verifier) checkTimeIndex(f *FileReport, t task) error {
	file, log, logSize, done, err := v.openIndexAndLog(f, t, format.TimeIndexEntrySize, KindTimeIndexSanity, "time index")
	if file == nil || err != nil {
		return err
	}
	defer file.Close()
	defer done()
	base := t.base
	sc := v.headerScanner(log, logSize)
	var cur *format.Batch
	br := v.indexReader(file)
	var e [format.TimeIndexEntrySize]byte
	prevTS, prevOff := int64(-1), int64(-1)
	var firstTS int64
	for i := int64(0); ; i++ {
		if _, err := io.ReadFull(br, e[:]); err != nil {
			break
		}
		te := format.ParseTimeEntry(e[:], base)
		ts, off := te.Timestamp, te.Offset
		at := i * format.TimeIndexEntrySize
		if i > 0 && off == base {
			break
		}
		if i == 0 {
			firstTS = ts
		}
		f.Records++
		if (i > 0 && ts <= prevTS) || off < prevOff || ts < firstTS {
			f.add(Problem{Kind: KindTimeIndexOrder, Position: at, Offset: off,
				Message: "entry (timestamp " + itoa(ts) + ", offset " + itoa(off) + ") does not follow (timestamp " + itoa(prevTS) + ", offset " + itoa(prevOff) + ")"})
		}
		if off < base {
			f.add(Problem{Kind: KindTimeIndexSanity, Position: at, Offset: off,
				Message: "entry offset " + itoa(off) + " is below the base offset " + itoa(base)})
		}
		if off < prevOff || cur == nil || cur.LastOffset() > off {
			// Out of order or first entry: rescan from the start.
			sc.Reset(log, logSize)
			cur = nil
		}
		prevTS, prevOff = ts, off
		for cur == nil || cur.LastOffset() < off {
			b, err := sc.Next()
			if err != nil {
				cur = nil
				break
			}
			cur = b
		}
		switch {
		case cur == nil:
			f.add(Problem{Kind: KindTimeIndexMismatch, Position: at, Offset: off,
				Message: "offset " + itoa(off) + " is past the end of the log"})
		case cur.LastOffset() != off:
			f.add(Problem{Kind: KindTimeIndexMismatch, Position: at, Offset: off,
				Message: "offset " + itoa(off) + " is not the last offset of a batch (the batch holding it ends at " + itoa(cur.LastOffset()) + ")"})
		case cur.MaxTimestamp != ts:
			f.add(Problem{Kind: KindTimeIndexMismatch, Position: at, Offset: off,
				Message: "timestamp " + itoa(ts) + " differs from the batch's max timestamp " + itoa(cur.MaxTimestamp)})
		}
	}
	return nil
}

// checkTxnIndex verifies a .txnindex: versions, offsets inside the segment,
// first <= last, entries in last-offset order, no partial entry.
func (v *verifier) checkTxnIndex(f *FileReport, t task) error {
	file, err := v.open(t.path) // streamed: its size is not trusted
	if err != nil {
		return err
	}
	defer file.Close()
	f.Bytes = file.size
	prevLast := int64(-1)
	rest, err := format.ScanAbortedTxns(file, func(i int, a format.AbortedTxn) bool {
		at := int64(i) * format.AbortedTxnEntrySize
		f.Records++
		switch {
		case a.Version != 0:
			f.add(Problem{Kind: KindTxnIndexInvalid, Position: at, Offset: a.LastOffset, Message: "unknown entry version " + strconv.Itoa(int(a.Version))})
		case t.base >= 0 && a.LastOffset < t.base:
			f.add(Problem{Kind: KindTxnIndexInvalid, Position: at, Offset: a.LastOffset,
				Message: "abort marker offset " + itoa(a.LastOffset) + " is below the segment's base offset " + itoa(t.base)})
		case a.FirstOffset > a.LastOffset:
			f.add(Problem{Kind: KindTxnIndexInvalid, Position: at, Offset: a.LastOffset,
				Message: "first offset " + itoa(a.FirstOffset) + " is after the abort marker " + itoa(a.LastOffset)})
		case a.LastOffset <= prevLast:
			f.add(Problem{Kind: KindTxnIndexInvalid, Position: at, Offset: a.LastOffset,
				Message: "entries are not in abort-marker order"})
		}
		prevLast = max(prevLast, a.LastOffset)
		return v.ctx.Err() == nil
	})
	if err != nil {
		return err
	}
	if err := v.ctx.Err(); err != nil {
		return err
	}
	if rest != 0 {
		at := f.Records * format.AbortedTxnEntrySize
		f.add(Problem{Kind: KindTrailingBytes, Position: at, Offset: -1, Bytes: i64(int64(rest)),
			Message: strconv.Itoa(rest) + " bytes after the last complete 34-byte entry"})
	}
	return nil
}

// readBounded reads a whole snapshot or checkpoint of at most limit bytes;
// a larger file is a finding of kind (no real one comes near the limit),
// reported as such with ok=false.
func (v *verifier) readBounded(f *FileReport, t task, limit int64, kind Kind) (data []byte, ok bool, err error) {
	data, err = v.r.readFile(t.path, limit, &v.tally, &f.Bytes)
	var tl *safeio.TooLargeError
	if errors.As(err, &tl) {
		f.add(Problem{Kind: kind, Offset: -1, Message: "the file is " + itoa(tl.Size) + " bytes, more than any real one (limit " + itoa(tl.Limit) + "); not read"})
		return nil, false, nil
	}
	return data, err == nil, err
}

// checkSnapshot verifies a producer state snapshot (version, structure, CRC).
func (v *verifier) checkSnapshot(f *FileReport, t task) error {
	data, ok, err := v.readBounded(f, t, safeio.MaxSnapshotBytes, KindSnapshotInvalid)
	if !ok {
		return err
	}
	entries, err := format.ParseProducerSnapshot(data)
	if err != nil {
		kind := KindSnapshotInvalid
		if errors.Is(err, format.ErrChecksum) {
			kind = KindSnapshotCRC
		}
		f.add(Problem{Kind: kind, Offset: t.base, Message: err.Error()})
		return nil
	}
	f.Records = int64(len(entries))
	return nil
}

// checkCheckpoint parses a text checkpoint or partition.metadata; ranges are
// checked against the logs by checkPartition.
func (v *verifier) checkCheckpoint(f *FileReport, t task) error {
	data, ok, err := v.readBounded(f, t, safeio.MaxCheckpointBytes, KindCheckpointInvalid)
	if !ok {
		return err
	}
	var perr error
	switch t.kind {
	case "leader-epoch-checkpoint":
		var es []format.EpochEntry
		es, perr = format.ParseLeaderEpochCheckpoint(data)
		f.Records = int64(len(es))
		f.epochs, f.epochsParsed = es, perr == nil
		for i := 1; perr == nil && i < len(es); i++ {
			if es[i].Epoch <= es[i-1].Epoch || es[i].StartOffset < es[i-1].StartOffset {
				f.add(Problem{Kind: KindCheckpointInvalid, Position: int64(i + 3), Offset: es[i].StartOffset,
					Message: "line " + strconv.Itoa(i+3) + ": epochs and start offsets must increase"})
			}
		}
	case "offset-checkpoint":
		var es []format.OffsetEntry
		es, perr = format.ParseOffsetCheckpoint(data)
		f.Records = int64(len(es))
	case "partition-metadata":
		_, perr = format.ParsePartitionMetadata(data)
	}
	if perr != nil {
		line := int64(0)
		var ce *format.CheckpointError
		if errors.As(perr, &ce) {
			line = int64(ce.Line)
		}
		f.add(Problem{Kind: KindCheckpointInvalid, Position: line, Offset: -1, Message: perr.Error()})
	}
	return nil
}

// headerScanner is the verifier's scanner of batch headers (index checks
// need offsets, positions and timestamps, not the data), reused from file
// to file so that 100,000 segments allocate nothing per index.
func (v *verifier) headerScanner(log io.ReaderAt, size int64) *format.Scanner {
	if v.hsc == nil {
		v.hsc = format.NewScanner(log, size, format.ScanOptions{MaxBatchBytes: v.opts.MaxBatchBytes, HeadersOnly: true})
	} else {
		v.hsc.Reset(log, size)
	}
	return v.hsc
}

// indexReader is the verifier's reader of an index file: the whole file
// from one read when it fits the buffer (an index is a few entries, or a
// preallocated 10 MiB of zeros), else streamed through a buffered reader.
// Both are reused from file to file.
func (v *verifier) indexReader(file *source) io.Reader {
	if file.size <= indexBuf && file.st.Mode().IsRegular() {
		if v.idx == nil {
			v.idx = make([]byte, indexBuf)
		}
		n, err := file.readOnce(v.idx[:file.size], 0)
		if err == nil && int64(n) == file.size {
			v.idxr.Reset(v.idx[:n])
			return &v.idxr
		}
	}
	if v.br == nil {
		v.br = bufio.NewReaderSize(file, indexBuf)
	} else {
		v.br.Reset(file)
	}
	return v.br
}
