package serve

import (
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Long polls wait on the partitions they read (the partition model's
// waiters), not on every append.

// fetchAt is a Fetch v11 of one partition at offset, parked for up to a
// minute until a byte is there.
func fetchAt(topic string, part int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = 11, -1, 1<<20, 1, 60000
	req.Topics = []kmsg.FetchRequestTopic{{Topic: topic, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: part, FetchOffset: offset, PartitionMaxBytes: 1 << 20}}}}
	return req
}

// longPoll sends a parked fetch on w; its answer (or error) comes on the
// returned channel. The read has no deadline of its own: the server's
// MaxWait, or its shutdown, ends the wait.
func longPoll(w *wire, req *kmsg.FetchRequest) <-chan fetchAnswer {
	w.send(req)
	done := make(chan fetchAnswer, 1)
	go func() {
		var a fetchAnswer
		w.c.SetReadDeadline(time.Now().Add(5 * time.Minute))
		var sz [4]byte
		if _, a.err = io.ReadFull(w.c, sz[:]); a.err == nil {
			body := make([]byte, binary.BigEndian.Uint32(sz[:]))
			if _, a.err = io.ReadFull(w.c, body); a.err == nil {
				a.resp = req.ResponseKind().(*kmsg.FetchResponse)
				a.resp.SetVersion(req.Version)
				a.err = a.resp.ReadFrom(body[4:])
			}
		}
		done <- a
	}()
	return done
}

type fetchAnswer struct {
	resp *kmsg.FetchResponse
	err  error
}

// countingHooks counts parked fetches (and reports each on parked) and
// fetches their waiter woke.
func countingHooks(parked chan<- struct{}, woken *atomic.Int64) hooks {
	return hooks{
		fetchParked: func() { parked <- struct{}{} },
		fetchWoken:  func() { woken.Add(1) },
	}
}

func waitParked(t *testing.T, parked <-chan struct{}, n int) {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for range n {
		select {
		case <-parked:
		case <-timeout:
			t.Fatalf("fewer than %d fetches parked", n)
		}
	}
}

// emptyPartitions makes topic t's partitions 0..n-1 under logDir, each an
// empty first segment.
func emptyPartitions(t *testing.T, logDir string, n int) {
	t.Helper()
	for i := range n {
		dir := filepath.Join(logDir, "t-"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, partition.FileName(0, partition.LogSuffix)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLongPollWakesOnlyItsWaiters: 1,000 partitions, a fetch parked at the
// end of each and a second one on partition 7; an append to partition 7
// wakes the two fetches of partition 7 and no other. The others are
// answered at shutdown, which the hook does not count as a wake-up. With
// one channel closed on every append (serve before the partition model's
// waiters) the append woke all 1,001. Both ways an append arrives: through
// this server's appender (writable), and from another writer the Follower
// sees (read-only; here klog's appender, as `klog produce` in another
// process would be).
func TestLongPollWakesOnlyItsWaiters(t *testing.T) {
	const n = 1000
	for _, writable := range []bool{true, false} {
		t.Run(map[bool]string{true: "writable", false: "another writer"}[writable], func(t *testing.T) {
			logDir := t.TempDir()
			emptyPartitions(t, logDir, n)
			parked := make(chan struct{}, n+1)
			var woken atomic.Int64
			s, addr := startServer(t, Config{LogDir: logDir, Writable: writable, MaxConnectionsPerIP: 2 * n,
				hooks: countingHooks(parked, &woken)})
			model := s.lookup("t", 7).log
			answers := make([]<-chan fetchAnswer, 0, n+1)
			for i := range n {
				answers = append(answers, longPoll(dial(t, addr), fetchAt("t", int32(i), 0)))
			}
			answers = append(answers, longPoll(dial(t, addr), fetchAt("t", 7, 0)))
			waitParked(t, parked, n+1)
			if woken.Load() != 0 {
				t.Fatalf("%d fetches woke before any append", woken.Load())
			}
			if writable {
				pr := kmsg.NewPtrProduceRequest()
				pr.Version, pr.Acks, pr.TimeoutMillis = 7, 1, 1000
				pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 7, Records: rawBatch(t, 0)}}}}
				if code := dial(t, addr).do(pr).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
					t.Fatalf("produce: %d", code)
				}
			} else {
				a, err := produce.Open(filepath.Join(logDir, "t-7"), produce.Options{Sync: produce.SyncNever})
				if err != nil {
					t.Fatal(err)
				}
				_, err = a.Append(&produce.Batch{Records: []format.Record{{Value: []byte("from another writer")}}})
				if cerr := a.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range []int{7, n} {
				a := <-answers[i]
				if a.err != nil {
					t.Fatalf("fetch %d: %v", i, a.err)
				}
				p := a.resp.Topics[0].Partitions[0]
				if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 1 {
					t.Fatalf("fetch %d of partition 7: error %d, %d bytes, high watermark %d", i, p.ErrorCode, len(p.RecordBatches), p.HighWatermark)
				}
			}
			// The model the server opened at start moved: nothing was
			// opened again.
			if s.lookup("t", 7).log != model || model.LogEndOffset() != 1 {
				t.Errorf("partition 7's model: %p (was %p), log end %d", s.lookup("t", 7).log, model, model.LogEndOffset())
			}
			// Shutdown answers the parked fetches (Close would drop
			// their connections).
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			for i, c := range answers {
				if i == 7 || i == n {
					continue // answered above
				}
				if a := <-c; a.err != nil {
					t.Fatalf("fetch %d: %v", i, a.err)
				}
			}
			if got := woken.Load(); got != 2 {
				t.Errorf("an append to one of %d partitions woke %d parked fetches, want its 2", n, got)
			}
		})
	}
}
