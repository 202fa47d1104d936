package format

import (
	"encoding/binary"
	"strconv"
)

// Index files (storage/.../log/OffsetIndex.java, TimeIndex.java,
// TransactionIndex.java, ProducerStateManager.java). Part of the on-disk
// format; never change.
const (
	OffsetIndexEntrySize = 8  // relativeOffset int32 | position int32
	TimeIndexEntrySize   = 12 // timestamp int64 | relativeOffset int32
	AbortedTxnEntrySize  = 34 // version int16 | producerId | firstOffset | lastOffset | lastStableOffset
	snapshotHeaderSize   = 10 // version int16 | crc uint32 | count int32
	SnapshotEntrySize    = 46
	// ProducerSnapshotVersion is the only producer snapshot version.
	ProducerSnapshotVersion = 1
)

// OffsetIndex is an .index file's bytes: 8-byte entries mapping an offset
// (relative to BaseOffset) to the byte position of the batch that holds it.
// Like Kafka, it counts floor(len/8) entries, including a preallocated
// zero tail; see Used for where real entries end.
type OffsetIndex struct {
	BaseOffset int64
	Data       []byte
}

// IndexEntry is one offset index entry: Offset is absolute; Pos is a byte
// position in the .log.
type IndexEntry struct {
	Offset int64
	Pos    int64
}

// Entries is floor(len/8), as Kafka counts them.
func (x *OffsetIndex) Entries() int { return len(x.Data) / OffsetIndexEntrySize }

// Entry returns entry i (0 <= i < Entries).
func (x *OffsetIndex) Entry(i int) IndexEntry {
	return ParseIndexEntry(x.Data[i*OffsetIndexEntrySize:], x.BaseOffset)
}

// FitsSegment is AbstractIndex.toRelative's test: offset minus a segment's
// base offset is not negative and fits the int32 of an index entry, so the
// segment can hold the offset.
func FitsSegment(offset, base int64) bool {
	rel := offset - base
	return rel >= 0 && rel <= maxInt32
}

// ParseIndexEntry decodes the offset index entry at the start of e (at
// least OffsetIndexEntrySize bytes) of an index whose base offset is base:
// a 4-byte offset relative to base and a 4-byte position (OffsetIndex's
// parseEntry). It is the one decoder of offset index entries.
func ParseIndexEntry(e []byte, base int64) IndexEntry {
	_ = e[OffsetIndexEntrySize-1]
	return IndexEntry{
		Offset: base + int64(int32(binary.BigEndian.Uint32(e))),
		Pos:    int64(int32(binary.BigEndian.Uint32(e[4:]))),
	}
}

// AppendIndexEntry appends the offset index entry for e to an index whose
// base offset is base (OffsetIndex.append); it is the one encoder. The
// caller keeps e.Offset-base and e.Pos within int32, as the broker does by
// rolling segments.
func AppendIndexEntry(dst []byte, base int64, e IndexEntry) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.Offset-base))
	return binary.BigEndian.AppendUint32(dst, uint32(e.Pos))
}

// Used is the number of entries before the first unused one: Kafka's dump
// stops at the first entry i > 0 whose offset equals the base offset (a
// zero tail of a preallocated active index).
func (x *OffsetIndex) Used() int {
	n := x.Entries()
	for i := 1; i < n; i++ {
		if x.Entry(i).Offset == x.BaseOffset {
			return i
		}
	}
	return n
}

// Lookup returns the entry with the largest offset <= target, or
// (BaseOffset, 0) when there is none, using Kafka's exact search
// (AbstractIndex.largestLowerBoundSlotFor, with its warm section) so that
// results agree with the broker even on unsorted or zero-padded files.
func (x *OffsetIndex) Lookup(target int64) IndexEntry {
	slot := x.LookupSlot(target)
	if slot < 0 {
		return IndexEntry{Offset: x.BaseOffset, Pos: 0}
	}
	return x.Entry(slot)
}

// LookupSlot is the slot Lookup reads, or -1 when no entry is <= target.
func (x *OffsetIndex) LookupSlot(target int64) int {
	return lowerBoundSlot(x.Entries(), OffsetIndexEntrySize, target, func(i int) int64 { return x.Entry(i).Offset })
}

// lowerBoundSlot mirrors AbstractIndex.indexSlotRangeFor(...).first.
func lowerBoundSlot(entries, entrySize int, target int64, key func(int) int64) int {
	if entries == 0 {
		return -1
	}
	cmp := func(i int) int {
		k := key(i)
		switch {
		case k > target:
			return 1
		case k < target:
			return -1
		}
		return 0
	}
	search := func(lo, hi int) int {
		for lo < hi {
			mid := int(uint(lo+hi+1) >> 1)
			c := cmp(mid)
			if c > 0 {
				hi = mid - 1
			} else if c < 0 {
				lo = mid
			} else {
				return mid
			}
		}
		return lo
	}
	warm := 8192 / entrySize
	firstHot := max(0, entries-1-warm)
	if cmp(firstHot) < 0 {
		return search(firstHot, entries-1)
	}
	if cmp(0) > 0 {
		return -1
	}
	return search(0, firstHot)
}

