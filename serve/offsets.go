package serve

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf16"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// Offset commit record versions written (GroupCoordinatorRecordSerde):
// key type 1 (OffsetCommitKey), value version 3 (with leaderEpoch, without
// expireTimestamp), which Kafka 4.3 writes when no retention is asked for.
const (
	offsetCommitKeyVersion    = 1
	offsetCommitValueVersion  = 3
	groupMetadataKeyVersion   = 2
	groupMetadataValueVersion = 3
	maxOffsetMetadata         = 4096 // offset.metadata.max.bytes
)

// tp is a topic partition.
type tp struct {
	topic string
	part  int32
}

// committed is one committed offset.
type committed struct {
	offset      int64
	leaderEpoch int32
	metadata    string
}

// offsetStore keeps committed offsets in __consumer_offsets-N partition
// directories, one batch per OffsetCommit, in Kafka's record format.
type offsetStore struct {
	dir  string
	opts produce.Options
	apps map[int32]*produce.Appender
}

// offsetsPartition is GroupCoordinatorService.partitionFor:
// Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions.
func offsetsPartition(group string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(group)) {
		h = 31*h + int32(c)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % OffsetsPartitions
}

// appendCommits writes one group's commits as one batch.
func (st *offsetStore) appendCommits(group string, commits map[tp]committed, now int64) error {
	a, err := st.appender(group)
	if err != nil {
		return err
	}
	recs := make([]format.Record, 0, len(commits))
	for k, c := range commits {
		recs = append(recs, format.Record{Key: offsetKey(group, k), Value: offsetValue(c, now), Timestamp: now})
	}
	_, err = a.Append(&produce.Batch{Records: recs, ProducerID: -1})
	return err
}

// appender opens the group's __consumer_offsets partition.
func (st *offsetStore) appender(group string) (*produce.Appender, error) {
	n := offsetsPartition(group)
	a := st.apps[n]
	if a == nil {
		var err error
		a, err = produce.Open(filepath.Join(st.dir, OffsetsTopic+"-"+strconv.Itoa(int(n))), st.opts)
		if err != nil {
			return nil, err
		}
		st.apps[n] = a
	}
	return a, nil
}

// appendGroup writes the group's state after a rebalance, as the
// coordinator does when a generation is stored (GroupMetadataKey v2 and
// GroupMetadataValue v3: protocol type, generation, protocol, leader, state
// time and each member's subscription and assignment).
func (st *offsetStore) appendGroup(g *group, now int64) error {
	a, err := st.appender(g.name)
	if err != nil {
		return err
	}
	key := binary.BigEndian.AppendUint16(nil, groupMetadataKeyVersion)
	key = appendStr16(key, g.name)
	v := binary.BigEndian.AppendUint16(nil, groupMetadataValueVersion)
	v = appendStr16(v, g.protocolType)
	v = binary.BigEndian.AppendUint32(v, uint32(g.generation))
	v = appendNullableStr16(v, g.protocol)
	v = appendNullableStr16(v, g.leader)
	v = binary.BigEndian.AppendUint64(v, uint64(now))
	v = binary.BigEndian.AppendUint32(v, uint32(len(g.order)))
	for _, id := range g.order {
		m := g.members[id]
		v = appendStr16(v, m.id)
		if m.instanceID == nil {
			v = binary.BigEndian.AppendUint16(v, 0xffff)
		} else {
			v = appendStr16(v, *m.instanceID)
		}
		v = appendStr16(v, m.clientID)
		v = appendStr16(v, m.clientHost)
		v = binary.BigEndian.AppendUint32(v, uint32(m.rebalanceTimeout.Milliseconds()))
		v = binary.BigEndian.AppendUint32(v, uint32(m.sessionTimeout.Milliseconds()))
		v = appendBytes32(v, m.metadataFor(g.protocol))
		v = appendBytes32(v, m.assignment)
	}
	_, err = a.Append(&produce.Batch{Records: []format.Record{{Key: key, Value: v, Timestamp: now}}, ProducerID: -1})
	return err
}

// appendNullableStr16 writes "" as null (the group's protocol and leader
// are null while it is empty).
func appendNullableStr16(b []byte, s string) []byte {
	if s == "" {
		return binary.BigEndian.AppendUint16(b, 0xffff)
	}
	return appendStr16(b, s)
}

