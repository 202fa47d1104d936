package serve

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Authorization of a read user (sasl.go): the one table of the requests
// such a user may not send, each with the answer Kafka's authorizer gives
// a principal that holds READ and DESCRIBE but none of WRITE, CREATE,
// DELETE, ALTER, ALTER_CONFIGS, IDEMPOTENT_WRITE or CLUSTER_ACTION
// (KafkaApis and ControllerApis, apache/kafka 1eb7644). dispatch answers a
// read user's request of a key in readerRefusals with its rule and never
// hands it to the handler, so no handler checks the principal. Keys not in
// the table are READ or DESCRIBE APIs (readAPIs), which every
// authenticated user may send; TestEveryKeyIsAuthorized keeps the two
// lists covering every served key.
//
// Each rule puts its code in every element of the response, as Kafka's
// getErrorResponse does for a request refused as a whole. Where Kafka
// first answers a topic unknown to a principal that may describe it
// (UNKNOWN_TOPIC_OR_PARTITION before TOPIC_AUTHORIZATION_FAILED in
// DeleteTopics), the read user is refused all the same: whether a topic
// exists is what Metadata tells them.
//
// Metadata's topic auto-creation is not a refusal of the request: the
// handler answers TOPIC_AUTHORIZATION_FAILED for the topics it would have
// created (KafkaApis.getTopicMetadata's unauthorizedForCreateTopics).

// Config resource types besides configs.go's (ConfigResource.Type).
const (
	resourceBrokerLogger int8 = 8
	resourceGroup        int8 = 32
)

// refusal answers a read user's request: a response, or nil and an error
// (Produce with acks=0 closes the connection, as a broker does after a
// failed acks=0 produce).
type refusal func(cn *conn, req kmsg.Request) (kmsg.Response, error)

// rule adapts a typed refusal to the table.
func rule[R kmsg.Request](f func(cn *conn, r R, msg *string) (kmsg.Response, error)) refusal {
	return func(cn *conn, req kmsg.Request) (kmsg.Response, error) {
		msg := cn.principal() + " may read only"
		return f(cn, req.(R), &msg)
	}
}

