package kraft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	it "github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/partition"
)

// MetadataTopic is the KRaft metadata log's topic; its one partition is
// __cluster_metadata-0.
const MetadataTopic = "__cluster_metadata"

// Options say what to replay.
type Options struct {
	// UpTo is the last offset replayed (inclusive); -1 replays the whole
	// log. The snapshot used is the latest one that ends at or before
	// UpTo+1.
	UpTo int64
	// NoSnapshot replays the log from its first segment and ignores the
	// snapshots (the log must then start at offset 0 to hold everything).
	NoSnapshot bool
	// MaxBatchBytes bounds one batch (format.ScanOptions); 0 is the default.
	MaxBatchBytes int
	// MaxTransactionRecords bounds the records of one metadata transaction
	// held until its EndTransactionRecord; 0 is DefaultMaxTransactionRecords.
	MaxTransactionRecords int
}

// DefaultMaxTransactionRecords is far above what a controller writes in
// one transaction (it bounds a user operation to 10,000 records and
// splits what is larger into several batches of one transaction), and
// bounds what hostile input can make klog hold.
const DefaultMaxTransactionRecords = 1 << 20

// Snapshot is a KRaft snapshot file in a metadata partition directory.
type Snapshot struct {
	Path      string
	EndOffset int64
	Epoch     int32
}

// Snapshots lists dir's snapshots (<end offset>-<epoch>.checkpoint; not
// .checkpoint.part or .checkpoint.deleted), by end offset then epoch.
func Snapshots(dir string) ([]Snapshot, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Snapshot
	for _, de := range des {
		if end, epoch, ok := partition.ParseKRaftSnapshotName(de.Name()); ok && !de.IsDir() {
			out = append(out, Snapshot{Path: filepath.Join(dir, de.Name()), EndOffset: end, Epoch: epoch})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].EndOffset != out[j].EndOffset {
			return out[i].EndOffset < out[j].EndOffset
		}
		return out[i].Epoch < out[j].Epoch
	})
	return out, nil
}

// Load builds the image from path: a __cluster_metadata partition
// directory (the latest usable snapshot, then the log after it), or one
// snapshot file (a .checkpoint, bootstrap.checkpoint included). The error
// is for I/O trouble; what is wrong with the data is in Image.Problems.
func Load(ctx context.Context, path string, opts Options) (*Image, error) {
	if opts.UpTo < -1 {
		return nil, errors.New("the offset to replay up to must be -1 (all) or at least 0")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	l := newLoader(ctx, opts)
	if !st.IsDir() {
		err = l.snapshotFile(path)
	} else {
		err = l.dir(path)
	}
	if err != nil {
		return nil, err
	}
	return l.finish(), nil
}

func newLoader(ctx context.Context, opts Options) *loader {
	l := &loader{ctx: ctx, im: newImage(), opts: opts, txnStart: -1}
	if l.opts.MaxTransactionRecords <= 0 {
		l.opts.MaxTransactionRecords = DefaultMaxTransactionRecords
	}
	p := &l.im.Provenance
	p.LastContainedOffset, p.LastContainedEpoch, p.LastContainedLogTimeMs = -1, -1, -1
	p.UpToOffset, p.PendingTransaction, p.SnapshotEndOffset = opts.UpTo, -1, -1
	return l
}

func (l *loader) finish() *Image {
	if l.txnStart >= 0 {
		l.im.Provenance.PendingTransaction = l.txnStart
	}
	l.im.finish()
	return l.im
}

// loader replays batches into an image.
type loader struct {
	ctx  context.Context
	im   *Image
	opts Options
	rr   format.RecordReader
	// txn holds the records of an open metadata transaction (KIP-868),
	// applied at its EndTransactionRecord, dropped at its
	// AbortTransactionRecord (MetadataBatchLoader publishes neither half).
	txn      []pendingRecord
	txnStart int64
	txnOver  bool
}

type pendingRecord struct {
	offset int64
	rec    it.MetadataRecord
}

func (l *loader) problem(file string, offset int64, msg string) {
	im := l.im
	im.ProblemCount++
	if len(im.Problems) < MaxProblems {
		im.Problems = append(im.Problems, Problem{File: file, Offset: offset, Message: msg})
	}
}

// snapshotFile replays one snapshot file as the whole image.
func (l *loader) snapshotFile(path string) error {
	end, epoch, named := partition.ParseKRaftSnapshotName(filepath.Base(path))
	p := &l.im.Provenance
	p.Snapshot = path
	if named {
		p.SnapshotEndOffset = end
	}
	if err := l.file(path, 0, true); err != nil {
		return err
	}
	if named && (l.opts.UpTo < 0 || l.opts.UpTo >= end-1) {
		p.LastContainedOffset, p.LastContainedEpoch = end-1, epoch
	}
	return nil
}

// dir replays a metadata partition directory.
func (l *loader) dir(path string) error {
	d, err := partition.Open(path)
	if err != nil {
		return err
	}
	p := &l.im.Provenance
	var logStart, logEnd int64 = -1, -1
	if len(d.Segments) > 0 {
		logStart = d.Segments[0].BaseOffset
	}
	p.LogStartOffset = logStart
	from := int64(0)
	if !l.opts.NoSnapshot {
		snaps, err := Snapshots(path)
		if err != nil {
			return err
		}
		for i := len(snaps) - 1; i >= 0; i-- {
			s := snaps[i]
			if l.opts.UpTo >= 0 && s.EndOffset > l.opts.UpTo+1 {
				continue
			}
			if err := l.snapshotFile(s.Path); err != nil {
				return err
			}
			from = s.EndOffset
			break
		}
	}
	if len(d.Segments) == 0 {
		if p.Snapshot == "" {
			l.problem(path, -1, "no log segment and no snapshot: the image is empty")
		}
		p.LogEndOffset = from
		return nil
	}
	if logStart > from && (l.opts.UpTo < 0 || l.opts.UpTo >= from) {
		what := "no snapshot covers them"
		if p.Snapshot != "" {
			what = "the snapshot used ends at " + strconv.FormatInt(from, 10)
		}
		l.problem(path, logStart, fmt.Sprintf("the log starts at offset %d and %s: the records of offsets %d to %d are not in the image", logStart, what, from, logStart-1))
	}
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		if err := l.file(s.Log, from, false); err != nil {
			if errors.Is(err, errStop) {
				break
			}
			return err
		}
	}
	logEnd = max(from, p.LastContainedOffset+1)
	p.LogEndOffset = logEnd
	return nil
}

