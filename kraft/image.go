// Package kraft builds the KRaft metadata image from a __cluster_metadata
// partition on disk: the latest snapshot (<end offset>-<epoch>.checkpoint)
// and the log after it, replayed as Kafka's metadata image code applies
// each record (metadata/src/main/java/org/apache/kafka/image/*Delta.java,
// metadata/.../PartitionRegistration.merge, loader/MetadataBatchLoader for
// KIP-868 metadata transactions). The image is what a broker's
// MetadataImage holds: brokers and controllers, topics and partitions,
// configs, features, producer ids, ACLs, client quotas, delegation tokens
// and SCRAM users, plus the KRaft voters and leader from the control
// records. Records come typed from internaltopic, the decoder behind
// kafka-dump-log's --cluster-metadata-decoder.
//
// The image can be browsed as a tree of paths (/topics/orders/0), as
// kafka-metadata-shell does, and it is plain data with JSON tags.
package kraft

import (
	"sort"
	"strconv"

	"github.com/klog-dev/klog/format"
)

// UUID is a Kafka Uuid (a topic id, an incarnation or directory id); it
// prints and marshals as Kafka's Uuid.toString.
type UUID [16]byte

// String is Uuid.toString: URL-safe base64 without padding.
func (u UUID) String() string { return format.FormatTopicID(u) }

// MarshalText writes Uuid.toString.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// less is Uuid.compareTo: the most and then the least significant 64 bits,
// as signed longs.
func (u UUID) less(v UUID) bool {
	hi := func(x UUID, i int) int64 {
		var n int64
		for _, c := range x[i : i+8] {
			n = n<<8 | int64(c)
		}
		return n
	}
	if a, b := hi(u, 0), hi(v, 0); a != b {
		return a < b
	}
	return hi(u, 8) < hi(v, 8)
}

// Image is the metadata image after replay.
type Image struct {
	Provenance   Provenance         `json:"provenance"`
	Features     Features           `json:"features"`
	Brokers      []*Broker          `json:"brokers"`
	Controllers  []*Controller      `json:"controllers"`
	Quorum       Quorum             `json:"quorum"`
	Topics       []*Topic           `json:"topics"`
	Configs      []*ConfigResource  `json:"configs"`
	ClientQuotas []*ClientQuota     `json:"clientQuotas"`
	ProducerIDs  ProducerIDs        `json:"producerIds"`
	ACLs         []*ACL             `json:"acls"`
	Tokens       []*DelegationToken `json:"delegationTokens"`
	Scram        []*ScramUser       `json:"scram"`
	// Problems are the records the replay could not apply (Kafka's loader
	// reports each as a fault and goes on), and what was wrong with the
	// files: at most MaxProblems, ProblemCount counts them all.
	Problems     []Problem `json:"problems"`
	ProblemCount int       `json:"problemCount"`

	topicsByID   map[UUID]*Topic
	topicsByName map[string]*Topic
	brokers      map[int32]*Broker
	controllers  map[int32]*Controller
	configs      map[configKey]*ConfigResource
	quotas       map[string]*ClientQuota
	acls         map[UUID]*ACL
	tokens       map[string]*DelegationToken
	scram        map[scramKey]*ScramUser
}

// MaxProblems bounds the problems an image keeps (the count goes on).
const MaxProblems = 100

// Problem is one thing the replay could not do, at a record's offset (-1
// when it is about a file rather than a record).
type Problem struct {
	File    string `json:"file,omitempty"`
	Offset  int64  `json:"offset"`
	Message string `json:"message"`
}

