package cluster

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/kraft"
	"github.com/klog-dev/klog/partition"
)

// The inventory of one or several brokers' disks: brokers and their log
// dirs, the partitions in each with their offsets, and, across brokers, the
// replicas of each partition matched by topic id with the most complete one
// named. Its JSON is a superset of kafka-log-dirs.sh --describe's
// (LogDirsCommand.formatAsJson): {version, brokers: [{broker, logDirs:
// [{logDir, error, partitions: [{partition, size, offsetLag, isFuture}]}]}]}.

// Inventory is what Inventory found.
type Inventory struct {
	Version int          `json:"version"`
	Brokers []*BrokerDir `json:"brokers"`
	Topics  []*TopicView `json:"topics"`
	// Image is the metadata image's provenance when the disks hold a
	// __cluster_metadata-0 (nil otherwise); the partitions then carry the
	// image's leader, replicas and ISR.
	Image *kraft.Provenance `json:"metadataImage,omitempty"`
	// ImageFindings are the differences between the disks and that image
	// (CheckImage).
	ImageFindings []ImageFinding `json:"imageFindings"`
	ProblemList
}

// BrokerDir is one broker's log dirs (broker -1: the log dirs whose
// meta.properties names no broker).
type BrokerDir struct {
	Broker  int32             `json:"broker"`
	LogDirs []*LogDirContents `json:"logDirs"`
}

// LogDirContents is one log dir: kafka-log-dirs' logDir, error and
// partitions, and what else is in it.
type LogDirContents struct {
	*LogDir
	// Error is the exception class kafka-log-dirs would print for a log
	// dir that cannot be read (null when readable).
	Error      *string    `json:"error"`
	Partitions []*Replica `json:"partitions"`
	SizeBytes  int64      `json:"size"`
}

// Replica is one partition directory of a log dir (a -future one too).
type Replica struct {
	// Partition is kafka-log-dirs' "topic-partition".
	Partition string `json:"partition"`
	// Size is the bytes of its segments' .log files (LogSegment.size).
	Size int64 `json:"size"`
	// OffsetLag is kafka-log-dirs' offsetLag: for the current replica
	// max(high watermark - log end offset, 0); for a future one the current
	// replica's log end offset minus its own.
	OffsetLag int64  `json:"offsetLag"`
	IsFuture  bool   `json:"isFuture"`
	Topic     string `json:"topic"`
	Number    int32  `json:"partitionId"`
	TopicID   string `json:"topicId,omitempty"`
	Path      string `json:"path"`
	PartState
	// LEOMinusHW is the log end offset minus the high watermark: what this
	// replica holds that is not committed.
	LEOMinusHW int64 `json:"leoMinusHw"`
	broker     int32
}

// TopicView is a topic across the brokers' disks.
type TopicView struct {
	Name string `json:"name"`
	// TopicID is the topic id its replicas record; TopicIDs lists several
	// when replicas of the same name disagree (a topic deleted and
	// recreated while a broker was away): they are not compared.
	TopicID    string           `json:"topicId"`
	TopicIDs   []string         `json:"topicIds,omitempty"`
	Partitions []*PartitionView `json:"partitions"`
}

// PartitionView is one partition's replicas on the disks read.
type PartitionView struct {
	Partition int32         `json:"partition"`
	TopicID   string        `json:"topicId"`
	Replicas  []ReplicaView `json:"replicas"`
	// MostComplete is the broker (and log dir) holding the most complete
	// copy: the highest latest leader epoch, then the highest log end
	// offset, as klog diff infers a leader. An unclean election of another
	// replica loses at least its Behind offsets.
	MostComplete       int32  `json:"mostCompleteBroker"`
	MostCompleteLogDir string `json:"mostCompleteLogDir"`
	// Leader, ImageReplicas and ISR are the metadata image's (absent
	// without one).
	Leader        *int32  `json:"leader,omitempty"`
	LeaderEpoch   *int32  `json:"imageLeaderEpoch,omitempty"`
	ImageReplicas []int32 `json:"imageReplicas,omitempty"`
	ISR           []int32 `json:"isr,omitempty"`
}

