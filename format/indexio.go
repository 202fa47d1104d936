package format

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// Streaming access to index files, whose sizes an attacker controls (a
// sparse 2 GiB .index costs nothing on disk): nothing here allocates by a
// file's size.

// ScanAbortedTxns reads a .txnindex from r entry by entry and calls fn for
// each complete one (i is its number) until fn returns false. It returns
// the number of bytes after the last complete entry read, 0 < rest < 34 for
// a partial entry at the end.
func ScanAbortedTxns(r io.Reader, fn func(i int, t AbortedTxn) bool) (rest int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var e [AbortedTxnEntrySize]byte
	for i := 0; ; i++ {
		n, err := io.ReadFull(br, e[:])
		if err == io.EOF {
			return 0, nil
		}
		if err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		t := AbortedTxn{
			Version:          int8(e[0]),
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		}
		if !fn(i, t) {
			return 0, nil
		}
	}
}

// LookupOffsetIndexAt is OffsetIndex.Lookup over an .index file of size
// bytes read through r: Kafka's search, one 4-byte read per probe, so an
// index of any size costs a few dozen reads and no memory.
func LookupOffsetIndexAt(r io.ReaderAt, size, base, target int64) (IndexEntry, error) {
	n := int(size / OffsetIndexEntrySize)
	var rerr error
	var buf [OffsetIndexEntrySize]byte
	read := func(i int) bool {
		if rerr != nil {
			return false
		}
		if _, err := r.ReadAt(buf[:], int64(i)*OffsetIndexEntrySize); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the file shrank while read
			}
			rerr = err
			return false
		}
		return true
	}
	key := func(i int) int64 {
		if !read(i) {
			return base
		}
		return base + int64(int32(binary.BigEndian.Uint32(buf[:])))
	}
	slot := lowerBoundSlot(n, OffsetIndexEntrySize, target, key)
	if rerr != nil {
		return IndexEntry{}, rerr
	}
	if slot < 0 || !read(slot) {
		return IndexEntry{Offset: base, Pos: 0}, rerr
	}
	return IndexEntry{Offset: base + int64(int32(binary.BigEndian.Uint32(buf[:]))), Pos: int64(int32(binary.BigEndian.Uint32(buf[4:])))}, nil
}

// ScanOffsetIndex reads an .index from r entry by entry, up to its first
// unused entry (an entry i > 0 at the base offset: the preallocated zero
// tail), calling fn until it returns false.
func ScanOffsetIndex(r io.Reader, base int64, fn func(i int, e IndexEntry) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var e [OffsetIndexEntrySize]byte
	for i := 0; ; i++ {
		if _, err := io.ReadFull(br, e[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil
			}
			return err
		}
		rel := int32(binary.BigEndian.Uint32(e[:]))
		if i > 0 && rel == 0 {
			return nil
		}
		if !fn(i, IndexEntry{Offset: base + int64(rel), Pos: int64(int32(binary.BigEndian.Uint32(e[4:])))}) {
			return nil
		}
	}
}
