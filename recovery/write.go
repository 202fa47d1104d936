package recovery

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
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
// keeps, leader epochs cut to the log end, a __cluster_metadata partition's
// KRaft snapshots, and partition.metadata; an empty
// segment when none survives. The input is never modified. It returns
// ErrRefused when the plan does not load.
func (r *Plan) WriteRecovered(out string) error {
	return r.WriteRecoveredContext(context.Background(), out)
}

// WriteRecoveredContext is WriteRecovered that stops when ctx ends
// (between files, and inside a segment's copy), returning ctx's error. Until
// it has written everything, out holds partition.IncompleteMarker: a copy
// cut short (by ctx, an error or a crash) says so.
func (r *Plan) WriteRecoveredContext(ctx context.Context, out string) (err error) {
	if !r.Loads {
		return ErrRefused
	}
	if _, err := os.Lstat(out); err == nil {
		return errors.New(out + " already exists")
	}
	if err := safeio.CheckOutside(out, r.Dir); err != nil {
		return err
	}
	// Never write into a log directory a running broker holds, and keep
	// one from starting while this writes.
	broker, err := safeio.HoldBroker(filepath.Dir(filepath.Clean(out)))
	if err != nil {
		return err
	}
	defer broker.Release()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := partition.MarkIncomplete(out); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			err = partition.MarkComplete(out)
		}
	}()
	// New files take their source's permissions (the segment's for
	// rebuilt indexes), or 0600 when there is none.
	logPerm := os.FileMode(0o600)
	if len(r.live) > 0 {
		logPerm = safeio.OutputPerm(r.live[0].src.seg.Log)
	}
	d, err := partition.Open(r.Dir)
	if err != nil {
		return err
	}
	if r.NewEmptySegment {
		for _, suf := range []string{partition.LogSuffix, partition.IndexSuffix, partition.TimeIndexSuffix} {
			if err := writeNew(filepath.Join(out, partition.FileName(r.LogStartOffset, suf)), nil, logPerm); err != nil {
				return err
			}
		}
	}
	for _, v := range r.live {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyRange(ctx, v.src.seg.Log, filepath.Join(out, partition.FileName(v.base, partition.LogSuffix)), v.pos, v.end-v.pos); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(v.base, partition.IndexSuffix)), v.recov.index, safeio.OutputPerm(v.src.seg.Log)); err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(v.base, partition.TimeIndexSuffix)), v.recov.timeIndex, safeio.OutputPerm(v.src.seg.Log)); err != nil {
			return err
		}
		if v.src.seg.TxnIndex == "" {
			continue
		}
		// Streamed: the .txnindex's size is not trusted.
		tf, err := safeio.OpenFile(v.src.seg.TxnIndex, os.O_RDONLY, 0)
		if err != nil {
			return err
		}
		var keep []byte
		_, err = format.ScanAbortedTxns(tf, func(_ int, t format.AbortedTxn) bool {
			if t.LastOffset < r.LogEndOffset && t.FirstOffset >= v.base && (v.recov.lastOffset < 0 || t.FirstOffset <= v.recov.lastOffset) {
				keep = format.AppendAbortedTxn(keep, t)
			}
			return len(keep) < maxSnapshotBytes
		})
		tf.Close()
		if err != nil {
			return err
		}
		if err := writeNew(filepath.Join(out, partition.FileName(v.base, partition.TxnIndexSuffix)), keep, safeio.OutputPerm(v.src.seg.TxnIndex)); err != nil {
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
		data, err := safeio.ReadFile(sn.Path, maxSnapshotBytes)
		if err != nil {
			return err
		}
		if _, err := format.ParseProducerSnapshot(data); err != nil {
			continue
		}
		if err := writeNew(filepath.Join(out, filepath.Base(sn.Path)), data, safeio.OutputPerm(sn.Path)); err != nil {
			return err
		}
	}
	// The KRaft snapshots the metadata log keeps.
	for _, ks := range r.KRaftSnapshots {
		if err := copyRange(ctx, ks.Path, filepath.Join(out, filepath.Base(ks.Path)), 0, -1); err != nil {
			return err
		}
	}
	if d.Metadata != "" {
		if err := copyRange(ctx, d.Metadata, filepath.Join(out, filepath.Base(d.Metadata)), 0, -1); err != nil {
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
	lecPerm := logPerm
	if d.LeaderEpochs != "" {
		lecPerm = safeio.OutputPerm(d.LeaderEpochs)
	}
	return writeNew(filepath.Join(out, partition.LeaderEpochCheckpoint), text, lecPerm)
}

// writeNew creates path (never through a symlink) with perm and data.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := safeio.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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
// memory into a new file with src's permissions. A symlink or other
// non-regular src is refused: recovery copies the partition's own files,
// never what a link points at; a src that ends before pos+n is a
// *safeio.ShrankError.
func copyRange(ctx context.Context, src, dst string, pos, n int64) error {
	if err := safeio.CheckSource(src); err != nil {
		return err
	}
	out, err := safeio.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, safeio.OutputPerm(src))
	if err != nil {
		return err
	}
	// A source that shrinks meanwhile is an error, not a shorter copy.
	if err := safeio.CopySource(ctxWriter{ctx, out}, src, pos, n); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ctxWriter fails its writes once ctx ends: a long copy stops within one
// buffer of a signal.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}
