package cluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klog-dev/klog/internal/klogtest"
)

// referenceOffsetsDirs are the real __consumer_offsets partitions of the
// shared fixtures, read in place when this machine has them.
func referenceOffsetsDirs() []string { return klogtest.ReferencePartitions("__consumer_offsets-*") }

// kafkaCommitted is the test's own replay of what Kafka's kafka-dump-log
// --offsets-decoder printed for a partition (the F.decoder.txt beside each
// segment): the last offset commit of each group, topic and partition
// that no tombstone followed, and each group's last metadata (its member
// count, -1 when deleted).
func kafkaCommitted(t *testing.T, dir string) (map[string]int64, map[string]int) {
	t.Helper()
	outs, _ := filepath.Glob(filepath.Join(dir, "*.log.decoder.txt"))
	sort.Strings(outs)
	committed, members := map[string]int64{}, map[string]int{}
	for _, p := range outs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		decoderCommitted(t, p, f, committed, members)
		f.Close()
	}
	return committed, members
}

// decoderCommitted replays one kafka-dump-log --offsets-decoder text
// (Kafka's, or klog dump's, which prints the same bytes) into committed
// and members.
func decoderCommitted(t *testing.T, name string, r io.Reader, committed map[string]int64, members map[string]int) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		ki, pi := strings.Index(line, " key: {"), strings.Index(line, " payload: ")
		if !strings.HasPrefix(line, "| offset: ") || ki < 0 || pi < ki {
			continue
		}
		var key struct {
			Type string
			Data map[string]any
		}
		if err := json.Unmarshal([]byte(line[ki+len(" key: "):pi]), &key); err != nil {
			t.Fatalf("%s: %v: %s", name, err, line)
		}
		payload := line[pi+len(" payload: "):]
		switch key.Type {
		case "0", "1":
			k := fmt.Sprintf("%v/%v/%v", key.Data["group"], key.Data["topic"], key.Data["partition"])
			if payload == "<DELETE>" {
				delete(committed, k)
				continue
			}
			var v struct{ Data struct{ Offset int64 } }
			if err := json.Unmarshal([]byte(payload), &v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			committed[k] = v.Data.Offset
		case "2":
			g := key.Data["group"].(string)
			if payload == "<DELETE>" {
				members[g] = -1
				continue
			}
			var v struct{ Data struct{ Members []any } }
			if err := json.Unmarshal([]byte(payload), &v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			members[g] = len(v.Data.Members)
		}
	}
}

// TestReferenceGroups: the groups of every real __consumer_offsets
// partition (the repository's Kafka-written and licensed ones, and the
// reference-only ones when present) equal the test's replay of Kafka's own decoder output for the
// same records, and each group hashes to the partition its records are in.
func TestReferenceGroups(t *testing.T) {
	t.Parallel()
	dirs := append(referenceOffsetsDirs(),
		"../testdata/segments/kafka-written/coordinator/__consumer_offsets-0",
		"../testdata/segments/licensed/DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39")
	for _, d := range dirs {
		t.Run(filepath.Base(filepath.Dir(d))+"/"+filepath.Base(d), func(t *testing.T) {
			rep := groupsOf(t, GroupsOptions{NoLag: true}, d)
			committed, members := kafkaCommitted(t, d)
			got := map[string]int64{}
			for _, g := range rep.Groups {
				for _, o := range g.Offsets {
					got[fmt.Sprintf("%s/%s/%d", g.GroupID, o.Topic, o.Partition)] = o.Offset
				}
				// The Kafka-written fixture holds records Kafka's serde wrote
				// into partition 0, not a coordinator's.
				if g.CoordinatorPartition != g.Partition && !strings.Contains(d, "kafka-written") {
					t.Errorf("group %s: coordinator partition %d, read from %d", g.GroupID, g.CoordinatorPartition, g.Partition)
				}
				if n, ok := members[g.GroupID]; ok && ((n < 0) != (g.State == "Dead") || (n >= 0 && n != len(g.Members))) {
					t.Errorf("group %s: state %s with %d members; Kafka's records say %d", g.GroupID, g.State, len(g.Members), n)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(committed) {
				t.Errorf("committed offsets\n got %v\nwant %v", got, committed)
			}
			if rep.ProblemCount != 0 {
				t.Errorf("problems %v", rep.Problems)
			}
		})
	}
}
