package serve

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The consumer group keys' fuzz targets (fuzz_test.go's fuzzKey), with
// seeds that join, heartbeat, leave and describe, so the fuzzer starts
// from requests the coordinator takes.
func init() {
	fuzzedKeys = append(fuzzedKeys, 68, 69)
	inst, regex, assignor := "i", "n.*", "range"
	moreSeedRequests = append(moreSeedRequests,
		&kmsg.ConsumerGroupHeartbeatRequest{Version: 1, Group: "cg", MemberID: "m", MemberEpoch: 0, RebalanceTimeoutMillis: 1000,
			SubscribedTopicNames: []string{"none"}, Topics: []kmsg.ConsumerGroupHeartbeatRequestTopic{}},
		&kmsg.ConsumerGroupHeartbeatRequest{Version: 1, Group: "cg", MemberID: "s", MemberEpoch: 0, RebalanceTimeoutMillis: 1000, InstanceID: &inst,
			SubscribedTopicRegex: &regex, ServerAssignor: &assignor, Topics: []kmsg.ConsumerGroupHeartbeatRequestTopic{}},
		&kmsg.ConsumerGroupHeartbeatRequest{Version: 1, Group: "cg", MemberID: "m", MemberEpoch: 1, RebalanceTimeoutMillis: -1,
			Topics: []kmsg.ConsumerGroupHeartbeatRequestTopic{{Partitions: []int32{0}}}},
		&kmsg.ConsumerGroupHeartbeatRequest{Version: 1, Group: "cg", MemberID: "s", MemberEpoch: -2, InstanceID: &inst, RebalanceTimeoutMillis: -1},
		&kmsg.ConsumerGroupHeartbeatRequest{Version: 0, Group: "cg", MemberEpoch: 0, RebalanceTimeoutMillis: 1000,
			SubscribedTopicNames: []string{}, Topics: []kmsg.ConsumerGroupHeartbeatRequestTopic{}},
		&kmsg.ConsumerGroupHeartbeatRequest{Version: 1, Group: "cg", MemberID: "m", MemberEpoch: -1, RebalanceTimeoutMillis: -1},
		&kmsg.ConsumerGroupDescribeRequest{Version: 1, Groups: []string{"cg", "fg", ""}, IncludeAuthorizedOperations: true},
	)
}

func FuzzConsumerGroupHeartbeat(f *testing.F) { fuzzKey(f, 68) }
func FuzzConsumerGroupDescribe(f *testing.F)  { fuzzKey(f, 69) }
