// Package redact writes a copy of a partition directory that is safe to
// share: record keys, values and header values are replaced, while offsets,
// timestamps, batch boundaries, codecs, producer ids/epochs/sequences,
// control records, transaction markers and leader epochs stay as they are.
// CRCs are recomputed and the offset and time indexes rebuilt (with the
// broker's index.interval.bytes rule, LogSegment.append), so the copy
// verifies clean — except that a batch whose CRC was wrong in the source
// keeps its stored CRC, so it stays wrong in the copy and the damage shows.
//
// No byte is copied that was not parsed as a header field where a header
// must be. A position is anchored when it is the start of the segment or
// the end of a batch whose CRC is right: a header there is a header. An entry that cannot
// be decoded at an anchored position keeps the 17 bytes the scanner parsed
// (offset, length, leader epoch or CRC, magic; a v2 batch whose header
// parsed keeps its 61) and is zeroed after them; anything reached only
// through a length that could not be trusted (after a corrupted length,
// the middle of record values) is zeroed whole, framing included, unless
// it is a batch whose CRC is right; bytes after the last whole batch are
// zeroed too, after their first 17 when they start at an anchored
// position. Result counts each.
//
// Sources are opened without following symlinks and must be regular
// files; a source that shrinks while it is copied is an error.
//
// It reads one batch at a time: memory does not grow with the partition.
package redact

import (
	"bufio"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

// Mode says how keys, values and header values are replaced.
type Mode int

const (
	// Hash replaces bytes with their keyed SHA-256 (HMAC-SHA256) truncated
	// to the original length; values longer than the 32-byte digest are
	// extended with an AES-256-CTR keystream keyed by the digest. Equal
	// inputs stay equal, nothing else of them leaks.
	Hash Mode = iota
	// Zero replaces bytes with zeros of the same length.
	Zero
	// Drop makes keys, values and header values null.
	Drop
)

// ParseMode reads "hash", "zero" or "drop".
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "hash":
		return Hash, true
	case "zero":
		return Zero, true
	case "drop":
		return Drop, true
	}
	return 0, false
}

// Options configure Partition.
type Options struct {
	Mode Mode
	// HashKey keys the hash mode; nil draws a random key, so hashes are
	// comparable within one copy only.
	HashKey []byte
	// RedactHeaderKeys replaces header keys too (hash or zero; drop
	// makes them empty).
	RedactHeaderKeys bool
	// IndexIntervalBytes is index.interval.bytes for the rebuilt indexes
	// (0: Kafka's default 4096).
	IndexIntervalBytes int
	MaxBatchBytes      int
	// CopyUnknown copies files that are not Kafka's (unchecked: they may
	// hold payloads) instead of leaving them out.
	CopyUnknown bool
}

// Result counts what Partition did.
type Result struct {
	Type     string `json:"type"` // "redact"
	Source   string `json:"source"`
	Output   string `json:"output"`
	Mode     string `json:"mode"`
	Segments int    `json:"segments"`
	Batches  int64  `json:"batches"`
	Records  int64  `json:"records"`
	// CorruptBatches kept their wrong CRC; ZeroedBatches could not be
	// decoded and had everything after their header zeroed; ZeroedBytes
	// were reached only through a length that could not be trusted and
	// were zeroed whole; TrailingBytes (after the last whole batch) were
	// zeroed, after their first 17 when at an anchored position.
	CorruptBatches int64 `json:"corruptBatches"`
	ZeroedBatches  int64 `json:"zeroedBatches"`
	ZeroedBytes    int64 `json:"zeroedBytes"`
	TrailingBytes  int64 `json:"trailingBytes"`
	BytesIn        int64 `json:"bytesIn"`
	BytesOut       int64 `json:"bytesOut"`
	// Copied are the other files, copied unchanged (producer snapshots,
	// transaction indexes, checkpoints, partition.metadata; unknown files
	// too with CopyUnknown). Skipped are unknown files left out.
	Copied  []string `json:"copied"`
	Skipped []string `json:"skipped"`
}

// Damaged reports whether the source's damage was carried into the copy.
func (r *Result) Damaged() bool {
	return r.CorruptBatches > 0 || r.ZeroedBatches > 0 || r.ZeroedBytes > 0 || r.TrailingBytes > 0
}

// String names a mode.
func (m Mode) String() string {
	switch m {
	case Zero:
		return "zero"
	case Drop:
		return "drop"
	}
	return "hash"
}

