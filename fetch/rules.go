package fetch

import (
	"sort"

	"github.com/klog-dev/klog/format"
)

// Drop is why a consumer does not hand a fetched record to the
// application. A broker's fetch response holds whole batches from the one
// that holds the fetch offset, the transactions it aborted (read_committed)
// and the markers: the consumer is what leaves them out.
type Drop int8

// Why a record is dropped.
const (
	// Kept: the application gets the record.
	Kept Drop = iota
	// DropBelowFetchOffset: the record is in the first batch, before the
	// fetch offset (the broker sends whole batches).
	DropBelowFetchOffset
	// DropAborted: read_committed, and the record's batch is of a
	// transaction the response lists as aborted.
	DropAborted
	// DropControl: a control record (a transaction marker, a KRaft control
	// record).
	DropControl
)

// String is the reason as klog prints it: below-fetch-offset, aborted,
// control ("" for Kept).
func (d Drop) String() string {
	switch d {
	case DropBelowFetchOffset:
		return "below-fetch-offset"
	case DropAborted:
		return "aborted"
	case DropControl:
		return "control"
	}
	return ""
}

// ConsumerRules applies a consumer's rules to the batches of one fetch
// response, in order: Kafka's CompletedFetch.nextFetchedRecord, which
// librdkafka and franz-go follow. For read_committed, the response's
// aborted transactions become aborted producers as batches reach their
// first offset (consumeAbortedTransactionsUpTo); a batch with a producer id
// whose first record is an ABORT marker ends its producer's abort, and a
// transactional batch of an aborted producer is skipped whole. Then a
// record below the next fetch offset is skipped, and a control record is
// never returned.
type ConsumerRules struct {
	readCommitted bool
	next          int64
	aborts        []AbortedTransaction
	abortedPIDs   map[int64]bool
	batch         *format.Batch
	rr            format.RecordReader
	rec           format.Record
}

// NewConsumerRules starts the rules for a response of a fetch at
// fetchOffset with these aborted transactions.
func NewConsumerRules(iso Isolation, fetchOffset int64, aborted []AbortedTransaction) *ConsumerRules {
	c := &ConsumerRules{readCommitted: iso == ReadCommitted, next: fetchOffset}
	if c.readCommitted {
		c.aborts = append([]AbortedTransaction(nil), aborted...)
		sort.SliceStable(c.aborts, func(i, j int) bool { return c.aborts[i].FirstOffset < c.aborts[j].FirstOffset })
		c.abortedPIDs = map[int64]bool{}
	}
	return c
}

// Batch takes the next batch of the response; DropAborted means all its
// records are skipped, and the next fetch offset moves past it.
func (c *ConsumerRules) Batch(b *format.Batch) Drop {
	c.batch = b
	if !c.readCommitted || !b.IsV2() || b.ProducerID < 0 {
		return Kept
	}
	for len(c.aborts) > 0 && c.aborts[0].FirstOffset <= b.LastOffset() {
		c.abortedPIDs[c.aborts[0].ProducerID] = true
		c.aborts = c.aborts[1:]
	}
	switch {
	case c.abortMarker(b):
		delete(c.abortedPIDs, b.ProducerID)
	case b.IsTransactional() && c.abortedPIDs[b.ProducerID]:
		c.next = b.NextOffset()
		return DropAborted
	}
	return Kept
}

// abortMarker is containsAbortMarker: a control batch whose first record
// is an ABORT marker.
func (c *ConsumerRules) abortMarker(b *format.Batch) bool {
	if !b.IsControl() || c.rr.Reset(b) != nil || c.rr.Next(&c.rec) != nil {
		return false
	}
	k, err := format.ParseControlKey(c.rec.Key)
	return err == nil && k.Type == format.ControlAbort
}

// Record takes the next record of the batch Batch was given (one it did
// not drop) and says whether the application gets it.
func (c *ConsumerRules) Record(r *format.Record) Drop {
	if r.Offset < c.next {
		return DropBelowFetchOffset
	}
	c.next = r.Offset + 1
	if c.batch != nil && c.batch.IsControl() {
		return DropControl
	}
	return Kept
}
