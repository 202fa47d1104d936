package verify

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
)

// ErrRefused is returned by WriteRecovered when Kafka would refuse to load
// the partition: there is no state Kafka would leave to write.
var ErrRefused = errors.New("Kafka refuses to load this partition")

// maxSnapshotBytes bounds the producer snapshots WriteRecovered reads
// (a snapshot entry is 46 bytes: 64 MiB is over a million producers).
const maxSnapshotBytes = 64 << 20

// WriteRecovered writes the partition as Kafka leaves it after loading to
// out (which must not exist): every surviving segment (split segments under
// their new base offsets) with its rebuilt .index and .timeindex, its
// .txnindex entries below the new log end, the producer snapshots loading
// keeps, leader epochs cut to the log end, and partition.metadata; an empty
// segment when none survives. The input is never modified. It returns
// ErrRefused when the plan does not load.
func (r *Recovery) WriteRecovered(out string) error {
	if !r.Loads {
		return ErrRefused
	}
	if _, err := os.Lstat(out); err == nil {
		return errors.New(out + " already exists")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	d, err := partition.Open(r.Dir)
	if err != nil {
		return err
	}
	if r.NewEmptySegment {
		for _, suf := range []string{partition.LogSuffix, partition.IndexSuffix, partition.TimeIndexSuffix} {
			if err := writeNew(filepath.Join(out, partition.FileName(r.LogStartOffset, suf)), nil); err != nil {
				return err
			}
		}
	}
	for _, v := range r.live {
		if err := copyRange(v.src.seg.Log, filepath.Join(out, partition.FileName(v.base, partition.LogSuffix)), v.pos, v.end-v.pos); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(v.base, partition.IndexSuffix)), v.recov.index); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(v.base, partition.TimeIndexSuffix)), v.recov.timeIndex); err != nil {
			return err
		}
		if v.src.seg.TxnIndex == "" {
			continue
		}
		data, err := os.ReadFile(v.src.seg.TxnIndex)
		if err != nil {
			return err
		}
		var keep []byte
		for _, t := range format.AbortedTxns(data) {
			if t.LastOffset < r.LogEndOffset && t.FirstOffset >= v.base && (v.recov.lastOffset < 0 || t.FirstOffset <= v.recov.lastOffset) {
				keep = format.AppendAbortedTxn(keep, t)
			}
		}
		if err := writeNew(filepath.Join(out, partition.FileName(v.base, partition.TxnIndexSuffix)), keep); err != nil {
			return err
		}
	}
	gone := map[string]bool{}
	for _, f := range r.DeletedFiles {
		gone[f.Path] = true
	}
	// Producer snapshots Kafka keeps: it rewrites them from the log, so a
	// snapshot that does not parse is left out (Kafka rebuilds producer
	// state without it), as is one too large to be a real snapshot.
	for _, sn := range d.Snapshots {
		if gone[sn.Path] {
			continue
		}
		st, err := os.Stat(sn.Path)
		if err != nil {
			return err
		}
		if st.Size() > maxSnapshotBytes {
			continue
		}
		data, err := os.ReadFile(sn.Path)
		if err != nil {
			return err
		}
		if _, err := format.ParseProducerSnapshot(data); err != nil {
			continue
		}
		if err := writeNew(filepath.Join(out, filepath.Base(sn.Path)), data); err != nil {
			return err
		}
	}
	if d.Metadata != "" {
		if err := copyRange(d.Metadata, filepath.Join(out, filepath.Base(d.Metadata)), 0, -1); err != nil {
			return err
		}
	}
	// leader-epoch-checkpoint: what recovery assigned, cut to the log end
	// (LeaderEpochFileCache.truncateFromEnd); an empty cache is an empty
	// file, as Kafka leaves it.
	var text []byte
	if len(r.epochs) > 0 {
		text = append(text, "0\n"+strconv.Itoa(len(r.epochs))+"\n"...)
		for _, e := range r.epochs {
			text = append(text, strconv.Itoa(int(e.Epoch))+" "+itoa(e.StartOffset)+"\n"...)
		}
	}
	return writeNew(filepath.Join(out, partition.LeaderEpochCheckpoint), text)
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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

// copyRange copies n bytes of src from pos (all when n < 0) in bounded
// memory into a new file.
func copyRange(src, dst string, pos, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	var rd io.Reader
	if n >= 0 {
		rd = io.NewSectionReader(in, pos, n)
	} else {
		rd = in
	}
	if _, err := io.Copy(out, rd); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