// redactor carries the reusable state of one copy.
type redactor struct {
	ctx    context.Context
	opts   Options
	mac    hash.Hash
	rr     format.RecordReader
	comp   format.Compressor
	sink   batchSink
	rec    format.Record
	one    [1]format.Record
	hdrs   []format.Header
	enc    []byte
	arena  []byte
	out    []byte
	digest [sha256.Size]byte
	zeros  []byte
	res    *Result
}

// Partition copies the partition directory src to dst, which must not exist
// or be empty. Log segments (and .log.deleted/.cleaned/.swap files and KRaft
// .checkpoint snapshots, which hold batches too) are redacted; their
// .index and .timeindex are rebuilt; every other file is copied unchanged.
func Partition(src, dst string, opts Options) (*Result, error) {
	return PartitionContext(context.Background(), src, dst, opts)
}

// PartitionContext is Partition that stops when ctx ends (checked between
// files and batches), returning ctx's error: dst then holds an incomplete
// copy.
func PartitionContext(ctx context.Context, src, dst string, opts Options) (*Result, error) {
	if opts.IndexIntervalBytes <= 0 {
		opts.IndexIntervalBytes = 4096
	}
	if opts.Mode == Hash && opts.HashKey == nil {
		opts.HashKey = make([]byte, 32)
		if _, err := rand.Read(opts.HashKey); err != nil {
			return nil, err
		}
	}
	if err := safeio.CheckOutside(dst, src); err != nil {
		return nil, err
	}
	// An output that is a symbolic link (to an empty directory) would be
	// written through, and the broker lock checked beside the link, not
	// beside its target: refused, as every writer into a partition does.
	if err := partition.CheckNotLink(dst); err != nil {
		return nil, err
	}
	if des, err := os.ReadDir(dst); err == nil && len(des) > 0 {
		return nil, errors.New(dst + ": output directory exists and is not empty")
	}
	// Never write into a log directory a running broker holds, and keep
	// one from starting while this writes.
	broker, err := safeio.HoldBroker(filepath.Dir(filepath.Clean(dst)))
	if err != nil {
		return nil, err
	}
	defer broker.Release()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	// The copy says it is incomplete until it is whole (a signal, an
	// error or a crash leave the mark; verify reports it).
	if err := partition.MarkIncomplete(dst); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(src)
	if err != nil {
		return nil, err
	}
	res := &Result{Type: "redact", Source: src, Output: dst, Mode: opts.Mode.String(), Copied: []string{}, Skipped: []string{}}
	r := &redactor{ctx: ctx, opts: opts, res: res, mac: newMAC(opts.HashKey)}
	for _, de := range des {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if de.IsDir() {
			continue
		}
		name := de.Name()
		in := filepath.Join(src, name)
		kind, base, variant := classify(name)
		if kind == fileMeta && !plausibleSize(in, name) {
			// A 2 GiB sparse "snapshot" is not Kafka's: left out (or
			// copied unchanged with CopyUnknown) like any unknown file.
			kind = fileUnknown
		}
		switch kind {
		case fileLog:
			if err := r.segment(in, filepath.Join(dst, name), filepath.Join(dst, base+partition.IndexSuffix+variant),
				filepath.Join(dst, base+partition.TimeIndexSuffix+variant), baseOf(name)); err != nil {
				return res, err
			}
			res.Segments++
		case fileSnapshotLog:
			if err := r.segment(in, filepath.Join(dst, name), "", "", 0); err != nil {
				return res, err
			}
		case fileIndex:
			// Rebuilt with its log.
		case fileMeta:
			if err := copyFile(in, filepath.Join(dst, name)); err != nil {
				return res, err
			}
			res.Copied = append(res.Copied, name)
		default:
			if !opts.CopyUnknown {
				res.Skipped = append(res.Skipped, name)
				continue
			}
			if err := copyFile(in, filepath.Join(dst, name)); err != nil {
				return res, err
			}
			res.Copied = append(res.Copied, name)
		}
	}
	if err := partition.MarkComplete(dst); err != nil {
		return res, err
	}
	return res, nil
}

type fileKind int

const (
	fileUnknown     fileKind = iota
	fileLog                  // a segment's .log (or its .deleted/.cleaned/.swap form)
	fileSnapshotLog          // a KRaft snapshot (.checkpoint): batches, no index
	fileIndex                // .index/.timeindex: rebuilt
	fileMeta                 // Kafka files without payloads: copied
)

