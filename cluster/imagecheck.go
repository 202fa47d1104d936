package cluster

import (
	"context"
	"strconv"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/kraft"
	"github.com/klog-dev/klog/verify"
)

// The data on a broker's disks checked against the KRaft metadata image:
// what the image assigns to the broker must be there (in the log dir the
// image names, when it names one), what is there must be a partition the
// image knows with the topic id it records, and the log dirs must be the
// broker's registered directories. A broker reconciles these differences
// when it starts (ReplicaManager.applyDelta, LogManager's stray
// detection: KIP-858), so after an incident they say what it will do.

// The kinds of findings are verify's (verify.KindImage*).
const (
	FindingMissingReplica   = verify.KindImageMissingReplica
	FindingTopicID          = verify.KindImageTopicID
	FindingUnknownPartition = verify.KindImageUnknownPartition
	FindingUnknownLogDir    = verify.KindImageUnknownLogDir
)

// ImageFinding is one difference between the disks and the image.
type ImageFinding struct {
	LogDir    string      `json:"logDir"`
	Path      string      `json:"path"`
	Kind      verify.Kind `json:"kind"`
	Broker    int32       `json:"broker"`
	Topic     string      `json:"topic,omitempty"`
	Partition int32       `json:"partition"`
	Message   string      `json:"message"`
	// Info marks a check that could not be made (no broker id).
	Info bool `json:"info,omitempty"`
}

// ImageOf is the metadata image of the __cluster_metadata-0 in the log
// dirs, nil when none holds one.
func ImageOf(ctx context.Context, dirs []*LogDir) *kraft.Image { return metadataImage(ctx, dirs) }

// CheckImage compares the log dirs with the image, broker by broker (each
// log dir's broker is its meta.properties node.id; when it has none and
// the image registers one broker, that one).
func CheckImage(dirs []*LogDir, im *kraft.Image) []ImageFinding {
	var out []ImageFinding
	byBroker := map[int32][]*LogDir{}
	var order []int32
	for _, ld := range dirs {
		id := ld.BrokerID
		if id < 0 && len(im.Brokers) == 1 {
			id = im.Brokers[0].ID
		}
		if id < 0 {
			out = append(out, ImageFinding{LogDir: ld.Path, Path: ld.Path, Kind: FindingUnknownLogDir, Broker: -1, Partition: -1, Info: true,
				Message: "not checked against the metadata image: meta.properties names no broker and the image registers " +
					strconv.Itoa(len(im.Brokers)) + " brokers"})
			continue
		}
		if byBroker[id] == nil {
			order = append(order, id)
		}
		byBroker[id] = append(byBroker[id], ld)
	}
	for _, b := range order {
		out = append(out, checkBroker(b, byBroker[b], im)...)
	}
	return out
}

func checkBroker(b int32, lds []*LogDir, im *kraft.Image) []ImageFinding {
	var out []ImageFinding
	add := func(ld *LogDir, path string, kind verify.Kind, topic string, p int32, msg string) {
		out = append(out, ImageFinding{LogDir: ld.Path, Path: path, Kind: kind, Broker: b, Topic: topic, Partition: p, Message: msg})
	}
	reg := im.Broker(b)
	byDirID := map[string]*LogDir{}
	for _, ld := range lds {
		if ld.DirectoryID == "" {
			continue
		}
		byDirID[ld.DirectoryID] = ld
		if reg != nil && len(reg.Directories) > 0 && !hasDir(reg.Directories, ld.DirectoryID) {
			add(ld, ld.Path, FindingUnknownLogDir, "", -1, "directory.id "+ld.DirectoryID+" is not one of broker "+strconv.Itoa(int(b))+
				"'s registered log directories in the metadata image")
		}
	}
	if len(lds) == 1 && lds[0].DirectoryID == "" && reg != nil && len(reg.Directories) == 1 {
		// One log dir that does not say its directory.id, of a broker
		// that registers one directory: that is it.
		byDirID[reg.Directories[0].String()] = lds[0]
	}
	present := map[tp]*PartitionDir{}
	for _, ld := range lds {
		for _, pd := range ld.Partitions {
			present[tp{pd.Topic, pd.Partition}] = pd
			if pd.Topic == kraft.MetadataTopic {
				continue
			}
			t := im.Topic(pd.Topic)
			switch {
			case t == nil:
				add(ld, pd.Path, FindingUnknownPartition, pd.Topic, pd.Partition, "the metadata image has no topic "+pd.Topic+" (deleted)")
			case pd.TopicID != ([16]byte{}) && kraft.UUID(pd.TopicID) != t.ID:
				add(ld, pd.Path, FindingTopicID, pd.Topic, pd.Partition, "partition.metadata records topic id "+format.FormatTopicID(pd.TopicID)+
					"; the metadata image's "+pd.Topic+" is "+t.ID.String()+" (the topic was deleted and created again)")
			case t.Partition(pd.Partition) == nil:
				add(ld, pd.Path, FindingUnknownPartition, pd.Topic, pd.Partition, "the metadata image's "+pd.Topic+" has no partition "+strconv.Itoa(int(pd.Partition)))
			case !t.Partition(pd.Partition).HasReplica(b):
				add(ld, pd.Path, FindingUnknownPartition, pd.Topic, pd.Partition, "the metadata image does not assign "+pd.Topic+"-"+
					strconv.Itoa(int(pd.Partition))+" to broker "+strconv.Itoa(int(b))+" (replicas "+ints32(t.Partition(pd.Partition).Replicas)+"): the broker makes it -stray")
			}
		}
	}
	for _, t := range im.Topics {
		for _, p := range t.Partitions {
			dir, ok := p.Directory(b)
			if !ok || present[tp{t.Name, p.Partition}] != nil {
				continue
			}
			ld, where := lds[0], "in any of its log dirs given"
			if specificDir(dir) {
				if ld = byDirID[dir.String()]; ld == nil {
					continue // in a log dir not given
				}
				where = "in " + ld.Path + ", the directory the image names"
			}
			add(ld, ld.Path, FindingMissingReplica, t.Name, p.Partition, "the metadata image assigns "+t.Name+"-"+strconv.Itoa(int(p.Partition))+
				" (topic id "+t.ID.String()+") to broker "+strconv.Itoa(int(b))+", and it is not "+where)
		}
	}
	return out
}

// specificDir is a directory id that names one log dir: not MIGRATING,
// UNASSIGNED or LOST (DirectoryId's reserved ids 0, 1 and 2).
func specificDir(d kraft.UUID) bool {
	for i := 0; i < 15; i++ {
		if d[i] != 0 {
			return true
		}
	}
	return d[15] > 2
}

func hasDir(ds []kraft.UUID, id string) bool {
	for _, d := range ds {
		if d.String() == id {
			return true
		}
	}
	return false
}

func ints32(v []int32) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(int(x))
	}
	return s
}