// ReplicaView is one replica of a partition.
type ReplicaView struct {
	Broker       int32  `json:"broker"`
	LogDir       string `json:"logDir"`
	LogEndOffset int64  `json:"logEndOffset"`
	LeaderEpoch  int32  `json:"leaderEpoch"`
	// Behind is how many offsets the most complete replica holds past
	// this one's log end.
	Behind int64 `json:"behind"`
}

// InventoryOptions say what to read.
type InventoryOptions struct {
	// Topics limits the partitions listed (all when empty).
	Topics        []string
	MaxBatchBytes int
}

// TakeInventory reads every partition of the log dirs.
func TakeInventory(ctx context.Context, dirs []*LogDir, opts InventoryOptions) (*Inventory, error) {
	inv := &Inventory{Version: 1, Brokers: []*BrokerDir{}, Topics: []*TopicView{}, ImageFindings: []ImageFinding{}, ProblemList: ProblemList{Problems: []Problem{}}}
	want := map[string]bool{}
	for _, t := range opts.Topics {
		want[t] = true
	}
	im := metadataImage(ctx, dirs)
	if im != nil {
		inv.Image = &im.Provenance
		if f := CheckImage(dirs, im); f != nil {
			inv.ImageFindings = f
		}
	}
	byBroker := map[int32]*BrokerDir{}
	var all []*Replica
	for _, ld := range dirs {
		b := byBroker[ld.BrokerID]
		if b == nil {
			b = &BrokerDir{Broker: ld.BrokerID}
			byBroker[ld.BrokerID] = b
			inv.Brokers = append(inv.Brokers, b)
		}
		lc := &LogDirContents{LogDir: ld, Partitions: []*Replica{}}
		b.LogDirs = append(b.LogDirs, lc)
		current := map[string]*Replica{}
		for _, pd := range ld.Partitions {
			if len(want) > 0 && !want[pd.Topic] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := readReplica(pd, false, opts.MaxBatchBytes)
			if err != nil {
				return nil, err
			}
			r.broker = ld.BrokerID
			for _, msg := range r.Problems {
				inv.problem(Problem{File: pd.Path, Position: -1, Offset: -1, Message: msg})
			}
			current[r.Partition] = r
			lc.Partitions = append(lc.Partitions, r)
			lc.SizeBytes += r.Size
			all = append(all, r)
		}
		for _, fut := range ld.Future {
			pd, ok := futureDir(ld, fut)
			if !ok || (len(want) > 0 && !want[pd.Topic]) {
				continue
			}
			r, err := readReplica(pd, true, opts.MaxBatchBytes)
			if err != nil {
				return nil, err
			}
			if cur := current[r.Partition]; cur != nil {
				r.OffsetLag = cur.LogEndOffset - r.LogEndOffset
			}
			lc.Partitions = append(lc.Partitions, r)
			lc.SizeBytes += r.Size
		}
	}
	sort.Slice(inv.Brokers, func(i, j int) bool { return inv.Brokers[i].Broker < inv.Brokers[j].Broker })
	inv.Topics = topicViews(all, im)
	return inv, nil
}

// readReplica reads one partition directory's state.
func readReplica(pd *PartitionDir, future bool, maxBatchBytes int) (*Replica, error) {
	st, err := readState(pd, stateOptions{producers: true, maxBatchBytes: maxBatchBytes})
	if err != nil {
		return nil, err
	}
	r := &Replica{Partition: pd.Topic + "-" + itoa32(pd.Partition), Size: st.SizeBytes, IsFuture: future, Topic: pd.Topic, Number: pd.Partition,
		Path: pd.Path, PartState: *st}
	if pd.TopicID != ([16]byte{}) {
		r.TopicID = formatID(pd.TopicID)
	}
	if st.LogEndOffset >= 0 && st.HighWatermark >= 0 {
		r.LEOMinusHW = st.LogEndOffset - st.HighWatermark
		if !future {
			r.OffsetLag = max(st.HighWatermark-st.LogEndOffset, 0)
		}
	}
	return r, nil
}