// errStop ends the replay: the offset asked for is reached, or the log
// holds a batch a broker's recovery would truncate at.
var errStop = errors.New("stop")

// file replays the records of a segment or snapshot from offset from on.
func (l *loader) file(path string, from int64, snapshot bool) error {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return l.scan(path, f, size, from, snapshot)
}

// scan replays the records of the size bytes of r (the file at path).
func (l *loader) scan(path string, r io.ReaderAt, size, from int64, snapshot bool) error {
	sc := format.NewScanner(r, size, format.ScanOptions{MaxBatchBytes: l.opts.MaxBatchBytes})
	for b, err := range sc.All() {
		if err != nil {
			var pe *format.PosError
			if errors.As(err, &pe) || errors.Is(err, format.ErrTooLarge) {
				l.problem(path, -1, err.Error()+"; the replay stops there, as a broker's log recovery would truncate there")
				return errStop
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := l.ctx.Err(); err != nil {
			return err
		}
		if b.LastOffset() < from && !b.IsControl() {
			continue
		}
		if l.opts.UpTo >= 0 && b.BaseOffset > l.opts.UpTo {
			return errStop
		}
		if !b.Valid() {
			l.problem(path, b.BaseOffset, fmt.Sprintf("batch at position %d: CRC mismatch (stored %d, computed %d); the replay stops there, as a broker's log recovery would truncate there", b.Pos, b.CRC, b.ComputedCRC()))
			return errStop
		}
		if err := l.batch(path, b, from, snapshot); err != nil {
			return err
		}
	}
	if t := sc.Tail(); t.Kind != format.TailNone && t.Kind != format.TailZeros {
		l.problem(path, t.Offset, fmt.Sprintf("%d bytes at position %d are not a whole batch (%s tail)", t.Bytes, t.Pos, t.Kind))
	}
	return nil
}

// batch replays the records of one batch.
func (l *loader) batch(path string, b *format.Batch, from int64, snapshot bool) error {
	p := &l.im.Provenance
	p.Batches++
	for r, err := range l.rr.Records(b) {
		if err != nil {
			l.problem(path, b.BaseOffset, err.Error())
			return errStop
		}
		if l.opts.UpTo >= 0 && r.Offset > l.opts.UpTo {
			return errStop
		}
		if b.IsControl() {
			// The quorum's records are read before the snapshot's end too:
			// the image's records start after it, the voters and leader
			// may not change again.
			l.control(path, b, r)
			if r.Offset < from {
				continue
			}
		} else if r.Offset < from {
			continue
		} else {
			l.record(path, r)
		}
		p.Records++
		if !snapshot {
			p.LastContainedOffset, p.LastContainedEpoch, p.LastContainedLogTimeMs = r.Offset, b.PartitionLeaderEpoch, b.MaxTimestamp
		} else if b.IsControl() && p.LastContainedLogTimeMs < 0 {
			p.LastContainedLogTimeMs = b.MaxTimestamp
		}
	}
	return nil
}

// control reads the KRaft control records: the quorum's voters, version
// and leader.
func (l *loader) control(path string, b *format.Batch, r *format.Record) {
	k, err := format.ParseControlKey(r.Key)
	if err != nil {
		l.problem(path, r.Offset, err.Error())
		return
	}
	q := &l.im.Quorum
	switch k.Type {
	case format.ControlLeaderChange:
		m, err := format.ParseLeaderChange(r.Value)
		if err != nil {
			l.problem(path, r.Offset, err.Error())
			return
		}
		q.Leader, q.LeaderEpoch, q.LeaderVoters, q.GrantingVoters = m.LeaderID, b.PartitionLeaderEpoch, m.Voters, m.GrantingVoters
	case format.ControlKRaftVersion:
		m, err := format.ParseKRaftVersion(r.Value)
		if err != nil {
			l.problem(path, r.Offset, err.Error())
			return
		}
		q.KRaftVersion = m.KRaftVersion
	case format.ControlKRaftVoters:
		m, err := format.ParseVoters(r.Value)
		if err != nil {
			l.problem(path, r.Offset, err.Error())
			return
		}
		q.Voters = q.Voters[:0]
		for _, v := range m.Voters {
			eps := make([]Endpoint, len(v.Endpoints))
			for i, e := range v.Endpoints {
				eps[i] = Endpoint{Name: e.Name, Host: e.Host, Port: e.Port}
			}
			q.Voters = append(q.Voters, Voter{ID: v.VoterID, DirectoryID: v.VoterDirectoryID, Endpoints: eps, MinVersion: v.MinSupportedVersion, MaxVersion: v.MaxSupportedVersion})
		}
	case format.ControlSnapshotHeader:
		if m, err := format.ParseSnapshotHeader(r.Value); err == nil {
			l.im.Provenance.LastContainedLogTimeMs = m.LastContainedLogTimestamp
		}
	}
}

// record replays one metadata record, through the open transaction if
// there is one.
func (l *loader) record(path string, r *format.Record) {
	rec, err := it.DecodeMetadata(r.Value)
	if err != nil {
		l.problem(path, r.Offset, err.Error())
		return
	}
	switch rec.Type {
	case it.TypeBeginTransaction:
		if l.txnStart >= 0 {
			l.problem(path, r.Offset, "Encountered BeginTransactionRecord while already in a transaction")
			return
		}
		l.txnStart, l.txn, l.txnOver = r.Offset, l.txn[:0], false
		return
	case it.TypeEndTransaction, it.TypeAbortTransaction:
		if l.txnStart < 0 {
			l.problem(path, r.Offset, "Encountered "+map[bool]string{true: "End", false: "Abort"}[rec.Type == it.TypeEndTransaction]+
				"TransactionRecord without having seen a BeginTransactionRecord")
			return
		}
		if rec.Type == it.TypeEndTransaction && !l.txnOver {
			for _, pr := range l.txn {
				l.apply(path, pr.offset, pr.rec)
			}
		}
		l.txnStart, l.txn = -1, l.txn[:0]
		return
	}
	if l.txnStart < 0 {
		l.apply(path, r.Offset, rec)
		return
	}
	if len(l.txn) >= l.opts.MaxTransactionRecords {
		if !l.txnOver {
			l.problem(path, r.Offset, fmt.Sprintf("the metadata transaction begun at offset %d holds more than %d records; klog applies none of it", l.txnStart, l.opts.MaxTransactionRecords))
		}
		l.txnOver, l.txn = true, l.txn[:0]
		return
	}
	if !l.txnOver {
		l.txn = append(l.txn, pendingRecord{r.Offset, rec})
	}
}

func (l *loader) apply(path string, offset int64, rec it.MetadataRecord) {
	if rec.Problem != "" {
		l.problem(path, offset, rec.Problem)
	}
	if err := l.im.replay(offset, rec); err != nil {
		l.problem(path, offset, "not applied: "+err.Error())
	}
}
