package produce

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
)

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

func entryPos(e []byte) int64 { return int64(int32(be32(e[4:]))) }

// openIndex opens (or creates) an index of the active segment for appending.
// Entries after the first unused one (a preallocated zero tail) or that
// point past the valid log are cut: the index is derived data, and an
// append must follow the last real entry. last receives the last entry's
// offset (kind 0, offset index) or timestamp (kind 1, time index) and
// fileSize the size kept; cut says entries were cut.
func openIndex(existing, path string, size int, keep func([]byte) bool, last, fileSize *int64, base int64, kind int) (_ *os.File, cut bool, err error) {
	if existing != "" {
		path = existing
	}
	f, err := safeio.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, false, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, err
	}
	// Streamed entry by entry: the file's size is not trusted (a sparse
	// 2 GiB index costs nothing on disk).
	br := bufio.NewReaderSize(f, 64<<10)
	e := make([]byte, size)
	n := 0
	for ; ; n++ {
		if _, err := io.ReadFull(br, e); err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				f.Close()
				return nil, false, err // an I/O error: cut nothing
			}
			break
		}
		rel := int32(be32(e)) // offset index: relative offset first
		if kind == 1 {
			rel = int32(be32(e[8:])) // time index: after the timestamp
		}
		if (n > 0 && rel == 0) || !keep(e) {
			break
		}
		if kind == 0 {
			*last = base + int64(rel)
		} else {
			*last = int64(binary.BigEndian.Uint64(e))
		}
	}
	if int64(n*size) != st.Size() {
		if err := f.Truncate(int64(n * size)); err != nil {
			f.Close()
			return nil, false, err
		}
		cut = true
	}
	*fileSize = int64(n * size)
	return f, cut, nil
}

// writeSnapshot writes the producer state snapshot named by offset, as the
// broker does when it rolls a segment (ProducerStateManager.takeSnapshot):
// the model's producer state.
func (a *Appender) writeSnapshot(offset int64) error {
	entries, err := a.log.ProducerEntries()
	if err != nil {
		return err
	}
	data := format.AppendProducerSnapshot(nil, entries)
	path := filepath.Join(a.dir, partition.FileName(offset, partition.SnapshotSuffix))
	return partition.WriteFileAtomic(path, data, partition.WriteOptions{})
}

// Producer is an idempotent producer's state as the log holds it: its
// epoch, the last sequence and the last offset written (-1 when none).
func (a *Appender) Producer(producerID int64) (epoch int16, lastSeq int32, lastOffset int64, ok bool) {
	p, ok, err := a.log.Producer(producerID)
	if err != nil || !ok {
		return 0, -1, -1, false
	}
	lastOffset = -1
	if n := len(p.Batches); n > 0 {
		lastOffset = p.Batches[n-1].LastOffset
	}
	return p.Epoch, p.LastSeq(), lastOffset, true
}
