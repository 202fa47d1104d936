package serve

import (
	"context"
	"os"
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

// TestNodeIDFromMetaProperties: a log dir's meta.properties names the
// broker that wrote it (node.id, broker.id before KRaft), and serve is
// that broker in Metadata and FindCoordinator unless told another id; a
// log dir without one is node 0.
func TestNodeIDFromMetaProperties(t *testing.T) {
	for _, c := range []struct {
		name   string
		props  string // "" writes no meta.properties
		cfgID  int32
		wantID int32
		wantCl string
	}{
		{"kraft", "version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\nnode.id=3\n", 0, 3, "AAAAAAAAAAAAAAAAAAAAAA"},
		{"zookeeper", "version=0\nbroker.id=5\ncluster.id=Z\n", 0, 5, "Z"},
		{"told otherwise", "version=1\ncluster.id=C\nnode.id=3\n", 9, 9, "C"},
		{"bad id", "version=1\ncluster.id=C\nnode.id=x\n", 0, 0, "C"},
		{"none", "", 0, 0, "klog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fixtureLogDir(t, "none-0")
			if c.props != "" {
				if err := os.WriteFile(filepath.Join(dir, "meta.properties"), []byte(c.props), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, addr := startServer(t, Config{LogDir: dir, NodeID: c.cfgID})
			w := dial(t, addr)
			md := w.do(&kmsg.MetadataRequest{Version: 12}).(*kmsg.MetadataResponse)
			if len(md.Brokers) != 1 || md.Brokers[0].NodeID != c.wantID || md.ControllerID != c.wantID ||
				md.ClusterID == nil || *md.ClusterID != c.wantCl {
				t.Errorf("metadata: brokers %+v controller %d cluster %v, want node %d cluster %s", md.Brokers, md.ControllerID, md.ClusterID, c.wantID, c.wantCl)
			}
			for _, tp := range md.Topics {
				for _, p := range tp.Partitions {
					if p.Leader != c.wantID {
						t.Errorf("%v-%d: leader %d, want %d", tp.Topic, p.Partition, p.Leader, c.wantID)
					}
				}
			}
			fc := w.do(&kmsg.FindCoordinatorRequest{Version: 3, CoordinatorKey: "g"}).(*kmsg.FindCoordinatorResponse)
			if fc.ErrorCode != 0 || fc.NodeID != c.wantID {
				t.Errorf("coordinator: %s node %d, want %d", codeName(fc.ErrorCode), fc.NodeID, c.wantID)
			}
		})
	}
}
