package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/kraft"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/serve"
)

// A cluster replayed from its brokers' disks (klog serve over several log
// dirs): which broker serves which replica, and who leads each partition.
// Replicas are matched by topic id (the inventory's); the leaders, replicas
// and ISR are the KRaft metadata image's when the disks hold
// __cluster_metadata, else each partition is led by its most complete
// replica. Notes say every choice that is not the image's.

// ReplayOptions configure PlanReplay.
type ReplayOptions struct {
	MaxBatchBytes int
	// Base is every broker's serve configuration (serve.ReplayConfig.Base).
	Base serve.Config
}

// ReplayPlan is a replay to serve and the choices made for it.
type ReplayPlan struct {
	Config serve.ReplayConfig
	// Notes say what was chosen and why, one line each.
	Notes []string
	// FromImage is set when the leaders and ISR are the metadata image's.
	FromImage bool
}

func (p *ReplayPlan) note(f string, args ...any) { p.Notes = append(p.Notes, fmt.Sprintf(f, args...)) }

// PlanReplay reads the log dirs (Discover's) and plans their replay: each
// broker (meta.properties' node.id; a log dir naming none becomes a broker
// of its own with an unused id) serves the current replicas of its log
// dirs (several for JBOD); -future directories (a copy between log dirs
// not yet done), -delete and -stray ones are not served, as a broker does
// not serve them.
func PlanReplay(ctx context.Context, dirs []*LogDir, opts ReplayOptions) (*ReplayPlan, error) {
	plan := &ReplayPlan{Config: serve.ReplayConfig{Base: opts.Base, ControllerID: -1}}
	used := map[int32]bool{}
	for _, ld := range dirs {
		if ld.BrokerID >= 0 {
			used[ld.BrokerID] = true
		}
	}
	next := int32(0)
	for _, ld := range dirs {
		if ld.BrokerID >= 0 {
			continue
		}
		for used[next] {
			next++
		}
		ld.BrokerID, used[next] = next, true
		plan.note("%s: meta.properties names no broker: served as broker %d", ld.Path, next)
	}
	inv, err := TakeInventory(ctx, dirs, InventoryOptions{MaxBatchBytes: opts.MaxBatchBytes})
	if err != nil {
		return nil, err
	}
	brokers := map[int32]*serve.ReplayBroker{}
	var ids []int32
	for _, ld := range dirs {
		b := brokers[ld.BrokerID]
		if b == nil {
			b = &serve.ReplayBroker{ID: ld.BrokerID}
			brokers[ld.BrokerID] = b
			ids = append(ids, ld.BrokerID)
		}
		b.LogDirs = append(b.LogDirs, ld.Path)
		if plan.Config.ClusterID == "" {
			plan.Config.ClusterID = ld.ClusterID
		}
		for _, f := range ld.Future {
			plan.note("%s: a replica still being copied between log dirs (-future): not served; broker %d serves the current one", f, ld.BrokerID)
		}
		for _, d := range ld.Deleting {
			plan.note("%s: deleted (-delete): not served", d)
		}
		for _, d := range ld.Stray {
			plan.note("%s: stray (-stray): not served", d)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	plan.Config.Coordinator, plan.Config.ControllerID = ids[0], ids[0]
	im := replayImage(ctx, inv, plan)
	if im != nil {
		plan.FromImage = true
		for _, id := range ids {
			if ib := im.Broker(id); ib != nil {
				brokers[id].Rack = ib.Rack
			}
		}
	} else {
		plan.note("no __cluster_metadata on these disks: each partition is led by its replica with the highest leader epoch, then log end offset; the ISR is the replicas at that log end")
	}
	byName := map[string]*TopicView{}
	for _, tv := range inv.Topics {
		byName[tv.Name] = tv
		switch {
		case tv.Name == OffsetsTopic:
			for _, pv := range tv.Partitions {
				plan.Config.OffsetsDirs = append(plan.Config.OffsetsDirs, pv.MostCompleteLogDir)
			}
		case strings.HasPrefix(tv.Name, "__"):
			// Internal topics (__cluster_metadata, __transaction_state,
			// __remote_log_metadata): serve keeps them to itself.
		case im != nil:
			if im.Topic(tv.Name) == nil {
				plan.note("topic %s: on disk but not in the metadata image (deleted): not served", tv.Name)
			}
		default:
			plan.Config.Topics = append(plan.Config.Topics, topicByLEO(tv, brokers, plan))
		}
	}
	if im != nil {
		for _, it := range im.Topics {
			if !strings.HasPrefix(it.Name, "__") {
				plan.Config.Topics = append(plan.Config.Topics, topicFromImage(it, byName[it.Name], brokers, plan))
			}
		}
	}
	if len(plan.Config.OffsetsDirs) > 0 {
		plan.note("broker %d coordinates every group, from the most complete replica of each %s-N", ids[0], OffsetsTopic)
	}
	for _, id := range ids {
		plan.Config.Brokers = append(plan.Config.Brokers, *brokers[id])
	}
	return plan, nil
}

// replayImage loads the most complete replica of __cluster_metadata-0.
func replayImage(ctx context.Context, inv *Inventory, plan *ReplayPlan) *kraft.Image {
	for _, tv := range inv.Topics {
		if tv.Name != kraft.MetadataTopic {
			continue
		}
		for _, pv := range tv.Partitions {
			if pv.Partition != 0 {
				continue
			}
			im, err := kraft.Load(ctx, pv.MostCompleteLogDir, kraft.Options{UpTo: -1})
			if err != nil {
				plan.note("%s: the metadata log does not load (%v): leaders chosen by log end", pv.MostCompleteLogDir, err)
				return nil
			}
			plan.note("leaders, replicas and ISR from the metadata image of %s (offset %d)", pv.MostCompleteLogDir, im.Provenance.LastContainedOffset)
			return im
		}
	}
	return nil
}

// held is the replicas of one partition found on the disks, with the
// broker serving each.
func held(name string, pv *PartitionView, id string, brokers map[int32]*serve.ReplayBroker, plan *ReplayPlan, want func(int32) bool) []ReplicaView {
	if pv == nil {
		return nil
	}
	var out []ReplicaView
	seen := map[int32]bool{}
	for _, r := range pv.Replicas {
		switch {
		case pv.TopicID != "" && id != "" && pv.TopicID != id:
			// Another topic of the same name (deleted and recreated).
		case seen[r.Broker]:
			plan.note("%s: broker %d holds %s-%d in two log dirs: only the first is served", r.LogDir, r.Broker, name, pv.Partition)
		case !want(r.Broker):
			plan.note("%s: the metadata image does not assign %s-%d to broker %d (stray): not served", r.LogDir, name, pv.Partition, r.Broker)
		default:
			seen[r.Broker] = true
			out = append(out, r)
			b := brokers[r.Broker]
			b.Replicas = append(b.Replicas, serve.ReplayReplica{Topic: name, Partition: pv.Partition, Dir: r.LogDir})
		}
	}
	return out
}

// bestReplica is the replica with the highest leader epoch, then log end.
func bestReplica(rs []ReplicaView) ReplicaView {
	best := rs[0]
	for _, r := range rs[1:] {
		if r.LeaderEpoch > best.LeaderEpoch || (r.LeaderEpoch == best.LeaderEpoch && r.LogEndOffset > best.LogEndOffset) {
			best = r
		}
	}
	return best
}

// topicByLEO places a topic without a metadata image: partitions 0..the
// highest found, each led by its most complete replica, the ISR the
// replicas at its log end. One topic id: the first found; replicas of
// other ids are another topic of that name, not served.
func topicByLEO(tv *TopicView, brokers map[int32]*serve.ReplayBroker, plan *ReplayPlan) serve.ReplayTopic {
	rt := serve.ReplayTopic{Name: tv.Name}
	if id, err := format.ParseTopicID(tv.TopicID); err == nil {
		rt.ID = id
	}
	if len(tv.TopicIDs) > 1 {
		plan.note("topic %s: replicas of topic ids %s: only %s's are served", tv.Name, strings.Join(tv.TopicIDs, ", "), tv.TopicID)
	}
	byPart := map[int32]*PartitionView{}
	n := int32(0)
	for _, pv := range tv.Partitions {
		if pv.TopicID == tv.TopicID || pv.TopicID == "" {
			if byPart[pv.Partition] == nil {
				byPart[pv.Partition] = pv
			}
			n = max(n, pv.Partition+1)
		}
	}
	for i := int32(0); i < n; i++ {
		rp := serve.ReplayPartition{Partition: i, Leader: -1, LeaderEpoch: -1, Replicas: []int32{}, ISR: []int32{}}
		rs := held(tv.Name, byPart[i], tv.TopicID, brokers, plan, func(int32) bool { return true })
		if len(rs) == 0 {
			plan.note("%s-%d: on no disk read: no leader", tv.Name, i)
		} else {
			best := bestReplica(rs)
			rp.Leader, rp.LeaderEpoch = best.Broker, max(best.LeaderEpoch, 0)
			rp.Replicas = append(rp.Replicas, best.Broker)
			for _, r := range rs {
				if r.Broker != best.Broker {
					rp.Replicas = append(rp.Replicas, r.Broker)
				}
			}
			for _, b := range rp.Replicas {
				for _, r := range rs {
					if r.Broker == b && r.LogEndOffset == best.LogEndOffset {
						rp.ISR = append(rp.ISR, b)
					}
				}
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// topicFromImage places a topic of the metadata image: its partitions'
// leaders, epochs, replicas and ISR. A leader whose replica is not on the
// disks read (or none: an offline partition) is replaced by the most
// complete replica found, and the note says so.
func topicFromImage(it *kraft.Topic, tv *TopicView, brokers map[int32]*serve.ReplayBroker, plan *ReplayPlan) serve.ReplayTopic {
	rt := serve.ReplayTopic{Name: it.Name, ID: it.ID}
	id := it.ID.String()
	byPart := map[int32]*PartitionView{}
	if tv != nil {
		for _, pv := range tv.Partitions {
			if (pv.TopicID == id || pv.TopicID == "") && byPart[pv.Partition] == nil {
				byPart[pv.Partition] = pv
			}
		}
	}
	for _, ip := range it.Partitions {
		rp := serve.ReplayPartition{Partition: ip.Partition, Leader: ip.Leader, LeaderEpoch: ip.LeaderEpoch,
			Replicas: append([]int32{}, ip.Replicas...), ISR: append([]int32{}, ip.Isr...)}
		rs := held(it.Name, byPart[ip.Partition], id, brokers, plan, ip.HasReplica)
		leaderHeld := false
		for _, r := range rs {
			leaderHeld = leaderHeld || r.Broker == ip.Leader
		}
		for _, b := range ip.Replicas {
			if brokers[b] == nil {
				rp.OfflineReplicas = append(rp.OfflineReplicas, b)
			}
		}
		switch {
		case leaderHeld:
		case len(rs) == 0:
			rp.Leader = -1
			plan.note("%s-%d: no replica on the disks read (the image's leader is %d): no leader", it.Name, ip.Partition, ip.Leader)
		default:
			best := bestReplica(rs)
			plan.note("%s-%d: the image's leader %d is not on the disks read: led by broker %d, its most complete replica found", it.Name, ip.Partition, ip.Leader, best.Broker)
			rp.Leader = best.Broker
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// ReplayDirs expands the paths klog serve is given into log dirs: a path
// that is a log dir (it has a meta.properties or a partition directory)
// stays; a folder of broker folders (neither) becomes the log dirs among
// its subdirectories, and theirs (brokers/1/data-a, brokers/1/data-b: a
// broker with two log dirs), in name order.
func ReplayDirs(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		got, err := expandLogDir(p, 2)
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			got = []string{p} // an empty log dir is still one
		}
		out = append(out, got...)
	}
	return out, nil
}

func expandLogDir(path string, depth int) ([]string, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var subs []string
	for _, de := range des {
		if de.Name() == "meta.properties" && !de.IsDir() {
			return []string{path}, nil
		}
		if !de.IsDir() {
			continue
		}
		sub := filepath.Join(path, de.Name())
		if partition.IsPartitionDir(sub) {
			return []string{path}, nil
		}
		subs = append(subs, sub)
	}
	if depth == 0 {
		return nil, nil
	}
	var out []string
	for _, s := range subs {
		got, err := expandLogDir(s, depth-1)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}
