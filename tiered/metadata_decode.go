package tiered

import (
	"errors"

	"github.com/klog-dev/klog/internaltopic"
)

// decodeEvent turns one __remote_log_metadata record value into an event,
// through internaltopic's decoder (RemoteLogMetadataSerde); a snapshot
// record, which names no partition (it is only in the consumer manager's
// snapshot files), is nil.
func decodeEvent(value []byte, pos MetadataPos) (*Event, error) {
	if value == nil {
		return nil, errors.New("a null value (the metadata topic has no tombstones)")
	}
	md, err := internaltopic.DecodeRemoteLogMetadata(value)
	if err != nil {
		return nil, err
	}
	tp := func(t internaltopic.TopicIDPartition) TopicPartition {
		return TopicPartition{TopicID: Uuid(t.TopicID), Topic: t.Topic, Partition: t.Partition}
	}
	epochs := func(es []internaltopic.LeaderEpochEntry) []EpochStart {
		out := make([]EpochStart, len(es))
		for i, e := range es {
			out[i] = EpochStart{Epoch: e.LeaderEpoch, Offset: e.Offset}
		}
		return out
	}
	switch m := md.(type) {
	case *internaltopic.RemoteLogSegmentMetadata:
		return &Event{Kind: EventSegment, Pos: pos, Partition: tp(m.SegmentID.TopicIDPartition), SegmentID: Uuid(m.SegmentID.ID),
			StartOffset: m.StartOffset, EndOffset: m.EndOffset, MaxTimestampMs: m.MaxTimestampMs, BrokerID: m.BrokerID,
			EventTimestampMs: m.EventTimestampMs, LeaderEpochs: epochs(m.SegmentLeaderEpochs), SizeInBytes: m.SegmentSizeInBytes,
			CustomMetadata: m.CustomMetadata, State: SegmentState(m.State), TxnIdxEmpty: m.TxnIdxEmpty}, nil
	case *internaltopic.RemoteLogSegmentMetadataUpdate:
		return &Event{Kind: EventSegmentUpdate, Pos: pos, Partition: tp(m.SegmentID.TopicIDPartition), SegmentID: Uuid(m.SegmentID.ID),
			CustomMetadata: m.CustomMetadata, State: SegmentState(m.State), EventTimestampMs: m.EventTimestampMs, BrokerID: m.BrokerID}, nil
	case *internaltopic.RemotePartitionDeleteMetadata:
		return &Event{Kind: EventPartitionDelete, Pos: pos, Partition: tp(m.TopicIDPartition), DeleteState: PartitionDeleteState(m.State),
			EventTimestampMs: m.EventTimestampMs, BrokerID: m.BrokerID}, nil
	case *internaltopic.RemoteLogSegmentMetadataSnapshot:
		return nil, nil
	}
	return nil, errors.New("an unknown record type")
}
