package ndjson

import (
	"encoding/base64"
	"strconv"

	"github.com/klog-dev/klog/format"
)

// appendControl writes a control record's "control" object: its type
// (ControlRecordType's name and id) and version, the coordinator epoch of a
// transaction marker, and for the KRaft control records their data in the
// field names of Kafka's JSON converters (LeaderChangeMessageJsonConverter,
// SnapshotHeaderRecordJsonConverter, ..., VotersRecordJsonConverter).
func appendControl(dst []byte, r *format.Record) ([]byte, error) {
	k, err := format.ParseControlKey(r.Key)
	if err != nil {
		return dst, err
	}
	dst = append(Field(dst, "control"), `{"type":"`...)
	dst = append(dst, k.Type.String()...)
	dst = append(dst, '"')
	dst = Int(dst, "typeId", int64(k.Type))
	dst = Int(dst, "version", int64(k.Version))
	dst, err = appendControlData(dst, k.Type, r.Value)
	return append(dst, '}'), err
}

func appendControlData(dst []byte, t format.ControlType, v []byte) ([]byte, error) {
	switch t {
	case format.ControlAbort, format.ControlCommit:
		m, err := format.ParseEndTxnMarker(v)
		if err != nil {
			return dst, err
		}
		return Int(dst, "coordinatorEpoch", int64(m.CoordinatorEpoch)), nil
	case format.ControlLeaderChange:
		m, err := format.ParseLeaderChange(v)
		if err != nil {
			return dst, err
		}
		dst = append(Field(dst, "data"), `{"version":`...)
		dst = appendInt(dst, int64(m.Version))
		dst = Int(dst, "leaderId", int64(m.LeaderID))
		dst = appendVoterIDs(Field(dst, "voters"), m.Voters)
		dst = appendVoterIDs(Field(dst, "grantingVoters"), m.GrantingVoters)
		return append(dst, '}'), nil
	case format.ControlSnapshotHeader:
		m, err := format.ParseSnapshotHeader(v)
		if err != nil {
			return dst, err
		}
		dst = append(Field(dst, "data"), `{"version":`...)
		dst = appendInt(dst, int64(m.Version))
		dst = Int(dst, "lastContainedLogTimestamp", m.LastContainedLogTimestamp)
		return append(dst, '}'), nil
	case format.ControlSnapshotFooter:
		m, err := format.ParseSnapshotFooter(v)
		if err != nil {
			return dst, err
		}
		dst = append(Field(dst, "data"), `{"version":`...)
		dst = appendInt(dst, int64(m.Version))
		return append(dst, '}'), nil
	case format.ControlKRaftVersion:
		m, err := format.ParseKRaftVersion(v)
		if err != nil {
			return dst, err
		}
		dst = append(Field(dst, "data"), `{"version":`...)
		dst = appendInt(dst, int64(m.Version))
		dst = Int(dst, "kRaftVersion", int64(m.KRaftVersion))
		return append(dst, '}'), nil
	case format.ControlKRaftVoters:
		m, err := format.ParseVoters(v)
		if err != nil {
			return dst, err
		}
		return appendVoters(Field(dst, "data"), &m), nil
	}
	return dst, nil
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

func appendVoterIDs(dst []byte, ids []int32) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"voterId":`...)
		dst = appendInt(dst, int64(id))
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendVoters: VotersRecordJsonConverter's shape, with RFC 8259 strings.
func appendVoters(dst []byte, m *format.Voters) []byte {
	dst = append(dst, `{"version":`...)
	dst = appendInt(dst, int64(m.Version))
	dst = append(dst, `,"voters":[`...)
	for i := range m.Voters {
		v := &m.Voters[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"voterId":`...)
		dst = appendInt(dst, int64(v.VoterID))
		dst = append(dst, `,"voterDirectoryId":"`...)
		dst = base64.RawURLEncoding.AppendEncode(dst, v.VoterDirectoryID[:])
		dst = append(dst, `","endpoints":[`...)
		for j, e := range v.Endpoints {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = String(dst, e.Name)
			dst = Str(dst, "host", e.Host)
			dst = Uint(dst, "port", uint64(e.Port))
			dst = append(dst, '}')
		}
		dst = append(dst, `],"kRaftVersionFeature":{"minSupportedVersion":`...)
		dst = appendInt(dst, int64(v.MinSupportedVersion))
		dst = Int(dst, "maxSupportedVersion", int64(v.MaxSupportedVersion))
		dst = append(dst, "}}"...)
	}
	return append(dst, "]}"...)
}