// SanityCheck runs OffsetIndex.sanityCheck; abs is the path it names.
func (x *OffsetIndex) SanityCheck(abs string) error {
	if n := x.Entries(); n != 0 {
		if last := x.Entry(n - 1).Offset; last < x.BaseOffset {
			return &PosError{Kind: ErrCorrupt, Pos: int64((n - 1) * OffsetIndexEntrySize), Offset: last, Field: "offset",
				Msg: "Corrupt index found, index file (" + abs + ") has non-zero size but the last offset is " +
					itoa(last) + " which is less than the base offset " + itoa(x.BaseOffset)}
		}
	}
	if len(x.Data)%OffsetIndexEntrySize != 0 {
		return &PosError{Kind: ErrCorrupt, Pos: int64(len(x.Data)), Offset: -1, Field: "size",
			Msg: "Index file " + abs + " is corrupt, found " + strconv.Itoa(len(x.Data)) +
				" bytes which is neither positive nor a multiple of 8"}
	}
	return nil
}

// TimeIndex is a .timeindex file's bytes: 12-byte entries (timestamp,
// offset relative to BaseOffset).
type TimeIndex struct {
	BaseOffset int64
	Data       []byte
}

// TimeEntry is one time index entry; Offset is absolute.
type TimeEntry struct {
	Timestamp int64
	Offset    int64
}

// Entries is floor(len/12).
func (x *TimeIndex) Entries() int { return len(x.Data) / TimeIndexEntrySize }

// Entry returns entry i.
func (x *TimeIndex) Entry(i int) TimeEntry {
	return ParseTimeEntry(x.Data[i*TimeIndexEntrySize:], x.BaseOffset)
}

// ParseTimeEntry decodes the time index entry at the start of e (at least
// TimeIndexEntrySize bytes) of an index whose base offset is base: an
// 8-byte timestamp and a 4-byte offset relative to base (TimeIndex's
// parseEntry). It is the one decoder of time index entries.
func ParseTimeEntry(e []byte, base int64) TimeEntry {
	_ = e[TimeIndexEntrySize-1]
	return TimeEntry{
		Timestamp: int64(binary.BigEndian.Uint64(e)),
		Offset:    base + int64(int32(binary.BigEndian.Uint32(e[8:]))),
	}
}

// AppendTimeEntry appends the time index entry for e to an index whose
// base offset is base (TimeIndex.maybeAppend's write); the one encoder.
func AppendTimeEntry(dst []byte, base int64, e TimeEntry) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(e.Offset-base))
}

// Lookup is TimeIndex.lookup: the entry with the largest timestamp <=
// target, found with Kafka's search over every entry the file holds (its
// zero tail included, as a broker that opened the file after a clean
// shutdown counts them), or (-1, BaseOffset) when there is none.
func (x *TimeIndex) Lookup(target int64) TimeEntry {
	slot := x.LookupSlot(target)
	if slot < 0 {
		return TimeEntry{Timestamp: NoTimestamp, Offset: x.BaseOffset}
	}
	return x.Entry(slot)
}

// LookupSlot is the slot Lookup reads, or -1 when no entry is <= target.
func (x *TimeIndex) LookupSlot(target int64) int {
	return lowerBoundSlot(x.Entries(), TimeIndexEntrySize, target, func(i int) int64 { return x.Entry(i).Timestamp })
}

// LastEntry is TimeIndex.lastEntry: the last entry the file holds, or
// (-1, BaseOffset) when it has none.
func (x *TimeIndex) LastEntry() TimeEntry {
	if n := x.Entries(); n > 0 {
		return x.Entry(n - 1)
	}
	return TimeEntry{Timestamp: NoTimestamp, Offset: x.BaseOffset}
}

// Used is the number of entries before the first entry i > 0 whose offset
// equals the base offset.
func (x *TimeIndex) Used() int {
	n := x.Entries()
	for i := 1; i < n; i++ {
		if x.Entry(i).Offset == x.BaseOffset {
			return i
		}
	}
	return n
}

// SanityCheck runs TimeIndex.sanityCheck; abs is the path it names.
func (x *TimeIndex) SanityCheck(abs string) error {
	n := x.Entries()
	if n != 0 {
		first, last := x.Entry(0), x.Entry(n-1)
		if last.Timestamp < first.Timestamp {
			return &PosError{Kind: ErrCorrupt, Pos: int64((n - 1) * TimeIndexEntrySize), Offset: last.Offset, Field: "timestamp",
				Msg: "Corrupt time index found, time index file (" + abs + ") has non-zero size but the last timestamp is " +
					itoa(last.Timestamp) + " which is less than the first timestamp " + itoa(first.Timestamp)}
		}
		if last.Offset < x.BaseOffset {
			return &PosError{Kind: ErrCorrupt, Pos: int64((n - 1) * TimeIndexEntrySize), Offset: last.Offset, Field: "offset",
				Msg: "Corrupt time index found, time index file (" + abs + ") has non-zero size but the last offset is " +
					itoa(last.Offset) + " which is less than the first offset " + itoa(x.BaseOffset)}
		}
	}
	if len(x.Data)%TimeIndexEntrySize != 0 {
		return &PosError{Kind: ErrCorrupt, Pos: int64(len(x.Data)), Offset: -1, Field: "size",
			Msg: "Time index file " + abs + " is corrupt, found " + strconv.Itoa(len(x.Data)) +
				" bytes which is neither positive nor a multiple of 12"}
	}
	return nil
}