func appendBytes32(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

func (st *offsetStore) close() error {
	var first error
	for _, a := range st.apps {
		if err := a.Close(); err != nil && first == nil {
			first = err
		}
	}
	st.apps = map[int32]*produce.Appender{}
	return first
}

func appendStr16(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// offsetKey is OffsetCommitKey: version, group, topic, partition.
func offsetKey(group string, k tp) []byte {
	b := binary.BigEndian.AppendUint16(nil, offsetCommitKeyVersion)
	b = appendStr16(b, group)
	b = appendStr16(b, k.topic)
	return binary.BigEndian.AppendUint32(b, uint32(k.part))
}

// offsetValue is OffsetCommitValue v3: offset, leaderEpoch, metadata,
// commitTimestamp.
func offsetValue(c committed, now int64) []byte {
	b := binary.BigEndian.AppendUint16(nil, offsetCommitValueVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(c.offset))
	b = binary.BigEndian.AppendUint32(b, uint32(c.leaderEpoch))
	b = appendStr16(b, c.metadata)
	return binary.BigEndian.AppendUint64(b, uint64(now))
}

// errShort is a record key or value that ends early.
var errShort = errors.New("short offset commit record")

// rd is a cursor over a coordinator record.
type rd struct {
	b   []byte
	err error
}

func (r *rd) n(k int) []byte {
	if r.err != nil || len(r.b) < k {
		r.err = errShort
		return nil
	}
	v := r.b[:k]
	r.b = r.b[k:]
	return v
}
func (r *rd) i16() int16 {
	if v := r.n(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}
func (r *rd) i32() int32 {
	if v := r.n(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}
func (r *rd) i64() int64 {
	if v := r.n(8); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}
func (r *rd) str() string {
	n := int(r.i16())
	if n < 0 {
		return ""
	}
	return string(r.n(n))
}
func (r *rd) compactStr() string {
	n, l := binary.Uvarint(r.b)
	if l <= 0 || n == 0 {
		r.err = errShort
		return ""
	}
	r.b = r.b[l:]
	return string(r.n(int(n - 1)))
}

// parseOffsetRecord decodes an offset commit record; ok is false for other
// record types. A nil value is a tombstone (del).
func parseOffsetRecord(key, value []byte) (group string, k tp, c committed, del, ok bool) {
	r := rd{b: key}
	ver := r.i16()
	if ver != 0 && ver != 1 {
		return "", tp{}, c, false, false
	}
	group, k.topic, k.part = r.str(), r.str(), r.i32()
	if r.err != nil {
		return "", tp{}, c, false, false
	}
	if value == nil {
		return group, k, c, true, true
	}
	v := rd{b: value}
	vv := v.i16()
	c.offset, c.leaderEpoch = v.i64(), -1
	switch {
	case vv >= 4:
		c.leaderEpoch = v.i32()
		c.metadata = v.compactStr()
	case vv == 3:
		c.leaderEpoch = v.i32()
		c.metadata = v.str()
	default:
		c.metadata = v.str()
	}
	if v.err != nil {
		return "", tp{}, c, false, false
	}
	return group, k, c, false, true
}

// loadOffsets reads every __consumer_offsets-N partition under dir into
// offsets (later records win, tombstones delete).
func loadOffsets(dir string, offsets map[string]map[tp]committed) error {
	ld, err := partition.OpenLogDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	var rr format.RecordReader
	var rec format.Record
	for _, p := range ld.Partitions {
		t, _, _ := partition.ParseDirName(filepath.Base(p))
		if t != OffsetsTopic {
			continue
		}
		d, err := partition.Open(p)
		if err != nil {
			return err
		}
		for _, s := range d.Segments {
			if s.Log == "" {
				continue
			}
			f, size, err := safeio.OpenSized(s.Log)
			if err != nil {
				return err
			}
			sc := format.NewScanner(f, size, format.ScanOptions{})
			for {
				b, err := sc.Next()
				if err != nil {
					break
				}
				if b.IsControl() || rr.Reset(b) != nil {
					continue
				}
				for rr.Next(&rec) == nil {
					g, k, c, del, ok := parseOffsetRecord(rec.Key, rec.Value)
					if !ok {
						continue
					}
					if del {
						delete(offsets[g], k)
						continue
					}
					if offsets[g] == nil {
						offsets[g] = map[tp]committed{}
					}
					offsets[g][k] = c
				}
			}
			f.Close()
		}
	}
	return nil
}
