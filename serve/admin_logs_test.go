package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestDeleteRecordsKadm: DeleteRecords moves the log start offset
// (ListOffsets earliest answers it, and log-start-offset-checkpoint
// records it as Kafka writes it); above the high watermark is
// OFFSET_OUT_OF_RANGE; read-only refuses.
func TestDeleteRecordsKadm(t *testing.T) {
	dir := fixtureLogDir(t, "multi-0", "multi-1")
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	ends, err := adm.ListEndOffsets(ctx, "multi")
	if err != nil {
		t.Fatal(err)
	}
	e0, _ := ends.Lookup("multi", 0)
	var os1 kadm.Offsets
	os1.Add(kadm.Offset{Topic: "multi", Partition: 0, At: 3})
	os1.Add(kadm.Offset{Topic: "multi", Partition: 1, At: e0.Offset + 1000})
	res, err := adm.DeleteRecords(ctx, os1)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("multi", 0); r.Err != nil || r.LowWatermark != 3 {
		t.Errorf("partition 0: %+v", r)
	}
	if r, _ := res.Lookup("multi", 1); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Errorf("partition 1 above the high watermark: %+v", r)
	}
	starts, err := adm.ListStartOffsets(ctx, "multi")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := starts.Lookup("multi", 0); s.Offset != 3 {
		t.Errorf("earliest after DeleteRecords: %d", s.Offset)
	}
	ck, err := os.ReadFile(filepath.Join(dir, partition.LogStartCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if string(ck) != "0\n1\nmulti 0 3\n" {
		t.Errorf("log-start-offset-checkpoint %q", ck)
	}
}

// TestDescribeLogDirsAndProducers: DescribeLogDirs gives each partition's
// size (its .log files) and no lag; DescribeProducers the model's
// producer state of a Kafka-written partition.
func TestDescribeLogDirsAndProducers(t *testing.T) {
	dir := fixtureLogDir(t, "producer-0", "none-0")
	_, addr := startServer(t, Config{LogDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	lds, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	n := 0
	lds.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil || d.Dir != abs {
			t.Errorf("log dir %+v, want %s", d, abs)
		}
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			n++
			logs, _ := filepath.Glob(filepath.Join(dir, p.Topic+"-0", "*.log"))
			var want int64
			for _, l := range logs {
				st, _ := os.Stat(l)
				want += st.Size()
			}
			if p.Size != want || p.OffsetLag != 0 || p.IsFuture {
				t.Errorf("%s-%d: size %d lag %d, want %d 0", p.Topic, p.Partition, p.Size, p.OffsetLag, want)
			}
		})
	})
	if n != 2 {
		t.Errorf("%d partitions described, want 2", n)
	}
	var ts kadm.TopicsSet
	ts.Add("producer", 0)
	dp, err := adm.DescribeProducers(ctx, ts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := partition.OpenLog(filepath.Join(dir, "producer-0"), partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := l.ProducerEntries()
	if err != nil || len(want) == 0 {
		t.Fatalf("model: %v %v", want, err)
	}
	got := dp["producer"].Partitions[0]
	if got.Err != nil || len(got.ActiveProducers) != len(want) {
		t.Fatalf("DescribeProducers %+v, model %+v", got, want)
	}
	for i, w := range want {
		g := got.ActiveProducers.Sorted()[i]
		if g.ProducerID != w.ProducerID || g.ProducerEpoch != int16(w.Epoch) || g.LastSequence != w.LastSequence ||
			g.LastTimestamp != w.Timestamp || g.CurrentTxnStartOffset != w.CurrentTxnFirstOffset {
			t.Errorf("producer %d: %+v, model %+v", w.ProducerID, g, w)
		}
	}
}
