package offsetstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// Compaction of a store's partitions, as Kafka's log cleaner compacts
// __consumer_offsets (cleanup.policy=compact): the latest record of each
// key stays, a key whose latest record is a tombstone goes, and the
// records keep their order. Unlike the cleaner, the records are numbered
// again from 0 in one new segment: the store is klog's own (a read-only
// klog serve's --state), and no reader keeps an offset into it.
//
// A partition is rewritten into <dir>.compacting-delete, then swapped in:
// the old directory becomes <dir>.compacted-delete, the new one <dir>,
// and the old one is removed. OpenFor finishes a swap a crash
// interrupted (recoverCompactions). The "-delete" suffix keeps both out of
// every reader's partitions (partition.ParseDirName), a broker's too.

const (
	compactingSuffix = ".compacting-delete"
	compactedSuffix  = ".compacted-delete"
)

// errTransactional: a partition with transactional batches is not
// compacted (its offsets count only once their marker is read).
var errTransactional = errors.New("offsetstore: the partition has transactional batches; not compacted")

// compactBatchBytes is the most record bytes of one batch written by a
// compaction.
const compactBatchBytes = 512 << 10

// Bytes is the size of the store's partitions on disk (every regular
// file in their directories): each partition is measured once, when it
// is first asked for or opened for writing, then counted up by each
// append (its batch, and an entry in each index).
func (s *Store) Bytes() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.measureLocked(); err != nil {
		return 0, err
	}
	var n int64
	for _, b := range s.sizes {
		n += b
	}
	return n, nil
}

// indexEntryBytes bounds what one append adds to the indexes: an offset
// index entry (8 bytes) and a time index entry (12).
const indexEntryBytes = 20

// measureLocked measures the partitions not measured yet; s.mu is held.
func (s *Store) measureLocked() error {
	if s.sizes != nil {
		return nil
	}
	s.sizes = map[int32]int64{}
	dirs, err := partitionDirs(s.dir)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		_, n, _ := partition.ParseDirName(filepath.Base(d))
		if s.sizes[n], err = dirBytes(d); err != nil {
			return err
		}
	}
	return nil
}

// counted adds an append of size bytes to partition n's size; s.mu is
// held.
func (s *Store) counted(n int32, size int64) {
	if s.sizes != nil {
		s.sizes[n] += size + indexEntryBytes
	}
}

// remeasureLocked measures partition n again (after it was opened or
// compacted); s.mu is held.
func (s *Store) remeasureLocked(n int32) error {
	if s.sizes == nil {
		return nil
	}
	b, err := dirBytes(s.partitionDir(n))
	if err != nil {
		return err
	}
	s.sizes[n] = b
	return nil
}

// dirBytes is the size of the regular files directly in dir (none: 0).
func dirBytes(dir string) (int64, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return 0, err
		}
		n += info.Size()
	}
	return n, nil
}

// Compact compacts every partition of the store that has one (see the
// comment above) and returns the store's size after it. A partition with
// transactional batches is left as it is.
func (s *Store) Compact() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.measureLocked(); err != nil {
		return 0, err
	}
	dirs, err := partitionDirs(s.dir)
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		_, n, _ := partition.ParseDirName(filepath.Base(d))
		if err := s.compactLocked(n); err != nil && !errors.Is(err, errTransactional) {
			return 0, err
		}
	}
	var total int64
	for _, b := range s.sizes {
		total += b
	}
	return total, nil
}

// keep is one key's latest record.
type keep struct {
	key, value []byte
	timestamp  int64
	order      int64 // the record's offset: the order they are written in
}