// AbortedTxn is one .txnindex entry.
type AbortedTxn struct {
	// Version is the first byte of the int16 version field: Kafka 4.3 reads
	// one byte (AbortedTxn.version()).
	Version          int8
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// AbortedTxns decodes the complete 34-byte entries of a .txnindex file; a
// trailing partial entry is ignored, as Kafka does.
func AbortedTxns(data []byte) []AbortedTxn {
	out := make([]AbortedTxn, 0, len(data)/AbortedTxnEntrySize)
	for p := 0; len(data)-p >= AbortedTxnEntrySize; p += AbortedTxnEntrySize {
		e := data[p:]
		out = append(out, AbortedTxn{
			Version:          int8(e[0]),
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		})
	}
	return out
}

// AppendAbortedTxn appends one version-0 entry.
func AppendAbortedTxn(dst []byte, t AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(t.LastStableOffset))
}

// ProducerEntry is one entry of a producer state .snapshot.
type ProducerEntry struct {
	ProducerID            int64
	Epoch                 int16
	LastSequence          int32
	LastOffset            int64
	OffsetDelta           int32
	Timestamp             int64
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64 // -1 = none
}

// FirstSequence is LastSequence moved back by OffsetDelta with Kafka's
// wrap-around (BatchMetadata.firstSeq).
func (e *ProducerEntry) FirstSequence() int32 {
	return DecrementSequence(e.LastSequence, e.OffsetDelta)
}

// SnapshotError is a producer snapshot Kafka rejects
// (CorruptSnapshotException); Msg is Kafka's message.
type SnapshotError struct {
	Msg  string
	Kind error // ErrChecksum, ErrTruncated, ErrCorrupt or ErrUnsupported
}

func (e *SnapshotError) Error() string { return e.Msg }
func (e *SnapshotError) Unwrap() error { return e.Kind }

// ParseProducerSnapshot decodes a producer state snapshot as
// ProducerStateManager.readSnapshot does: the whole structure first, then the
// version, then the CRC-32C of bytes [6, end).
func ParseProducerSnapshot(data []byte) ([]ProducerEntry, error) {
	schema := func(msg string, kind error) error {
		return &SnapshotError{Msg: "Snapshot failed schema validation: " + msg, Kind: kind}
	}
	if len(data) < snapshotHeaderSize {
		return nil, schema("null", ErrTruncated)
	}
	version := int16(binary.BigEndian.Uint16(data))
	stored := binary.BigEndian.Uint32(data[2:])
	count := int32(binary.BigEndian.Uint32(data[6:]))
	rest := len(data) - snapshotHeaderSize
	if count < 0 {
		return nil, schema("non-nullable field producerEntries was serialized as null", ErrCorrupt)
	}
	if int64(count) > int64(rest) {
		return nil, schema("Tried to allocate a collection of size "+itoa(int64(count))+
			", but there are only "+strconv.Itoa(rest)+" bytes remaining.", ErrCorrupt)
	}
	if int64(count)*SnapshotEntrySize > int64(rest) {
		return nil, schema("null", ErrTruncated)
	}
	if version != ProducerSnapshotVersion {
		return nil, schema("Snapshot contained an unknown file version "+strconv.Itoa(int(version)), ErrUnsupported)
	}
	if computed := ChecksumC(data[6:]); computed != stored {
		return nil, &SnapshotError{Kind: ErrChecksum, Msg: "Snapshot is corrupt (CRC is no longer valid). Stored crc: " +
			strconv.FormatUint(uint64(stored), 10) + ". Computed crc: " + strconv.FormatUint(uint64(computed), 10)}
	}
	out := make([]ProducerEntry, count)
	for i := range out {
		e := data[snapshotHeaderSize+i*SnapshotEntrySize:]
		out[i] = ProducerEntry{
			ProducerID:            int64(binary.BigEndian.Uint64(e)),
			Epoch:                 int16(binary.BigEndian.Uint16(e[8:])),
			LastSequence:          int32(binary.BigEndian.Uint32(e[10:])),
			LastOffset:            int64(binary.BigEndian.Uint64(e[14:])),
			OffsetDelta:           int32(binary.BigEndian.Uint32(e[22:])),
			Timestamp:             int64(binary.BigEndian.Uint64(e[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(e[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
		}
	}
	return out, nil
}

// AppendProducerSnapshot encodes a version-1 snapshot with its CRC-32C.
func AppendProducerSnapshot(dst []byte, entries []ProducerEntry) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, ProducerSnapshotVersion)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.Epoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.LastSequence))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.OffsetDelta))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.CoordinatorEpoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(dst[start+2:], ChecksumC(dst[start+6:]))
	return dst
}
