// Package fetch is the broker's fetch path over the partition model
// (partition.Log) and the consumer of the reference texts: bounded fetches
// (max bytes, the high watermark, the last stable offset), KIP-74, aborted
// transactions for read_committed, long polls that wake only when the
// partition they read changes, positions, lag and committed offsets.
//
// The rules follow Kafka 4.3.1's UnifiedLog.read, LocalLog.read,
// LogSegment.read and ReplicaManager.readFromLog; each is a named step in
// read.go. The partition's state (segments, offsets, producer state,
// indexes) is the model's; fetch holds none of it.
package fetch
