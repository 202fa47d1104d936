package tail

import (
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/verify"
)

// Type names an event. The values are the "type" field of the JSON form and
// part of klog's public interface.
type Type string

// Event types, in the order a partition meets them.
const (
	// TypeState is a partition's state when the tail starts (after the
	// replay, with Options.FromBeginning).
	TypeState Type = "state"
	// TypePartitionAdded is a partition directory that appeared in a
	// tailed log directory (or a tailed partition directory that came
	// back). Its existing batches follow as TypeBatch events.
	TypePartitionAdded Type = "partitionAdded"
	// TypePartitionRemoved is a partition directory that was deleted or
	// renamed away (Kafka renames a deleted partition to
	// <topic>-<partition>.<id>-delete first). The state is the last known.
	TypePartitionRemoved Type = "partitionRemoved"
	// TypeBatch is a new complete batch; Batch and BatchInfo describe it.
	TypeBatch Type = "batch"
	// TypeLogEndOffset is a change of the log end offset, once per burst of
	// batches read together (Change: from, to). A truncation lowers it.
	TypeLogEndOffset Type = "logEndOffset"
	// TypeHighWatermark is a change of the partition's entry in the log
	// dir's replication-offset-checkpoint (Change: from, to; -1 = absent).
	TypeHighWatermark Type = "highWatermark"
	// TypeRoll is a new segment: Segment names the new .log file.
	TypeRoll Type = "roll"
	// TypeSegmentDeleted is a .log file that went away: removed, or renamed
	// to .log.deleted (RenamedTo) as retention does before it deletes.
	TypeSegmentDeleted Type = "segmentDeleted"
	// TypeTruncated is a segment that shrank, or whole segments removed at
	// the end of the log: the tail rescanned it (Truncation: sizes; Change:
	// the log end offset before and after).
	TypeTruncated Type = "truncated"
	// TypePartial is a batch at the end of the active segment that is not
	// complete yet (a write in progress). It is reported once per position;
	// the batch itself follows as TypeBatch when its last byte arrives.
	TypePartial Type = "partial"
	// TypeCorrupt is data the tail cannot read past (an impossible entry
	// header) or a batch header the format rejects, or an unreadable
	// replication-offset-checkpoint. Problem says what and where.
	TypeCorrupt Type = "corrupt"
	// TypeError is trouble that is not in the data: a partition directory
	// that appeared but could not be watched (see partition.WatchLimitError) or read.
	// The tail goes on with the others. Problem.Message says what.
	TypeError Type = "error"
)

// Event is one thing that happened to a tailed partition. Every event
// carries the partition's state after it. The JSON tags are the schema of
// klog tail --json.
type Event struct {
	Type Type `json:"type"`
	// Timestamp is when the tail saw the change (epoch ms); Time is the
	// same in UTC (ISO-8601 in JSON).
	Timestamp int64     `json:"timestamp"`
	Time      time.Time `json:"time"`
	// Dir is the partition directory; Topic and Partition are parsed from
	// its name (Partition -1 and Topic "" when the name is not
	// <topic>-<partition>). A checkpoint problem names the log dir.
	Dir       string `json:"dir"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`

	// LogStartOffset is the base offset of the first segment.
	LogStartOffset int64 `json:"logStartOffset"`
	// LogEndOffset is the offset the next batch will get: the last
	// complete batch's NextOffset, or the active segment's base offset.
	LogEndOffset int64 `json:"logEndOffset"`
	// HighWatermark is the partition's offset in the log dir's
	// replication-offset-checkpoint (exclusive: consumers see offsets
	// below it), or -1 when it has no entry.
	HighWatermark int64 `json:"highWatermark"`
	// Gap is LogEndOffset − HighWatermark: records written but not yet
	// visible to consumers. 0 when HighWatermark is -1.
	Gap int64 `json:"gap"`
	// Segments is how many .log files the partition has.
	Segments int `json:"segments"`

	// Segment is the .log file name the event is about (batch, roll,
	// segmentDeleted, truncated, partial, corrupt) or, for state events,
	// the active segment.
	Segment string `json:"segment,omitempty"`
	// Batch is a copy of the new batch (TypeBatch); it aliases nothing and
	// may be kept. BatchInfo is its header for JSON.
	Batch     *format.Batch `json:"-"`
	BatchInfo *BatchInfo    `json:"batch,omitempty"`
	// Change is the old and new value of a TypeLogEndOffset,
	// TypeHighWatermark or TypeTruncated (log end offset) event.
	Change *Change `json:"change,omitempty"`
	// Truncation is the size change of a TypeTruncated event.
	Truncation *Truncation `json:"truncation,omitempty"`
	// RenamedTo is the .log.deleted name of a TypeSegmentDeleted event, if
	// the file was renamed rather than removed.
	RenamedTo string `json:"renamedTo,omitempty"`
	// Partial describes a TypePartial event's incomplete batch.
	Partial *Partial `json:"partial,omitempty"`
	// Problem is what a TypeCorrupt or TypeError event found: a kind for
	// data the tail cannot read (TypeCorrupt), none for trouble outside
	// the data (TypeError).
	Problem *verify.Problem `json:"problem,omitempty"`
}

// BatchInfo is a batch's header in Kafka's names, for the JSON form.
type BatchInfo struct {
	// Position is the byte position of the batch in Segment.
	Position        int64  `json:"position"`
	Size            int64  `json:"sizeBytes"`
	Magic           int8   `json:"magic"`
	BaseOffset      int64  `json:"baseOffset"`
	LastOffset      int64  `json:"lastOffset"`
	Count           int32  `json:"recordCount"`
	MaxTimestamp    int64  `json:"maxTimestamp"`
	TimestampType   string `json:"timestampType"`
	Compression     string `json:"compression"`
	ProducerID      int64  `json:"producerId"`
	ProducerEpoch   int16  `json:"producerEpoch"`
	BaseSequence    int32  `json:"baseSequence"`
	IsTransactional bool   `json:"isTransactional"`
	IsControl       bool   `json:"isControl"`
	CRC             uint32 `json:"crc"`
	IsValid         bool   `json:"isValid"`
}

func batchInfo(b *format.Batch) *BatchInfo {
	return &BatchInfo{
		Position: b.Pos, Size: b.Size(), Magic: b.Magic, BaseOffset: b.BaseOffset, LastOffset: b.LastOffset(),
		Count: b.RecordCount, MaxTimestamp: b.MaxTimestamp, TimestampType: b.TimestampType().String(),
		Compression: b.Compression().String(), ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
		BaseSequence: b.BaseSequence, IsTransactional: b.IsTransactional(), IsControl: b.IsControl(),
		CRC: b.CRC, IsValid: b.Valid(),
	}
}

// Change is a value before and after an event.
type Change struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Truncation is a segment's size before and after it shrank (SizeBytes is
// 0 for a segment removed at the end of the log).
type Truncation struct {
	PrevSizeBytes int64 `json:"prevSizeBytes"`
	SizeBytes     int64 `json:"sizeBytes"`
}

// Partial is an incomplete batch at the end of the active segment.
type Partial struct {
	// Position is where the batch starts; HaveBytes how many of its bytes
	// are there; WantBytes its full size, or 0 when even the 17-byte entry
	// header is incomplete.
	Position  int64 `json:"position"`
	HaveBytes int64 `json:"haveBytes"`
	WantBytes int64 `json:"wantBytes"`
}
