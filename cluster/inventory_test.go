package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/inspect"
	it "github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/produce"
)

const (
	idOrders = "pcgBguOASiq3ujkTrGu_Qw"
	idOld    = "DuF3GEJ3RHuB62-zMzajeA"
	idOld2   = "XHhkr4tkSsD900pOQ8pPfg"
	dirB1    = "rRet3rr1S5G6-IfoHo2Eow"
	dirB2    = "ta5R4VtUQvagltuIzSD9hg"
)

// brokerLogDir makes a log dir with a meta.properties.
func brokerLogDir(t *testing.T, broker int, dirID string) string {
	t.Helper()
	ld := t.TempDir()
	props := "version=1\ncluster.id=ZZZZZZZZZZZZZZZZZZZZZZ\nnode.id=" + strconv.Itoa(broker) + "\ndirectory.id=" + dirID + "\n"
	if err := os.WriteFile(filepath.Join(ld, "meta.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	return ld
}

// replica writes n records at leader epoch epoch into a partition with
// topic id id.
func replica(t *testing.T, dir, id string, n int, epoch int32) {
	t.Helper()
	tid, err := format.ParseTopicID(id)
	if err != nil {
		t.Fatal(err)
	}
	a, err := produce.Open(dir, produce.Options{TopicID: tid, PartitionLeaderEpoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]format.Record, n)
	for i := range recs {
		recs[i] = format.Record{Value: []byte("v" + strconv.Itoa(i)), Timestamp: 1700000000000}
	}
	if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// metadataLog writes a __cluster_metadata-0 from records in Kafka's JSON.
func metadataLog(t *testing.T, dir string, records ...string) {
	t.Helper()
	s := newSeg(t)
	var recs []format.Record
	for _, js := range records {
		v, err := it.EncodeMetadataJSON([]byte(js))
		if err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		recs = append(recs, format.Record{Value: v})
	}
	s.batch(format.Batch{}, recs).write(filepath.Join(dir, "__cluster_metadata-0"))
}

func registerBroker(id int, dir string) string {
	return `{"type":"REGISTER_BROKER_RECORD","version":3,"data":{"brokerId":` + strconv.Itoa(id) + `,"isMigratingZkBroker":false,"incarnationId":"` + dir +
		`","brokerEpoch":1,"endPoints":[],"features":[],"rack":null,"fenced":false,"inControlledShutdown":false,"logDirs":["` + dir + `"]}}`
}

func partitionJSON(id string, p int, replicas string) string {
	return `{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":` + strconv.Itoa(p) + `,"topicId":"` + id + `","replicas":` + replicas +
		`,"isr":` + replicas + `,"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":3,"partitionEpoch":0,"directories":[]}}`
}

// twoBrokers: broker 1 and 2's log dirs. orders-0 on both (broker 1
// holds 10 records, broker 2 7, both at epoch 3); orders-1 on broker 2 and
// as a -future move on broker 1; "old" on both with different topic ids;
// "gone" on broker 2; a -delete directory and a stray file on broker 1;
// the metadata log on broker 1.
func twoBrokers(t *testing.T) (string, string) {
	b1, b2 := brokerLogDir(t, 1, dirB1), brokerLogDir(t, 2, dirB2)
	// broker 2's orders-0 is broker 1's first batch; broker 1 has one more.
	replica(t, filepath.Join(b2, "orders-0"), idOrders, 7, 3)
	if err := os.CopyFS(filepath.Join(b1, "orders-0"), os.DirFS(filepath.Join(b2, "orders-0"))); err != nil {
		t.Fatal(err)
	}
	replica(t, filepath.Join(b1, "orders-0"), idOrders, 3, 3)
	replica(t, filepath.Join(b2, "orders-1"), idOrders, 4, 3)
	replica(t, filepath.Join(b1, "orders-1.0123456789abcdef-future"), idOrders, 1, 3)
	replica(t, filepath.Join(b1, "old-0"), idOld, 2, 0)
	replica(t, filepath.Join(b2, "old-0"), idOld2, 3, 0)
	replica(t, filepath.Join(b2, "gone-0"), idOld, 1, 0)
	os.MkdirAll(filepath.Join(b1, "orders-3.fedcba-delete"), 0o755)
	os.WriteFile(filepath.Join(b1, "core.1234"), []byte("x"), 0o644)
	metadataLog(t, b1, registerBroker(1, dirB1), registerBroker(2, dirB2),
		`{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"`+idOrders+`"}}`,
		partitionJSON(idOrders, 0, "[1,2]"), partitionJSON(idOrders, 1, "[2,1]"),
		`{"type":"TOPIC_RECORD","version":0,"data":{"name":"old","topicId":"`+idOld2+`"}}`,
		partitionJSON(idOld2, 0, "[1,2]"))
	return b1, b2
}

// TestInventory: two brokers' log dirs, replicas matched by topic id, the
// most complete copy, the kafka-log-dirs fields.
func TestInventory(t *testing.T) {
	t.Parallel()
	b1, b2 := twoBrokers(t)
	inv, err := TakeInventory(context.Background(), discover(t, b1, b2), InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Brokers) != 2 || inv.Brokers[0].Broker != 1 || inv.Image == nil {
		t.Fatalf("brokers %+v, image %v", inv.Brokers, inv.Image)
	}
	ld1 := inv.Brokers[0].LogDirs[0]
	if ld1.DirectoryID != dirB1 || ld1.ClusterID == "" || len(ld1.Deleting) != 1 || len(ld1.Unknown) != 1 || !strings.HasSuffix(ld1.Unknown[0], "core.1234") {
		t.Errorf("broker 1's log dir %+v", ld1.LogDir)
	}
	var fut *Replica
	for _, r := range ld1.Partitions {
		if r.IsFuture {
			fut = r
		}
	}
	if fut == nil || fut.Partition != "orders-1" || fut.LogEndOffset != 1 {
		t.Errorf("future replica %+v", fut)
	}
	var orders, old *TopicView
	for _, tv := range inv.Topics {
		switch tv.Name {
		case "orders":
			orders = tv
		case "old":
			old = tv
		}
	}
	p0 := orders.Partitions[0]
	if len(p0.Replicas) != 2 || p0.MostComplete != 1 || p0.Replicas[1].Behind != 3 || p0.Replicas[0].Behind != 0 || *p0.Leader != 1 || len(p0.ISR) != 2 {
		t.Errorf("orders-0 %+v", p0)
	}
	if len(old.TopicIDs) != 2 || len(old.Partitions) != 2 {
		t.Errorf("old: ids %v, %d partitions (different topics are not matched)", old.TopicIDs, len(old.Partitions))
	}
	// The JSON carries kafka-log-dirs.sh --describe's fields.
	var b bytes.Buffer
	if err := WriteInventoryJSON(&b, inv); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"type":"inventory","version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"` + b1 + `",`,
		`"error":null,"partitions":[{"partition":"__cluster_metadata-0","size":`, `{"partition":"old-0","size":`, `"offsetLag":0,"isFuture":false,`, `"partition":"orders-1","size":`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b.String())
		}
	}
	// The image check: broker 1 lacks orders-1 (assigned to it); its old-0
	// records another topic id; broker 2's gone-0 is a topic the image does
	// not have.
	var kinds []string
	for _, f := range inv.ImageFindings {
		kinds = append(kinds, string(f.Kind)+" "+strconv.Itoa(int(f.Broker))+" "+f.Topic+"-"+strconv.Itoa(int(f.Partition)))
	}
	want := "image-topic-id 1 old-0,image-missing-replica 1 orders-1,image-unknown-partition 2 gone-0"
	if strings.Join(kinds, ",") != want {
		t.Errorf("image findings %v\nwant %s", kinds, want)
	}
}

