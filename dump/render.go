package dump

import (
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/verify"
)

// renderer is one output form of a dump: kafka-dump-log text or NDJSON.
type renderer interface {
	dumping(path string)
	ignored(path string, why error)
	// unreadable: a file named on the command line that could not be read
	// (missing, a read error); the run goes on.
	unreadable(path string, err error)
	logHeader(path, header string)
	fileStart(path string, size int64)
	batch(b *format.Batch)
	batchPrefixOnly(b *format.Batch)
	// record returns the error of a control record Kafka cannot decode.
	record(b *format.Batch, r *format.Record) error
	problem(p verify.Problem)
	trailing(name string, t format.Tail, p verify.Problem)
	fileEnd(path string, batches, records int64, t format.Tail)
	flush() error

	// Index, snapshot and transaction index files.
	indexStart(path, kind string, size int64, entries int)
	indexEmpty(path string)
	sanityPassed(path string)
	indexEntry(e format.IndexEntry)
	timeEntry(e format.TimeEntry)
	producerEntry(e *format.ProducerEntry)
	abortedTxn(t *format.AbortedTxn)

	// Checkpoint and metadata files kafka-dump-log cannot print.
	checkpointHeader(path, kind string, entries int)
	epochEntry(e format.EpochEntry)
	offsetEntry(e format.OffsetEntry)
	partitionMetadata(path string, m format.PartitionMetadata)
}