// classify names a file of a partition directory; base and variant are a
// log's name stem and its extra suffix ("" or ".deleted", ".cleaned",
// ".swap").
func classify(name string) (kind fileKind, base, variant string) {
	switch name {
	case partition.LeaderEpochCheckpoint, partition.PartitionMetadata:
		return fileMeta, "", ""
	}
	if strings.HasSuffix(name, ".checkpoint") || strings.HasSuffix(name, ".checkpoint.part") || strings.HasSuffix(name, ".checkpoint.deleted") {
		if i := strings.IndexByte(name, '-'); i == 20 {
			return fileSnapshotLog, "", ""
		}
	}
	_, suffix, ok := partition.ParseFileName(name)
	if !ok {
		return fileUnknown, "", ""
	}
	stem := strings.TrimSuffix(name, suffix)
	for _, v := range []string{"", ".deleted", ".cleaned", ".swap"} {
		switch suffix {
		case partition.LogSuffix + v:
			return fileLog, stem, v
		case partition.IndexSuffix + v, partition.TimeIndexSuffix + v:
			return fileIndex, stem, v
		case partition.TxnIndexSuffix + v, partition.SnapshotSuffix + v:
			return fileMeta, stem, v
		}
	}
	return fileUnknown, "", ""
}

// plausibleSize reports whether a Kafka metadata file is within the size
// klog reads such files to (safeio's limits): producer snapshots
// MaxSnapshotBytes, checkpoints and partition.metadata MaxCheckpointBytes;
// a .txnindex (34 bytes per aborted transaction) has no limit.
func plausibleSize(path, name string) bool {
	st, err := os.Lstat(path)
	if err != nil {
		return true // the copy reports it
	}
	switch {
	case strings.Contains(name, partition.TxnIndexSuffix):
		return true
	case strings.Contains(name, partition.SnapshotSuffix):
		return st.Size() <= safeio.MaxSnapshotBytes
	}
	return st.Size() <= safeio.MaxCheckpointBytes
}

func baseOf(name string) int64 {
	off, _, _ := partition.ParseFileName(name)
	return off
}

// indexer rebuilds a segment's offset and time index as the broker appends
// (LogSegment.append): an entry for a batch when more than interval bytes
// were written since the last entry, and the largest timestamp so far
// appended at the end, as a roll or close does.
type indexer struct {
	base            int64
	interval        int64
	since           int64
	maxTs, maxTsOff int64
	lastTs          int64
	idx, tidx       *bufio.Writer
	scratch         [12]byte
}

func (x *indexer) add(pos int64, size int64, lastOffset, maxTs int64) error {
	if maxTs > x.maxTs {
		x.maxTs, x.maxTsOff = maxTs, lastOffset
	}
	if x.since > x.interval {
		e := format.AppendIndexEntry(x.scratch[:0], x.base, format.IndexEntry{Offset: lastOffset, Pos: pos})
		if _, err := x.idx.Write(e); err != nil {
			return err
		}
		if err := x.timeEntry(); err != nil {
			return err
		}
		x.since = 0
	}
	x.since += size
	return nil
}

// timeEntry is TimeIndex.maybeAppend: only a larger timestamp is written.
func (x *indexer) timeEntry() error {
	if x.maxTs <= x.lastTs {
		return nil
	}
	e := format.AppendTimeEntry(x.scratch[:0], x.base, format.TimeEntry{Timestamp: x.maxTs, Offset: x.maxTsOff})
	x.lastTs = x.maxTs
	_, err := x.tidx.Write(e)
	return err
}

