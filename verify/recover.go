package verify

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// SegmentRecovery is what the broker's recovery (LogSegment.recover, called
// by LogLoader for unflushed segments) would do to one segment.
type SegmentRecovery struct {
	Log        string `json:"log"`
	BaseOffset int64  `json:"baseOffset"`
	// ValidBytes is where the valid prefix ends; TruncateBytes what
	// follows it (0 when the segment is intact).
	ValidBytes    int64 `json:"validBytes"`
	TruncateBytes int64 `json:"truncateBytes"`
	// FirstDropped..LastDropped are the offsets recovery would drop
	// (-1 when none, or unknown for an unreadable tail).
	FirstDropped int64 `json:"firstDropped"`
	LastDropped  int64 `json:"lastDropped"`
	// Reason says what is invalid at ValidBytes.
	Reason string `json:"reason,omitempty"`
	// Delete is set for a segment after a truncated one: LogLoader deletes
	// every later segment.
	Delete bool `json:"delete"`
	// IndexEntries and TimeIndexEntries are what the rebuilt indexes hold;
	// IndexChanged/TimeIndexChanged say whether they differ from the files.
	IndexEntries     int  `json:"indexEntries"`
	TimeIndexEntries int  `json:"timeIndexEntries"`
	IndexChanged     bool `json:"indexChanged"`
	TimeIndexChanged bool `json:"timeIndexChanged"`
	// LastOffset of the valid prefix, or -1.
	LastOffset int64 `json:"lastOffset"`

	index, timeIndex []byte
}

// Changes reports whether recovery would change this segment.
func (s *SegmentRecovery) Changes() bool {
	return s.TruncateBytes > 0 || s.Delete || s.IndexChanged || s.TimeIndexChanged
}

// Recovery is the plan for a partition directory.
type Recovery struct {
	Dir      string            `json:"dir"`
	Segments []SegmentRecovery `json:"segments"`
	// LogEndOffset after recovery.
	LogEndOffset int64 `json:"logEndOffset"`
}

// Changes reports whether recovery would change anything.
func (r *Recovery) Changes() bool {
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
	MaxBatchBytes      int
}

// PlanRecovery computes, without changing anything, what the broker's
// recovery would do to a partition directory: per segment, validate every
// batch (CRC, structure, offsets fitting the segment) up to the first
// invalid one, truncate there, delete every later segment, and rebuild the
// offset and time indexes with the index.interval.bytes rule.
func PlanRecovery(dir string, opts RecoverOptions) (*Recovery, error) {
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = 4096
	}
	d, err := partition.Open(dir)
	if err != nil {
		return nil, err
	}
	rec := &Recovery{Dir: dir}
	truncated := false
	var rr format.RecordReader
	var r format.Record
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		sr := SegmentRecovery{Log: s.Log, BaseOffset: s.BaseOffset, FirstDropped: -1, LastDropped: -1, LastOffset: -1}
		f, err := os.Open(s.Log)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		size := st.Size()
		if truncated {
			sr.Delete = true
			sr.TruncateBytes = size
			sr.FirstDropped, sr.LastDropped = droppedRange(f, size, 0, opts)
			f.Close()
			rec.Segments = append(rec.Segments, sr)
			continue
		}
		sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: opts.MaxBatchBytes})
		var since int64
		maxTS, maxTSOff, lastTS := int64(-1), int64(-1), int64(-1)
		for {
			b, err := sc.Next()
			if err == io.EOF {
				if t := sc.Tail(); t.Bytes > 0 {
					sr.Reason = "the batch at position " + itoa(t.Pos) + " is incomplete (" + itoa(t.Bytes) + " bytes)"
				}
				break
			}
			if err != nil {
				sr.Reason = err.Error()
				break
			}
			if reason := batchInvalid(b, s.BaseOffset, &rr, &r); reason != "" {
				sr.Reason = reason
				break
			}
			sr.ValidBytes = b.Pos + b.Size()
			sr.LastOffset = b.LastOffset()
			if b.MaxTimestamp > maxTS {
				maxTS, maxTSOff = b.MaxTimestamp, b.LastOffset()
			}
			if since > opts.IndexIntervalBytes {
				sr.index = binary.BigEndian.AppendUint32(sr.index, uint32(b.LastOffset()-s.BaseOffset))
				sr.index = binary.BigEndian.AppendUint32(sr.index, uint32(b.Pos))
				if maxTS > lastTS {
					sr.timeIndex = binary.BigEndian.AppendUint64(sr.timeIndex, uint64(maxTS))
					sr.timeIndex = binary.BigEndian.AppendUint32(sr.timeIndex, uint32(maxTSOff-s.BaseOffset))
					lastTS = maxTS
				}
				since = 0
			}
			since += b.Size()
		}
		// A finished segment's time index ends with its max timestamp.
		if maxTS > lastTS && maxTS >= 0 {
			sr.timeIndex = binary.BigEndian.AppendUint64(sr.timeIndex, uint64(maxTS))
			sr.timeIndex = binary.BigEndian.AppendUint32(sr.timeIndex, uint32(maxTSOff-s.BaseOffset))
		}
		sr.TruncateBytes = size - sr.ValidBytes
		if sr.TruncateBytes > 0 {
			truncated = true
			sr.FirstDropped, sr.LastDropped = droppedRange(f, size, sr.ValidBytes, opts)
		}
		f.Close()
		sr.IndexEntries = len(sr.index) / format.OffsetIndexEntrySize
		sr.TimeIndexEntries = len(sr.timeIndex) / format.TimeIndexEntrySize
		if sr.TruncateBytes > 0 {
			sr.IndexChanged = differs(s.Index, sr.index, format.OffsetIndexEntrySize)
			sr.TimeIndexChanged = differs(s.TimeIndex, sr.timeIndex, format.TimeIndexEntrySize)
		} else {
			// An intact segment keeps its indexes (their own interval).
			sr.index, sr.timeIndex = readIndex(s.Index, format.OffsetIndexEntrySize), readIndex(s.TimeIndex, format.TimeIndexEntrySize)
			sr.IndexEntries = len(sr.index) / format.OffsetIndexEntrySize
			sr.TimeIndexEntries = len(sr.timeIndex) / format.TimeIndexEntrySize
		}
		rec.Segments = append(rec.Segments, sr)
		if sr.LastOffset >= 0 {
			rec.LogEndOffset = sr.LastOffset + 1
		} else if rec.LogEndOffset < s.BaseOffset {
			rec.LogEndOffset = s.BaseOffset
		}
	}
	return rec, nil
}

