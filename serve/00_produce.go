package serve

// Produce, key 0: v0-v12 advertised; v3-v12 answered, v0-v2 refused.
//
// Version notes (ProduceRequest.json):
//   - v0-v2: message formats 0 and 1, removed in Kafka 4.0; decoded only to
//     be answered UNSUPPORTED_VERSION (advertised from 0 for librdkafka's
//     compression check, KAFKA-18659).
//   - v3: TransactionalID and the v2 record batch format (KIP-98).
//   - v4: KAFKA_STORAGE_ERROR may be returned; v5, v6: as v3.
//   - v7: zstd batches (KIP-110).
//   - v8: per-record errors and ErrorMessage in the response (KIP-467).
//   - v9: flexible; v10: as v9 (KIP-951's leader hints are tagged).
//   - v11: TRANSACTION_ABORTABLE (KIP-890); v12: transactions v2 adds the
//     partition to the transaction implicitly (KIP-890).
//   - v13 (topic ids, KIP-516) is not served.

import (
	"encoding/binary"
	"errors"
	"strconv"
	"sync"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(0, 0, 12, (*conn).handleProduce) }

// errReadOnlyAcks0 closes the connection of an acks=0 producer a read-only
// server cannot answer: with acks=0 the only way to tell it is to close
// (as a broker does for any failed acks=0 produce, KafkaApis.handleProduceRequest).
var errReadOnlyAcks0 = errors.New("produce with acks=0 to a read-only server")

// errAcks0Failed closes the connection after a failed acks=0 produce.
var errAcks0Failed = errors.New("acks=0 produce failed")

// v2 batch header field positions (DefaultRecordBatch.java).
const (
	posBaseOffset   = 0
	posLeaderEpoch  = 12
	posMagic        = 16
	posCRC          = 17
	posAttributes   = 21
	posMaxTimestamp = 35
)

const readOnlyMessage = "klog serve is read-only: start it with --writable to accept produce"

