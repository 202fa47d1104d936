package interop

// Build registers the fixture's schemas in confluent-kafka-go's mock
// registry and serializes the records with its serializers; StoreRecords
// is the `_schemas` topic a registry would have written for them.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Registration is one schema registered, in order; the store record the
// registry would write for it follows from it.
type Registration struct {
	Subject    string
	Version    int
	ID         int
	Type       string // "AVRO", "PROTOBUF", "JSON"
	Schema     string
	References []schemaregistry.Reference
}

// Deletion is a subject deleted after its records were written.
type Deletion struct {
	Subject   string
	Versions  []int
	Permanent bool
}

// Record is one record of a fixture topic.
type Record struct {
	Topic string
	Key   []byte
	Value []byte
	// What says what the record is for.
	What string
}

// Fixture is everything Build made.
type Fixture struct {
	Client        schemaregistry.Client
	Registrations []Registration
	Deletions     []Deletion
	Records       []Record
	Protos        map[string]string // .proto sources by import path
}

const addressAvro = `{"type":"record","name":"Address","namespace":"com.example","fields":[` +
	`{"name":"street","type":"string"},{"name":"city","type":"string"},` +
	`{"name":"zip","type":["null","string"],"default":null}]}`

const orderAvroV1 = `{"type":"record","name":"Order","namespace":"com.example","fields":[` +
	`{"name":"id","type":"long"},{"name":"customer","type":"string"},{"name":"amount","type":"double"},` +
	`{"name":"quantity","type":"int"},{"name":"ratio","type":"float"},` +
	`{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},` +
	`{"name":"tags","type":{"type":"array","items":"string"}},` +
	`{"name":"attributes","type":{"type":"map","values":"long"}},` +
	`{"name":"note","type":["null","string"],"default":null},` +
	`{"name":"shipTo","type":"Address"},` +
	`{"name":"billTo","type":["null","Address"],"default":null},` +
	`{"name":"created","type":{"type":"long","logicalType":"timestamp-millis"}},` +
	`{"name":"checksum","type":"bytes"},` +
	`{"name":"code","type":{"type":"fixed","name":"Code","size":4}},` +
	`{"name":"gift","type":"boolean"}]}`

// orderAvroV2 adds a field with a default: a second version of the subject.
var orderAvroV2 = strings.Replace(orderAvroV1, `{"name":"gift","type":"boolean"}]}`,
	`{"name":"gift","type":"boolean"},{"name":"channel","type":"string","default":"web"}]}`, 1)

const legacyAvro = `{"type":"record","name":"Legacy","namespace":"com.example.old","fields":[{"name":"v","type":"int"}]}`
const goneAvro = `{"type":"record","name":"Gone","namespace":"com.example.old","fields":[{"name":"w","type":"string"}]}`

const moneyProto = `syntax = "proto3";
package com.example.common;

message Money {
  string currency = 1;
  int64 units = 2;
  int32 nanos = 3;
}
`

const paymentProto = `syntax = "proto3";
package com.example.payments;

import "common/money.proto";
import "google/protobuf/timestamp.proto";

message Payment {
  enum Status {
    UNKNOWN = 0;
    AUTHORIZED = 1;
    SETTLED = 2;
  }
  message Refund {
    string payment_id = 1;
    com.example.common.Money amount = 2;
    string reason = 3;
  }
  string id = 1;
  com.example.common.Money amount = 2;
  Status status = 3;
  repeated string tags = 4;
  google.protobuf.Timestamp at = 5;
  oneof method {
    string card = 6;
    string iban = 7;
  }
  bytes signature = 8;
}

message Chargeback {
  string payment_id = 1;
  int32 code = 2;
  double fee = 3;
}
`

const addressJSONSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Address","type":"object",` +
	`"properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["city"]}`

const userJSONSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"User","type":"object",` +
	`"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},"email":{"type":"string"},` +
	`"address":{"$ref":"address.json"},"roles":{"type":"array","items":{"type":"string"}}},"required":["name","age"]}`

// UnknownID is a schema id no registration has.
const UnknownID = 999

