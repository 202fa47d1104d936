package serve

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoExactlyOnce: a consume-transform-produce loop with kgo's
// GroupTransactSession (transactions v2: TxnOffsetCommit v5 adds the
// group's offsets partition) reads "in", writes each value upper-cased to
// "out" and commits the group's offsets in the same transaction. A first
// session aborts its transaction: its output is dropped and its offsets
// are not committed, so a second session reads the same records again and
// commits. read_committed, "out" holds each input once, the group's
// committed offset is the end of "in", and __consumer_offsets holds the
// transactional offsets and their markers.
func TestKgoExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	a, err := produce.Open(dir+"/in-0", produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []format.Record
	for i := 0; i < 6; i++ {
		recs = append(recs, format.Record{Value: []byte("v" + strconv.Itoa(i)), Timestamp: 1700000000000})
	}
	if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	s, addr := startServer(t, Config{LogDir: dir, Writable: true})
	if _, err := s.createTopic("out"); err != nil {
		t.Fatal(err)
	}
	session := func(commit bool) int {
		sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(addr), kgo.TransactionalID("eos"), kgo.ConsumerGroup("eos-group"),
			kgo.ConsumeTopics("in"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.FetchMaxWait(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n := 0
		for n < 6 {
			fs := sess.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("polled %d of 6 records", n)
			}
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			if fs.NumRecords() == 0 {
				continue
			}
			if err := sess.Begin(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				n++
				out := &kgo.Record{Topic: "out", Value: []byte(strings.ToUpper(string(r.Value)))}
				if err := sess.ProduceSync(ctx, out).FirstErr(); err != nil {
					t.Fatal(err)
				}
			})
			committed, err := sess.End(ctx, kgo.TransactionEndTry(commit))
			if err != nil {
				t.Fatal(err)
			}
			if committed != commit {
				t.Fatalf("End(commit %v) committed %v", commit, committed)
			}
		}
		return n
	}
	session(false)
	if got := s.groups.fetchOffsets("eos-group"); len(got) != 0 {
		t.Errorf("after the aborted session the group has offsets %v", got)
	}
	session(true)
	got := committedValues(t, addr, "out", 6)
	if strings.Join(got, ",") != "V0,V1,V2,V3,V4,V5" {
		t.Errorf("out read_committed: %v", got)
	}
	if o := s.groups.fetchOffsets("eos-group")[offsetstore.TopicPartition{Topic: "in", Partition: 0}]; o.Offset != 6 {
		t.Errorf("committed offset %d, want 6", o.Offset)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, dir)
	// What a restarted coordinator loads: the committed transaction's
	// offsets (its marker follows them), not the aborted one's.
	st := offsetstore.NewState()
	if err := st.Load(dir); err != nil {
		t.Fatal(err)
	}
	if o := st.Offsets["eos-group"][offsetstore.TopicPartition{Topic: "in", Partition: 0}]; o.Offset != 6 {
		t.Errorf("__consumer_offsets loads offset %d, want 6", o.Offset)
	}
}
