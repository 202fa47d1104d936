package interop

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/produce"
)

var rewrite = flag.Bool("write", false, "rewrite schema/testdata/confluent")

// TestGenerate rewrites the fixtures with -write (see the package doc);
// without it, it does nothing.
func TestGenerate(t *testing.T) {
	if !*rewrite {
		t.Skip("-write rewrites the fixtures")
	}
	if err := generate(fixtures); err != nil {
		t.Fatal(err)
	}
}

// Expected is what confluent's deserializer returned for one record.
type Expected struct {
	Topic     string          `json:"topic"`
	Offset    int64           `json:"offset"`
	What      string          `json:"what"`
	Key       json.RawMessage `json:"key,omitempty"`
	KeyError  string          `json:"keyError,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	ValueNull bool            `json:"valueNull,omitempty"`
	Error     string          `json:"error,omitempty"`
}

func generate(out string) error {
	f, err := Build()
	if err != nil {
		return err
	}
	recs := append(f.StoreRecords(), f.Records...)
	byTopic := map[string][]Record{}
	var topics []string
	for _, r := range recs {
		if byTopic[r.Topic] == nil {
			topics = append(topics, r.Topic)
		}
		byTopic[r.Topic] = append(byTopic[r.Topic], r)
	}
	var expected []Expected
	for _, t := range topics {
		dir := filepath.Join(out, t+"-0")
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := write(dir, t, byTopic[t]); err != nil {
			return err
		}
		if t == "_schemas" {
			continue
		}
		for i, r := range byTopic[t] {
			e := Expected{Topic: t, Offset: int64(i), What: r.What}
			if t == "orders" && r.Key != nil && r.Key[0] == 0 {
				k, err := f.Deserialize(t, serde.KeySerde, r.Key)
				e.Key = k
				if err != nil {
					e.KeyError = err.Error()
				}
			}
			if r.Value == nil {
				e.ValueNull = true
			} else if v, err := f.Deserialize(t, serde.ValueSerde, r.Value); err != nil {
				e.Error = err.Error()
			} else {
				e.Value = v
			}
			expected = append(expected, e)
		}
	}
	b, err := json.MarshalIndent(expected, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "expected.json"), append(b, '\n'), 0o644)
}

func write(dir, topic string, recs []Record) error {
	id := sha256.Sum256([]byte(topic))
	var tid [16]byte
	copy(tid[:], id[:])
	tid[6] = tid[6]&0x0f | 0x40 // a version 4 id, as Uuid.randomUuid
	tid[8] = tid[8]&0x3f | 0x80
	clock := time.UnixMilli(1700000000000)
	a, err := produce.Open(dir, produce.Options{Sync: produce.SyncNever, TopicID: tid, Now: func() time.Time { return clock }})
	if err != nil {
		return err
	}
	for i, r := range recs {
		b := &produce.Batch{Records: []format.Record{{
			Key: r.Key, Value: r.Value, Timestamp: 1700000000000 + int64(i)*1000,
			Headers: []format.Header{{Key: []byte("what"), Value: []byte(r.What)}},
		}}}
		if r.What == "" {
			b.Records[0].Headers = nil
		}
		if _, err := a.Append(b); err != nil {
			a.Close()
			return err
		}
	}
	return a.Close()
}
