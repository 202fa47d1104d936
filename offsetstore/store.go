// Package offsetstore is the one home of consumer groups' committed
// offsets: the __consumer_offsets-N partitions of a directory, in Kafka's
// record format (GroupCoordinatorRecordSerde: OffsetCommitKey and
// OffsetCommitValue v3, GroupMetadataKey and GroupMetadataValue v3),
// written with klog's appender and read back as a broker's group
// coordinator loads them. `klog serve` commits there for Kafka clients and
// `klog fetch --follow --group` for itself, so each resumes where the
// other left off; `klog dump --offsets-decoder` prints them as Kafka's tool
// would.
//
// A group's records go to partition abs(hash(group)) % 50
// (GroupCoordinatorService.partitionFor). The text file older klog
// versions of fetch kept (klog-consumer-offsets in the log dir) is read
// once, its entries committed here, and renamed (Migrate).
package offsetstore

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

const (
	// Topic is the internal topic of committed offsets.
	Topic = "__consumer_offsets"
	// Partitions is offsets.topic.num.partitions.
	Partitions = 50
	// MaxMetadataBytes is offset.metadata.max.bytes.
	MaxMetadataBytes = 4096
)

// Partition is GroupCoordinatorService.partitionFor:
// Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions.
func Partition(group string) int32 { return internaltopic.CoordinatorPartition(group, Partitions) }

// TopicPartition names a partition a group commits for.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Committed is one committed offset.
type Committed struct {
	Offset int64
	// LeaderEpoch is the epoch of the record before Offset, -1 if unknown.
	LeaderEpoch int32
	Metadata    string
	// CommitTimestamp is when it was committed (epoch ms).
	CommitTimestamp int64
}

// Store appends to one directory's __consumer_offsets partitions, opening
// each on its first write. Its methods are safe for concurrent use; other
// processes are kept out by each partition's lock while it is open.
type Store struct {
	dir  string
	opts produce.Options
	now  func() time.Time

	mu   sync.Mutex
	apps map[int32]*produce.Appender
	// sizes are the partitions' bytes on disk (Bytes), nil until first
	// measured.
	sizes map[int32]int64
}

// Open returns the store of dir's __consumer_offsets partitions. Nothing
// is opened or written until the first commit. opts configures the
// appenders (opts.Now is the commit clock; default time.Now).
func Open(dir string, opts produce.Options) *Store {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Store{dir: dir, opts: opts, now: now, apps: map[int32]*produce.Appender{}}
}

// Dir is the directory holding the partitions.
func (s *Store) Dir() string { return s.dir }

// Commit is one partition's offset in a commit.
type Commit struct {
	TopicPartition
	Committed
}

// Commit appends a group's offsets as one batch (one OffsetCommit
// request's), in the order given, each record timestamped with its
// CommitTimestamp. Nothing is appended for none.
func (s *Store) Commit(group string, commits []Commit) error {
	if len(commits) == 0 {
		return nil
	}
	recs := make([]format.Record, 0, len(commits))
	for _, c := range commits {
		key, val, err := internaltopic.AppendOffsetCommit(nil, nil, internaltopic.OffsetCommitKey{Group: group, Topic: c.Topic, Partition: c.Partition},
			internaltopic.OffsetCommitValue{Offset: c.Offset, LeaderEpoch: c.LeaderEpoch, Metadata: c.Metadata, CommitTimestamp: c.CommitTimestamp})
		if err != nil {
			return err
		}
		recs = append(recs, format.Record{Key: key, Value: val, Timestamp: c.CommitTimestamp})
	}
	return s.append(group, recs)
}

// CommitOffset commits one partition's offset now (no leader epoch, no
// metadata): what `klog fetch --follow --group` does after each poll.
func (s *Store) CommitOffset(group, topic string, part int32, offset int64) error {
	return s.Commit(group, []Commit{{TopicPartition{topic, part}, Committed{Offset: offset, LeaderEpoch: -1, CommitTimestamp: s.now().UnixMilli()}}})
}

// StoreGroup appends a group's metadata after a rebalance (or its
// emptying), as the coordinator does when it stores a generation.
func (s *Store) StoreGroup(group string, g *internaltopic.GroupMetadataValue) error {
	key, val, err := internaltopic.AppendGroupMetadata(nil, nil, group, g)
	if err != nil {
		return err
	}
	return s.append(group, []format.Record{{Key: key, Value: val, Timestamp: g.CurrentStateTimestamp}})
}

// KeyValue is one record of a group's (a nil Value is a tombstone).
type KeyValue struct{ Key, Value []byte }

// StoreRecords appends a group's records as one batch, each timestamped
// ts: the records of a KIP-848 consumer group's state change
// (internaltopic.AppendConsumerGroupKey and its values), which Kafka's
// coordinator writes as one batch per request. Nothing is appended for
// none.
func (s *Store) StoreRecords(group string, kvs []KeyValue, ts int64) error {
	if len(kvs) == 0 {
		return nil
	}
	recs := make([]format.Record, len(kvs))
	for i, kv := range kvs {
		recs[i] = format.Record{Key: kv.Key, Value: kv.Value, Timestamp: ts}
	}
	return s.append(group, recs)
}

// DeleteOffsets appends tombstones for a group's offsets (OffsetDelete,
// or a deleted group's).
func (s *Store) DeleteOffsets(group string, tps []TopicPartition) error {
	if len(tps) == 0 {
		return nil
	}
	now := s.now().UnixMilli()
	recs := make([]format.Record, 0, len(tps))
	for _, tp := range tps {
		key, err := internaltopic.AppendOffsetTombstoneKey(nil, internaltopic.OffsetCommitKey{Group: group, Topic: tp.Topic, Partition: tp.Partition})
		if err != nil {
			return err
		}
		recs = append(recs, format.Record{Key: key, Timestamp: now})
	}
	return s.append(group, recs)
}