// Provenance says what the image holds: the last offset and epoch
// replayed and the log time of that batch (MetadataProvenance), the
// snapshot it started from, and how many records and batches were read.
type Provenance struct {
	LastContainedOffset    int64  `json:"lastContainedOffset"`
	LastContainedEpoch     int32  `json:"lastContainedEpoch"`
	LastContainedLogTimeMs int64  `json:"lastContainedLogTimeMs"`
	Snapshot               string `json:"snapshot,omitempty"`
	SnapshotEndOffset      int64  `json:"snapshotEndOffset"`
	LogStartOffset         int64  `json:"logStartOffset"`
	LogEndOffset           int64  `json:"logEndOffset"`
	// UpToOffset is the --offset asked for, -1 for the whole log.
	UpToOffset int64 `json:"upToOffset"`
	Records    int64 `json:"records"`
	Batches    int64 `json:"batches"`
	// PendingTransaction is the offset of a BeginTransactionRecord whose
	// transaction had not ended where the replay stopped (its records are
	// not in the image, as a broker would not publish them), or -1.
	PendingTransaction int64 `json:"pendingTransaction"`
}

// Features are the finalized feature levels (FeaturesImage).
type Features struct {
	// MetadataVersion is metadata.version's feature level (0: none seen).
	MetadataVersion     int16            `json:"metadataVersionLevel"`
	MetadataVersionName string           `json:"metadataVersion"`
	Finalized           map[string]int16 `json:"finalized"`
	ZkMigrationState    string           `json:"zkMigrationState"`
}

// Endpoint is a listener.
type Endpoint struct {
	Name             string `json:"name"`
	Host             string `json:"host"`
	Port             uint16 `json:"port"`
	SecurityProtocol string `json:"securityProtocol"`
}

// VersionRange is a supported feature's range.
type VersionRange struct {
	Name string `json:"name"`
	Min  int16  `json:"minSupportedVersion"`
	Max  int16  `json:"maxSupportedVersion"`
}

// Broker is a BrokerRegistration.
type Broker struct {
	ID                   int32          `json:"id"`
	Epoch                int64          `json:"epoch"`
	IncarnationID        UUID           `json:"incarnationId"`
	Listeners            []Endpoint     `json:"listeners"`
	SupportedFeatures    []VersionRange `json:"supportedFeatures"`
	Rack                 *string        `json:"rack"`
	Fenced               bool           `json:"fenced"`
	InControlledShutdown bool           `json:"inControlledShutdown"`
	IsMigratingZkBroker  bool           `json:"isMigratingZkBroker"`
	// Directories are the broker's log directory ids (sorted as Kafka
	// sorts them, Uuid.compareTo).
	Directories         []UUID `json:"directories"`
	CordonedDirectories []UUID `json:"cordonedDirectories,omitempty"`
	// RegisteredAt is the offset of the record that registered it.
	RegisteredAt int64 `json:"registeredAtOffset"`
}

// Controller is a ControllerRegistration.
type Controller struct {
	ID                int32          `json:"id"`
	IncarnationID     UUID           `json:"incarnationId"`
	ZkMigrationReady  bool           `json:"zkMigrationReady"`
	Listeners         []Endpoint     `json:"listeners"`
	SupportedFeatures []VersionRange `json:"supportedFeatures"`
}

// Quorum is what the KRaft control records say: the voters
// (KRAFT_VOTERS, KIP-853), the kraft.version record and the last
// LEADER_CHANGE.
type Quorum struct {
	KRaftVersion int16   `json:"kraftVersion"`
	Voters       []Voter `json:"voters"`
	// Leader is the last LeaderChangeMessage's leader (-1: none seen), at
	// the epoch of its batch.
	Leader         int32   `json:"leaderId"`
	LeaderEpoch    int32   `json:"leaderEpoch"`
	LeaderVoters   []int32 `json:"leaderChangeVoters"`
	GrantingVoters []int32 `json:"grantingVoters"`
}

// Voter is one member of the KRaft voter set.
type Voter struct {
	ID          int32      `json:"voterId"`
	DirectoryID UUID       `json:"voterDirectoryId"`
	Endpoints   []Endpoint `json:"endpoints"`
	MinVersion  int16      `json:"minSupportedVersion"`
	MaxVersion  int16      `json:"maxSupportedVersion"`
}

// Topic is a TopicImage.
type Topic struct {
	Name       string       `json:"name"`
	ID         UUID         `json:"topicId"`
	Partitions []*Partition `json:"partitions"`

	parts map[int32]*Partition
}

