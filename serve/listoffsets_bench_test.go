package serve

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The ListOffsets benchmark: a consumer's ListOffsets of one partition of
// 32 segments (earliest, latest, a timestamp, the max timestamp in turn, one
// target a request), answered
//   - by serve's handler over the partition model it holds (model),
//   - by the way serve answered before the model (reopen): the partition
//     directory opened with partition.OpenLog for every request, then the
//     same lookup.
// Run both in one invocation and compare (README "Performance"):
//   go test ./serve -run '^$' -bench BenchmarkListOffsets -count 5

const (
	listBenchSegments = 32
	listBenchBatches  = 64 // per segment
	listBenchBase     = int64(1_700_000_000_000)
)

// listBenchLogDir writes topic lo's partition 0: listBenchSegments segments
// of listBenchBatches one-record batches, timestamps a millisecond apart.
func listBenchLogDir(b *testing.B) string {
	b.Helper()
	logDir := b.TempDir()
	a, err := produce.Open(filepath.Join(logDir, "lo-0"), produce.Options{Sync: produce.SyncNever, SegmentBytes: listBenchBatches * 100})
	if err != nil {
		b.Fatal(err)
	}
	for i := range listBenchSegments * listBenchBatches {
		rec := format.Record{Value: []byte("value " + strconv.Itoa(i)), Timestamp: listBenchBase + int64(i)}
		if _, err := a.Append(&produce.Batch{Records: []format.Record{rec}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	return logDir
}

// listBenchTargets are the targets a consumer asks, one a request.
var listBenchTargets = []int64{partition.EarliestTimestamp, partition.LatestTimestamp, listBenchBase + 1500, partition.MaxTimestamp}

func listBenchRequest(target int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = 7, -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = target
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// listOffsetsReopen is the reference: serve's ListOffsets before the
// partition model, which opened the partition directory for each request.
func listOffsetsReopen(s *Server, r *kmsg.ListOffsetsRequest) (*kmsg.ListOffsetsResponse, error) {
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range r.Topics {
		t := kmsg.NewListOffsetsResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewListOffsetsResponseTopicPartition()
			p.Partition = rp.Partition
			p.Timestamp, p.Offset, p.LeaderEpoch = -1, -1, -1
			sp := s.lookup(rt.Topic, rp.Partition)
			if sp == nil {
				p.ErrorCode = kerr.UnknownTopicOrPartition.Code
				t.Partitions = append(t.Partitions, p)
				continue
			}
			l, err := partition.OpenLog(sp.dir, partition.LogOptions{})
			if err != nil {
				return nil, err
			}
			a, err := fetch.ListOffsets(l, rp.Timestamp, fetch.ReadUncommitted)
			switch {
			case err != nil:
				p.ErrorCode = kerr.KafkaStorageError.Code
			case a.Found:
				p.Offset, p.Timestamp, p.LeaderEpoch = a.Offset, a.Timestamp, a.LeaderEpoch
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp, nil
}

func BenchmarkListOffsets(b *testing.B) {
	s, _ := startServer(b, Config{LogDir: listBenchLogDir(b)})
	cn := &conn{s: s}
	var reqs []*kmsg.ListOffsetsRequest
	for _, target := range listBenchTargets {
		req := listBenchRequest(target)
		reqs = append(reqs, req)
		// Both ways give the same answers.
		got, err := cn.handleListOffsets(req)
		if err != nil {
			b.Fatal(err)
		}
		want, err := listOffsetsReopen(s, req)
		if err != nil {
			b.Fatal(err)
		}
		g, w := got.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0], want.Topics[0].Partitions[0]
		if g.ErrorCode != 0 || g.Offset != w.Offset || g.Timestamp != w.Timestamp || g.LeaderEpoch != w.LeaderEpoch {
			b.Fatalf("target %d: model %+v, reopen %+v", target, g, w)
		}
		if target == partition.LatestTimestamp && g.Offset != listBenchSegments*listBenchBatches ||
			target == listBenchBase+1500 && g.Offset != 1500 {
			b.Fatalf("target %d: offset %d", target, g.Offset)
		}
	}
	b.Run("model", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := cn.handleListOffsets(reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("reopen", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := listOffsetsReopen(s, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