// readerRefusals: the write APIs, by key.
var readerRefusals = map[int16]refusal{
	// Produce: WRITE on the transactional id when a partition's first
	// batch is transactional (RequestUtils.hasTransactionalRecords:
	// TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition), else
	// WRITE on each topic (TOPIC_AUTHORIZATION_FAILED).
	0: rule(func(cn *conn, r *kmsg.ProduceRequest, msg *string) (kmsg.Response, error) {
		if r.Acks == 0 {
			return nil, errAcks0Failed
		}
		code := kerr.TopicAuthorizationFailed.Code
		if hasTransactionalRecords(r) {
			code = kerr.TransactionalIDAuthorizationFailed.Code
		}
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range r.Topics {
			t := kmsg.NewProduceResponseTopic()
			t.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewProduceResponseTopicPartition()
				p.Partition, p.ErrorCode = rp.Partition, code
				p.BaseOffset, p.LogAppendTime, p.LogStartOffset = -1, -1, -1
				if r.Version >= 8 {
					p.ErrorMessage = msg
				}
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil
	}),
	// CreateTopics: CREATE on the cluster or the topic.
	19: rule(func(cn *conn, r *kmsg.CreateTopicsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, msg
			rt.NumPartitions, rt.ReplicationFactor = -1, -1
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// DeleteTopics: DELETE on each topic.
	20: rule(func(cn *conn, r *kmsg.DeleteTopicsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
		add := func(name *string, id [16]byte) {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = name, id, kerr.TopicAuthorizationFailed.Code, msg
			resp.Topics = append(resp.Topics, rt)
		}
		if r.Version < 6 {
			for _, name := range r.TopicNames {
				add(kmsg.StringPtr(name), [16]byte{})
			}
		}
		for _, t := range r.Topics {
			add(t.Topic, t.TopicID)
		}
		return resp, nil
	}),
	// DeleteRecords: DELETE on each topic.
	21: rule(func(cn *conn, r *kmsg.DeleteRecordsRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewDeleteRecordsResponseTopic()
			rt.Topic = t.Topic
			for _, q := range t.Partitions {
				rp := kmsg.NewDeleteRecordsResponseTopicPartition()
				rp.Partition, rp.LowWatermark, rp.ErrorCode = q.Partition, -1, kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// InitProducerId: WRITE on the transactional id, or without one
	// IDEMPOTENT_WRITE on the cluster (or WRITE on some topic).
	22: rule(func(cn *conn, r *kmsg.InitProducerIDRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ProducerID, resp.ProducerEpoch = -1, -1
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		if r.TransactionalID != nil {
			resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		}
		return resp, nil
	}),
	// AddPartitionsToTxn: v0-v3 (clients) WRITE on the transactional id,
	// for every partition; v4+ come from brokers and need CLUSTER_ACTION,
	// refused as a whole.
	24: rule(func(cn *conn, r *kmsg.AddPartitionsToTxnRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
		if r.Version >= 4 {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return resp, nil
		}
		for _, t := range r.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, kerr.TransactionalIDAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// AddOffsetsToTxn: WRITE on the transactional id (before READ on the
	// group).
	25: rule(func(cn *conn, r *kmsg.AddOffsetsToTxnRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}),
	// EndTxn: WRITE on the transactional id.
	26: rule(func(cn *conn, r *kmsg.EndTxnRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = kerr.TransactionalIDAuthorizationFailed.Code, -1, -1
		return resp, nil
	}),
	// TxnOffsetCommit: WRITE on the transactional id (before READ on the
	// group), for every partition.
	28: rule(func(cn *conn, r *kmsg.TxnOffsetCommitRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.TransactionalIDAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// CreatePartitions: ALTER on each topic.
	37: rule(func(cn *conn, r *kmsg.CreatePartitionsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, msg
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// DeleteGroups: DELETE on each group.
	42: rule(func(cn *conn, r *kmsg.DeleteGroupsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, name := range r.Groups {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = name, kerr.GroupAuthorizationFailed.Code
			if r.Version >= 3 {
				g.ErrorMessage = msg
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp, nil
	}),
	// IncrementalAlterConfigs: ALTER_CONFIGS on each resource
	// (KafkaApis.configsAuthorizationApiError: a broker or broker logger
	// is the cluster's, a topic and a group their own; another type is
	// INVALID_REQUEST).
	44: rule(func(cn *conn, r *kmsg.IncrementalAlterConfigsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, res := range r.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorMessage = res.ResourceType, res.ResourceName, msg
			rr.ErrorCode = alterConfigsRefusal(int8(res.ResourceType), true)
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil
	}),
	// AlterConfigs: ALTER_CONFIGS on each resource, as
	// IncrementalAlterConfigs (44).
	33: rule(func(cn *conn, r *kmsg.AlterConfigsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, res := range r.Resources {
			rr := kmsg.NewAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorMessage = res.ResourceType, res.ResourceName, msg
			rr.ErrorCode = alterConfigsRefusal(int8(res.ResourceType), false)
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil
	}),
	// ElectLeaders: ALTER on the cluster, refused as a whole (v1+; v0
	// has no top-level error, so every partition).
	43: rule(func(cn *conn, r *kmsg.ElectLeadersRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for _, t := range r.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, n := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = n, kerr.ClusterAuthorizationFailed.Code, msg
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// AlterPartitionReassignments: ALTER on the cluster, refused as a
	// whole (and every partition, as getErrorResponse answers).
	45: rule(func(cn *conn, r *kmsg.AlterPartitionAssignmentsRequest, msg *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, msg
		for _, t := range r.Topics {
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, kerr.ClusterAuthorizationFailed.Code, msg
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}),
	// OffsetDelete: DELETE on the group, refused as a whole.
	47: rule(func(cn *conn, r *kmsg.OffsetDeleteRequest, _ *string) (kmsg.Response, error) {
		resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}),
}

// readAPIs are the keys every authenticated user may send: READ and
// DESCRIBE of topics, groups, transactional ids and the cluster, and the
// exchange before authentication. Keys other engineers serve next
// (DescribeTransactions 65, ListTransactions 66, KIP-848's
// ConsumerGroupHeartbeat 68 and ConsumerGroupDescribe 69) are read APIs
// too.
var readAPIs = map[int16]bool{
	1: true, 2: true, 3: true, 8: true, 9: true, 10: true, 11: true, 12: true, 13: true, 14: true,
	15: true, 16: true, 17: true, 18: true, 23: true, 32: true, 35: true, 36: true, 46: true, 60: true, 61: true,
	65: true, 66: true, 68: true, 69: true,
}

// refuseReader is the table's answer to a read user's request, or false
// when the connection may send it.
func (cn *conn) refuseReader(key int16, req kmsg.Request) (kmsg.Response, error, bool) {
	f := readerRefusals[key]
	if f == nil || cn.mayWrite() {
		return nil, nil, false
	}
	resp, err := f(cn, req)
	return resp, err, true
}

// hasTransactionalRecords reports whether some partition's first batch is
// a v2 batch with the transactional attribute
// (RequestUtils.hasTransactionalRecords).
func hasTransactionalRecords(r *kmsg.ProduceRequest) bool {
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			b := p.Records
			if len(b) > posAttributes+2 && b[posMagic] == 2 && binary.BigEndian.Uint16(b[posAttributes:])&0x10 != 0 {
				return true
			}
		}
	}
	return false
}

// alterConfigsRefusal is the code a resource of an (Incremental)AlterConfigs
// gets when ALTER_CONFIGS is refused (KafkaApis.configsAuthorizationApiError):
// a broker or broker logger is the cluster's, a topic its own, a group its
// own where the request can name one (IncrementalAlterConfigs); another
// type is INVALID_REQUEST.
func alterConfigsRefusal(resourceType int8, groups bool) int16 {
	switch {
	case resourceType == resourceBroker || resourceType == resourceBrokerLogger:
		return kerr.ClusterAuthorizationFailed.Code
	case resourceType == resourceTopic:
		return kerr.TopicAuthorizationFailed.Code
	case resourceType == resourceGroup && groups:
		return kerr.GroupAuthorizationFailed.Code
	}
	return kerr.InvalidRequest.Code
}