// Build registers the schemas and serializes the records, deterministically.
func Build() (*Fixture, error) {
	c, err := schemaregistry.NewClient(schemaregistry.NewConfig("mock://fixtures"))
	if err != nil {
		return nil, err
	}
	f := &Fixture{Client: c, Protos: map[string]string{"common/money.proto": moneyProto, "payments.proto": paymentProto}}
	reg := func(subject, typ, text string, refs ...schemaregistry.Reference) error {
		info := schemaregistry.SchemaInfo{Schema: text, SchemaType: typ, References: refs}
		md, err := c.RegisterFullResponse(subject, info, false)
		if err != nil {
			return fmt.Errorf("register %s: %w", subject, err)
		}
		// The mock answers no version on registration; ask for it.
		if md.Version, err = c.GetVersion(subject, info, false); err != nil {
			return fmt.Errorf("version of %s: %w", subject, err)
		}
		f.Registrations = append(f.Registrations, Registration{Subject: subject, Version: md.Version, ID: md.ID,
			Type: typeOrAvro(typ), Schema: text, References: refs})
		return nil
	}
	steps := []func() error{
		func() error { return reg("common-address", "AVRO", addressAvro) },
		func() error { return reg("orders-key", "AVRO", `"string"`) },
		func() error {
			return reg("orders-value", "AVRO", orderAvroV1, schemaregistry.Reference{Name: "com.example.Address", Subject: "common-address", Version: 1})
		},
		func() error { return reg("common-money", "PROTOBUF", moneyProto) },
		func() error {
			return reg("payments-value", "PROTOBUF", paymentProto, schemaregistry.Reference{Name: "common/money.proto", Subject: "common-money", Version: 1})
		},
		func() error { return reg("common-address-json", "JSON", addressJSONSchema) },
		func() error {
			return reg("users-value", "JSON", userJSONSchema, schemaregistry.Reference{Name: "address.json", Subject: "common-address-json", Version: 1})
		},
		func() error { return reg("legacy-value", "AVRO", legacyAvro) },
		func() error { return reg("gone-value", "AVRO", goneAvro) },
		f.avroRecords,
		func() error {
			return reg("orders-value", "AVRO", orderAvroV2, schemaregistry.Reference{Name: "com.example.Address", Subject: "common-address", Version: 1})
		},
		f.avroRecordsV2,
		f.protoRecords,
		f.jsonRecords,
		f.deletions,
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func typeOrAvro(t string) string {
	if t == "" {
		return "AVRO"
	}
	return t
}

func latestSerializer[S interface {
	Serialize(string, interface{}) ([]byte, error)
}](mk func(*serde.SerializerConfig) (S, error)) (S, error) {
	conf := serde.NewSerializerConfig()
	conf.AutoRegisterSchemas = false
	conf.UseLatestVersion = true
	return mk(conf)
}

func (f *Fixture) avroSerializer(t serde.Type) (*avrov2.Serializer, error) {
	return latestSerializer(func(c *serde.SerializerConfig) (*avrov2.Serializer, error) {
		conf := avrov2.NewSerializerConfig()
		conf.SerializerConfig = *c
		return avrov2.NewSerializer(f.Client, t, conf)
	})
}

func order(id int64, customer string, billTo bool, note any) map[string]any {
	o := map[string]any{
		"id": id, "customer": customer, "amount": 12.5 * float64(id), "quantity": int(id) * 3, "ratio": float32(0.25),
		"status": []string{"NEW", "PAID", "SHIPPED"}[id%3], "tags": []any{"a", fmt.Sprintf("t%d", id)},
		"attributes": map[string]any{"weight": int64(100 + id)}, // one entry: a map's order is Go's
		"note":       note,
		"shipTo":     map[string]any{"street": "1 Main St", "city": "Springfield", "zip": "12345"},
		"created":    int64(1700000000000 + id*1000),
		"checksum":   []byte{0x00, 0xff, byte(id), 0x7f},
		"code":       [4]byte{'A', 'B', byte('0' + id%10), 'Z'},
		"gift":       id%2 == 0,
	}
	if billTo {
		o["billTo"] = map[string]any{"com.example.Address": map[string]any{"street": "2 Side St", "city": "Shelbyville", "zip": nil}}
	} else {
		o["billTo"] = nil
	}
	return o
}

func (f *Fixture) avroRecords() error {
	vs, err := f.avroSerializer(serde.ValueSerde)
	if err != nil {
		return err
	}
	ks, err := f.avroSerializer(serde.KeySerde)
	if err != nil {
		return err
	}
	for i := int64(1); i <= 4; i++ {
		var note any
		if i%2 == 1 {
			note = "leave at the door ünïcødé \"quoted\""
		}
		key := fmt.Sprintf("order-%d", i)
		k, err := ks.Serialize("orders", &key)
		if err != nil {
			return err
		}
		o := order(i, fmt.Sprintf("customer %d", i), i%2 == 0, note)
		v, err := vs.Serialize("orders", &o)
		if err != nil {
			return fmt.Errorf("serialize order %d: %w", i, err)
		}
		f.Records = append(f.Records, Record{Topic: "orders", Key: k, Value: v, What: "avro, orders-value v1, key orders-key"})
	}
	// The corrupted value: a real payload cut inside its last field.
	last := f.Records[len(f.Records)-1]
	cut := append([]byte(nil), last.Value[:len(last.Value)-3]...)
	f.Records = append(f.Records, Record{Topic: "orders", Key: last.Key, Value: cut, What: "avro, corrupted: cut short"})
	// The unknown schema id: a real payload framed with an id nothing has.
	unknown := append([]byte{0, 0, 0, UnknownID >> 8, UnknownID & 0xff}, last.Value[5:]...)
	f.Records = append(f.Records, Record{Topic: "orders", Key: last.Key, Value: unknown, What: "avro, unknown schema id"})
	// A tombstone.
	f.Records = append(f.Records, Record{Topic: "orders", Key: last.Key, What: "null value"})

	for _, t := range []struct {
		topic, what string
		v           map[string]any
	}{
		{"legacy", "avro, subject soft-deleted later", map[string]any{"v": 42}},
		{"gone", "avro, subject hard-deleted later", map[string]any{"w": "bye"}},
	} {
		v, err := vs.Serialize(t.topic, &t.v)
		if err != nil {
			return fmt.Errorf("serialize %s: %w", t.topic, err)
		}
		f.Records = append(f.Records, Record{Topic: t.topic, Key: []byte(t.topic), Value: v, What: t.what})
	}
	return nil
}

func (f *Fixture) avroRecordsV2() error {
	vs, err := f.avroSerializer(serde.ValueSerde)
	if err != nil {
		return err
	}
	o := order(5, "customer five", true, nil)
	o["channel"] = "store"
	v, err := vs.Serialize("orders", &o)
	if err != nil {
		return fmt.Errorf("serialize order v2: %w", err)
	}
	f.Records = append(f.Records, Record{Topic: "orders", Key: []byte("plain-key"), Value: v, What: "avro, orders-value v2, key not framed"})
	return nil
}

// CompileProtos compiles the fixture's .proto sources as the schemas in
// the registry say (the well-known imports from protocompile).
func CompileProtos(srcs map[string]string) (protoreflect.FileDescriptor, error) {
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(p string) (io.ReadCloser, error) {
			if s, ok := srcs[p]; ok {
				return io.NopCloser(strings.NewReader(s)), nil
			}
			return nil, fmt.Errorf("%s: no such file", p)
		},
	})}
	files, err := comp.Compile(context.Background(), "payments.proto")
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

