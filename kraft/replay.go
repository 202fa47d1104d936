package kraft

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	it "github.com/klog-dev/klog/internaltopic"
)

// The replay of one record into the image: each case is the replay method
// of the Kafka delta that owns the record type (ClusterDelta, TopicsDelta,
// TopicDelta, ConfigurationsDelta, FeaturesDelta, ClientQuotasDelta,
// ProducerIdsDelta, AclsDelta, ScramDelta, DelegationTokenDelta), applied
// to a mutable image in log order, which is what applying the deltas
// batch by batch comes to. Where Kafka throws (a partition change for a
// partition it does not know, a fence at the wrong broker epoch), the
// error names the record and the image is left as it was.

// Migrating is DirectoryId.MIGRATING: the directory of a replica whose
// broker has not said which of its log directories holds it.
var Migrating = UUID{}

// replay applies one record.
func (im *Image) replay(offset int64, rec it.MetadataRecord) error {
	switch r := rec.Body.(type) {
	case *it.RegisterBrokerRecord:
		im.brokers[r.BrokerID] = brokerFromRecord(r, offset)
	case *it.UnregisterBrokerRecord:
		delete(im.brokers, r.BrokerID)
	case *it.RegisterControllerRecord:
		im.controllers[r.ControllerID] = &Controller{ID: r.ControllerID, IncarnationID: r.IncarnationID,
			ZkMigrationReady: r.ZkMigrationReady, Listeners: endpoints(r.EndPoints), SupportedFeatures: featureRanges(r.Features)}
	case *it.FenceBrokerRecord:
		return im.changeBroker(r.ID, r.Epoch, "fence", 1, 0, nil, nil)
	case *it.UnfenceBrokerRecord:
		return im.changeBroker(r.ID, r.Epoch, "unfence", -1, 0, nil, nil)
	case *it.BrokerRegistrationChangeRecord:
		return im.changeBroker(r.BrokerID, r.BrokerEpoch, "change", r.Fenced, r.InControlledShutdown, r.LogDirs, r.CordonedLogDirs)
	case *it.TopicRecord:
		t := &Topic{Name: r.Name, ID: r.TopicID, parts: map[int32]*Partition{}}
		im.topicsByID[t.ID] = t
		im.topicsByName[t.Name] = t
	case *it.PartitionRecord:
		return im.replayPartition(r)
	case *it.PartitionChangeRecord:
		return im.replayPartitionChange(r)
	case *it.RemoveTopicRecord:
		return im.removeTopic(r.TopicID)
	case *it.ClearElrRecord:
		return im.clearElr(r.TopicName)
	case *it.ConfigRecord:
		im.replayConfig(r)
	case *it.FeatureLevelRecord:
		switch {
		case r.Name == "metadata.version":
			im.Features.MetadataVersion = r.FeatureLevel
		case r.FeatureLevel == 0:
			delete(im.Features.Finalized, r.Name)
		default:
			im.Features.Finalized[r.Name] = r.FeatureLevel
		}
	case *it.ZkMigrationStateRecord:
		im.Features.ZkMigrationState = enumName(zkMigrationStates, int(r.ZkMigrationState))
	case *it.ClientQuotaRecord:
		im.replayQuota(r)
	case *it.ProducerIDsRecord:
		im.replayProducerIDs(offset, r)
	case *it.AccessControlEntryRecord:
		im.acls[r.ID] = &ACL{ID: r.ID, ResourceType: enumName(aclResourceTypes, int(r.ResourceType)), ResourceName: r.ResourceName,
			PatternType: enumName(patternTypes, int(r.PatternType)), Principal: r.Principal, Host: r.Host,
			Operation: enumName(aclOperations, int(r.Operation)), PermissionType: enumName(permissionTypes, int(r.PermissionType))}
	case *it.RemoveAccessControlEntryRecord:
		if im.acls[r.ID] == nil {
			return errors.New("Failed to find existing ACL with ID " + UUID(r.ID).String() + " in either image or changes")
		}
		delete(im.acls, r.ID)
	case *it.UserScramCredentialRecord:
		im.scram[scramKey{r.Name, r.Mechanism}] = &ScramUser{Name: r.Name, Mechanism: enumName(scramMechanisms, int(r.Mechanism)), Iterations: r.Iterations}
	case *it.RemoveUserScramCredentialRecord:
		delete(im.scram, scramKey{r.Name, r.Mechanism})
	case *it.DelegationTokenRecord:
		im.tokens[r.TokenID] = &DelegationToken{TokenID: r.TokenID, Owner: r.Owner, Requester: r.Requester,
			Renewers: r.Renewers, IssueTimestamp: r.IssueTimestamp, MaxTimestamp: r.MaxTimestamp, ExpirationTimestamp: r.ExpirationTimestamp}
	case *it.RemoveDelegationTokenRecord:
		delete(im.tokens, r.TokenID)
	case *it.NoOpRecord:
	default:
		return errors.New("Unknown metadata record type " + rec.Type.String())
	}
	return nil
}