// segment redacts one log file and writes its indexes (when idxPath is set).
func (r *redactor) segment(in, out, idxPath, tidxPath string, base int64) (err error) {
	f, size, err := safeio.OpenSource(in)
	if err != nil {
		return err
	}
	defer f.Close()
	src := safeio.NewFixedReaderAt(f, in, size)
	r.res.BytesIn += size
	// Read-write: a batch too large to hold is written as it is encoded,
	// and its CRC read back (encode.go).
	of, err := safeio.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_EXCL, safeio.OutputPerm(in))
	if err != nil {
		return err
	}
	defer closeErr(of, &err)
	o := &segOut{w: bufio.NewWriterSize(of, 256<<10), f: of}
	var x *indexer
	if idxPath != "" {
		xf, err := create(idxPath, in)
		if err != nil {
			return err
		}
		defer closeErr(xf, &err)
		tf, err := create(tidxPath, in)
		if err != nil {
			return err
		}
		defer closeErr(tf, &err)
		x = &indexer{base: base, interval: int64(r.opts.IndexIntervalBytes), maxTs: -1, lastTs: -1,
			idx: bufio.NewWriter(xf), tidx: bufio.NewWriter(tf)}
	}
	sc := format.NewScanner(src, size, format.ScanOptions{MaxBatchBytes: r.opts.MaxBatchBytes})
	// anchored: the next entry starts where an entry must start (the
	// segment's start, or the end of a batch whose length is trusted).
	anchored := true
	for {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		start := sc.Pos()
		b, serr := sc.Next()
		if serr != nil && sc.Done() {
			break
		}
		if serr != nil {
			// An entry the scanner could not parse: its framing is kept
			// where a header must be, nothing of it elsewhere; the next
			// position comes from its untrusted length.
			if err := r.untrusted(o, src, start, sc.Pos()-start, anchored); err != nil {
				return err
			}
			r.res.Batches++
			anchored = false
			continue
		}
		valid := b.Valid()
		if !anchored && !valid {
			// Reached through an untrusted length, and not a batch by
			// its CRC: its "header" may be the middle of record values.
			if err := r.untrusted(o, src, start, int64(len(b.Raw)), false); err != nil {
				return err
			}
			r.res.Batches++
			continue
		}
		at := o.pos
		n, err := r.write(o, b)
		if err != nil {
			return err
		}
		// Only a batch whose CRC is right is known to end where the next
		// one starts: a wrong CRC may be a corrupted length.
		anchored = valid
		lastOffset, maxTs := b.LastOffset(), b.MaxTimestamp
		if b.Magic == format.MagicV0 {
			maxTs = -1
		}
		r.res.Batches++
		if x != nil && lastOffset >= base {
			if err := x.add(at, n, lastOffset, maxTs); err != nil {
				return err
			}
		}
	}
	if err := src.Err(); err != nil {
		return err
	}
	if t := sc.Tail(); t.Kind != format.TailNone && t.Bytes > 0 {
		n := size - t.Pos
		keep := 0
		if anchored && (t.Kind == format.TailPartial || t.Kind == format.TailCorrupt) {
			keep = format.HeaderSizeUpToMagic
		}
		if err := r.writeZeroed(o, src, t.Pos, n, keep); err != nil {
			return err
		}
		r.res.TrailingBytes += n
	}
	if err := src.Err(); err != nil {
		return err
	}
	if err := safeio.StillWhole(f, in, size); err != nil {
		return err
	}
	r.res.BytesOut += o.pos
	if err := o.w.Flush(); err != nil {
		return err
	}
	if x != nil {
		if err := x.timeEntry(); err != nil {
			return err
		}
		if err := x.idx.Flush(); err != nil {
			return err
		}
		if err := x.tidx.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// untrusted writes n bytes standing for an entry at pos that cannot be
// decoded: at an anchored position its framing (the 17 bytes the scanner
// parsed) and zeros, counted as a zeroed batch; elsewhere zeros only,
// counted as zeroed bytes.
func (r *redactor) untrusted(o *segOut, src io.ReaderAt, pos, n int64, anchored bool) error {
	if !anchored {
		r.res.ZeroedBytes += n
		return r.writeZeroed(o, src, pos, n, 0)
	}
	r.res.ZeroedBatches++
	return r.writeZeroed(o, src, pos, n, format.HeaderSizeUpToMagic)
}

// writeZeroed writes n bytes standing for the source's bytes at pos: the
// first keep of them as they are (the framing: offset, size and what
// follows up to the records), zeros after them. Memory stays bounded
// whatever n is.
func (r *redactor) writeZeroed(o *segOut, src io.ReaderAt, pos, n int64, keep int) error {
	k := min(int64(keep), n)
	head := make([]byte, k)
	if _, err := src.ReadAt(head, pos); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := o.write(head); err != nil {
		return err
	}
	if len(r.zeros) < 64<<10 {
		r.zeros = make([]byte, 64<<10)
	}
	for left := n - k; left > 0; {
		c := min(left, int64(len(r.zeros)))
		if err := o.write(r.zeros[:c]); err != nil {
			return err
		}
		left -= c
	}
	return nil
}

// write writes one batch's redacted form and returns its size: control
// batches as they are, decodable ones re-encoded a record at a time
// (encode.go), undecodable ones with their header and zeros.
func (r *redactor) write(o *segOut, b *format.Batch) (int64, error) {
	valid := b.Valid()
	if !valid {
		r.res.CorruptBatches++
	}
	if b.IsControl() && valid {
		// Markers and KRaft control records hold no user data.
		return int64(len(b.Raw)), o.write(b.Raw)
	}
	if err := r.rr.Reset(b); err == nil {
		var size int64
		switch {
		case b.IsV2():
			size, err = r.v2(o, b, valid)
		case b.Compression() != format.CompressionNone:
			size, err = r.legacyWrapper(o, b, valid)
		default:
			size, err = r.legacyEntry(o, b, valid)
		}
		if _, undecodable := err.(errUndecodable); !undecodable {
			return size, err
		}
	}
	out := r.undecodable(b)
	return int64(len(out)), o.write(out)
}

// legacyEntry re-encodes an uncompressed v0/v1 entry (one message).
func (r *redactor) legacyEntry(o *segOut, b *format.Batch, valid bool) (int64, error) {
	rec, err := r.next()
	if err != nil {
		return 0, errUndecodable{err}
	}
	r.one[0] = *rec
	if err := r.rr.Next(&r.rec); err != io.EOF {
		return 0, errUndecodable{errCount}
	}
	spec := format.LegacySpec{Magic: b.Magic, Compression: b.Compression(), TimestampType: b.TimestampType(), LogAppendTime: b.MaxTimestamp}
	out, err := r.comp.AppendLegacy(r.out[:0], spec, r.one[:])
	if err == nil && format.EntrySize(out) != len(out) {
		err = errCount
	}
	if err != nil {
		return 0, errUndecodable{err}
	}
	if !valid {
		copy(out[12:16], b.Raw[12:16])
	}
	r.out = out
	r.res.Records++
	return int64(len(out)), o.write(out)
}

// undecodable keeps a batch's header and zeroes its records.
func (r *redactor) undecodable(b *format.Batch) []byte {
	r.res.ZeroedBatches++
	keep := format.BatchHeaderSize
	if !b.IsV2() {
		keep = format.LogOverhead + 5
	}
	r.out = append(r.out[:0], b.Raw...)
	for i := min(keep, len(r.out)); i < len(r.out); i++ {
		r.out[i] = 0
	}
	// A batch whose CRC was right stays right: its damage is in the
	// records (which are now zeros), not in the checksum.
	if b.Valid() {
		if b.IsV2() && len(r.out) >= format.BatchHeaderSize {
			binary.BigEndian.PutUint32(r.out[17:], format.ChecksumC(r.out[21:]))
		} else if !b.IsV2() && len(r.out) > 16 {
			binary.BigEndian.PutUint32(r.out[12:], format.ChecksumIEEE(r.out[16:]))
		}
	}
	return r.out
}

// replace returns the redacted form of v (nil stays nil), in the arena.
func (r *redactor) replace(v []byte) []byte {
	if v == nil {
		return nil
	}
	switch r.opts.Mode {
	case Drop:
		return nil
	case Zero:
		start := len(r.arena)
		for range v {
			r.arena = append(r.arena, 0)
		}
		return r.arena[start:len(r.arena):len(r.arena)]
	}
	// Hash: d = HMAC-SHA256(key, v); values up to 32 bytes take d's
	// first bytes, longer ones an AES-256-CTR keystream keyed by d. Equal
	// inputs give equal outputs; nothing of v survives.
	r.mac.Reset()
	r.mac.Write(v)
	d := r.mac.Sum(r.digest[:0])
	start := len(r.arena)
	if len(v) <= len(d) {
		r.arena = append(r.arena, d[:len(v)]...)
		return r.arena[start:len(r.arena):len(r.arena)]
	}
	block, err := aes.NewCipher(d)
	if err != nil {
		panic(err) // a 32-byte key never fails
	}
	if len(r.zeros) < len(v) {
		r.zeros = make([]byte, len(v))
	}
	r.arena = append(r.arena, r.zeros[:len(v)]...)
	out := r.arena[start:len(r.arena):len(r.arena)]
	var iv [aes.BlockSize]byte
	cipher.NewCTR(block, iv[:]).XORKeyStream(out, out)
	return out
}

// create makes a new file with the permissions of src (the file it is made
// from), never through a symlink; it never overwrites one.
func create(path, src string) (*os.File, error) {
	return safeio.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, safeio.OutputPerm(src))
}

func closeErr(f *os.File, err *error) {
	if cerr := f.Close(); *err == nil {
		*err = cerr
	}
}

func copyFile(src, dst string) (err error) {
	// Never what a symlink in the source points at (refused first, so no
	// empty copy is left behind), never a file that shrank meanwhile.
	if err := safeio.CheckSource(src); err != nil {
		return err
	}
	out, err := create(dst, src)
	if err != nil {
		return err
	}
	defer closeErr(out, &err)
	return safeio.CopySource(out, src, 0, -1)
}

func newMAC(key []byte) hash.Hash { return hmac.New(sha256.New, key) }