// DeleteGroup appends the tombstone of a group's metadata (DeleteGroups).
func (s *Store) DeleteGroup(group string) error {
	key, err := internaltopic.AppendGroupTombstoneKey(nil, group)
	if err != nil {
		return err
	}
	return s.append(group, []format.Record{{Key: key, Timestamp: s.now().UnixMilli()}})
}

// TxnCommit appends a group's offsets committed in a transaction
// (TxnOffsetCommit) as one transactional batch of the producer, as the
// group coordinator's runtime writes it (CoordinatorRuntime: base
// sequence 0, partition leader epoch -1): they count once the
// transaction's COMMIT marker follows (State's load, EndTxn).
func (s *Store) TxnCommit(group string, producerID int64, epoch int16, commits []Commit) error {
	if len(commits) == 0 {
		return nil
	}
	recs := make([]format.Record, 0, len(commits))
	for _, c := range commits {
		key, val, err := internaltopic.AppendOffsetCommit(nil, nil, internaltopic.OffsetCommitKey{Group: group, Topic: c.Topic, Partition: c.Partition},
			internaltopic.OffsetCommitValue{Offset: c.Offset, LeaderEpoch: c.LeaderEpoch, Metadata: c.Metadata, CommitTimestamp: c.CommitTimestamp})
		if err != nil {
			return err
		}
		recs = append(recs, format.Record{Key: key, Value: val, Timestamp: c.CommitTimestamp})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.appender(Partition(group))
	if err != nil {
		return err
	}
	leo := a.LogEndOffset()
	for i := range recs {
		recs[i].Offset = leo + int64(i)
	}
	h := &format.Batch{Magic: format.MagicV2, BaseOffset: leo, PartitionLeaderEpoch: -1, Attributes: 0x10,
		ProducerID: producerID, ProducerEpoch: epoch, BaseSequence: 0}
	format.PrepareBatch(h, recs)
	var c format.Compressor
	raw, err := c.AppendBatch(nil, h, recs)
	if err != nil {
		return err
	}
	res, err := a.AppendRaw(raw)
	s.counted(Partition(group), res.Size)
	return err
}

// EndTxn appends a transaction's COMMIT or ABORT marker to partition n
// (the transaction coordinator's WriteTxnMarkers to __consumer_offsets-n).
func (s *Store) EndTxn(n int32, producerID int64, epoch int16, commit bool, coordinatorEpoch int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.appender(n)
	if err != nil {
		return err
	}
	res, err := a.WriteTxnMarker(producerID, epoch, commit, coordinatorEpoch)
	s.counted(n, res.Size)
	return err
}

func (s *Store) appender(n int32) (*produce.Appender, error) {
	a := s.apps[n]
	if a == nil {
		var err error
		if a, err = produce.Open(s.partitionDir(n), s.opts); err != nil {
			return nil, err
		}
		s.apps[n] = a
		// Opening made the partition's files (or cut a torn tail).
		if err := s.remeasureLocked(n); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (s *Store) append(group string, recs []format.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.appender(Partition(group))
	if err != nil {
		return err
	}
	res, err := a.Append(&produce.Batch{Records: recs})
	s.counted(Partition(group), res.Size)
	return err
}

func (s *Store) partitionDir(n int32) string {
	return filepath.Join(s.dir, Topic+"-"+strconv.Itoa(int(n)))
}

// Close closes (and syncs) the partitions the store appended to.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for n, a := range s.apps {
		errs = append(errs, a.Close())
		delete(s.apps, n)
	}
	return errors.Join(errs...)
}

// CommittedOffset reads a group's committed offset for one partition from
// the group's __consumer_offsets partition (the records this store and any
// other writer appended so far): fetch.OffsetStore.
func (s *Store) CommittedOffset(group, topic string, part int32) (int64, bool, error) {
	st := NewState()
	if err := st.LoadPartition(s.partitionDir(Partition(group))); err != nil {
		return 0, false, err
	}
	o, ok := st.Offsets[group][TopicPartition{topic, part}]
	return o.Offset, ok, nil
}

// errNotDir: a __consumer_offsets-N path that is not a directory.
var errNotDir = errors.New("not a directory")

func isDir(path string) (bool, error) {
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return false, &os.PathError{Op: "open", Path: path, Err: errNotDir}
	}
	return true, nil
}

// partitionDirs lists dir's __consumer_offsets-N partition directories.
func partitionDirs(dir string) ([]string, error) {
	ld, err := partition.OpenLogDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, p := range ld.Partitions {
		if t, _, _ := partition.ParseDirName(filepath.Base(p)); t == Topic {
			out = append(out, p)
		}
	}
	return out, nil
}

// OpenFor opens the store a reader or server of logDir uses: stateDir's
// partitions when stateDir is set (a read-only klog serve's --state),
// else logDir's own, as a broker keeps them. The legacy offsets file of
// logDir is migrated into it first (Migrate; renamed only when the store
// is logDir's). It returns how many offsets were migrated.
func OpenFor(logDir, stateDir string, opts produce.Options) (*Store, int, error) {
	dir := stateDir
	if dir == "" {
		dir = logDir
	}
	if stateDir != "" {
		// A compaction a crash interrupted (compact.go).
		if err := recoverCompactions(stateDir); err != nil {
			return nil, 0, err
		}
	}
	s := Open(dir, opts)
	n, err := s.Migrate(logDir, filepath.Clean(dir) == filepath.Clean(logDir))
	if err != nil {
		s.Close()
		return nil, n, err
	}
	return s, n, nil
}
