package produce

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"

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
// offset (kind 0, offset index) or timestamp (kind 1, time index).
func openIndex(existing, path string, size int, keep func([]byte) bool, last *int64, base int64, kind int) (*os.File, error) {
	if existing != "" {
		path = existing
	}
	f, err := safeio.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
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
				return nil, err // an I/O error: cut nothing
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
			return nil, err
		}
	}
	return f, nil
}

// loadProducers rebuilds producer state: from the latest snapshot at or
// below the log end, then from every batch after the snapshot's offset.
func (a *Appender) loadProducers(d *partition.Dir, segs []partition.Segment) error {
	from := int64(-1)
	for i := len(d.Snapshots) - 1; i >= 0; i-- {
		s := d.Snapshots[i]
		if s.Offset > a.leo {
			continue
		}
		data, err := safeio.ReadFile(s.Path, safeio.MaxSnapshotBytes)
		var tl *safeio.TooLargeError
		if errors.As(err, &tl) {
			continue // no real snapshot is this large: rebuild from the log
		}
		if err != nil {
			return err
		}
		entries, err := format.ParseProducerSnapshot(data)
		if err != nil {
			continue // a damaged snapshot: rebuild from the log instead
		}
		for _, e := range entries {
			a.producers[e.ProducerID] = &producerState{epoch: e.Epoch, lastSeq: e.LastSequence, lastOffset: e.LastOffset,
				offsetDelta: e.OffsetDelta, lastTimestamp: e.Timestamp, coordinatorEpoch: e.CoordinatorEpoch, txnFirst: e.CurrentTxnFirstOffset}
		}
		from = s.Offset
		break
	}
	var rr format.RecordReader
	var rec format.Record
	for i, s := range segs {
		if from >= 0 && i+1 < len(segs) && segs[i+1].BaseOffset <= from {
			continue // wholly before the snapshot
		}
		f, size, err := a.openForScan(s)
		if err != nil {
			return err
		}
		sc := format.NewScanner(f, size, format.ScanOptions{})
		for {
			b, err := sc.Next()
			if err != nil {
				if !format.EndOfData(err) {
					f.Close()
					return err // an I/O error is not the end of the log
				}
				break
			}
			if b.LastOffset() < from || b.ProducerID < 0 || !b.IsV2() {
				continue
			}
			a.observe(b, &rr, &rec)
		}
		f.Close()
	}
	return nil
}

// observe updates producer state with one batch from the log.
func (a *Appender) observe(b *format.Batch, rr *format.RecordReader, rec *format.Record) {
	p := a.producers[b.ProducerID]
	if p == nil {
		p = &producerState{txnFirst: -1, coordinatorEpoch: -1, lastSeq: -1}
		a.producers[b.ProducerID] = p
	}
	if b.ProducerEpoch != p.epoch {
		p.lastSeq = -1
	}
	p.epoch = b.ProducerEpoch
	if b.IsControl() {
		if err := rr.Reset(b); err == nil && rr.Next(rec) == nil {
			if m, err := format.ParseEndTxnMarker(rec.Value); err == nil {
				p.coordinatorEpoch = m.CoordinatorEpoch
			}
		}
		p.txnFirst = -1
		p.lastTimestamp = b.MaxTimestamp
		return
	}
	if b.BaseSequence >= 0 {
		p.lastSeq = b.LastSequence()
		p.lastOffset = b.LastOffset()
		p.offsetDelta = b.LastOffsetDelta
	}
	p.lastTimestamp = b.MaxTimestamp
	if b.IsTransactional() && p.txnFirst < 0 {
		p.txnFirst = b.BaseOffset
	}
}

// writeSnapshot writes the producer state snapshot named by offset, as the
// broker does when it rolls a segment.
func (a *Appender) writeSnapshot(offset int64) error {
	entries := make([]format.ProducerEntry, 0, len(a.producers))
	for pid, p := range a.producers {
		entries = append(entries, format.ProducerEntry{ProducerID: pid, Epoch: p.epoch, LastSequence: p.lastSeq,
			LastOffset: p.lastOffset, OffsetDelta: p.offsetDelta, Timestamp: p.lastTimestamp,
			CoordinatorEpoch: p.coordinatorEpoch, CurrentTxnFirstOffset: p.txnFirst})
	}
	sortEntries(entries)
	data := format.AppendProducerSnapshot(nil, entries)
	path := filepath.Join(a.dir, partition.FileName(offset, partition.SnapshotSuffix))
	return partition.WriteFileAtomic(path, data, partition.WriteOptions{})
}

func sortEntries(es []format.ProducerEntry) {
	sort.Slice(es, func(i, j int) bool { return es[i].ProducerID < es[j].ProducerID })
}

// Producer is an idempotent producer's state as the log holds it: its
// epoch, the last sequence and the last offset written (-1 when none).
// klog serve checks a Produce request's sequence against it.
func (a *Appender) Producer(producerID int64) (epoch int16, lastSeq int32, lastOffset int64, ok bool) {
	p := a.producers[producerID]
	if p == nil {
		return 0, -1, -1, false
	}
	return p.epoch, p.lastSeq, p.lastOffset, true
}

// openForScan opens a segment's log for reading the batches the appender
// has already validated: the active segment up to the size Open accepted
// (an invalid tail it refused or cut is never read), any other segment whole.
func (a *Appender) openForScan(s partition.Segment) (*os.File, int64, error) {
	f, size, err := safeio.OpenSized(s.Log)
	if err != nil {
		return nil, 0, err
	}
	if s.BaseOffset == a.seg.base {
		return f, a.seg.size, nil
	}
	return f, size, nil
}
