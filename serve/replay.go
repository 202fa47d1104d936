package serve

// A cluster replayed: several brokers' log dirs, each broker served by its
// own Server on its own listener, all of them describing the same cluster
// in Metadata (every broker, and each partition's leader, replicas and
// ISR as the cluster had them). Each broker serves the replicas on its own
// disks, as a broker does:
//   - a consumer's Fetch before v11, a follower's Fetch (replica id >= 0)
//     and ListOffsets are answered by the partition's leader only, others
//     get NOT_LEADER_OR_FOLLOWER (ReplicaManager's fetchOnlyLeader); a
//     consumer's Fetch v11+ (KIP-392) is answered by any broker holding a
//     replica, bounded by that replica's own high watermark;
//   - a follower's Fetch reads up to the log end (FetchIsolation.LOG_END);
//   - one broker coordinates every group: FindCoordinator on any broker
//     names it, and it loads the committed offsets of the most complete
//     replica of each __consumer_offsets-N.
// Who leads which partition is the caller's (cluster.PlanReplay: the KRaft
// metadata image when the disks hold one, else the replica with the
// highest leader epoch and log end). A replay is read-only.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReplayConfig is a cluster to replay (NewReplay).
type ReplayConfig struct {
	// Brokers are the brokers served, each by its own Server.
	Brokers []ReplayBroker
	// Topics is the cluster's view of its topics: every partition with its
	// leader, replicas and ISR. Internal topics are not listed.
	Topics []ReplayTopic
	// Coordinator is the broker coordinating every group; OffsetsDirs are
	// the __consumer_offsets-N replicas it loads groups and offsets from.
	Coordinator int32
	OffsetsDirs []string
	// ClusterID and ControllerID are Metadata's.
	ClusterID    string
	ControllerID int32
	// Base configures every broker's Server (not Writable, no Remote).
	// StateDir holds the coordinator's committed offsets; each other
	// broker keeps its own in StateDir/replay-broker-<id>.
	Base Config
}

// ReplayBroker is one broker of a replay.
type ReplayBroker struct {
	ID   int32
	Rack *string
	// LogDirs are the broker's log dirs (several: JBOD).
	LogDirs []string
	// Replicas are the partition directories it serves.
	Replicas []ReplayReplica
	// AdvertisedHost and AdvertisedPort override its listener's address.
	AdvertisedHost string
	AdvertisedPort int32
}

// ReplayReplica is a partition directory a broker serves.
type ReplayReplica struct {
	Topic     string
	Partition int32
	Dir       string
}

// ReplayTopic is a topic of the replayed cluster.
type ReplayTopic struct {
	Name       string
	ID         [16]byte
	Partitions []ReplayPartition
}

// ReplayPartition is a partition's place in the cluster. Leader -1: no
// replica can lead it (Metadata answers LEADER_NOT_AVAILABLE).
type ReplayPartition struct {
	Partition       int32
	Leader          int32
	LeaderEpoch     int32
	Replicas, ISR   []int32
	OfflineReplicas []int32
}

// Replay is a replayed cluster: one Server per broker.
type Replay struct {
	view    *replayView
	servers []*Server // in the order of ReplayConfig.Brokers
}

// replayView is what every broker of a replay knows of the cluster.
type replayView struct {
	cfg     ReplayConfig
	topics  map[string]*ReplayTopic
	names   []string
	brokers map[int32]*replayBroker
	order   []int32 // broker ids ascending

	mu      sync.Mutex
	servers map[int32]*Server
}

// replayBroker is a Server's place in its replay (Config.replay).
type replayBroker struct {
	view *replayView
	spec ReplayBroker
}

