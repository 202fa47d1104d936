package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestListOffsetsMatchesKafka: every ListOffsets query Kafka 4.3.1 answered
// for these partitions (../partition/testdata/kafka-listoffsets, its
// PROVENANCE.md) gets the same offset, timestamp and leader epoch from klog
// serve, at both isolation levels.
func TestListOffsetsMatchesKafka(t *testing.T) {
	dir := fixtureLogDir(t, "txn-0", "producer-0", "none-0", "legacy-0")
	_, addr := startServer(t, Config{LogDir: dir})
	w := dial(t, addr)
	type answer struct {
		Offset      int64 `json:"offset"`
		Timestamp   int64 `json:"timestamp"`
		LeaderEpoch any   `json:"leader_epoch"`
	}
	for topic, src := range map[string]string{"txn": "v2-transactions", "producer": "unifiedlog-producer/topic-0",
		"none": "v2-none", "legacy": "unifiedlog-v1/topic-0"} {
		data, err := os.ReadFile(filepath.Join("..", "partition", "testdata", "kafka-listoffsets", src, "kafka-listoffsets.json"))
		if err != nil {
			t.Fatal(err)
		}
		var oracle struct {
			Modes map[string]struct {
				Queries []struct {
					Target      int64  `json:"target"`
					Uncommitted answer `json:"list_offsets_read_uncommitted"`
					Committed   answer `json:"list_offsets_read_committed"`
				} `json:"queries"`
			} `json:"modes"`
		}
		if err := json.Unmarshal(data, &oracle); err != nil {
			t.Fatal(err)
		}
		qs := oracle.Modes["clean_open"].Queries
		if len(qs) == 0 {
			t.Fatalf("%s: no queries", topic)
		}
		for _, q := range qs {
			for iso, want := range []answer{q.Uncommitted, q.Committed} {
				req := kmsg.NewPtrListOffsetsRequest()
				req.Version, req.ReplicaID, req.IsolationLevel = 10, -1, int8(iso)
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = topic
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp, rp.CurrentLeaderEpoch = q.Target, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				got := w.do(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
				wantEpoch := int32(-1)
				if e, ok := want.LeaderEpoch.(float64); ok {
					wantEpoch = int32(e)
				}
				if got.ErrorCode != 0 || got.Offset != want.Offset || got.Timestamp != want.Timestamp || got.LeaderEpoch != wantEpoch {
					t.Errorf("%s target %d isolation %d: error %d offset %d timestamp %d epoch %d, Kafka says offset %d timestamp %d epoch %d",
						topic, q.Target, iso, got.ErrorCode, got.Offset, got.Timestamp, got.LeaderEpoch, want.Offset, want.Timestamp, wantEpoch)
				}
			}
		}
	}
}