// Partition is a PartitionRegistration.
type Partition struct {
	Partition              int32   `json:"partition"`
	Replicas               []int32 `json:"replicas"`
	Directories            []UUID  `json:"directories"`
	Isr                    []int32 `json:"isr"`
	RemovingReplicas       []int32 `json:"removingReplicas"`
	AddingReplicas         []int32 `json:"addingReplicas"`
	EligibleLeaderReplicas []int32 `json:"eligibleLeaderReplicas"`
	LastKnownElr           []int32 `json:"lastKnownElr"`
	Leader                 int32   `json:"leader"`
	LeaderRecoveryState    string  `json:"leaderRecoveryState"`
	LeaderEpoch            int32   `json:"leaderEpoch"`
	PartitionEpoch         int32   `json:"partitionEpoch"`
}

// Directory returns the directory id the image assigns to broker's
// replica (PartitionRegistration.directory), ok false when broker holds
// no replica.
func (p *Partition) Directory(broker int32) (UUID, bool) {
	for i, r := range p.Replicas {
		if r == broker {
			if i < len(p.Directories) {
				return p.Directories[i], true
			}
			return UUID{}, true
		}
	}
	return UUID{}, false
}

// HasReplica reports whether broker is one of the partition's replicas.
func (p *Partition) HasReplica(broker int32) bool {
	_, ok := p.Directory(broker)
	return ok
}

// ConfigResource is one resource's dynamic configs (ConfigurationImage).
type ConfigResource struct {
	ResourceType string            `json:"resourceType"`
	ResourceName string            `json:"resourceName"`
	Configs      map[string]string `json:"configs"`
}

type configKey struct {
	typ  int8
	name string
}

// ClientQuota is one entity's quotas (ClientQuotaImage).
type ClientQuota struct {
	// Name is the entity as a path element (QuotaEntityName).
	Name string `json:"name"`
	// Entity maps entity type (user, client-id, ip) to name; null is the
	// type's default entity.
	Entity map[string]*string `json:"entity"`
	Quotas map[string]float64 `json:"quotas"`
}

// ProducerIDs is the ProducerIdsImage and the last block each broker was
// given (PRODUCER_IDS_RECORD: the block runs from the previous next id up
// to the record's).
type ProducerIDs struct {
	NextProducerID int64           `json:"nextProducerId"`
	Blocks         []ProducerBlock `json:"blocks"`
}

// ProducerBlock is a block of producer ids allocated to a broker.
type ProducerBlock struct {
	BrokerID        int32 `json:"brokerId"`
	BrokerEpoch     int64 `json:"brokerEpoch"`
	FirstProducerID int64 `json:"firstProducerId"`
	Size            int64 `json:"size"`
	Offset          int64 `json:"offset"`
}

// ACL is a StandardAcl with its id.
type ACL struct {
	ID             UUID   `json:"id"`
	ResourceType   string `json:"resourceType"`
	ResourceName   string `json:"resourceName"`
	PatternType    string `json:"patternType"`
	Principal      string `json:"principal"`
	Host           string `json:"host"`
	Operation      string `json:"operation"`
	PermissionType string `json:"permissionType"`
}

// DelegationToken is a DelegationTokenData (the HMAC is not in the log).
type DelegationToken struct {
	TokenID             string   `json:"tokenId"`
	Owner               string   `json:"owner"`
	Requester           string   `json:"requester"`
	Renewers            []string `json:"renewers"`
	IssueTimestamp      int64    `json:"issueTimestamp"`
	MaxTimestamp        int64    `json:"maxTimestamp"`
	ExpirationTimestamp int64    `json:"expirationTimestamp"`
}

