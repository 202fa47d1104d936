package interop

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/klog-dev/klog/internal/klogtest"
	"github.com/klog-dev/klog/schema"
)

const fixtures = "../../schema/testdata/confluent"

// records reads a fixture partition's records (key, value) with klog's
// own reader.
func records(t *testing.T, topic string) [][2][]byte {
	t.Helper()
	var out [][2][]byte
	for _, r := range klogtest.ReadRecords(t, filepath.Join(fixtures, topic+"-0")) {
		out = append(out, [2][]byte{r.Key, r.Value})
	}
	return out
}

// TestFixturesAreCurrent: the committed partitions hold exactly what
// confluent's serializers write today (rerun ./gen if this fails after a
// deliberate change).
func TestFixturesAreCurrent(t *testing.T) {
	f, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	byTopic := map[string][]Record{}
	for _, r := range append(f.StoreRecords(), f.Records...) {
		byTopic[r.Topic] = append(byTopic[r.Topic], r)
	}
	for topic, want := range byTopic {
		got := records(t, topic)
		if len(got) != len(want) {
			t.Fatalf("%s: %d records, want %d", topic, len(got), len(want))
		}
		for i := range want {
			// Protobuf encodings of the same message may differ in field
			// order; the rest must be byte for byte.
			if topic != "payments" && (!bytes.Equal(got[i][0], want[i].Key) || !bytes.Equal(got[i][1], want[i].Value)) {
				t.Errorf("%s offset %d differs from what the serializer writes now", topic, i)
			}
		}
	}
}

// TestDecodedValuesEqualConfluent decodes every committed record with
// package schema (schemas from the committed `_schemas` partition) and
// with confluent's deserializer (schemas from its mock registry), and
// requires the same answer: both fail, or both decode to the same value.
// Protobuf and JSON Schema values are compared as JSON. klog renders Avro
// in Avro's JSON encoding, which encoding/json cannot make of hamba's
// generic values; so klog's JSON is encoded back with klog's encoder and
// confluent's deserializer must read the same value from those bytes as
// from the original (a value klog rendered wrong, in a union branch, a
// logical type, bytes or a fixed, cannot come back equal).
func TestDecodedValuesEqualConfluent(t *testing.T) {
	f, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	store, findings, err := schema.ReadTopic(filepath.Join(fixtures, "_schemas-0"))
	if err != nil || len(findings) > 0 {
		t.Fatalf("_schemas: %v %v", err, findings)
	}
	dec := schema.NewDecoder(store)
	checked := map[string]int{}
	for _, topic := range []string{"orders", "payments", "users", "legacy", "gone"} {
		for off, kv := range records(t, topic) {
			for i, st := range []serde.Type{serde.KeySerde, serde.ValueSerde} {
				payload := kv[i]
				if payload == nil || (st == serde.KeySerde && (topic != "orders" || payload[0] != 0)) {
					continue
				}
				want, werr := f.Deserialize(topic, st, payload)
				got := dec.Decode(payload, schema.FormatAuto)
				name := topic + "/" + map[serde.Type]string{serde.KeySerde: "key", serde.ValueSerde: "value"}[st]
				switch {
				case werr != nil && got.Err == nil && got.Note == "":
					t.Errorf("%s offset %d: confluent fails (%v), klog decodes %s", name, off, werr, got.JSON)
				case werr == nil && got.Format == schema.FormatJSONSchema && got.JSON != nil:
					// A value that fails validation still decodes (Err
					// says why); confluent's deserializer does not
					// validate here.
					if !jsonEqual(t, got.JSON, want) {
						t.Errorf("%s offset %d: klog %s, confluent %s", name, off, got.JSON, want)
					}
					checked["json-schema"]++
				case werr == nil && (got.Err != nil || got.JSON == nil):
					t.Errorf("%s offset %d: confluent decodes %s, klog: %v %s", name, off, want, got.Err, got.Note)
				case werr == nil && got.Format == schema.FormatAvro:
					back, err := dec.Encode(got.Schema.ID, "", got.JSON)
					if err != nil {
						t.Errorf("%s offset %d: klog's JSON %s does not encode back: %v", name, off, got.JSON, err)
						continue
					}
					again, err := f.Deserialize(topic, st, back)
					if err != nil || !bytes.Equal(again, want) {
						t.Errorf("%s offset %d: from klog's JSON %s confluent reads %s (%v), from the record %s", name, off, got.JSON, again, err, want)
					}
					checked["avro"]++
				case werr == nil:
					if !jsonEqual(t, got.JSON, want) {
						t.Errorf("%s offset %d: klog %s, confluent %s", name, off, got.JSON, want)
					}
					checked[got.Format.String()]++
				default:
					checked["failing"]++
				}
			}
		}
	}
	t.Logf("compared: %v", checked)
	for _, k := range []string{"avro", "protobuf", "json-schema", "failing"} {
		if checked[k] == 0 {
			t.Errorf("no %s record compared", k)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestExpectedIsCurrent: expected.json (what the main module's tests read,
// without cgo) is what confluent's deserializers return now.
func TestExpectedIsCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtures, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"error"`)) {
		t.Fatal("expected.json records no failing record")
	}
}