func (f *Fixture) protoRecords() error {
	fd, err := CompileProtos(f.Protos)
	if err != nil {
		return err
	}
	ps, err := latestSerializer(func(c *serde.SerializerConfig) (*protobuf.Serializer, error) {
		conf := protobuf.NewSerializerConfig()
		conf.SerializerConfig = *c
		return protobuf.NewSerializer(f.Client, serde.ValueSerde, conf)
	})
	if err != nil {
		return err
	}
	msgs := []struct {
		name, js, what string
	}{
		{"com.example.payments.Payment", `{"id":"p-1","amount":{"currency":"EUR","units":"12","nanos":500000000},"status":"AUTHORIZED","tags":["x","y"],"at":"2023-11-14T22:13:20Z","card":"4111","signature":"AP8Q"}`, "protobuf, the first message (index path [0])"},
		{"com.example.payments.Payment.Refund", `{"paymentId":"p-1","amount":{"currency":"EUR","units":"2"},"reason":"damaged"}`, "protobuf, a nested message (index path [0, 0])"},
		{"com.example.payments.Chargeback", `{"paymentId":"p-2","code":4837,"fee":1.25}`, "protobuf, the second message (index path [1])"},
		{"com.example.payments.Payment", `{"id":"p-3","iban":"DE00","status":"SETTLED"}`, "protobuf, the first message again"},
	}
	for _, m := range msgs {
		md, err := findMessage(fd, m.name)
		if err != nil {
			return err
		}
		msg := dynamicpb.NewMessage(md)
		if err := protojson.Unmarshal([]byte(m.js), msg); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		v, err := ps.Serialize("payments", msg)
		if err != nil {
			return fmt.Errorf("serialize %s: %w", m.name, err)
		}
		f.Records = append(f.Records, Record{Topic: "payments", Key: []byte(m.name), Value: v, What: m.what})
	}
	return nil
}