// NewReplay opens every broker's replicas. A broker listed twice, a
// replica of a topic or partition the view does not have, or a writable
// base configuration is refused.
func NewReplay(rc ReplayConfig) (*Replay, error) {
	if len(rc.Brokers) == 0 {
		return nil, errors.New("serve: a replay needs at least one broker")
	}
	if rc.Base.Writable || rc.Base.Remote != nil {
		return nil, errors.New("serve: a replayed cluster is read-only and has no remote tier")
	}
	if rc.Base.StateDir == "" {
		return nil, errors.New("serve: a replay needs a state directory for committed offsets")
	}
	v := &replayView{cfg: rc, topics: map[string]*ReplayTopic{}, brokers: map[int32]*replayBroker{}, servers: map[int32]*Server{}}
	for i := range rc.Topics {
		t := &rc.Topics[i]
		if v.topics[t.Name] != nil {
			return nil, fmt.Errorf("serve: replay: topic %q listed twice", t.Name)
		}
		for j, p := range t.Partitions {
			if p.Partition != int32(j) {
				return nil, fmt.Errorf("serve: replay: topic %q's partitions are not 0..%d", t.Name, len(t.Partitions)-1)
			}
		}
		v.topics[t.Name] = t
		v.names = append(v.names, t.Name)
	}
	sort.Strings(v.names)
	for _, b := range rc.Brokers {
		if v.brokers[b.ID] != nil {
			return nil, fmt.Errorf("serve: replay: broker %d listed twice", b.ID)
		}
		if len(b.LogDirs) == 0 {
			return nil, fmt.Errorf("serve: replay: broker %d has no log dir", b.ID)
		}
		for _, r := range b.Replicas {
			if v.partition(r.Topic, r.Partition) == nil {
				return nil, fmt.Errorf("serve: replay: broker %d's %s is not a partition of the cluster's topics", b.ID, r.Dir)
			}
		}
		v.brokers[b.ID] = &replayBroker{view: v, spec: b}
		v.order = append(v.order, b.ID)
	}
	sort.Slice(v.order, func(i, j int) bool { return v.order[i] < v.order[j] })
	if v.brokers[rc.Coordinator] == nil {
		return nil, fmt.Errorf("serve: replay: the coordinator %d is not one of the brokers", rc.Coordinator)
	}
	r := &Replay{view: v}
	for _, b := range rc.Brokers {
		cfg := rc.Base
		cfg.NodeID, cfg.LogDir, cfg.AdvertisedHost, cfg.AdvertisedPort = b.ID, b.LogDirs[0], b.AdvertisedHost, b.AdvertisedPort
		if b.ID != rc.Coordinator {
			cfg.StateDir = filepath.Join(rc.Base.StateDir, "replay-broker-"+strconv.Itoa(int(b.ID)))
		}
		cfg.replay = v.brokers[b.ID]
		s, err := New(cfg)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("serve: broker %d: %w", b.ID, err)
		}
		r.servers = append(r.servers, s)
		v.mu.Lock()
		v.servers[b.ID] = s
		v.mu.Unlock()
	}
	return r, nil
}

// Servers are the brokers' Servers, in the order of ReplayConfig.Brokers:
// serve each on its own listener.
func (r *Replay) Servers() []*Server { return r.servers }

