package serve

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestReaderRefusals: a read user (bob) is refused every write API with
// the code Kafka's authorizer answers, in every element of the response,
// and the request never reaches its handler (the topic, group and
// transaction are still there for alice afterwards).
func TestReaderRefusals(t *testing.T) {
	_, addr := saslServer(t)
	txnID := "tx"
	alice := txnWire{t, w2(t, addr, "alice")}
	ip := alice.init(txnID, -1, -1)
	if ip.ErrorCode != 0 {
		t.Fatalf("alice's InitProducerId: %d", ip.ErrorCode)
	}
	pid, epoch := ip.ProducerID, ip.ProducerEpoch
	if code := alice.add(txnID, pid, epoch, "t"); code != 0 {
		t.Fatalf("alice's AddPartitionsToTxn: %d", code)
	}
	txnBatch := rawBatch(t, 0, pid, int64(epoch))
	txnBatch[posAttributes+1] |= 0x10
	binary.BigEndian.PutUint32(txnBatch[posCRC:], format.ChecksumC(txnBatch[posAttributes:]))

	const (
		topicAuth = 29 // kerr.TopicAuthorizationFailed
		groupAuth = 30
		clustAuth = 31
		txnAuth   = 53
	)
	if kerr.TopicAuthorizationFailed.Code != topicAuth || kerr.GroupAuthorizationFailed.Code != groupAuth ||
		kerr.ClusterAuthorizationFailed.Code != clustAuth || kerr.TransactionalIDAuthorizationFailed.Code != txnAuth {
		t.Fatal("kerr's codes moved")
	}
	produce := func(records []byte, txn *string) kmsg.Request {
		r := &kmsg.ProduceRequest{Version: 9, TransactionID: txn, Acks: -1, TimeoutMillis: 1000,
			Topics: []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: records}, {Partition: 1, Records: records}}}}}
		return r
	}
	cases := []struct {
		name string
		req  kmsg.Request
		// codes are every error code of the response, depth first.
		want []int16
	}{
		{"Produce", produce(rawBatch(t, 0), nil), []int16{topicAuth, topicAuth}},
		{"Produce transactional", produce(txnBatch, &txnID), []int16{txnAuth, txnAuth}},
		{"CreateTopics", &kmsg.CreateTopicsRequest{Version: 7, TimeoutMillis: 1000,
			Topics: []kmsg.CreateTopicsRequestTopic{{Topic: "n1", NumPartitions: 1, ReplicationFactor: 1}, {Topic: "n2", NumPartitions: 1, ReplicationFactor: 1}}},
			[]int16{topicAuth, topicAuth}},
		{"DeleteTopics v5", &kmsg.DeleteTopicsRequest{Version: 5, TopicNames: []string{"t", "none"}}, []int16{topicAuth, topicAuth}},
		{"DeleteTopics v6", &kmsg.DeleteTopicsRequest{Version: 6, Topics: []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("t")}}}, []int16{topicAuth}},
		{"DeleteRecords", &kmsg.DeleteRecordsRequest{Version: 2, TimeoutMillis: 1000,
			Topics: []kmsg.DeleteRecordsRequestTopic{{Topic: "none", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 1}, {Partition: 1, Offset: 1}}}}},
			[]int16{topicAuth, topicAuth}},
		{"InitProducerId idempotent", &kmsg.InitProducerIDRequest{Version: 4, ProducerID: -1, ProducerEpoch: -1, TransactionTimeoutMillis: 60000}, []int16{clustAuth}},
		{"InitProducerId transactional", &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: &txnID, ProducerID: -1, ProducerEpoch: -1, TransactionTimeoutMillis: 60000}, []int16{txnAuth}},
		{"AddPartitionsToTxn v3", &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch,
			Topics: []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}, {Topic: "none", Partitions: []int32{0}}}},
			[]int16{txnAuth, txnAuth, txnAuth}},
		{"AddPartitionsToTxn v4", &kmsg.AddPartitionsToTxnRequest{Version: 4,
			Transactions: []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch,
				Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t", Partitions: []int32{1}}}}}},
			[]int16{clustAuth}},
		{"AddOffsetsToTxn", &kmsg.AddOffsetsToTxnRequest{Version: 3, TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch, Group: "g"}, []int16{txnAuth}},
		{"EndTxn abort", &kmsg.EndTxnRequest{Version: 3, TransactionalID: txnID, ProducerID: pid, ProducerEpoch: epoch}, []int16{txnAuth}},
		{"TxnOffsetCommit", &kmsg.TxnOffsetCommitRequest{Version: 3, TransactionalID: txnID, Group: "g", ProducerID: pid, ProducerEpoch: epoch, Generation: -1,
			Topics: []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}, {Partition: 1, Offset: 1, LeaderEpoch: -1}}}}},
			[]int16{txnAuth, txnAuth}},
		{"CreatePartitions", &kmsg.CreatePartitionsRequest{Version: 3, TimeoutMillis: 1000, Topics: []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 4}}}, []int16{topicAuth}},
		{"DeleteGroups", &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"g", "h"}}, []int16{groupAuth, groupAuth}},
		{"IncrementalAlterConfigs", &kmsg.IncrementalAlterConfigsRequest{Version: 1, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
			{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}},
			{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "", Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "message.max.bytes", Value: kmsg.StringPtr("2000")}}},
			{ResourceType: kmsg.ConfigResourceTypeBrokerLogger, ResourceName: "0"},
			{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g"},
		}}, []int16{topicAuth, clustAuth, clustAuth, groupAuth}},
		{"AlterConfigs", &kmsg.AlterConfigsRequest{Version: 2, Resources: []kmsg.AlterConfigsRequestResource{
			{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t", Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}},
			{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: ""},
		}}, []int16{topicAuth, clustAuth}},
		{"ElectLeaders v0", &kmsg.ElectLeadersRequest{Version: 0, TimeoutMillis: 1000,
			Topics: []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}}, []int16{clustAuth, clustAuth}},
		{"ElectLeaders v2", &kmsg.ElectLeadersRequest{Version: 2, ElectionType: 1, TimeoutMillis: 1000,
			Topics: []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0}}}}, []int16{clustAuth, clustAuth}},
		{"AlterPartitionReassignments", &kmsg.AlterPartitionAssignmentsRequest{TimeoutMillis: 1000,
			Topics: []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "t", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{
				{Partition: 0, Replicas: []int32{0}}, {Partition: 1}}}}}, []int16{clustAuth, clustAuth, clustAuth}},
		{"OffsetDelete", &kmsg.OffsetDeleteRequest{Group: "g", Topics: []kmsg.OffsetDeleteRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}}, []int16{groupAuth}},
	}
	covered := map[int16]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			covered[c.req.Key()] = true
			resp := w2(t, addr, "bob").do(c.req)
			if got := errorCodes(resp); !slices.Equal(got, c.want) {
				t.Errorf("bob's %s: codes %v, want %v", c.name, got, c.want)
			}
		})
	}
	for key := range readerRefusals {
		if !covered[key] {
			t.Errorf("key %d (%s) has a refusal and no case", key, kmsg.NameForKey(key))
		}
	}
	// Nothing bob sent reached a handler: alice's transaction is open
	// and commits; t still has its one partition and its configs.
	if code := alice.produce(txnID, pid, epoch, 0, "t"); code != 0 {
		t.Errorf("alice's transactional produce: %d", code)
	}
	if code := alice.end(txnID, pid, epoch, true); code != 0 {
		t.Errorf("alice's commit after bob's EndTxn: %d", code)
	}
	md := &kmsg.MetadataRequest{Version: 12, Topics: []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}}
	if mt := alice.w.do(md).(*kmsg.MetadataResponse).Topics[0]; mt.ErrorCode != 0 || len(mt.Partitions) != 1 {
		t.Errorf("t after bob's requests: code %d, %d partitions", mt.ErrorCode, len(mt.Partitions))
	}
}

