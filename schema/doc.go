// Package schema decodes and encodes record keys and values written by
// Confluent's serializers: Avro, Protobuf and JSON Schema in Confluent's wire
// format (a magic byte 0, a 4-byte big-endian schema id, for Protobuf the
// message-index path, then the encoded value), and finds their schemas
// offline.
//
// Schemas come from a [Source]: the Schema Registry's own `_schemas` topic
// replayed from a partition directory ([ReadTopic], honouring soft deletes,
// hard deletes (tombstones), DELETE_SUBJECT and CLEAR_SUBJECT as the
// registry's KafkaStoreMessageHandler does), schema files or a directory of
// them ([LoadFiles]), or a running registry's REST API ([Registry]).
//
// A [Decoder] turns bytes into a [Value]: what the bytes are (their
// [Format]), the schema that decoded them and the decoded value as JSON. A
// value that does not decode is reported in Value.Err, never a panic, and the
// raw bytes stay with the caller. Every length read from a payload is bounded
// before anything is allocated for it.
package schema
