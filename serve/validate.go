package serve

// The produce path's checks, in the broker's order: KafkaApis'
// ProduceRequest.validateRecords (the structure of the partition's bytes),
// ReplicaManager (internal topics), UnifiedLog.analyzeAndValidateRecords
// (base offset, message.max.bytes, CRC) and LogValidator (offsets against
// the count, control batches, sequences, every record, timestamps).
//
// Error codes are Kafka's. An error message goes with every refusal (v8+),
// where a broker sends one only with per-record errors: the message is
// what a user needs to know, and clients print it.

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce limits (KafkaConfig / ServerLogConfigs defaults).
const (
	// DefaultMaxMessageBytes is message.max.bytes: the largest record
	// batch a producer may append (and the largest group record).
	DefaultMaxMessageBytes = 1048588
	// DefaultTimestampAfterMax is message.timestamp.after.max.ms (one
	// hour since Kafka 4.0, KIP-1030); message.timestamp.before.max.ms
	// has no limit by default.
	DefaultTimestampAfterMax = time.Hour
)

// maxRecordErrors bounds the per-record errors one partition's answer
// lists (a broker lists them all; a batch of a million records with bad
// timestamps would make an answer of a hundred megabytes).
const maxRecordErrors = 1000

// Kafka's sizes of the first bytes of an entry
// (Records.LOG_OVERHEAD, HEADER_SIZE_UP_TO_MAGIC, LegacyRecord.RECORD_OVERHEAD_V0).
const (
	logOverhead         = 12
	headerSizeUpToMagic = 17
	recordOverheadV0    = 14
	batchOverhead       = 61 // DefaultRecordBatch.RECORD_BATCH_OVERHEAD
)

// kafkaInternalTopics are Topic.isInternal's names and the topics whose
// only writer is a broker's own component: a client produces into none of
// them (ReplicaManager.appendToLocalLog: INVALID_TOPIC_EXCEPTION).
var kafkaInternalTopics = map[string]bool{
	"__consumer_offsets": true, "__transaction_state": true, "__share_group_state": true,
	"__cluster_metadata": true, "__remote_log_metadata": true,
}

// refuseProduce is a partition's refusal: the code and what to tell.
type refuseProduce struct {
	code    int16
	msg     string
	records []kmsg.ProduceResponseTopicPartitionErrorRecord
}

func refuse(code int16, msg string) *refuseProduce { return &refuseProduce{code: code, msg: msg} }

// checkStructure is ProduceRequest.validateRecords with the batch iterator
// under it (ByteBufferLogInputStream.nextBatchSize): exactly one whole
// batch of magic 2, zstd only from v7. Trailing bytes too short to be a
// batch are ignored and not appended, as a broker trims them
// (UnifiedLog.trimInvalidBytes). It returns the batch's bytes.
func checkStructure(version int16, raw []byte) ([]byte, *refuseProduce) {
	first, err := nextEntry(raw)
	if err != nil {
		return nil, err
	}
	if first == nil {
		return nil, refuse(kerr.InvalidRecord.Code, "Produce requests with version "+itoa16(version)+" must have at least one record batch per partition")
	}
	if int8(first[16]) != format.MagicV2 {
		return nil, refuse(kerr.InvalidRecord.Code, "Produce requests with version "+itoa16(version)+
			" are only allowed to contain record batches with magic version 2")
	}
	if len(first) >= batchOverhead && version < 7 &&
		format.Compression(binary.BigEndian.Uint16(first[21:])&7) == format.CompressionZstd {
		return nil, refuse(kerr.UnsupportedCompressionType.Code, "Produce requests with version "+itoa16(version)+
			" are not allowed to use ZStandard compression")
	}
	second, err := nextEntry(raw[len(first):])
	if err != nil {
		return nil, err
	}
	if second != nil {
		return nil, refuse(kerr.InvalidRecord.Code, "Produce requests with version "+itoa16(version)+
			" are only allowed to contain exactly one record batch per partition")
	}
	return first, nil
}

