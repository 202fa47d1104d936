package format

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// ControlType is the type id in a control record's key (ControlRecordType).
type ControlType int16

// Control record types.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// String returns the Java enum name; ids Kafka does not know are UNKNOWN.
func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return "UNKNOWN"
}

// ControlKey is the key of a control record: int16 version, int16 type.
type ControlKey struct {
	Version int16
	Type    ControlType
}

// ParseControlKey decodes a control record key as ControlRecordType.parseTypeId
// does: at least 4 bytes, a non-negative version (versions above 0 are read
// as version 0).
func ParseControlKey(key []byte) (ControlKey, error) {
	if len(key) < 4 {
		return ControlKey{}, errors.New("Invalid value size found for control record key. Must have at least 4 bytes, but found only " + strconv.Itoa(len(key)))
	}
	k := ControlKey{Version: int16(binary.BigEndian.Uint16(key)), Type: ControlType(int16(binary.BigEndian.Uint16(key[2:])))}
	if k.Version < 0 {
		return k, errors.New("Invalid version found for control record: " + strconv.Itoa(int(k.Version)) + ". May indicate data corruption")
	}
	return k, nil
}

// AppendControlKey appends a version-0 control key of type t.
func AppendControlKey(dst []byte, t ControlType) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(dst, 0), uint16(t))
}

// EndTxnMarker is the value of an ABORT or COMMIT control record.
type EndTxnMarker struct {
	Version          int16
	CoordinatorEpoch int32
}

// ParseEndTxnMarker decodes an end-transaction marker value (EndTxnMarker
// schema: int16 version, int32 coordinatorEpoch; newer versions are read as
// version 0).
func ParseEndTxnMarker(value []byte) (EndTxnMarker, error) {
	if value == nil {
		return EndTxnMarker{}, errors.New("end transaction marker has a null value")
	}
	if len(value) < 2 {
		return EndTxnMarker{}, errors.New("end transaction marker value too short for its version")
	}
	m := EndTxnMarker{Version: int16(binary.BigEndian.Uint16(value))}
	if m.Version < 0 {
		return m, errors.New("Invalid version found for end transaction marker: " + strconv.Itoa(int(m.Version)) + ". May indicate data corruption")
	}
	if len(value) < 6 {
		return m, errors.New("end transaction marker value too short for coordinatorEpoch")
	}
	m.CoordinatorEpoch = int32(binary.BigEndian.Uint32(value[2:]))
	return m, nil
}

// AppendEndTxnMarker appends a version-0 marker value.
func AppendEndTxnMarker(dst []byte, coordinatorEpoch int32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(dst, 0), uint32(coordinatorEpoch))
}

// The KRaft control records (LeaderChangeMessage, SnapshotHeaderRecord,
// SnapshotFooterRecord, KRaftVersionRecord, VotersRecord) are flexible-version
// Kafka messages whose first field is their own int16 Version. The schemas
// are clients/src/main/resources/common/message/*.json; only version 0
// exists for each.

// LeaderChange is a LeaderChangeMessage.
type LeaderChange struct {
	Version        int16
	LeaderID       int32
	Voters         []int32
	GrantingVoters []int32
}

// SnapshotHeader is a SnapshotHeaderRecord.
type SnapshotHeader struct {
	Version                   int16
	LastContainedLogTimestamp int64
}

// SnapshotFooter is a SnapshotFooterRecord.
type SnapshotFooter struct{ Version int16 }

// KRaftVersion is a KRaftVersionRecord.
type KRaftVersion struct {
	Version      int16
	KRaftVersion int16
}

// Voters is a VotersRecord.
type Voters struct {
	Version int16
	Voters  []Voter
}