func endpoints(es []it.Endpoint) []Endpoint {
	out := make([]Endpoint, len(es))
	for i, e := range es {
		out[i] = Endpoint{Name: e.Name, Host: e.Host, Port: e.Port, SecurityProtocol: enumName(securityProtocols, int(e.SecurityProtocol))}
	}
	// BrokerRegistration keeps listeners by name; its toString sorts them.
	slices.SortFunc(out, func(a, b Endpoint) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func featureRanges(fs []it.FeatureRange) []VersionRange {
	out := make([]VersionRange, len(fs))
	for i, f := range fs {
		out[i] = VersionRange{Name: f.Name, Min: f.MinSupportedVersion, Max: f.MaxSupportedVersion}
	}
	slices.SortFunc(out, func(a, b VersionRange) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func uuids(us [][16]byte) []UUID {
	out := make([]UUID, len(us))
	for i, u := range us {
		out[i] = u
	}
	return out
}

// sortedDirs is BrokerRegistration's directory list: sorted by
// Uuid.compareTo.
func sortedDirs(us [][16]byte) []UUID {
	out := uuids(us)
	slices.SortFunc(out, func(a, b UUID) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	return out
}

// brokerFromRecord is BrokerRegistration.fromRecord.
func brokerFromRecord(r *it.RegisterBrokerRecord, offset int64) *Broker {
	b := &Broker{ID: r.BrokerID, Epoch: r.BrokerEpoch, IncarnationID: r.IncarnationID, Listeners: endpoints(r.EndPoints),
		SupportedFeatures: featureRanges(r.Features), Rack: r.Rack, Fenced: r.Fenced, InControlledShutdown: r.InControlledShutdown,
		IsMigratingZkBroker: r.IsMigratingZkBroker, Directories: sortedDirs(r.LogDirs), RegisteredAt: offset}
	if r.CordonedLogDirs != nil {
		b.CordonedDirectories = sortedDirs(r.CordonedLogDirs)
	}
	return b
}

// changeBroker is ClusterDelta's fence, unfence and registration change:
// the broker must be registered at that epoch (getBrokerOrThrow); fenced
// is a BrokerRegistrationFencingChange (-1 unfence, 0 none, 1 fence),
// shutdown a BrokerRegistrationInControlledShutdownChange (0 none, 1 in
// controlled shutdown), a non-empty logDirs replaces the directories.
func (im *Image) changeBroker(id int32, epoch int64, action string, fenced, shutdown int8, logDirs, cordoned [][16]byte) error {
	b := im.brokers[id]
	ids := strconv.Itoa(int(id))
	if b == nil {
		return errors.New("Tried to " + action + " broker " + ids + ", but that broker was not registered.")
	}
	if b.Epoch != epoch {
		return errors.New("Tried to " + action + " broker " + ids + ", but the given epoch, " + strconv.FormatInt(epoch, 10) +
			", did not match the current broker epoch, " + strconv.FormatInt(b.Epoch, 10))
	}
	if fenced < -1 || fenced > 1 {
		return errors.New("Unable to replay the registration change of broker " + ids + ": unknown value for fenced field: " + strconv.Itoa(int(fenced)))
	}
	if shutdown < 0 || shutdown > 1 {
		return errors.New("Unable to replay the registration change of broker " + ids + ": unknown value for inControlledShutdown field: " + strconv.Itoa(int(shutdown)))
	}
	next := *b
	switch fenced {
	case 1:
		next.Fenced = true
	case -1:
		next.Fenced = false
	}
	if shutdown == 1 {
		next.InControlledShutdown = true
	}
	if len(logDirs) > 0 {
		next.Directories = sortedDirs(logDirs)
	}
	if cordoned != nil {
		next.CordonedDirectories = sortedDirs(cordoned)
	}
	im.brokers[id] = &next
	return nil
}

// defaultToMigrating is PartitionRegistration's: no directories, or only
// MIGRATING ones, become n MIGRATING ones.
func defaultToMigrating(dirs []UUID, n int) []UUID {
	for _, d := range dirs {
		if d != Migrating {
			return dirs
		}
	}
	return make([]UUID, n)
}

func partitionError(topic UUID, p int32, what string) error {
	return errors.New(what + " " + topic.String() + ":" + strconv.Itoa(int(p)))
}

// replayPartition is TopicDelta.replay(PartitionRecord) through new
// PartitionRegistration(record).
func (im *Image) replayPartition(r *it.PartitionRecord) error {
	t := im.topicsByID[r.TopicID]
	if t == nil {
		return partitionError(r.TopicID, r.PartitionID, "Unable to add a partition to an unknown topic:")
	}
	if len(r.Directories) > 0 && len(r.Directories) != len(r.Replicas) {
		return partitionError(r.TopicID, r.PartitionID, "The lengths for replicas and directories do not match in partition")
	}
	lrs, ok := leaderRecoveryStates[int(r.LeaderRecoveryState)]
	if !ok {
		return partitionError(r.TopicID, r.PartitionID, "Value "+strconv.Itoa(int(r.LeaderRecoveryState))+" is not a valid leader recovery state in partition")
	}
	t.parts[r.PartitionID] = &Partition{
		Partition: r.PartitionID, Replicas: r.Replicas,
		Directories: defaultToMigrating(uuids(r.Directories), len(r.Replicas)),
		Isr:         r.Isr, RemovingReplicas: r.RemovingReplicas, AddingReplicas: r.AddingReplicas,
		EligibleLeaderReplicas: orEmpty(r.EligibleLeaderReplicas), LastKnownElr: orEmpty(r.LastKnownElr),
		Leader: r.Leader, LeaderRecoveryState: lrs, LeaderEpoch: r.LeaderEpoch, PartitionEpoch: r.PartitionEpoch,
	}
	return nil
}

func orEmpty(v []int32) []int32 {
	if v == nil {
		return []int32{}
	}
	return v
}

// replayPartitionChange is TopicDelta.replay(PartitionChangeRecord):
// PartitionRegistration.merge.
func (im *Image) replayPartitionChange(r *it.PartitionChangeRecord) error {
	t := im.topicsByID[r.TopicID]
	var p *Partition
	if t != nil {
		p = t.parts[r.PartitionID]
	}
	if p == nil {
		return partitionError(r.TopicID, r.PartitionID, "Unable to find partition")
	}
	if r.Replicas != nil && len(r.Directories) > 0 && len(r.Replicas) != len(r.Directories) {
		return partitionError(r.TopicID, r.PartitionID, "The lengths for replicas and directories do not match in partition")
	}
	next, err := p.merge(r)
	if err != nil {
		return partitionError(r.TopicID, r.PartitionID, err.Error()+" in partition")
	}
	t.parts[r.PartitionID] = next
	return nil
}

// merge is PartitionRegistration.merge: every field the record carries
// replaces the current one; a leader other than NO_LEADER_CHANGE (-2)
// bumps the leader epoch; the partition epoch always goes up by one.
func (p *Partition) merge(r *it.PartitionChangeRecord) (*Partition, error) {
	n := *p
	if r.Replicas != nil {
		n.Replicas = r.Replicas
	}
	dirs := p.Directories
	if r.Directories != nil {
		dirs = uuids(r.Directories)
	}
	n.Directories = defaultToMigrating(dirs, len(n.Replicas))
	if len(n.Directories) > 0 && len(n.Directories) != len(n.Replicas) {
		return nil, errors.New("The lengths for replicas and directories do not match")
	}
	if r.Isr != nil {
		n.Isr = r.Isr
	}
	if r.RemovingReplicas != nil {
		n.RemovingReplicas = r.RemovingReplicas
	}
	if r.AddingReplicas != nil {
		n.AddingReplicas = r.AddingReplicas
	}
	if r.Leader != it.NoLeaderChange {
		n.Leader = r.Leader
		n.LeaderEpoch = p.LeaderEpoch + 1
	}
	if r.LeaderRecoveryState != it.NoLeaderRecoveryStateChange {
		s, ok := leaderRecoveryStates[int(r.LeaderRecoveryState)]
		if !ok {
			return nil, errors.New("Value " + strconv.Itoa(int(r.LeaderRecoveryState)) + " is not a valid leader recovery state")
		}
		n.LeaderRecoveryState = s
	}
	if r.EligibleLeaderReplicas != nil {
		n.EligibleLeaderReplicas = r.EligibleLeaderReplicas
	}
	if r.LastKnownElr != nil {
		n.LastKnownElr = r.LastKnownElr
	}
	n.PartitionEpoch = p.PartitionEpoch + 1
	return &n, nil
}

// removeTopic is TopicsDelta.replay(RemoveTopicRecord) and the removal of
// the topic's configs (ConfigurationsDelta.replay(RemoveTopicRecord)).
func (im *Image) removeTopic(id UUID) error {
	t := im.topicsByID[id]
	if t == nil {
		return errors.New("Unable to delete topic with id " + id.String() + ": no such topic found.")
	}
	delete(im.topicsByID, id)
	if im.topicsByName[t.Name] == t {
		delete(im.topicsByName, t.Name)
	}
	delete(im.configs, configKey{ConfigTypeTopic, t.Name})
	return nil
}

// clearElr is TopicsDelta.replay(ClearElrRecord): the named topic's (or,
// for "", every topic's) partitions lose their eligible leader replicas
// and last known ELR, each through merge, so a partition that had any gets
// a new partition epoch.
func (im *Image) clearElr(topic string) error {
	clear := func(t *Topic) {
		for id, p := range t.parts {
			if len(p.EligibleLeaderReplicas) == 0 && len(p.LastKnownElr) == 0 {
				continue
			}
			next, err := p.merge(&it.PartitionChangeRecord{Leader: it.NoLeaderChange, LeaderRecoveryState: it.NoLeaderRecoveryStateChange,
				EligibleLeaderReplicas: []int32{}, LastKnownElr: []int32{}})
			if err == nil {
				t.parts[id] = next
			}
		}
	}
	if topic == "" {
		for _, t := range im.topicsByName {
			clear(t)
		}
		return nil
	}
	t := im.topicsByName[topic]
	if t == nil {
		return errors.New("Unable to clear elr for topic with name " + topic + ": no such topic found.")
	}
	clear(t)
	return nil
}

// replayConfig is ConfigurationDelta.replay: a null value removes the key,
// and a resource left with no key leaves the image.
func (im *Image) replayConfig(r *it.ConfigRecord) {
	k := configKey{r.ResourceType, r.ResourceName}
	c := im.configs[k]
	if r.Value == nil {
		if c != nil {
			delete(c.Configs, r.Name)
			if len(c.Configs) == 0 {
				delete(im.configs, k)
			}
		}
		return
	}
	if c == nil {
		c = &ConfigResource{ResourceType: ConfigResourceTypeName(r.ResourceType), ResourceName: r.ResourceName, Configs: map[string]string{}}
		im.configs[k] = c
	}
	c.Configs[r.Name] = *r.Value
}

// QuotaEntityName is the client quota entity as kafka-metadata-shell names
// it (ClientQuotasImageNode): clientId(x), ip(x), user(x) joined by "_", in
// that order, with \, ( and ) escaped, then any other entity type the same
// way in name order; the default entity of a type (a null name) is
// written <default>.
func QuotaEntityName(entity map[string]*string) string {
	esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
	part := func(label string, name *string) string {
		if name == nil {
			return label + "(<default>)"
		}
		return label + "(" + esc.Replace(*name) + ")"
	}
	var parts, others []string
	for _, t := range []struct{ key, label string }{{"client-id", "clientId"}, {"ip", "ip"}, {"user", "user"}} {
		if v, ok := entity[t.key]; ok {
			parts = append(parts, part(t.label, v))
		}
	}
	for k, v := range entity {
		if k != "client-id" && k != "ip" && k != "user" {
			others = append(others, part(k, v))
		}
	}
	slices.Sort(others)
	return strings.Join(append(parts, others...), "_")
}

// replayQuota is ClientQuotaDelta.replay: Remove drops the key, and an
// entity left with no quota leaves the image.
func (im *Image) replayQuota(r *it.ClientQuotaRecord) {
	ent := map[string]*string{}
	for _, e := range r.Entity {
		ent[e.EntityType] = e.EntityName
	}
	key := QuotaEntityName(ent)
	q := im.quotas[key]
	if r.Remove {
		if q != nil {
			delete(q.Quotas, r.Key)
			if len(q.Quotas) == 0 {
				delete(im.quotas, key)
			}
		}
		return
	}
	if q == nil {
		q = &ClientQuota{Name: key, Entity: ent, Quotas: map[string]float64{}}
		im.quotas[key] = q
	}
	q.Quotas[r.Key] = r.Value
}

// replayProducerIDs is ProducerIdsDelta.replay, plus the block the record
// allocated: from the previous next producer id up to the record's.
func (im *Image) replayProducerIDs(offset int64, r *it.ProducerIDsRecord) {
	prev := im.ProducerIDs.NextProducerID
	im.ProducerIDs.NextProducerID = r.NextProducerID
	blk := ProducerBlock{BrokerID: r.BrokerID, BrokerEpoch: r.BrokerEpoch, FirstProducerID: prev, Size: r.NextProducerID - prev, Offset: offset}
	for i := range im.ProducerIDs.Blocks {
		if im.ProducerIDs.Blocks[i].BrokerID == r.BrokerID {
			im.ProducerIDs.Blocks[i] = blk
			return
		}
	}
	im.ProducerIDs.Blocks = append(im.ProducerIDs.Blocks, blk)
}