// TestDiffAll: klog diff over log dirs compares each partition's
// replicas: orders-0 (broker 2 behind), old-0 not (two topics).
func TestDiffAll(t *testing.T) {
	t.Parallel()
	b1, b2 := twoBrokers(t)
	diffs, err := DiffAll(context.Background(), discover(t, b1, b2), inspect.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Topic != "orders" || diffs[0].Partition != 0 || diffs[0].Report.Diverged || diffs[0].Report.Identical {
		t.Fatalf("diffs %+v", diffs)
	}
}

// TestImageCheckDirectories: a log dir whose directory.id the image does
// not register for its broker.
func TestImageCheckDirectories(t *testing.T) {
	t.Parallel()
	ld := brokerLogDir(t, 1, "AAAAAAAAAAAAAAAAAAAAAw")
	metadataLog(t, ld, registerBroker(1, dirB1))
	dirs := discover(t, ld)
	fs := CheckImage(dirs, ImageOf(context.Background(), dirs))
	if len(fs) != 1 || fs[0].Kind != FindingUnknownLogDir {
		t.Errorf("findings %+v", fs)
	}
}

// TestDiscoverReadsThroughLinks: a partition directory that is a symbolic
// link is listed as a partition, as verify, find and dump read through it
// (ls listed it as an unknown file); a dangling link stays unknown.
func TestDiscoverReadsThroughLinks(t *testing.T) {
	target, ld := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(target, "orders-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(target, "orders-0"), filepath.Join(ld, "orders-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(target, "gone-0"), filepath.Join(ld, "gone-0")); err != nil {
		t.Fatal(err)
	}
	dirs := discover(t, ld)
	if len(dirs) != 1 || len(dirs[0].Partitions) != 1 || dirs[0].Partitions[0].Topic != "orders" {
		t.Fatalf("partitions %+v, want orders-0", dirs[0].Partitions)
	}
	if u := dirs[0].Unknown; len(u) != 1 || filepath.Base(u[0]) != "gone-0" {
		t.Errorf("unknown %q, want the dangling gone-0", u)
	}
}