// handleProduce appends each partition's batch through produce's Appender
// as the broker's log does, after the broker's checks in its order
// (validate.go: ProduceRequest.validateRecords, internal topics,
// analyzeAndValidateRecords, LogValidator) and ProducerAppendInfo's epoch
// and sequence rules. The batch is stored as the client sent it except the
// fields a broker assigns: the base offset, the partition leader epoch
// and, for LogAppendTime, the max timestamp (with the CRC recomputed).
// acks=1 and acks=all are the same here: the partition is its only
// replica.
func (cn *conn) handleProduce(r *kmsg.ProduceRequest) (kmsg.Response, error) {
	s := cn.s
	if !s.cfg.Writable && r.Acks == 0 {
		return nil, errReadOnlyAcks0
	}
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	var code int16
	var msg *string
	switch {
	case r.Version < 3:
		// Produce v0-v2 (message formats 0 and 1) were removed in
		// Kafka 4.0; the range is advertised from 0 only for
		// librdkafka's compression check (KAFKA-18659).
		code = kerr.UnsupportedVersion.Code
	case !s.cfg.Writable:
		code = kerr.TopicAuthorizationFailed.Code
		m := readOnlyMessage
		msg = &m
	case r.Acks != 0 && r.Acks != 1 && r.Acks != -1:
		code = kerr.InvalidRequiredAcks.Code
	}
	failed := false
	for _, rt := range r.Topics {
		t := kmsg.NewProduceResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewProduceResponseTopicPartition()
			p.Partition = rp.Partition
			p.BaseOffset, p.LogAppendTime, p.LogStartOffset = -1, -1, -1
			p.ErrorCode, p.ErrorMessage = code, msg
			if code == 0 {
				res := s.producePartition(r.Version, rt.Topic, rp.Partition, rp.Records, func(b *format.Batch) (bool, produceResult) {
					return cn.checkTxnBatch(r, rt.Topic, rp.Partition, b)
				})
				p.ErrorCode = res.code
				if res.msg != "" && r.Version >= 8 {
					m := res.msg
					p.ErrorMessage = &m
				}
				if r.Version >= 8 {
					p.ErrorRecords = res.records
				}
				if res.code == 0 {
					p.BaseOffset, p.LogAppendTime, p.LogStartOffset = res.base, res.appendTime, res.logStart
				}
			}
			failed = failed || p.ErrorCode != 0
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	if r.Acks == 0 {
		if failed {
			return nil, errAcks0Failed
		}
		return nil, nil
	}
	return resp, nil
}

// produceResult is one partition's answer.
type produceResult struct {
	code             int16
	msg              string
	records          []kmsg.ProduceResponseTopicPartitionErrorRecord
	base, appendTime int64
	logStart         int64
}

// producePartition checks one partition's records in the broker's order
// (validate.go), then a transactional batch with the transaction
// coordinator (txn, checkTxnBatch), and appends them.
func (s *Server) producePartition(version int16, topic string, partition int32, raw []byte,
	txn func(*format.Batch) (bool, produceResult)) produceResult {
	fail := func(r *refuseProduce) produceResult {
		return produceResult{code: r.code, msg: r.msg, records: r.records}
	}
	sp := s.lookup(topic, partition)
	internal := kafkaInternalTopics[topic] || internalTopic(topic)
	if sp == nil && !internal {
		return produceResult{code: kerr.UnknownTopicOrPartition.Code}
	}
	raw, r := checkStructure(version, raw)
	if r != nil {
		return fail(r)
	}
	tp := topic + "-" + strconv.Itoa(int(partition))
	if internal {
		return fail(refuse(kerr.InvalidTopicException.Code, "Cannot append to internal topic "+topic))
	}
	now := s.cfg.Clock.Now().UnixMilli()
	b, r := s.checkBatch(tp, raw, now)
	if r != nil {
		return fail(r)
	}
	inTxn, res := txn(b)
	if res.code != 0 {
		return res
	}
	return sp.produce(b, raw, now, inTxn)
}

// checkTxnBatch asks the transaction coordinator whether a transactional
// batch may be appended (txn.go's produceCheck: the partition joins the
// transaction under transactions v2, Produce v12+, and must be in it
// otherwise). txn reports that the batch is transactional and accepted.
func (cn *conn) checkTxnBatch(r *kmsg.ProduceRequest, topic string, partition int32, b *format.Batch) (txn bool, res produceResult) {
	if !b.IsTransactional() {
		return false, res
	}
	if r.TransactionID == nil || *r.TransactionID == "" {
		return false, produceResult{code: kerr.InvalidRecord.Code, msg: "a transactional batch needs the request's transactional id"}
	}
	c := cn.s.groups
	out, err := c.call(cn, r.Key(), kerr.NotCoordinator.Code, func(w *waiter) {
		c.produceCheck(*r.TransactionID, b.ProducerID, b.ProducerEpoch, offsetstore.TopicPartition{Topic: topic, Partition: partition}, r.Version >= 12, r.Version, w)
	})
	if err != nil {
		return false, produceResult{code: kerr.NotCoordinator.Code, msg: err.Error()}
	}
	if code := out.(int16); code != 0 {
		return false, produceResult{code: code}
	}
	return true, res
}

// produce appends one partition's validated batch (raw, the request
// buffer, which it changes: the broker-assigned fields); txn accepts a
// transactional batch the transaction coordinator has checked.
func (p *part) produce(b *format.Batch, raw []byte, now int64, txn bool) produceResult {
	fail := func(code int16, msg string) produceResult { return produceResult{code: code, msg: msg} }
	if b.IsTransactional() && !txn {
		return fail(kerr.InvalidTxnState.Code, "a transactional batch the transaction coordinator did not accept")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.app == nil {
		return fail(kerr.NotLeaderForPartition.Code, "partition closed")
	}
	if res, done := p.checkProducer(b); done {
		return res
	}
	leo := p.app.LogEndOffset()
	binary.BigEndian.PutUint64(raw[posBaseOffset:], uint64(leo))
	binary.BigEndian.PutUint32(raw[posLeaderEpoch:], 0)
	if b.TimestampType() == format.LogAppendTime {
		binary.BigEndian.PutUint64(raw[posMaxTimestamp:], uint64(now))
		binary.BigEndian.PutUint32(raw[posCRC:], format.ChecksumC(raw[posAttributes:]))
	}
	// The Appender tells the model, which moves the log end offset (the
	// high watermark with it), takes the batch into the producer state
	// and wakes this partition's long polls.
	res, err := p.app.AppendRaw(raw)
	if err != nil {
		return fail(kerr.KafkaStorageError.Code, err.Error())
	}
	out := produceResult{base: res.BaseOffset, appendTime: -1, logStart: res.LogStartOffset}
	if b.TimestampType() == format.LogAppendTime {
		out.appendTime = now
	}
	return out
}

// checkProducer applies the producer state's checks
// (ProducerAppendInfo, through the partition model): done is set when the
// batch must not be appended, with an error, or for a duplicate of one of
// the producer's last five batches, answered with its original offset and
// no error (ProducerStateEntry.findDuplicateBatch).
func (p *part) checkProducer(b *format.Batch) (produceResult, bool) {
	dup, err := p.log.CheckProducerBatch(b)
	var pe *partition.ProducerBatchError
	switch {
	case errors.As(err, &pe):
		code := kerr.OutOfOrderSequenceNumber.Code
		switch {
		case errors.Is(err, partition.ErrInvalidProducerEpoch):
			code = kerr.InvalidProducerEpoch.Code
		case errors.Is(err, partition.ErrInvalidTxnState):
			code = kerr.InvalidTxnState.Code
		}
		return produceResult{code: code, msg: pe.Msg}, true
	case err != nil:
		return produceResult{code: kerr.KafkaStorageError.Code, msg: err.Error()}, true
	case dup != nil:
		out := produceResult{base: dup.FirstOffset, appendTime: -1, logStart: p.log.LogStartOffset()}
		if b.TimestampType() == format.LogAppendTime {
			out.appendTime = dup.Timestamp
		}
		return out, true
	}
	return produceResult{}, false
}

// readers keeps record readers (and their decompression buffers) between
// produce requests.
var readers = sync.Pool{New: func() any { return new(format.RecordReader) }}