func findMessage(fd protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	d := fd.Messages().ByName(protoreflect.FullName(name).Name())
	if d != nil && string(d.FullName()) == name {
		return d, nil
	}
	for i := 0; i < fd.Messages().Len(); i++ {
		if n := fd.Messages().Get(i).Messages().ByName(protoreflect.FullName(name).Name()); n != nil && string(n.FullName()) == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no message %s", name)
}

// MessageFactory makes the dynamic message confluent's protobuf
// deserializer asks for by name.
func MessageFactory(fd protoreflect.FileDescriptor) serde.MessageFactory {
	return func(_ string, name string) (interface{}, error) {
		md, err := findMessage(fd, name)
		if err != nil {
			return nil, err
		}
		return dynamicpb.NewMessage(md), nil
	}
}

func (f *Fixture) jsonRecords() error {
	js, err := latestSerializer(func(c *serde.SerializerConfig) (*jsonschema.Serializer, error) {
		conf := jsonschema.NewSerializerConfig()
		conf.SerializerConfig = *c
		return jsonschema.NewSerializer(f.Client, serde.ValueSerde, conf)
	})
	if err != nil {
		return err
	}
	users := []struct {
		v    any
		what string
	}{
		{map[string]any{"name": "Ada", "age": 36, "email": "ada@example.com", "address": map[string]any{"street": "12 Analytical Way", "city": "London"}, "roles": []any{"admin"}}, "json schema, with a referenced schema"},
		{map[string]any{"name": "Bob", "age": 7}, "json schema"},
		{map[string]any{"name": "Eve", "age": -1}, "json schema, a value that does not validate (age below 0)"},
	}
	for _, u := range users {
		v, err := js.Serialize("users", u.v)
		if err != nil {
			return err
		}
		f.Records = append(f.Records, Record{Topic: "users", Key: nil, Value: v, What: u.what})
	}
	return nil
}

func (f *Fixture) deletions() error {
	for _, d := range []Deletion{
		{Subject: "legacy-value"},
		{Subject: "gone-value"},
		{Subject: "gone-value", Permanent: true},
	} {
		vs, err := f.Client.DeleteSubject(d.Subject, d.Permanent)
		if err != nil {
			return fmt.Errorf("delete %s: %w", d.Subject, err)
		}
		d.Versions = vs
		f.Deletions = append(f.Deletions, d)
	}
	return nil
}

// Deserialize runs confluent's own deserializer for the record's topic over
// its value and returns the value as JSON: Avro's generic value and JSON
// Schema's value through encoding/json, Protobuf's message through
// protojson. The error is the deserializer's.
func (f *Fixture) Deserialize(topic string, t serde.Type, payload []byte) (json.RawMessage, error) {
	switch topic {
	case "orders", "legacy", "gone":
		d, err := avrov2.NewDeserializer(f.Client, t, avrov2.NewDeserializerConfig())
		if err != nil {
			return nil, err
		}
		var v any // the generic value: DeserializeInto a *any
		if err := d.DeserializeInto(topic, payload, &v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	case "payments":
		fd, err := CompileProtos(f.Protos)
		if err != nil {
			return nil, err
		}
		d, err := protobuf.NewDeserializer(f.Client, t, protobuf.NewDeserializerConfig())
		if err != nil {
			return nil, err
		}
		d.MessageFactory = MessageFactory(fd)
		v, err := d.Deserialize(topic, payload)
		if err != nil {
			return nil, err
		}
		return protojson.Marshal(v.(proto.Message))
	case "users":
		// Validation stays off: confluent's deserializer validates the
		// pointer it decoded into, which fails for generic values ("invalid
		// jsonType: *interface {}"); klog's validation is tested on its own.
		conf := jsonschema.NewDeserializerConfig()
		d, err := jsonschema.NewDeserializer(f.Client, t, conf)
		if err != nil {
			return nil, err
		}
		var v any
		if err := d.DeserializeInto(topic, payload, &v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("no deserializer for topic %s", topic)
}