// futureDir reads a -future directory's name: <topic>-<partition>.<id>-future
// (LogFileUtils.logFutureDirName).
func futureDir(ld *LogDir, path string) (*PartitionDir, bool) {
	name := strings.TrimSuffix(filepath.Base(path), "-future")
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	topic, n, ok := partition.ParseDirName(name)
	if !ok {
		return nil, false
	}
	pd := &PartitionDir{Path: path, Topic: topic, Partition: n, LogDir: ld}
	if id, found, err := partition.ReadTopicID(path); err == nil && found {
		pd.TopicID = id
	}
	return pd, true
}

// topicViews groups the replicas by topic and partition, and within one
// name by topic id: replicas recording different ids are different
// topics' (one without an id joins the first).
func topicViews(all []*Replica, im *kraft.Image) []*TopicView {
	byName := map[string]*TopicView{}
	type key struct {
		topic string
		part  int32
		id    string
	}
	parts := map[key]*PartitionView{}
	var names []string
	for _, r := range all {
		t := byName[r.Topic]
		if t == nil {
			t = &TopicView{Name: r.Topic, Partitions: []*PartitionView{}}
			byName[r.Topic] = t
			names = append(names, r.Topic)
		}
		id := r.TopicID
		switch {
		case id == "" && t.TopicID != "":
			id = t.TopicID
		case t.TopicID == "":
			t.TopicID = id
		case id != t.TopicID && !contains(t.TopicIDs, id):
			if len(t.TopicIDs) == 0 {
				t.TopicIDs = []string{t.TopicID}
			}
			t.TopicIDs = append(t.TopicIDs, id)
		}
		k := key{r.Topic, r.Number, id}
		p := parts[k]
		if p == nil {
			p = &PartitionView{Partition: r.Number, TopicID: id, Replicas: []ReplicaView{}}
			parts[k] = p
			t.Partitions = append(t.Partitions, p)
		}
		p.Replicas = append(p.Replicas, ReplicaView{Broker: r.broker, LogDir: r.Path, LogEndOffset: r.LogEndOffset, LeaderEpoch: r.LeaderEpoch})
	}
	sort.Strings(names)
	out := make([]*TopicView, 0, len(names))
	for _, n := range names {
		t := byName[n]
		sort.SliceStable(t.Partitions, func(i, j int) bool { return t.Partitions[i].Partition < t.Partitions[j].Partition })
		for _, p := range t.Partitions {
			p.mostComplete()
			if im != nil {
				if it := im.Topic(n); it != nil {
					if ip := it.Partition(p.Partition); ip != nil {
						l, e := ip.Leader, ip.LeaderEpoch
						p.Leader, p.LeaderEpoch, p.ImageReplicas, p.ISR = &l, &e, ip.Replicas, ip.Isr
					}
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// mostComplete names the replica with the highest latest leader epoch,
// then the highest log end offset, and how far behind it each is.
func (p *PartitionView) mostComplete() {
	best := 0
	for i, r := range p.Replicas {
		b := p.Replicas[best]
		if r.LeaderEpoch > b.LeaderEpoch || (r.LeaderEpoch == b.LeaderEpoch && r.LogEndOffset > b.LogEndOffset) {
			best = i
		}
	}
	b := p.Replicas[best]
	p.MostComplete, p.MostCompleteLogDir = b.Broker, b.LogDir
	for i := range p.Replicas {
		p.Replicas[i].Behind = max(b.LogEndOffset-p.Replicas[i].LogEndOffset, 0)
	}
}

func formatID(id [16]byte) string { return format.FormatTopicID(id) }

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func itoa32(n int32) string { return strconv.Itoa(int(n)) }