// nextEntry is the entry at the start of b, nil when b holds no whole one
// (the iterator's end), or the iterator's CorruptRecordException.
func nextEntry(b []byte) ([]byte, *refuseProduce) {
	if len(b) < logOverhead {
		return nil, nil
	}
	size := int32(binary.BigEndian.Uint32(b[8:]))
	if size < recordOverheadV0 {
		return nil, refuse(kerr.CorruptMessage.Code, "Record size "+strconv.Itoa(int(size))+
			" is less than the minimum record overhead (14)")
	}
	if len(b) < headerSizeUpToMagic {
		return nil, nil
	}
	if m := int8(b[16]); m < 0 || m > format.MagicV2 {
		return nil, refuse(kerr.CorruptMessage.Code, "Invalid magic found in record: "+strconv.Itoa(int(m)))
	}
	if int64(len(b)) < logOverhead+int64(size) {
		return nil, nil
	}
	return b[:logOverhead+int(size)], nil
}

// checkBatch is analyzeAndValidateRecords and LogValidator.validateBatch
// on the one v2 batch of a partition's records, then every record (the
// records are decompressed within the server's budget).
func (s *Server) checkBatch(tp string, raw []byte, now int64) (*format.Batch, *refuseProduce) {
	if base := int64(binary.BigEndian.Uint64(raw)); base != 0 {
		return nil, refuse(kerr.InvalidRecord.Code, "The baseOffset of the record batch in the append to "+tp+
			" should be 0, but it is "+strconv.FormatInt(base, 10))
	}
	if int64(len(raw)) > int64(s.cfg.MaxMessageBytes) {
		return nil, refuse(kerr.MessageTooLarge.Code, "The record batch size in the append to "+tp+" is "+
			strconv.Itoa(len(raw))+" bytes which exceeds the maximum configured value of "+
			strconv.Itoa(int(s.cfg.MaxMessageBytes))+".")
	}
	b, err := format.ParseBatch(raw, 0)
	if err != nil || !b.Valid() {
		crc := uint32(0)
		if len(raw) >= 21 {
			crc = binary.BigEndian.Uint32(raw[17:])
		}
		return nil, refuse(kerr.CorruptMessage.Code, "Record is corrupt (stored crc = "+
			strconv.FormatUint(uint64(crc), 10)+") in topic partition "+tp+".")
	}
	if !b.Compression().Known() {
		return nil, refuse(kerr.UnsupportedCompressionType.Code, "Unknown compression type id: "+strconv.Itoa(int(b.Compression())))
	}
	// LogValidator.validateBatch, for a client's batch.
	if n := int64(b.LastOffsetDelta) + 1; n <= 0 {
		return nil, refuse(kerr.InvalidRecord.Code, "Batch has an invalid offset range: [0, "+
			strconv.Itoa(int(b.LastOffsetDelta))+"] in topic partition "+tp)
	}
	if b.RecordCount <= 0 {
		return nil, refuse(kerr.InvalidRecord.Code, "Invalid reported count for record batch: "+
			strconv.Itoa(int(b.RecordCount))+" in topic partition "+tp)
	}
	if int64(b.LastOffsetDelta)+1 != int64(b.RecordCount) {
		return nil, refuse(kerr.InvalidRecord.Code, "Inconsistent batch offset range [0, "+
			strconv.Itoa(int(b.LastOffsetDelta))+"] and count of records "+strconv.Itoa(int(b.RecordCount))+
			" in topic partition "+tp)
	}
	if b.IsControl() {
		return nil, refuse(kerr.InvalidRecord.Code, "Clients are not allowed to write control records in topic partition "+tp)
	}
	if b.ProducerID >= 0 && b.BaseSequence < 0 {
		return nil, refuse(kerr.InvalidRecord.Code, "Invalid sequence number "+strconv.Itoa(int(b.BaseSequence))+
			" in record batch with producerId "+strconv.FormatInt(b.ProducerID, 10)+" in topic partition "+tp)
	}
	if r := s.checkRecords(tp, b, now); r != nil {
		return nil, r
	}
	return b, nil
}

