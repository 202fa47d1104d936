package tiered

import "github.com/klog-dev/klog/verify"

// The kinds of finding about a remote tier (the README's "What each finding
// means"). The remote .log's own contents are judged by verify, whose kinds
// (crc-mismatch, truncated, ...) they keep.
const (
	// KindMissingRemoteFiles: the metadata says COPY_SEGMENT_FINISHED but
	// the segment's .log (or every object) is not in the store.
	KindMissingRemoteFiles verify.Kind = "missing-remote-files"
	// KindMissingIndexFiles: the .log is there but a mandatory artifact is
	// not (.index, .timeindex, .snapshot, .leader_epoch_checkpoint; the
	// .txnindex when the metadata says the segment has aborted
	// transactions; Aiven's .indexes or .rsm-manifest).
	KindMissingIndexFiles verify.Kind = "missing-index-files"
	// KindOrphanSegment: objects no COPY_SEGMENT_FINISHED metadata
	// references: no record at all, or a copy that started and never
	// finished. Kafka neither serves nor deletes them.
	KindOrphanSegment verify.Kind = "orphan-remote-segment"
	// KindDeletedPresent: the metadata deleted the segment (or its
	// partition), or started to, and its objects are still stored.
	KindDeletedPresent verify.Kind = "deleted-but-present"
	// KindSizeMismatch: segmentSizeInBytes is not the stored .log's
	// size, or a manifest's sizes are not the objects'.
	KindSizeMismatch verify.Kind = "size-mismatch"
	// KindStartOffsetMismatch and KindEndOffsetMismatch: the metadata's
	// start or end offset is not the first or last offset of the stored
	// batches (or of the object's name).
	KindStartOffsetMismatch verify.Kind = "start-offset-mismatch"
	KindEndOffsetMismatch   verify.Kind = "end-offset-mismatch"
	// KindTimestampMismatch: maxTimestampMs is not the batches' largest
	// timestamp.
	KindTimestampMismatch verify.Kind = "timestamp-mismatch"
	// KindEpochMismatch: segmentLeaderEpochs is not what the batches'
	// partition leader epochs (or the segment's leader-epoch checkpoint)
	// say.
	KindEpochMismatch verify.Kind = "leader-epoch-mismatch"
	// KindRemoteGap: offsets between two consecutive finished remote
	// segments that neither holds.
	KindRemoteGap verify.Kind = "remote-gap"
	// KindRemoteOverlap: two finished remote segments hold the same
	// offsets.
	KindRemoteOverlap verify.Kind = "remote-overlap"
	// KindLocalGap: the remote tier ends before the local log starts.
	KindLocalGap verify.Kind = "local-remote-gap"
	// KindLocalOverlap (info): the remote tier and the local log both
	// hold some offsets, as they do while local retention keeps tiered
	// segments.
	KindLocalOverlap verify.Kind = "local-remote-overlap"
	// KindLocalDivergence: a batch both tiers hold differs (another CRC).
	KindLocalDivergence verify.Kind = "local-remote-divergence"
	// KindManifestInvalid: an Aiven manifest does not parse or
	// contradicts itself or its objects.
	KindManifestInvalid verify.Kind = "manifest-invalid"
	// KindChunkInvalid: an Aiven chunk or index does not decrypt
	// (AES-GCM's tag fails) or decompress to its original size.
	KindChunkInvalid verify.Kind = "chunk-invalid"
	// KindMetadataInvalid: a __remote_log_metadata record Kafka would drop
	// or refuse (an invalid state transition, an update for an unknown
	// segment, a record that does not decode).
	KindMetadataInvalid verify.Kind = "metadata-invalid"
	// KindKeyMissing: an encrypted segment whose key pair klog was not
	// given (not a finding about the data; exit 2).
	KindKeyMissing verify.Kind = "key-missing"
)