// ScramUser is a SCRAM credential's public part: the user, the mechanism
// and the iterations. The salt and keys are never kept.
type ScramUser struct {
	Name       string `json:"name"`
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

type scramKey struct {
	name string
	mech int8
}

func newImage() *Image {
	return &Image{
		Features:     Features{Finalized: map[string]int16{}, ZkMigrationState: "NONE"},
		Quorum:       Quorum{Leader: -1, LeaderEpoch: -1},
		topicsByID:   map[UUID]*Topic{},
		topicsByName: map[string]*Topic{},
		brokers:      map[int32]*Broker{},
		controllers:  map[int32]*Controller{},
		configs:      map[configKey]*ConfigResource{},
		quotas:       map[string]*ClientQuota{},
		acls:         map[UUID]*ACL{},
		tokens:       map[string]*DelegationToken{},
		scram:        map[scramKey]*ScramUser{},
	}
}

// Topic returns the topic of that name, or nil.
func (im *Image) Topic(name string) *Topic { return im.topicsByName[name] }

// TopicByID returns the topic with that id, or nil.
func (im *Image) TopicByID(id UUID) *Topic { return im.topicsByID[id] }

// Broker returns a registered broker, or nil.
func (im *Image) Broker(id int32) *Broker { return im.brokers[id] }

// Partition returns partition n of the topic, or nil.
func (t *Topic) Partition(n int32) *Partition { return t.parts[n] }

// finish fills the exported, sorted slices from the maps.
func (im *Image) finish() {
	im.Brokers = sortedValues(im.brokers, func(a, b *Broker) bool { return a.ID < b.ID })
	im.Controllers = sortedValues(im.controllers, func(a, b *Controller) bool { return a.ID < b.ID })
	im.Topics = sortedValues(im.topicsByName, func(a, b *Topic) bool { return a.Name < b.Name })
	for _, t := range im.Topics {
		t.Partitions = sortedValues(t.parts, func(a, b *Partition) bool { return a.Partition < b.Partition })
	}
	im.Configs = sortedValues(im.configs, func(a, b *ConfigResource) bool {
		if a.ResourceType != b.ResourceType {
			return a.ResourceType < b.ResourceType
		}
		return a.ResourceName < b.ResourceName
	})
	im.ClientQuotas = sortedValues(im.quotas, func(a, b *ClientQuota) bool { return a.Name < b.Name })
	im.ACLs = sortedValues(im.acls, func(a, b *ACL) bool { return a.ID.less(b.ID) })
	im.Tokens = sortedValues(im.tokens, func(a, b *DelegationToken) bool { return a.TokenID < b.TokenID })
	im.Scram = sortedValues(im.scram, func(a, b *ScramUser) bool {
		if a.Mechanism != b.Mechanism {
			return a.Mechanism < b.Mechanism
		}
		return a.Name < b.Name
	})
	sort.Slice(im.ProducerIDs.Blocks, func(i, j int) bool { return im.ProducerIDs.Blocks[i].BrokerID < im.ProducerIDs.Blocks[j].BrokerID })
	im.Features.MetadataVersionName = MetadataVersionName(im.Features.MetadataVersion)
	if im.Problems == nil {
		im.Problems = []Problem{}
	}
}

func sortedValues[K comparable, V any](m map[K]V, less func(a, b V) bool) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// metadataVersions are MetadataVersion's names by feature level
// (server-common/.../MetadataVersion.java), up to Kafka 4.3's 4.3-IV0.
var metadataVersions = []string{1: "3.0-IV1", "3.1-IV0", "3.2-IV0", "3.3-IV0", "3.3-IV1", "3.3-IV2", "3.3-IV3",
	"3.4-IV0", "3.5-IV0", "3.5-IV1", "3.5-IV2", "3.6-IV0", "3.6-IV1", "3.6-IV2", "3.7-IV0", "3.7-IV1",
	"3.7-IV2", "3.7-IV3", "3.7-IV4", "3.8-IV0", "3.9-IV0", "4.0-IV0", "4.0-IV1", "4.0-IV2", "4.0-IV3",
	"4.1-IV0", "4.1-IV1", "4.2-IV0", "4.2-IV1", "4.3-IV0"}

// MetadataVersionName is the release name of a metadata.version level
// ("3.7-IV4"), "level N" for one klog has no name for, "" for 0.
func MetadataVersionName(level int16) string {
	switch {
	case level == 0:
		return ""
	case level > 0 && int(level) < len(metadataVersions):
		return metadataVersions[level]
	}
	return "level " + strconv.Itoa(int(level))
}