// Voter is one entry of a VotersRecord.
type Voter struct {
	VoterID             int32
	VoterDirectoryID    [16]byte
	Endpoints           []Endpoint
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// Endpoint is a listener of a voter.
type Endpoint struct {
	Name string
	Host string
	Port uint16
}

// msgReader reads a flexible-version Kafka message with a sticky error.
type msgReader struct {
	b   []byte
	bad bool
}

func (r *msgReader) take(n int) []byte {
	if r.bad || n < 0 || len(r.b) < n {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *msgReader) int16() int16 {
	if v := r.take(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (r *msgReader) int32() int32 {
	if v := r.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (r *msgReader) int64() int64 {
	if v := r.take(8); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func (r *msgReader) uvarint() int {
	if r.bad {
		return 0
	}
	v, n := Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// compactLen reads a compact array/string length (N+1; 0 = null).
func (r *msgReader) compactLen() int {
	n := r.uvarint() - 1
	if n > len(r.b) { // every element takes at least one byte
		r.bad = true
		return 0
	}
	return n
}

func (r *msgReader) compactString() string {
	n := r.compactLen()
	if n < 0 {
		return ""
	}
	return string(r.take(n))
}

// tags skips a tagged-field section.
func (r *msgReader) tags() {
	n := r.uvarint()
	for i := 0; i < n && !r.bad; i++ {
		r.uvarint()
		r.take(r.uvarint())
	}
}

func (r *msgReader) err(what string) error {
	if r.bad {
		return errors.New("cannot read " + what + ": data ends too early or has an impossible length")
	}
	return nil
}

func (r *msgReader) voterIDs() []int32 {
	n := r.compactLen()
	var ids []int32
	for i := 0; i < n && !r.bad; i++ {
		ids = append(ids, r.int32())
		r.tags()
	}
	return ids
}

// ParseLeaderChange decodes a LEADER_CHANGE control record value.
func ParseLeaderChange(value []byte) (LeaderChange, error) {
	r := msgReader{b: value}
	var m LeaderChange
	m.Version = r.int16()
	m.LeaderID = r.int32()
	m.Voters = r.voterIDs()
	m.GrantingVoters = r.voterIDs()
	r.tags()
	return m, r.err("LeaderChangeMessage")
}

// ParseSnapshotHeader decodes a SNAPSHOT_HEADER control record value.
func ParseSnapshotHeader(value []byte) (SnapshotHeader, error) {
	r := msgReader{b: value}
	m := SnapshotHeader{Version: r.int16(), LastContainedLogTimestamp: r.int64()}
	r.tags()
	return m, r.err("SnapshotHeaderRecord")
}

// ParseSnapshotFooter decodes a SNAPSHOT_FOOTER control record value.
func ParseSnapshotFooter(value []byte) (SnapshotFooter, error) {
	r := msgReader{b: value}
	m := SnapshotFooter{Version: r.int16()}
	r.tags()
	return m, r.err("SnapshotFooterRecord")
}

// ParseKRaftVersion decodes a KRAFT_VERSION control record value.
func ParseKRaftVersion(value []byte) (KRaftVersion, error) {
	r := msgReader{b: value}
	m := KRaftVersion{Version: r.int16(), KRaftVersion: r.int16()}
	r.tags()
	return m, r.err("KRaftVersionRecord")
}

// ParseVoters decodes a KRAFT_VOTERS control record value.
func ParseVoters(value []byte) (Voters, error) {
	r := msgReader{b: value}
	m := Voters{Version: r.int16()}
	n := r.compactLen()
	for i := 0; i < n && !r.bad; i++ {
		var v Voter
		v.VoterID = r.int32()
		copy(v.VoterDirectoryID[:], r.take(16))
		ne := r.compactLen()
		for j := 0; j < ne && !r.bad; j++ {
			var e Endpoint
			e.Name = r.compactString()
			e.Host = r.compactString()
			if p := r.take(2); p != nil {
				e.Port = binary.BigEndian.Uint16(p)
			}
			r.tags()
			v.Endpoints = append(v.Endpoints, e)
		}
		v.MinSupportedVersion = r.int16()
		v.MaxSupportedVersion = r.int16()
		r.tags() // KRaftVersionFeature
		r.tags() // Voter
		m.Voters = append(m.Voters, v)
	}
	r.tags()
	return m, r.err("VotersRecord")
}