// TestEveryKeyIsAuthorized: each served key is either a write API with a
// refusal for read users or a read API, never both or neither; a new key
// has to say which it is.
func TestEveryKeyIsAuthorized(t *testing.T) {
	for _, a := range served() {
		_, write := readerRefusals[a.key]
		if write == readAPIs[a.key] {
			t.Errorf("key %d (%s): in readerRefusals %v, in readAPIs %v: it must be in exactly one", a.key, a.name, write, readAPIs[a.key])
		}
	}
	for key := range readerRefusals {
		if apis[key] == nil {
			t.Errorf("readerRefusals has key %d, which is not served", key)
		}
	}
}

// errorCodes is every ErrorCode field of a response, depth first (the
// top-level one first when the response has one and it is set).
func errorCodes(resp kmsg.Response) []int16 {
	var out []int16
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	case *kmsg.CreateTopicsResponse:
		for _, t := range r.Topics {
			out = append(out, t.ErrorCode)
		}
	case *kmsg.DeleteTopicsResponse:
		for _, t := range r.Topics {
			out = append(out, t.ErrorCode)
		}
	case *kmsg.DeleteRecordsResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	case *kmsg.InitProducerIDResponse:
		out = append(out, r.ErrorCode)
	case *kmsg.AddPartitionsToTxnResponse:
		if r.Version >= 4 {
			out = append(out, r.ErrorCode)
		}
		for _, tr := range r.Transactions {
			for _, t := range tr.Topics {
				for _, p := range t.Partitions {
					out = append(out, p.ErrorCode)
				}
			}
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	case *kmsg.AddOffsetsToTxnResponse:
		out = append(out, r.ErrorCode)
	case *kmsg.EndTxnResponse:
		out = append(out, r.ErrorCode)
	case *kmsg.TxnOffsetCommitResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	case *kmsg.CreatePartitionsResponse:
		for _, t := range r.Topics {
			out = append(out, t.ErrorCode)
		}
	case *kmsg.DeleteGroupsResponse:
		for _, g := range r.Groups {
			out = append(out, g.ErrorCode)
		}
	case *kmsg.IncrementalAlterConfigsResponse:
		for _, res := range r.Resources {
			out = append(out, res.ErrorCode)
		}
	case *kmsg.AlterConfigsResponse:
		for _, res := range r.Resources {
			out = append(out, res.ErrorCode)
		}
	case *kmsg.ElectLeadersResponse:
		if r.Version >= 1 {
			out = append(out, r.ErrorCode)
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	case *kmsg.AlterPartitionAssignmentsResponse:
		out = append(out, r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	case *kmsg.OffsetDeleteResponse:
		out = append(out, r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, p.ErrorCode)
			}
		}
	default:
		panic("errorCodes: no case for " + kmsg.NameForKey(resp.Key()))
	}
	return out
}