// checkRecords decodes every record as LogValidator's iterator does (a
// record that does not parse, or bytes left after the count, is
// INVALID_RECORD) and checks CreateTime timestamps against
// message.timestamp.before/after.max.ms (INVALID_TIMESTAMP, with one
// record error per record out of range).
func (s *Server) checkRecords(tp string, b *format.Batch, now int64) *refuseProduce {
	rr, put := s.recordReader(b)
	defer put()
	var rec format.Record
	if err := rr.Reset(b); err != nil {
		return recordsError(tp, err)
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if d := s.cfg.TimestampBeforeMax; d > 0 {
		lo = now - d.Milliseconds()
	}
	if d := s.cfg.TimestampAfterMax; d > 0 {
		hi = now + d.Milliseconds()
	}
	checkTS := b.TimestampType() == format.CreateTime && (lo != math.MinInt64 || hi != math.MaxInt64)
	var errs []kmsg.ProduceResponseTopicPartitionErrorRecord
	n := int64(0)
	for {
		err := rr.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return recordsError(tp, err)
		}
		if rec.Offset != b.BaseOffset+n {
			return refuse(kerr.InvalidRecord.Code, "record offset delta "+strconv.FormatInt(rec.Offset-b.BaseOffset, 10)+
				" of record "+strconv.FormatInt(n, 10)+" in topic partition "+tp+" is not its index")
		}
		if checkTS && rec.Timestamp != -1 && (rec.Timestamp < lo || rec.Timestamp > hi) && len(errs) < maxRecordErrors {
			m := "Timestamp " + strconv.FormatInt(rec.Timestamp, 10) + " of message with offset " +
				strconv.FormatInt(rec.Offset, 10) + " is out of range. The timestamp should be within [" +
				strconv.FormatInt(lo, 10) + ", " + strconv.FormatInt(hi, 10) + "]"
			e := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			e.RelativeOffset, e.ErrorMessage = int32(n), &m
			errs = append(errs, e)
		}
		n++
	}
	if n != int64(b.RecordCount) {
		return refuse(kerr.InvalidRecord.Code, "Incorrect declared batch size, premature EOF reached in topic partition "+tp)
	}
	if len(errs) > 0 {
		return &refuseProduce{code: kerr.InvalidTimestamp.Code,
			msg: "One or more records have been rejected due to invalid timestamp", records: errs}
	}
	return nil
}

// recordsError is the answer to records that do not decode: a stream
// that does not decompress is CORRUPT_MESSAGE, one past the decompression
// limit MESSAGE_TOO_LARGE, records that do not parse INVALID_RECORD (the
// iterator's InvalidRecordException).
func recordsError(tp string, err error) *refuseProduce {
	msg := err.Error() + " in topic partition " + tp
	var pe *format.PosError
	switch {
	case errors.Is(err, format.ErrTooLarge):
		return refuse(kerr.MessageTooLarge.Code, msg)
	case errors.As(err, &pe) && pe.Field == "records":
		return refuse(kerr.CorruptMessage.Code, msg)
	}
	return refuse(kerr.InvalidRecord.Code, msg)
}

// checkNewTopic is what a topic auto-created by Metadata must pass
// (Topic.validate, and ReplicationControlManager's collision rule: names
// that differ only in '.' against '_' collide in metric names). s.mu is
// held.
func (s *Server) checkNewTopic(name string) error {
	if !validTopicName(name) {
		return errors.New("Topic name " + strconv.Quote(name) + " is invalid: 1 to 249 of ASCII alphanumerics, '.', '_' and '-', not '.' or '..'")
	}
	if internalTopic(name) || kafkaInternalTopics[name] {
		return errors.New("Topic name " + strconv.Quote(name) + " is an internal topic")
	}
	if strings.ContainsAny(name, "._") {
		unified := strings.ReplaceAll(name, ".", "_")
		for _, t := range s.topicList {
			if strings.ReplaceAll(t, ".", "_") == unified {
				return errors.New("Topic '" + name + "' collides with existing topic: " + t)
			}
		}
	}
	return nil
}

func itoa16(v int16) string { return strconv.Itoa(int(v)) }