// batchInvalid is LogSegment.recover's per-batch check: ensureValid (size
// and CRC), offsets that fit the segment, and records that decode.
func batchInvalid(b *format.Batch, base int64, rr *format.RecordReader, r *format.Record) string {
	if !b.Valid() {
		return "the batch at position " + itoa(b.Pos) + " (offset " + itoa(b.BaseOffset) + ") fails its CRC check"
	}
	if b.LastOffset()-base > 1<<31-1 || b.LastOffset() < base {
		return "the batch at position " + itoa(b.Pos) + " has offsets outside the segment"
	}
	if err := rr.Reset(b); err != nil {
		return "the batch at position " + itoa(b.Pos) + ": " + err.Error()
	}
	for {
		err := rr.Next(r)
		if err == io.EOF {
			return ""
		}
		if err != nil {
			return "the batch at position " + itoa(b.Pos) + ": " + err.Error()
		}
	}
}

// droppedRange finds the offsets of the readable batches after pos.
func droppedRange(f *os.File, size, pos int64, opts RecoverOptions) (int64, int64) {
	sc := format.NewScanner(f, size, format.ScanOptions{MaxBatchBytes: opts.MaxBatchBytes})
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

// differs reports whether the index at path differs from want, ignoring a
// preallocated zero tail. It streams the file: its size is untrusted.
func differs(path string, want []byte, entry int) bool {
	if path == "" {
		return len(want) > 0
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return true
	}
	n := st.Size() / int64(entry) * int64(entry)
	if n < int64(len(want)) || n-int64(len(want)) > maxKeptIndexBytes {
		return true // shorter, or a zero tail longer than any real index
	}
	br := bufio.NewReaderSize(io.LimitReader(f, n), 64<<10)
	head := make([]byte, len(want))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != string(want) {
		return true
	}
	// The rest must be a zero tail.
	buf := make([]byte, 64<<10)
	for {
		k, err := br.Read(buf)
		if !isZero(buf[:k]) {
			return true
		}
		if err == io.EOF {
			return false
		}
		if err != nil {
			return true
		}
	}
}

// maxKeptIndexBytes bounds what readIndex keeps of an existing index: far
// above segment.index.bytes' default (10 MiB); a longer index keeps its
// first entries, which still answer every lookup correctly (an index is
// sparse by design).
const maxKeptIndexBytes = 64 << 20

// readIndex reads an index without its preallocated zero tail, streaming:
// a run of zero entries is only kept once a non-zero entry follows it.
func readIndex(path string, entry int) []byte {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var data []byte
	zeros := 0 // zero entries read since the last non-zero one
	e := make([]byte, entry)
	for i := 0; i*entry < maxKeptIndexBytes; i++ {
		if _, err := io.ReadFull(br, e); err != nil {
			break
		}
		if i > 0 && isZero(e) {
			zeros++
			continue
		}
		if len(data)+(zeros+1)*entry > maxKeptIndexBytes {
			break
		}
		data = append(data, make([]byte, zeros*entry)...)
		data = append(data, e...)
		zeros = 0
	}
	return data
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// WriteRecovered writes the recovered partition to out (which must not
// exist): each kept segment's valid prefix with its rebuilt indexes, the
// .txnindex entries below the new log end, producer snapshots up to it, and
// the partition's checkpoint files. The input is never modified.
func (r *Recovery) WriteRecovered(out string) error {
	if _, err := os.Lstat(out); err == nil {
		return errors.New(out + " already exists")
	}
	// Never write into a log directory a running broker holds.
	if err := safeio.CheckBrokerLock(filepath.Dir(filepath.Clean(out))); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Every file is created with its source's permissions (the log's for
	// rebuilt indexes), or 0600 when there is none to follow.
	perm := func(src string) os.FileMode { return safeio.OutputPerm(src) }
	writeNew := func(dst string, data []byte, src string) error {
		f, err := safeio.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm(src))
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	d, err := partition.Open(r.Dir)
	if err != nil {
		return err
	}
	for _, s := range r.Segments {
		if s.Delete {
			continue
		}
		if err := copyPrefix(s.Log, filepath.Join(out, filepath.Base(s.Log)), s.ValidBytes); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(s.BaseOffset, partition.IndexSuffix)), s.index, s.Log); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(s.BaseOffset, partition.TimeIndexSuffix)), s.timeIndex, s.Log); err != nil {
			return err
		}
		for _, seg := range d.Segments {
			if seg.BaseOffset != s.BaseOffset || seg.TxnIndex == "" {
				continue
			}
			tf, err := os.Open(seg.TxnIndex)
			if err != nil {
				return err
			}
			var keep []byte
			_, err = format.ScanAbortedTxns(tf, func(_ int, t format.AbortedTxn) bool {
				if t.LastOffset < r.LogEndOffset {
					keep = format.AppendAbortedTxn(keep, t)
				}
				return len(keep) < maxKeptIndexBytes
			})
			tf.Close()
			if err != nil {
				return err
			}
			if err := writeNew(filepath.Join(out, filepath.Base(seg.TxnIndex)), keep, seg.TxnIndex); err != nil {
				return err
			}
		}
	}
	for _, sn := range d.Snapshots {
		if sn.Offset <= r.LogEndOffset {
			if err := copyPrefix(sn.Path, filepath.Join(out, filepath.Base(sn.Path)), -1); err != nil {
				return err
			}
		}
	}
	if d.Metadata != "" {
		if err := copyPrefix(d.Metadata, filepath.Join(out, filepath.Base(d.Metadata)), -1); err != nil {
			return err
		}
	}
	if d.LeaderEpochs != "" {
		// LeaderEpochFileCache.truncateFromEnd: epochs starting at or past
		// the new log end are dropped.
		data, err := safeio.ReadFile(d.LeaderEpochs, safeio.MaxCheckpointBytes)
		if err != nil {
			return err
		}
		es, err := format.ParseLeaderEpochCheckpoint(data)
		if err != nil {
			return err
		}
		var keep []string
		for _, e := range es {
			if e.StartOffset < r.LogEndOffset {
				keep = append(keep, itoa(int64(e.Epoch))+" "+itoa(e.StartOffset))
			}
		}
		text := "0\n" + itoa(int64(len(keep))) + "\n"
		for _, k := range keep {
			text += k + "\n"
		}
		if err := writeNew(filepath.Join(out, filepath.Base(d.LeaderEpochs)), []byte(text), d.LeaderEpochs); err != nil {
			return err
		}
	}
	return nil
}

// copyPrefix copies the first n bytes of src (all when n < 0) in bounded
// memory.
// A symlink or other non-regular source is refused: recovery copies the
// partition's own files, never what a link points at.
func copyPrefix(src, dst string, n int64) error {
	in, err := safeio.OpenFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := safeio.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, safeio.OutputPerm(src))
	if err != nil {
		return err
	}
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