// compactLocked rewrites partition n; s.mu is held.
func (s *Store) compactLocked(n int32) error {
	dir := s.partitionDir(n)
	latest, err := latestRecords(dir)
	if err != nil {
		return err
	}
	if a := s.apps[n]; a != nil {
		if err := a.Close(); err != nil {
			return err
		}
		delete(s.apps, n)
	}
	tmp, old := dir+compactingSuffix, dir+compactedSuffix
	if err := removeDir(tmp); err != nil {
		return err
	}
	opts := s.opts
	if id, ok, err := partition.ReadTopicID(dir); err == nil && ok {
		opts.TopicID = id
	}
	a, err := produce.Open(tmp, opts)
	if err != nil {
		return err
	}
	recs := make([]format.Record, 0, 64)
	size := 0
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		_, err := a.Append(&produce.Batch{Records: recs})
		recs, size = recs[:0], 0
		return err
	}
	for _, k := range latest {
		if size+len(k.key)+len(k.value) > compactBatchBytes {
			if err := flush(); err != nil {
				a.Close()
				return err
			}
		}
		recs = append(recs, format.Record{Key: k.key, Value: k.value, Timestamp: k.timestamp})
		size += len(k.key) + len(k.value)
	}
	err = flush()
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		removeDir(tmp)
		return err
	}
	if len(latest) == 0 {
		// Nothing lives: the partition goes.
		removeDir(tmp)
		if err := removeDir(dir); err != nil {
			return err
		}
		delete(s.sizes, n)
		return nil
	}
	if err := removeDir(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Put the old one back: nothing is lost.
		if rerr := os.Rename(old, dir); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	if err := removeDir(old); err != nil {
		return err
	}
	return s.remeasureLocked(n)
}

// latestRecords reads partition dir's records and returns each key's
// latest, in the order of those records; a key whose latest record is a
// tombstone is left out. A partition with a transactional or control
// batch is errTransactional; a torn tail ends the log, as in State.Load.
func latestRecords(dir string) ([]keep, error) {
	d, err := partition.Open(dir)
	if err != nil {
		return nil, err
	}
	byKey := map[string]keep{}
	var rr format.RecordReader
	var rec format.Record
	for _, sg := range d.Segments {
		if sg.Log == "" {
			continue
		}
		f, size, err := safeio.OpenSized(sg.Log)
		if err != nil {
			return nil, err
		}
		for b, err := range format.NewScanner(f, size, format.ScanOptions{}).All() {
			if err != nil {
				var pe *format.PosError
				if errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF) {
					break
				}
				f.Close()
				return nil, fmt.Errorf("%s: %w", sg.Log, err)
			}
			if b.IsTransactional() || b.IsControl() {
				f.Close()
				return nil, errTransactional
			}
			if err := rr.Reset(b); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: batch at offset %d: %w", sg.Log, b.BaseOffset, err)
			}
			for {
				err := rr.Next(&rec)
				if err == io.EOF {
					break
				}
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("%s: batch at offset %d: %w", sg.Log, b.BaseOffset, err)
				}
				if rec.Value == nil {
					delete(byKey, string(rec.Key))
					continue
				}
				byKey[string(rec.Key)] = keep{key: append([]byte(nil), rec.Key...), value: append([]byte(nil), rec.Value...),
					timestamp: rec.Timestamp, order: rec.Offset}
			}
		}
		f.Close()
	}
	out := make([]keep, 0, len(byKey))
	for _, k := range byKey {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b keep) int { return cmp.Compare(a.order, b.order) })
	return out, nil
}

// removeDir removes dir if it is a directory (not through a link: a link
// there is an error).
func removeDir(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return &os.PathError{Op: "remove", Path: dir, Err: errNotDir}
	}
	return os.RemoveAll(dir)
}

// recoverCompactions finishes the swaps a crash interrupted under dir: an
// old partition directory whose new one is not in place is put back, one
// whose new one is is removed, and a half-written new one is removed.
func recoverCompactions(dir string) error {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		if !de.IsDir() || !strings.HasPrefix(name, Topic+"-") {
			continue
		}
		switch {
		case strings.HasSuffix(name, compactingSuffix):
			if err := removeDir(filepath.Join(dir, name)); err != nil {
				return err
			}
		case strings.HasSuffix(name, compactedSuffix):
			p := filepath.Join(dir, strings.TrimSuffix(name, compactedSuffix))
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				if err := os.Rename(filepath.Join(dir, name), p); err != nil {
					return err
				}
			} else if err := removeDir(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}
