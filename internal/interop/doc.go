// Package interop writes and checks klog's schema fixtures
// (schema/testdata/confluent) with a serializer no one here wrote:
// confluent-kafka-go's schemaregistry/serde packages and their mock
// registry client.
//
// confluent-kafka-go is large and needs cgo, so this is a module of its
// own (klog's go.mod never requires it); .ci/run runs its tests:
//
//	cd internal/interop && go test ./...
//
// TestDecodedValuesEqualConfluent decodes the committed fixtures with
// package schema and with confluent's deserializers and compares;
// TestFixturesAreCurrent checks they are what the serializers write;
// `go test ... -run TestGenerate -args -write` rewrites them.
//
// TestLibrdkafkaConsumerProtocol runs librdkafka 2.11 (bundled with
// confluent-kafka-go) against `klog serve` as a library with
// group.protocol=consumer (KIP-848): three members share a topic exactly
// once and take over a leaving member's partitions, and `klog groups`
// reads the group serve wrote; TestLibrdkafkaStaticMemberRestart restarts a
// static member (group.instance.id) without a rebalance.
package interop
