// Package format reads and writes the bytes Apache Kafka keeps in a partition
// directory: record batches (magic v2) and legacy message sets (magic v0 and
// v1) in .log segments and KRaft .checkpoint snapshots, with their
// compression codecs, control records and checksums.
//
// It targets the on-disk format of Kafka 4.3.1 (unchanged since 0.11 for v2,
// and still readable for v0/v1 data written by older brokers). The Java
// sources it mirrors live in clients/src/main/java/org/apache/kafka/common/
// record/internal/ (DefaultRecordBatch, DefaultRecord, LegacyRecord,
// AbstractLegacyRecordBatch, FileLogInputStream).
//
// Every log entry starts with the same 12-byte overhead, then the format is
// chosen by the magic byte at position 16:
//
//	+--------------+------------+------------------------------+-------+
//	| offset int64 | size int32 | v2: partitionLeaderEpoch      | magic |
//	|              |            | v0/v1: message CRC-32 (IEEE)  | int8  |
//	+--------------+------------+------------------------------+-------+
//	0              8            12                             16
//
// A v2 record batch has a 61-byte header; its CRC-32C covers bytes
// [21, 12+batchLength):
//
//	0 baseOffset int64        27 baseTimestamp int64
//	8 batchLength int32       35 maxTimestamp int64
//	12 partitionLeaderEpoch   43 producerId int64
//	16 magic int8 (2)         51 producerEpoch int16
//	17 crc uint32             53 baseSequence int32
//	21 attributes int16       57 recordsCount int32
//	23 lastOffsetDelta int32  61 records (possibly compressed)
//
// A v0/v1 message follows the 12-byte overhead: crc uint32, magic int8,
// attributes int8, [v1: timestamp int64], key bytes, value bytes, where the
// CRC-32 covers the message from magic to the end. A compressed message
// ("wrapper") carries a whole inner message set, compressed, as its value.
//
// Decoders never panic on any input and never allocate a size read from the
// data before checking it against what remains. Problems in the data are
// reported as *[PosError] values classified by the sentinels [ErrTruncated],
// [ErrChecksum], [ErrCorrupt] and [ErrUnsupported].
//
// Offsets are always Kafka logical offsets; byte positions in a file are
// always called Pos or position.
package format
