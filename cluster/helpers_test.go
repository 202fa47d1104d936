package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/format"
	it "github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/partition"
)

// segBuilder writes one segment of real batches (offsets, CRCs,
// producer fields) from records in the coordinators' JSON or plain data.
type segBuilder struct {
	t    testing.TB
	buf  []byte
	next int64
	ts   int64
	c    format.Compressor
}

func newSeg(t testing.TB) *segBuilder { return &segBuilder{t: t, ts: 1700000000000} }

// kv is a coordinator record in the decoders' JSON ("" value: a tombstone).
type kv struct{ key, value string }

func (s *segBuilder) batch(h format.Batch, recs []format.Record) *segBuilder {
	s.t.Helper()
	h.BaseOffset = s.next
	if h.ProducerID == 0 {
		h.ProducerID, h.ProducerEpoch, h.BaseSequence = -1, -1, -1
	}
	for i := range recs {
		recs[i].Offset = s.next + int64(i)
		recs[i].Timestamp = s.ts
		s.ts++
	}
	format.PrepareBatch(&h, recs)
	var err error
	if s.buf, err = s.c.AppendBatch(s.buf, &h, recs); err != nil {
		s.t.Fatal(err)
	}
	s.next += int64(len(recs))
	return s
}

// coord appends one batch of coordinator records of kind; pid >= 0 makes
// it transactional.
func (s *segBuilder) coord(kind it.Kind, pid int64, recs ...kv) *segBuilder {
	s.t.Helper()
	var rs []format.Record
	for _, r := range recs {
		var val []byte
		if r.value != "" {
			val = []byte(r.value)
		}
		k, v, err := it.EncodeCoordinatorJSON(kind, []byte(r.key), val)
		if err != nil {
			s.t.Fatalf("%v: %v", err, r)
		}
		rs = append(rs, format.Record{Key: k, Value: v})
	}
	h := format.Batch{}
	if pid >= 0 {
		h = format.Batch{Attributes: 0x10, ProducerID: pid, ProducerEpoch: 0, BaseSequence: 0}
	}
	return s.batch(h, rs)
}

// data appends n records as one batch; pid >= 0 with txn makes it
// transactional.
func (s *segBuilder) data(n int, pid int64, epoch int16, txn bool) *segBuilder {
	rs := make([]format.Record, n)
	for i := range rs {
		rs[i].Value = []byte("v" + strconv.Itoa(i))
	}
	h := format.Batch{}
	if pid >= 0 {
		h = format.Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 0}
		if txn {
			h.Attributes = 0x10
		}
	}
	return s.batch(h, rs)
}

// marker appends a COMMIT or ABORT control batch of producer pid.
func (s *segBuilder) marker(pid int64, epoch int16, commit bool) *segBuilder {
	t := format.ControlAbort
	if commit {
		t = format.ControlCommit
	}
	return s.batch(format.Batch{Attributes: 0x30, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1},
		[]format.Record{{Key: format.AppendControlKey(nil, t), Value: format.AppendEndTxnMarker(nil, 7)}})
}

// at sets the next batch's first timestamp.
func (s *segBuilder) at(ts int64) *segBuilder { s.ts = ts; return s }

// write writes the segment as dir's first segment, creating dir.
func (s *segBuilder) write(dir string) {
	s.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, partition.FileName(0, ".log")), s.buf, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// writeHW writes a log dir's replication-offset-checkpoint.
func writeHW(t testing.TB, logDir string, entries ...format.OffsetEntry) {
	t.Helper()
	if err := partition.UpdateCheckpointOffsets(logDir, partition.ReplicationCheckpoint, entries, partition.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func discover(t testing.TB, paths ...string) []*LogDir {
	t.Helper()
	dirs, err := Discover(paths)
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func groupsOf(t testing.TB, opts GroupsOptions, paths ...string) *GroupsReport {
	t.Helper()
	rep, err := Groups(context.Background(), discover(t, paths...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// offsetJSON is an OffsetCommit record of group g.
func offsetJSON(g, topic string, p int, offset int64) kv {
	return kv{`{"type":"1","data":{"group":"` + g + `","topic":"` + topic + `","partition":` + strconv.Itoa(p) + `}}`,
		`{"version":"3","data":{"offset":` + strconv.FormatInt(offset, 10) + `,"leaderEpoch":2,"metadata":"m","commitTimestamp":1700000000500}}`}
}

func offsetTombstone(g, topic string, p int) kv {
	return kv{`{"type":"1","data":{"group":"` + g + `","topic":"` + topic + `","partition":` + strconv.Itoa(p) + `}}`, ""}
}

// writeTopicID writes a partition.metadata naming the topic id.
func writeTopicID(t testing.TB, dir, id string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, partition.PartitionMetadata), []byte("version: 0\ntopic_id: "+id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
