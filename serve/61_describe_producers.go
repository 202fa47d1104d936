package serve

// DescribeProducers, key 61: v0.
//
// Version notes (DescribeProducersRequest.json):
//   - v0: each partition's active producers (KIP-664).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(61, 0, 0, (*conn).handleDescribeProducers) }

// handleDescribeProducers lists each partition's producer state from the
// partition model (ProducerStateManager.activeProducers): epoch, last
// sequence and timestamp, coordinator epoch and the first offset of an
// ongoing transaction (-1 when none).
func (cn *conn) handleDescribeProducers(r *kmsg.DescribeProducersRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, n := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = n
			p := cn.s.lookup(t.Topic, n)
			if p == nil {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			es, err := p.log.ProducerEntries()
			if err != nil {
				rp.ErrorCode = kerr.KafkaStorageError.Code
				msg := err.Error()
				rp.ErrorMessage = &msg
			}
			for _, e := range es {
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch = e.ProducerID, int32(e.Epoch)
				ap.LastSequence, ap.LastTimestamp = e.LastSequence, e.Timestamp
				ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = e.CoordinatorEpoch, e.CurrentTxnFirstOffset
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
