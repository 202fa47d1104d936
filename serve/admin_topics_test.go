package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAdminTopicsKadm: kadm creates a topic (real partition directories
// with partition.metadata as Kafka writes it (no final newline, as the Kafka-written fixture has), its configs kept), is refused
// what Kafka refuses, grows it, produces into a new partition and deletes
// the topic (directories gone, no -delete left, offsets committed for it
// gone); validate-only creates nothing; a read-only server refuses.
func TestAdminTopicsKadm(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := mustKgo(t, addr)
	defer cl.Close()
	adm := kadm.NewClient(cl)

	res, err := adm.CreateTopic(ctx, 3, -1, map[string]*string{"retention.ms": kmsg.StringPtr("1000")}, "orders")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %+v", err, res)
	}
	if res.ID == ([16]byte{}) {
		t.Error("no topic id")
	}
	for p := 0; p < 3; p++ {
		pm, err := os.ReadFile(filepath.Join(dir, "orders-"+string(rune('0'+p)), "partition.metadata"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "version: 0\ntopic_id: " + format.FormatTopicID(res.ID); string(pm) != want {
			t.Errorf("partition.metadata %q, want %q", pm, want)
		}
	}
	if c := topicConfigMap(t, adm, "orders")["retention.ms"]; *c.Value != "1000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("created with retention.ms: %+v", c)
	}
	for _, c := range []struct {
		name string
		n    int32
		rf   int16
		want error
	}{
		{"orders", 1, 1, kerr.TopicAlreadyExists},
		{"new", 1, 3, kerr.InvalidReplicationFactor},
		{"new", 0, 1, kerr.InvalidPartitions},
		{"bad/name", 1, 1, kerr.InvalidTopicException},
		{"__consumer_offsets", 1, 1, kerr.PolicyViolation},
	} {
		r, err := adm.CreateTopic(ctx, c.n, c.rf, nil, c.name)
		if err != nil && !errors.Is(err, c.want) || err == nil && !errors.Is(r.Err, c.want) {
			t.Errorf("create %s %d %d: %v %v, want %v", c.name, c.n, c.rf, err, r.Err, c.want)
		}
	}
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": kmsg.StringPtr("x")}, "new"); err == nil && !errors.Is(r.Err, kerr.InvalidConfig) {
		t.Errorf("create with a bad config: %+v", r)
	}
	vr, err := adm.ValidateCreateTopics(ctx, 2, 1, nil, "dry")
	if err != nil || vr["dry"].Err != nil || vr["dry"].NumPartitions != 2 {
		t.Errorf("validate-only: %v %+v", err, vr)
	}
	if _, err := os.Stat(filepath.Join(dir, "dry-0")); !os.IsNotExist(err) {
		t.Errorf("validate-only made a directory: %v", err)
	}

	// Grow to 5, refuse a decrease; produce into the new partition.
	if r, err := adm.CreatePartitions(ctx, 2, "orders"); err != nil || r["orders"].Err != nil {
		t.Fatalf("create partitions: %v %+v", err, r)
	}
	if id := readTopicID(filepath.Join(dir, "orders-4")); id != res.ID {
		t.Errorf("orders-4 topic id %x, want %x", id, res.ID)
	}
	if r, _ := adm.UpdatePartitions(ctx, 4, "orders"); !errors.Is(r["orders"].Err, kerr.InvalidPartitions) {
		t.Errorf("decrease: %+v", r)
	}
	td, err := adm.ListTopics(ctx, "orders")
	if err != nil || len(td["orders"].Partitions) != 5 {
		t.Fatalf("metadata after growing: %v %+v", err, td["orders"])
	}
	pr := mustKgo(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 4, Value: []byte("into 4")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	var commits kadm.Offsets
	commits.Add(kadm.Offset{Topic: "orders", Partition: 4, At: 1, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g", commits); err != nil {
		t.Fatal(err)
	}

	dr, err := adm.DeleteTopics(ctx, "orders", "missing")
	if err != nil {
		t.Fatal(err)
	}
	if dr["orders"].Err != nil || !errors.Is(dr["missing"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("delete: %+v", dr)
	}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), "orders") {
			t.Errorf("left after delete: %s", de.Name())
		}
	}
	if f, err := adm.FetchOffsets(ctx, "g"); err != nil || len(f) != 0 {
		t.Errorf("offsets of the deleted topic: %v %v", f, err)
	}
	if td, err := adm.ListTopics(ctx); err != nil || td.Has("orders") {
		t.Errorf("deleted topic listed: %v %v", err, td.Names())
	}
	// It can be created again, with a new id.
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil || r.Err != nil || r.ID == res.ID {
		t.Errorf("create again: %v %+v", err, r)
	}
}

// TestAdminTopicsReadOnly: a read-only server creates, grows and deletes
// nothing.
func TestAdminTopicsReadOnly(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	before := hashTree(t, dir)
	_, addr := startServer(t, Config{LogDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "x"); err == nil && !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("create: %+v", r)
	}
	if r, _ := adm.CreatePartitions(ctx, 1, "none"); !errors.Is(r["none"].Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("create partitions: %+v", r)
	}
	if r, _ := adm.DeleteTopics(ctx, "none"); !errors.Is(r["none"].Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("delete: %+v", r)
	}
	if hashTree(t, dir) != before {
		t.Error("the read-only log dir changed")
	}
}
