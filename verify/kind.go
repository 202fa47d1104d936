package verify

import (
	"errors"

	"github.com/klog-dev/klog/format"
)

// Kind names a finding. The values are a public interface (the README
// lists them): every command that reports findings uses these names.
type Kind string

// Finding kinds.
const (
	KindCRCMismatch       Kind = "crc-mismatch"
	KindTruncated         Kind = "truncated"
	KindBadMagic          Kind = "bad-magic"
	KindBadLength         Kind = "bad-length"
	KindTooLarge          Kind = "too-large"
	KindTrailingBytes     Kind = "trailing-bytes"
	KindOffsetOrder       Kind = "offset-order"
	KindOffsetGap         Kind = "offset-gap" // info only
	KindRecordCount       Kind = "record-count"
	KindRecordDecode      Kind = "record-decode"
	KindRecordOffset      Kind = "record-offset"
	KindTimestamp         Kind = "timestamp"
	KindDecompress        Kind = "decompress"
	KindUnsupportedCodec  Kind = "unsupported-codec"
	KindControlDecode     Kind = "control-decode"
	KindSegmentName       Kind = "segment-name"
	KindSegmentOverlap    Kind = "segment-overlap"
	KindIndexMismatch     Kind = "index-mismatch"
	KindIndexOrder        Kind = "index-order"
	KindIndexSanity       Kind = "index-sanity"
	KindTimeIndexMismatch Kind = "timeindex-mismatch"
	KindTimeIndexOrder    Kind = "timeindex-order"
	KindTimeIndexSanity   Kind = "timeindex-sanity"
	KindSnapshotCRC       Kind = "snapshot-crc"
	KindSnapshotInvalid   Kind = "snapshot-invalid"
	KindTxnIndexInvalid   Kind = "txnindex-invalid"
	KindCheckpointInvalid Kind = "checkpoint-invalid"
	KindCheckpointRange   Kind = "checkpoint-range"
	KindMissingLog        Kind = "missing-log"
	// KindIncompleteCopy: the directory holds partition.IncompleteMarker.
	KindIncompleteCopy Kind = "incomplete-copy"
	// KindOffsetRange: a batch whose offsets its segment cannot hold (last
	// offset below the base offset from the file name, or more than
	// 2^31-1 above it), or a negative v0/v1 offset: the broker's recovery
	// splits the segment or refuses to load the partition.
	KindOffsetRange Kind = "offset-range"
	// KindSnapshotRange: a producer snapshot above the log end offset,
	// which the broker deletes when it loads the partition.
	KindSnapshotRange Kind = "snapshot-range"
	// The data of a log dir checked against the KRaft metadata image
	// (package cluster; klog verify runs it when a log dir holds the
	// metadata log). KindImageMissingReplica: a partition the image
	// assigns to the broker (in this log dir, when it names one) is not
	// there. KindImageTopicID: partition.metadata records another topic id
	// than the image's topic of that name. KindImageUnknownPartition: a
	// partition whose topic or number the image does not have, or does not
	// assign to the broker. KindImageUnknownLogDir: a log dir whose
	// directory.id the image does not register for the broker.
	KindImageMissingReplica   Kind = "image-missing-replica"
	KindImageTopicID          Kind = "image-topic-id"
	KindImageUnknownPartition Kind = "image-unknown-partition"
	KindImageUnknownLogDir    Kind = "image-unknown-log-dir"
)

// Stage is what was being decoded when a format error happened.
type Stage int8

const (
	// StageEntry is an entry header: the scanner or ParseBatch rejected
	// the bytes where a batch (or a v0/v1 message) should start.
	StageEntry Stage = iota
	// StageRecords is a batch's records: RecordReader could not decode
	// them (structure, count, codec, decompression).
	StageRecords
	// StageDecompress is format.Decompressor on a batch's records.
	StageDecompress
)

// Classify maps an error from package format to the kind of finding it
// is. It is the one classifier: verify, dump, the views and tail all call
// it, so the same bytes get the same kind everywhere.
func Classify(err error, stage Stage) Kind {
	if stage == StageDecompress {
		if errors.Is(err, format.ErrUnsupported) {
			return KindUnsupportedCodec
		}
		return KindDecompress
	}
	var pe *format.PosError
	if !errors.As(err, &pe) {
		if stage == StageEntry {
			return KindBadLength
		}
		return KindRecordDecode
	}
	if stage == StageEntry {
		switch {
		case errors.Is(pe, format.ErrTooLarge):
			return KindTooLarge
		case pe.Field == "magic" || errors.Is(pe, format.ErrUnsupported):
			return KindBadMagic
		case errors.Is(pe, format.ErrTruncated):
			return KindTruncated
		}
		return KindBadLength
	}
	switch {
	case pe.Field == "recordCount" || pe.Field == "batchLength" || errors.Is(pe, format.ErrTruncated):
		return KindRecordCount
	case errors.Is(pe, format.ErrUnsupported):
		return KindUnsupportedCodec
	case pe.Field == "records" || pe.Field == "value":
		return KindDecompress
	}
	return KindRecordDecode
}

// ProblemAt is the finding for a format error: its kind (Classify), and
// the position, offset and message the error carries (pos and offset when
// it carries none); the message does not repeat the position and offset.
func ProblemAt(err error, stage Stage, pos, offset int64) Problem {
	p := Problem{Kind: Classify(err, stage), Position: pos, Offset: offset, Message: err.Error()}
	var pe *format.PosError
	if errors.As(err, &pe) {
		p.Position, p.Offset = pe.Pos, pe.Offset
		if err == error(pe) {
			// The problem carries the position and offset itself.
			p.Message = pe.Reason()
		}
	}
	return p
}
