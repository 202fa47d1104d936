package kraft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/klog-dev/klog/internal/klogtest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func referenceMetadataDirs() []string { return klogtest.ReferencePartitions("__cluster_metadata-0") }

// dumpRecord is one record as Kafka's kafka-dump-log
// --cluster-metadata-decoder printed it.
type dumpRecord struct {
	offset int64
	typ    string
	data   map[string]any
}

// readDecoderDump reads the "| offset: N ... payload: {...}" lines of a
// real kafka-dump-log output (F.decoder.txt beside each fixture file).
func readDecoderDump(t *testing.T, path string) []dumpRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dumpRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, " payload: {")
		if !strings.HasPrefix(line, "| offset: ") || i < 0 {
			continue
		}
		off, err := strconv.ParseInt(strings.Fields(line)[2], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", path, line)
		}
		var rec struct {
			Type string
			Data map[string]any
		}
		if err := json.Unmarshal([]byte(line[i+len(" payload: "):]), &rec); err != nil {
			t.Fatalf("%s: %v: %q", path, err, line)
		}
		out = append(out, dumpRecord{off, rec.Type, rec.Data})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// miniImage is the test's own replay of Kafka's printed records: only
// topics, partitions (leader, epochs, ISR, replicas) and broker fencing,
// written from the JSON independently of the package under test.
type miniImage struct {
	topics  map[string]string // id -> name
	state   map[string][5]any
	brokers map[float64]bool // id -> fenced
}

func (m *miniImage) apply(r dumpRecord) {
	d := r.data
	key := func() string { return fmt.Sprintf("%v/%v", d["topicId"], d["partitionId"]) }
	switch r.typ {
	case "TOPIC_RECORD":
		m.topics[d["topicId"].(string)] = d["name"].(string)
	case "REMOVE_TOPIC_RECORD":
		delete(m.topics, d["topicId"].(string))
	case "PARTITION_RECORD":
		m.state[key()] = [5]any{d["leader"], d["leaderEpoch"], d["partitionEpoch"], fmt.Sprint(d["isr"]), fmt.Sprint(d["replicas"])}
	case "PARTITION_CHANGE_RECORD":
		s := m.state[key()]
		if l, ok := d["leader"]; ok {
			s[0], s[1] = l, s[1].(float64)+1
		}
		if v, ok := d["isr"]; ok {
			s[3] = fmt.Sprint(v)
		}
		if v, ok := d["replicas"]; ok {
			s[4] = fmt.Sprint(v)
		}
		s[2] = s[2].(float64) + 1
		m.state[key()] = s
	case "REGISTER_BROKER_RECORD":
		m.brokers[d["brokerId"].(float64)] = d["fenced"] != false
	case "UNREGISTER_BROKER_RECORD":
		delete(m.brokers, d["brokerId"].(float64))
	case "FENCE_BROKER_RECORD":
		m.brokers[d["id"].(float64)] = true
	case "UNFENCE_BROKER_RECORD":
		m.brokers[d["id"].(float64)] = false
	case "BROKER_REGISTRATION_CHANGE_RECORD":
		switch d["fenced"] {
		case 1.0:
			m.brokers[d["brokerId"].(float64)] = true
		case -1.0:
			m.brokers[d["brokerId"].(float64)] = false
		}
	}
}

// TestReferenceImages: the image of each real __cluster_metadata
// partition equals the test's own replay of what Kafka's kafka-dump-log
// printed for the same records (the snapshot, then the log after it).
func TestReferenceImages(t *testing.T) {
	t.Parallel()
	dirs := referenceMetadataDirs()
	if len(dirs) == 0 {
		t.Skip("no reference __cluster_metadata partitions on this machine")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			im := load(t, dir, Options{UpTo: -1})
			if im.ProblemCount != 0 {
				t.Errorf("problems: %v", im.Problems)
			}
			m := &miniImage{topics: map[string]string{}, state: map[string][5]any{}, brokers: map[float64]bool{}}
			from := int64(0)
			snaps, _ := Snapshots(dir)
			if len(snaps) > 0 {
				s := snaps[len(snaps)-1]
				for _, r := range readDecoderDump(t, s.Path+".decoder.txt") {
					m.apply(r)
				}
				from = s.EndOffset
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log.decoder.txt"))
			var txn []dumpRecord
			inTxn := false
			for _, l := range logs {
				for _, r := range readDecoderDump(t, l) {
					switch {
					case r.offset < from:
					case r.typ == "BEGIN_TRANSACTION_RECORD":
						inTxn, txn = true, nil
					case r.typ == "END_TRANSACTION_RECORD":
						for _, x := range txn {
							m.apply(x)
						}
						inTxn = false
					case r.typ == "ABORT_TRANSACTION_RECORD":
						inTxn = false
					case inTxn:
						txn = append(txn, r)
					default:
						m.apply(r)
					}
				}
			}
			if len(im.Topics) != len(m.topics) {
				t.Errorf("%d topics, Kafka's records give %d", len(im.Topics), len(m.topics))
			}
			n := 0
			for id, name := range m.topics {
				top := im.Topic(name)
				if top == nil || top.ID.String() != id {
					t.Errorf("topic %s (%s): %+v", name, id, top)
					continue
				}
				for _, p := range top.Partitions {
					n++
					want := m.state[fmt.Sprintf("%s/%d", id, p.Partition)]
					got := [5]any{float64(p.Leader), float64(p.LeaderEpoch), float64(p.PartitionEpoch), fmt.Sprint(toAny(p.Isr)), fmt.Sprint(toAny(p.Replicas))}
					if got != want {
						t.Errorf("%s-%d: %v, Kafka's records give %v", name, p.Partition, got, want)
					}
				}
			}
			if n == 0 || len(im.Brokers) != len(m.brokers) {
				t.Errorf("%d partitions; %d brokers, Kafka's records give %d", n, len(im.Brokers), len(m.brokers))
			}
			for _, b := range im.Brokers {
				if m.brokers[float64(b.ID)] != b.Fenced {
					t.Errorf("broker %d fenced %v", b.ID, b.Fenced)
				}
			}
		})
	}
}

func toAny(v []int32) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
