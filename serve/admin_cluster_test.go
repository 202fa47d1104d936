package serve

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestMetadataLeaderEpoch: Metadata reports each partition's latest
// leader epoch (Kafka wrote producer-0 in epochs 0-3), the epoch
// ListOffsets answers with, at v7 and at v13.
func TestMetadataLeaderEpoch(t *testing.T) {
	dir := fixtureLogDir(t, "producer-0", "none-0")
	_, addr := startServer(t, Config{LogDir: dir})
	cl := mustKgo(t, addr)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "producer", "none")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{"producer": 3, "none": 0}
	for _, v := range []int16{7, 12, 13} {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = v
		for _, name := range []string{"producer", "none"} {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		for _, mt := range resp.Topics {
			e, _ := ends.Lookup(*mt.Topic, 0)
			// A partition without a leader-epoch cache (none-0) has
			// no epoch for ListOffsets (-1); Metadata says 0.
			if got := mt.Partitions[0].LeaderEpoch; got != want[*mt.Topic] || got != max(e.LeaderEpoch, 0) {
				t.Errorf("v%d %s: leader epoch %d, want %d (ListOffsets %d)", v, *mt.Topic, got, want[*mt.Topic], e.LeaderEpoch)
			}
		}
		if v == 13 && resp.ErrorCode != 0 {
			t.Errorf("v13 error code %d", resp.ErrorCode)
		}
	}
}

// TestOffsetForLeaderEpoch: each epoch's end offset from the leader-epoch
// cache (0@0 1@16 2@32 3@48, log end 64), as LeaderEpochFileCache
// answers, and the current-epoch fencing of KIP-320.
func TestOffsetForLeaderEpoch(t *testing.T) {
	dir := fixtureLogDir(t, "producer-0")
	_, addr := startServer(t, Config{LogDir: dir})
	l, err := partition.OpenLog(filepath.Join(dir, "producer-0"), partition.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	cl := mustKgo(t, addr)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		current, asked int32
		code           int16
		epoch          int32
		end            int64
	}{
		{-1, 0, 0, 0, 16}, {-1, 1, 0, 1, 32}, {-1, 2, 0, 2, 48}, {3, 3, 0, 3, leo},
		{-1, 7, 0, -1, -1}, {-1, -1, 0, -1, -1},
		{2, 1, kerr.FencedLeaderEpoch.Code, -1, -1}, {4, 1, kerr.UnknownLeaderEpoch.Code, -1, -1},
	} {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = "producer"
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.CurrentLeaderEpoch, rp.LeaderEpoch = c.current, c.asked
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Topics[0].Partitions[0]
		if got.ErrorCode != c.code || got.LeaderEpoch != c.epoch || got.EndOffset != c.end {
			t.Errorf("current %d epoch %d: %d %d@%d, want %d %d@%d", c.current, c.asked, got.ErrorCode, got.LeaderEpoch, got.EndOffset, c.code, c.epoch, c.end)
		}
	}
	// kadm's view.
	var q kadm.OffsetForLeaderEpochRequest
	q.Add("producer", 0, 1)
	res, err := kadm.NewClient(cl).OffsetForLeaderEpoch(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if r := res["producer"][0]; r.Err != nil || r.LeaderEpoch != 1 || r.EndOffset != 32 {
		t.Errorf("kadm: %+v", r)
	}
}

// TestDescribeCluster: the one broker, its cluster id and itself as the
// controller; a request for controllers is MISMATCHED_ENDPOINT_TYPE.
func TestDescribeCluster(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), NodeID: 7})
	cl := mustKgo(t, addr)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version = v
		req.IncludeClusterAuthorizedOperations = true
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 || resp.ClusterID != "klog" || resp.ControllerID != 7 || len(resp.Brokers) != 1 ||
			resp.Brokers[0].NodeID != 7 || resp.Brokers[0].Host != "127.0.0.1" || resp.ClusterAuthorizedOperations != clusterOps {
			t.Errorf("v%d: %+v", v, resp)
		}
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version, req.EndpointType = 1, 2
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.MismatchedEndpointType.Code || resp.EndpointType != 2 {
		t.Errorf("controllers asked: %+v", resp)
	}
}