// Shutdown shuts every broker down (Server.Shutdown), all bounded by ctx.
func (r *Replay) Shutdown(ctx context.Context) error {
	errs := make([]error, len(r.servers))
	var wg sync.WaitGroup
	for i, s := range r.servers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.Shutdown(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close shuts every broker down at once.
func (r *Replay) Close() error {
	var errs []error
	for _, s := range r.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func (v *replayView) partition(topic string, n int32) *ReplayPartition {
	t := v.topics[topic]
	if t == nil || n < 0 || int(n) >= len(t.Partitions) {
		return nil
	}
	return &t.Partitions[n]
}

// server is a broker's Server once NewReplay made it.
func (v *replayView) server(id int32) *Server {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.servers[id]
}

// loadReplay opens the broker's replicas as its topics' partitions; the
// partitions it does not hold stay nil.
func (s *Server) loadReplay() error {
	rb := s.cfg.replay
	for _, r := range rb.spec.Replicas {
		t := s.topics[r.Topic]
		if t == nil {
			vt := rb.view.topics[r.Topic]
			t = &topic{name: r.Topic, id: vt.ID, parts: make([]*part, len(vt.Partitions))}
			s.topics[r.Topic] = t
			s.topicList = append(s.topicList, r.Topic)
		}
		if t.parts[r.Partition] != nil {
			return fmt.Errorf("serve: broker %d holds %s-%d twice (%s and %s)", s.cfg.NodeID, r.Topic, r.Partition, t.parts[r.Partition].dir, r.Dir)
		}
		p, err := s.openPart(r.Topic, r.Partition, r.Dir)
		if err != nil {
			return err
		}
		t.parts[r.Partition] = p
	}
	sort.Strings(s.topicList)
	return nil
}

// loadCommitted loads the committed offsets and groups the coordinator
// starts from: the log dir's own __consumer_offsets, or a replay's chosen
// replicas of it.
func (s *Server) loadCommitted(st *offsetstore.State) error {
	rb := s.cfg.replay
	if rb == nil {
		return st.Load(s.cfg.LogDir)
	}
	if rb.spec.ID != rb.view.cfg.Coordinator {
		return nil
	}
	for _, d := range rb.view.cfg.OffsetsDirs {
		if err := st.LoadPartition(d); err != nil {
			return err
		}
	}
	return nil
}

// placement is the error a request for a partition gets on this broker
// (0: serve it from sp). leaderOnly: only the partition's leader answers.
func (s *Server) placement(topic string, n int32, sp *part, leaderOnly bool) int16 {
	rb := s.cfg.replay
	if rb == nil {
		if sp == nil {
			return kerr.UnknownTopicOrPartition.Code
		}
		return 0
	}
	vp := rb.view.partition(topic, n)
	switch {
	case vp == nil:
		return kerr.UnknownTopicOrPartition.Code
	case sp == nil || (leaderOnly && vp.Leader != s.cfg.NodeID):
		return kerr.NotLeaderForPartition.Code // NOT_LEADER_OR_FOLLOWER
	}
	return 0
}

// partitionExists reports whether the cluster has the partition (a
// replay's view, else this log dir).
func (s *Server) partitionExists(topic string, n int32) bool {
	if rb := s.cfg.replay; rb != nil {
		return rb.view.partition(topic, n) != nil
	}
	return s.lookup(topic, n) != nil
}

// coordinatorAddr is the broker coordinating every group.
func (s *Server) coordinatorAddr() (int32, string, int32) {
	if rb := s.cfg.replay; rb != nil {
		if c := rb.view.server(rb.view.cfg.Coordinator); c != nil && c != s {
			h, p := c.advertised()
			return c.cfg.NodeID, h, p
		}
	}
	h, p := s.advertised()
	return s.cfg.NodeID, h, p
}

// replayMetadata answers Metadata with the replayed cluster: every broker
// listening, and each partition's leader, replicas and ISR. A replica on
// a broker not served is reported offline.
func (cn *conn) replayMetadata(r *kmsg.MetadataRequest) (kmsg.Response, error) {
	s := cn.s
	v := s.cfg.replay.view
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	live := map[int32]bool{}
	for _, id := range v.order {
		srv := v.server(id)
		if srv == nil {
			continue
		}
		h, p := srv.advertised()
		if h == "" {
			continue // not listening yet
		}
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = id, h, p, v.brokers[id].spec.Rack
		resp.Brokers = append(resp.Brokers, b)
		live[id] = true
	}
	cluster := v.cfg.ClusterID
	if cluster == "" {
		cluster = s.clusterID
	}
	resp.ClusterID = &cluster
	resp.ControllerID = v.cfg.ControllerID
	if r.Version >= 8 && r.Version <= 10 && r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterOps
	}
	var names []string
	if r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0) {
		names = v.names
	} else {
		for _, rt := range r.Topics {
			if rt.Topic != nil {
				names = append(names, *rt.Topic)
				continue
			}
			name := ""
			for _, n := range v.names {
				if v.topics[n].ID == rt.TopicID {
					name = n
				}
			}
			if name == "" {
				mt := kmsg.NewMetadataResponseTopic()
				mt.TopicID, mt.ErrorCode = rt.TopicID, kerr.UnknownTopicID.Code
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			names = append(names, name)
		}
	}
	for _, name := range names {
		n := name
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &n
		t := v.topics[name]
		if t == nil {
			mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		mt.TopicID = t.ID
		if r.IncludeTopicAuthorizedOperations && r.Version >= 8 {
			mt.AuthorizedOperations = topicOps
		}
		for _, p := range t.Partitions {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.Leader, mp.LeaderEpoch = p.Partition, p.Leader, p.LeaderEpoch
			mp.Replicas, mp.ISR = orNone(p.Replicas), orNone(p.ISR)
			mp.OfflineReplicas = append([]int32{}, p.OfflineReplicas...)
			for _, id := range p.Replicas {
				if !live[id] && !contains32(mp.OfflineReplicas, id) {
					mp.OfflineReplicas = append(mp.OfflineReplicas, id)
				}
			}
			if p.Leader < 0 || !live[p.Leader] {
				mp.Leader, mp.ErrorCode = -1, kerr.LeaderNotAvailable.Code
			}
			mt.Partitions = append(mt.Partitions, mp)
		}
		resp.Topics = append(resp.Topics, mt)
	}
	return resp, nil
}

func orNone(v []int32) []int32 {
	if v == nil {
		return []int32{}
	}
	return v
}

func contains32(v []int32, x int32) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// topicExists reports whether the cluster has the topic (a replay's view,
// else this log dir).
func (s *Server) topicExists(name string) bool {
	if rb := s.cfg.replay; rb != nil {
		return rb.view.topics[name] != nil
	}
	return s.topic(name) != nil
}

// currentLeaderEpoch is the partition's leader epoch requests are fenced
// against (KIP-320): a replay's view (the metadata image's), else the
// latest epoch of the data.
func (s *Server) currentLeaderEpoch(topic string, n int32, p *part) int32 {
	if rb := s.cfg.replay; rb != nil {
		if vp := rb.view.partition(topic, n); vp != nil && vp.LeaderEpoch >= 0 {
			return vp.LeaderEpoch
		}
	}
	return p.leaderEpoch()
}
