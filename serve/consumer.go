package serve

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The consumer group protocol of KIP-848 (ConsumerGroupHeartbeat) as
// Kafka 4.3's GroupMetadataManager runs a ConsumerGroup: the coordinator
// owns the assignment. Each member has an epoch; the group has an epoch,
// bumped whenever a member joins, leaves or changes its subscription, or
// a subscribed topic changes; a target assignment is computed by a
// server-side assignor (uniform or range) for the group epoch; and each
// member is reconciled towards its target on its own heartbeats
// (CurrentAssignmentBuilder): partitions it must give up are revoked
// first (it stays at its epoch until its heartbeat no longer lists them),
// and a partition moves to a new owner only once the previous owner has
// released it. Every function here runs on the coordinator's loop, and
// each state change is written to __consumer_offsets as Kafka's records
// (internaltopic.AppendConsumerGroupKey) before its request is answered.

// Defaults of the consumer group protocol's broker configs.
const (
	// DefaultConsumerSessionTimeout is group.consumer.session.timeout.ms.
	DefaultConsumerSessionTimeout = 45 * time.Second
	// DefaultConsumerHeartbeatInterval is
	// group.consumer.heartbeat.interval.ms.
	DefaultConsumerHeartbeatInterval = 5 * time.Second
	// DefaultConsumerGroupMaxSize is group.consumer.max.size. Kafka's
	// default is unbounded; a served group is bounded so that one client
	// cannot make the server hold members without end.
	DefaultConsumerGroupMaxSize = 1024
	// maxConsumerMembers bounds the members of all consumer groups
	// together (GROUP_MAX_SIZE_REACHED beyond).
	maxConsumerMembers = 4096
	// maxSubscribedTopics bounds one member's subscribed topic names,
	// and maxMemberBytes the bytes of its names, instance and rack ids
	// (INVALID_REQUEST beyond): with maxConsumerMembers, what members
	// make the server hold stays under 128 MiB.
	maxSubscribedTopics = 10000
	maxMemberBytes      = 32 << 10
	// maxRegexBytes bounds a subscription's regular expression.
	maxRegexBytes = 4096
)

// Member epochs with a meaning (ConsumerGroupHeartbeatRequest.json).
const (
	joinEpoch        = 0
	leaveEpoch       = -1
	staticLeaveEpoch = -2
)

// Member states (MemberState).
const (
	memberStable               int8 = 0
	memberUnrevokedPartitions  int8 = 1
	memberUnreleasedPartitions int8 = 2
)

// Server-side assignors (ConsumerGroupPartitionAssignor names); the first
// is the default (group.consumer.assignors).
var consumerAssignors = []string{"uniform", "range"}

func knownAssignor(name string) bool { return slices.Contains(consumerAssignors, name) }

// cgroup is a consumer group.
type cgroup struct {
	name                   string
	epoch, assignmentEpoch int32
	members                map[string]*cmember
	static                 map[string]string // instance id -> member id
	target                 map[string]assignment
	// owner is who holds each partition now: the member it is assigned
	// to or being revoked from (ConsumerGroup's partition epochs).
	owner map[topicPart]string
	// subs is the subscribed topics' metadata the target was computed
	// for; a change bumps the group epoch.
	subs map[string]subTopic
}

type topicPart struct {
	id [16]byte
	p  int32
}

type subTopic struct {
	id    [16]byte
	parts int32
}

// assignment is partitions by topic id, each list sorted.
type assignment map[[16]byte][]int32

func (a assignment) has(id [16]byte, p int32) bool {
	_, ok := slices.BinarySearch(a[id], p)
	return ok
}

func (a assignment) clone() assignment {
	out := make(assignment, len(a))
	for id, ps := range a {
		out[id] = slices.Clone(ps)
	}
	return out
}

func (a assignment) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

func (a assignment) equal(b assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

// ids is the topic ids in byte order (the records' and answers' order).
func (a assignment) ids() [][16]byte {
	out := make([][16]byte, 0, len(a))
	for id := range a {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

func (a assignment) record() []internaltopic.TopicIDPartitions {
	out := []internaltopic.TopicIDPartitions{}
	for _, id := range a.ids() {
		out = append(out, internaltopic.TopicIDPartitions{TopicID: id, Partitions: a[id]})
	}
	return out
}

func (a assignment) add(id [16]byte, p int32) {
	ps := a[id]
	i, ok := slices.BinarySearch(ps, p)
	if !ok {
		a[id] = slices.Insert(ps, i, p)
	}
}

// cmember is a consumer group member.
type cmember struct {
	id                   string
	instanceID, rackID   *string
	clientID, clientHost string
	topics               []string
	regex                *string
	re                   *regexp.Regexp
	assignor             *string
	rebalanceTimeoutMs   int32
	epoch, prevEpoch     int32
	state                int8
	assigned, revoking   assignment
	session, rebalance   Timer
	sessionSeq, rebSeq   int
}

// current is the member's current assignment state, to compare.
type currentState struct {
	epoch, prevEpoch   int32
	state              int8
	assigned, revoking assignment
}

func (m *cmember) current() currentState {
	return currentState{m.epoch, m.prevEpoch, m.state, m.assigned, m.revoking}
}

func (s currentState) equal(o currentState) bool {
	return s.epoch == o.epoch && s.prevEpoch == o.prevEpoch && s.state == o.state && s.assigned.equal(o.assigned) && s.revoking.equal(o.revoking)
}

// ownedTopic is one topic of the partitions a heartbeat says the member
// owns.
type ownedTopic struct {
	id    [16]byte
	parts []int32
}

// cgHeartbeat is a ConsumerGroupHeartbeat's fields; nil slices and
// pointers are "unchanged since the last heartbeat".
type cgHeartbeat struct {
	group, memberID      string
	epoch                int32
	instanceID, rackID   *string
	rebalanceTimeoutMs   int32
	topics               []string
	regex                *string
	re                   *regexp.Regexp // regex compiled (the handler's)
	assignor             *string
	owned                []ownedTopic
	clientID, clientHost string
}

// cgResult is the heartbeat's answer.
type cgResult struct {
	code       int16
	msg        string
	memberID   string
	epoch      int32
	interval   int32
	assignment assignment // nil: not sent
	sent       bool
}

func (c *coordinator) cgFail(w *waiter, code int16, msg string) {
	w.answer(cgResult{code: code, msg: msg})
}

// newConsumerMemberID is Uuid.randomUuid().toString(): 16 random bytes in
// URL-safe base64 without padding.
func newConsumerMemberID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// cgRecords collects one state change's records.
type cgRecords struct {
	group string
	kvs   []offsetstore.KeyValue
	err   error
}

// put returns the function that adds the record of type t for member
// from its value's encoding: r.put(t, id)(internaltopic.AppendX(...)).
func (r *cgRecords) put(t int16, member string) func([]byte, error) {
	return func(val []byte, err error) { r.add(t, member, val, err) }
}

func (r *cgRecords) add(t int16, member string, val []byte, err error) {
	if r.err != nil {
		return
	}
	if err != nil {
		r.err = err
		return
	}
	key, err := internaltopic.AppendConsumerGroupKey(nil, t, r.group, member)
	if err != nil {
		r.err = err
		return
	}
	r.kvs = append(r.kvs, offsetstore.KeyValue{Key: key, Value: val})
}

func (r *cgRecords) epoch(e int32) {
	r.put(internaltopic.ConsumerGroupMetadataRecord, "")(internaltopic.AppendConsumerGroupMetadata(nil, internaltopic.ConsumerGroupMetadataValue{Epoch: e}))
}

func (r *cgRecords) subscription(m *cmember) {
	v := &internaltopic.ConsumerGroupMemberMetadataValue{InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
		SubscribedTopicNames: m.topics, SubscribedTopicRegex: m.regex, RebalanceTimeoutMs: m.rebalanceTimeoutMs, ServerAssignor: m.assignor}
	if v.SubscribedTopicNames == nil {
		v.SubscribedTopicNames = []string{}
	}
	r.put(internaltopic.ConsumerGroupMemberMetadataRecord, m.id)(internaltopic.AppendConsumerGroupMemberMetadata(nil, v))
}

func (r *cgRecords) currentAssignment(m *cmember) {
	r.put(internaltopic.ConsumerGroupCurrentMemberAssignmentRecord, m.id)(internaltopic.AppendCurrentMemberAssignment(nil,
		&internaltopic.CurrentMemberAssignmentValue{MemberEpoch: m.epoch, PreviousMemberEpoch: m.prevEpoch, State: m.state,
			AssignedPartitions: m.assigned.record(), PartitionsPendingRevocation: m.revoking.record()}))
}

func (r *cgRecords) tombstone(t int16, member string) { r.add(t, member, nil, nil) }

// writeRecords writes the records (none: done at once) and calls done on
// the loop with the result.
func (c *coordinator) writeRecords(r *cgRecords, done func(error)) {
	if r.err != nil {
		done(r.err)
		return
	}
	if len(r.kvs) == 0 {
		done(nil)
		return
	}
	kvs, name, now := r.kvs, r.group, c.clock.Now().UnixMilli()
	c.write(func() error { return c.store.StoreRecords(name, kvs, now) }, done)
}

// answerWritten answers a heartbeat with res once the group's records
// are written, or with the store's error if they could not be.
func (c *coordinator) answerWritten(w *waiter, rec *cgRecords, res cgResult) {
	c.writeRecords(rec, func(err error) {
		if err != nil {
			w.answer(cgResult{code: storeError(err), msg: "The coordinator could not write the group's records."})
			return
		}
		w.answer(res)
	})
}

// consumerMembers counts the members of every consumer group.
func (c *coordinator) consumerMembers() int {
	n := 0
	for _, g := range c.cgroups {
		n += len(g.members)
	}
	return n
}

// consumerGroupHeartbeat is GroupMetadataManager.consumerGroupHeartbeat
// (the request was validated by the handler).
func (c *coordinator) consumerGroupHeartbeat(r cgHeartbeat, w *waiter) {
	if r.epoch == leaveEpoch || r.epoch == staticLeaveEpoch {
		c.consumerGroupLeave(r, w)
		return
	}
	rec := &cgRecords{group: r.group}
	create := r.epoch == joinEpoch
	g := c.cgroups[r.group]
	if g == nil {
		if cl := c.groups[r.group]; cl != nil {
			// maybeDeleteEmptyClassicGroup: an empty classic group gives
			// way to the consumer group (its offsets stay); one with
			// members is not a consumer group (online migration is not
			// served, as with consumer.group.migration.policy=disabled).
			if !create || len(cl.members) > 0 || len(cl.pending) > 0 || cl.inflight > 0 {
				c.cgFail(w, kerr.GroupIDNotFound.Code, "Group "+r.group+" is not a consumer group.")
				return
			}
			c.armJoin(cl)
			c.stopSyncTimer(cl)
			delete(c.groups, r.group)
			key, err := internaltopic.AppendGroupTombstoneKey(nil, r.group)
			if err == nil {
				rec.kvs = append(rec.kvs, offsetstore.KeyValue{Key: key})
			}
		} else if !create {
			c.cgFail(w, kerr.GroupIDNotFound.Code, "Consumer group "+r.group+" not found.")
			return
		}
		g = c.newConsumerGroup(r.group)
	}
	// throwIfConsumerGroupIsFull.
	if _, known := g.members[r.memberID]; !known || r.memberID == "" {
		if len(g.members) >= c.cgMaxSize {
			c.cgFail(w, kerr.GroupMaxSizeReached.Code, "The consumer group has reached its maximum capacity of "+itoa(c.cgMaxSize)+" members.")
			c.dropIfUnused(g)
			return
		}
		if c.consumerMembers() >= maxConsumerMembers {
			c.cgFail(w, kerr.GroupMaxSizeReached.Code, "The server holds its maximum of "+itoa(maxConsumerMembers)+" consumer group members.")
			c.dropIfUnused(g)
			return
		}
	}
	if r.memberID == "" {
		r.memberID = newConsumerMemberID() // v0: the coordinator names it
	}
	m, replaced, code, msg := c.cgMember(g, r)
	if code != 0 {
		c.cgFail(w, code, msg)
		c.dropIfUnused(g)
		return
	}
	isNew := g.members[m.id] != m
	if replaced != nil {
		// replaceMember: the old member's records go, the new one takes
		// its target and partitions; the group epoch stays.
		target := g.target[replaced.id]
		c.cgRemove(g, replaced, rec)
		if target != nil {
			g.target[m.id] = target
		}
		g.members[m.id] = m
		g.static[*m.instanceID] = m.id
		g.setOwner(m, currentState{})
		rec.subscription(m)
		rec.put(internaltopic.ConsumerGroupTargetAssignmentMemberRecord, m.id)(internaltopic.AppendTargetAssignmentMember(nil, g.target[m.id].record()))
		rec.currentAssignment(m)
		isNew = false
	}
	// 1. The member's subscription.
	oldTopics, oldRegex := m.topics, m.regex
	changed := isNew
	if r.instanceID != nil && !eqPtr(m.instanceID, r.instanceID) {
		m.instanceID, changed = r.instanceID, true
	}
	if r.rackID != nil && !eqPtr(m.rackID, r.rackID) {
		m.rackID, changed = r.rackID, true
	}
	if r.rebalanceTimeoutMs != -1 && m.rebalanceTimeoutMs != r.rebalanceTimeoutMs {
		m.rebalanceTimeoutMs, changed = r.rebalanceTimeoutMs, true
	}
	if r.assignor != nil && !eqPtr(m.assignor, r.assignor) {
		m.assignor, changed = r.assignor, true
	}
	if r.topics != nil {
		m.topics = r.topics
	}
	if r.regex != nil && !eqPtr(m.regex, r.regex) {
		m.regex, m.re = r.regex, r.re
	}
	if m.clientID != r.clientID || m.clientHost != r.clientHost {
		m.clientID, m.clientHost, changed = r.clientID, r.clientHost, true
	}
	bump := isNew || !slices.Equal(oldTopics, m.topics) || !eqPtr(oldRegex, m.regex)
	if bump || changed {
		rec.subscription(m)
	}
	if isNew {
		g.members[m.id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	if subs := c.subscribedTopics(g); !sameSubs(subs, g.subs) {
		g.subs, bump = subs, true
	}
	if bump {
		g.epoch++
		rec.epoch(g.epoch)
	}
	// 2. The target assignment for the group epoch.
	if g.epoch > g.assignmentEpoch {
		c.cgTarget(g, rec)
	}
	// 3. Reconcile the member towards its target.
	before := m.current()
	c.reconcile(g, m, r.owned, rec)
	c.cgSession(g, m)
	res := cgResult{memberID: m.id, epoch: m.epoch, interval: int32(c.cgInterval.Milliseconds())}
	full := create || (r.rebalanceTimeoutMs != -1 && (r.topics != nil || r.regex != nil) && r.owned != nil)
	if full || !before.assigned.equal(m.assigned) {
		res.assignment, res.sent = m.assigned, true
	}
	c.answerWritten(w, rec, res)
	c.park(w, g.name, m.id)
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func itoa(n int) string { return strconv.Itoa(n) }

func (c *coordinator) newConsumerGroup(name string) *cgroup {
	g := &cgroup{name: name, members: map[string]*cmember{}, static: map[string]string{}, target: map[string]assignment{},
		owner: map[topicPart]string{}, subs: map[string]subTopic{}}
	c.cgroups[name] = g
	return g
}

// dropIfUnused forgets a group a failed join created (nothing of it was
// written).
func (c *coordinator) dropIfUnused(g *cgroup) {
	if len(g.members) == 0 && g.epoch == 0 {
		delete(c.cgroups, g.name)
	}
}

// cgMember is getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember: the
// member the heartbeat is for (a new one when it joins), the static member
// it replaces, or the error.
func (c *coordinator) cgMember(g *cgroup, r cgHeartbeat) (m, replaced *cmember, code int16, msg string) {
	create := r.epoch == joinEpoch
	newMember := func() *cmember {
		return &cmember{id: r.memberID, rebalanceTimeoutMs: -1, assigned: assignment{}, revoking: assignment{}}
	}
	if r.instanceID == nil {
		m = g.members[r.memberID]
		if m == nil {
			if !create {
				return nil, nil, kerr.UnknownMemberID.Code, "Member " + r.memberID + " is not a member of group " + g.name + "."
			}
			return newMember(), nil, 0, ""
		}
		if create {
			g.rejoin(m)
			return m, nil, 0, ""
		}
		if code, msg := checkMemberEpoch(m, r.epoch, r.owned); code != 0 {
			return nil, nil, code, msg
		}
		return m, nil, 0, ""
	}
	existing := g.members[g.static[*r.instanceID]]
	if create {
		if existing == nil {
			if m = g.members[r.memberID]; m != nil {
				g.rejoin(m)
				return m, nil, 0, ""
			}
			return newMember(), nil, 0, ""
		}
		if existing.id == r.memberID {
			g.rejoin(existing)
			return existing, nil, 0, ""
		}
		if existing.epoch != staticLeaveEpoch {
			return nil, nil, kerr.UnreleasedInstanceID.Code, "Static member " + r.memberID + " with instance id " + *r.instanceID +
				" cannot join the group because the instance id is owned by " + existing.id + " member."
		}
		// The static member comes back: a new member id takes over its
		// subscription and assignment, at epoch 0.
		m = &cmember{id: r.memberID, instanceID: existing.instanceID, rackID: existing.rackID, clientID: existing.clientID,
			clientHost: existing.clientHost, topics: existing.topics, regex: existing.regex, re: existing.re, assignor: existing.assignor,
			rebalanceTimeoutMs: existing.rebalanceTimeoutMs, state: existing.state, assigned: existing.assigned, revoking: assignment{}}
		return m, existing, 0, ""
	}
	if existing == nil {
		return nil, nil, kerr.UnknownMemberID.Code, "Instance id " + *r.instanceID + " is unknown."
	}
	if existing.id != r.memberID {
		return nil, nil, kerr.FencedInstanceID.Code, "Static member " + r.memberID + " with instance id " + *r.instanceID +
			" was fenced by member " + existing.id + "."
	}
	if code, msg := checkMemberEpoch(existing, r.epoch, r.owned); code != 0 {
		return nil, nil, code, msg
	}
	return existing, nil, 0, ""
}

// rejoin takes a known member back at epoch 0: a joining member owns
// nothing (the request must say so), so what it held is released and it
// is reconciled from scratch towards its target. This is how a member
// that was told FENCED_MEMBER_EPOCH comes back under its own member id
// (kgo and librdkafka keep the id, KIP-1082), without waiting out its
// session.
func (g *cgroup) rejoin(m *cmember) {
	before := m.current()
	m.epoch, m.prevEpoch, m.state = joinEpoch, joinEpoch, memberStable
	m.assigned, m.revoking = assignment{}, assignment{}
	g.setOwner(m, before)
	m.stopRebalance()
}

// checkMemberEpoch is throwIfConsumerGroupMemberEpochIsInvalid: a member
// ahead of the coordinator, or behind it other than by a lost answer (the
// previous epoch, owning only what it is assigned), is fenced.
func checkMemberEpoch(m *cmember, epoch int32, owned []ownedTopic) (int16, string) {
	switch {
	case epoch > m.epoch:
		return kerr.FencedMemberEpoch.Code, "The consumer group member has a greater member epoch (" + itoa(int(epoch)) +
			") than the one known by the group coordinator (" + itoa(int(m.epoch)) + "). The member must abandon all its partitions and rejoin."
	case epoch < m.epoch && (epoch != m.prevEpoch || !ownsOnly(owned, m.assigned)):
		return kerr.FencedMemberEpoch.Code, "The consumer group member has a smaller member epoch (" + itoa(int(epoch)) +
			") than the one known by the group coordinator (" + itoa(int(m.epoch)) + "). The member must abandon all its partitions and rejoin."
	}
	return 0, ""
}

// ownsOnly is isSubset: every owned partition is in a (nil owned is).
func ownsOnly(owned []ownedTopic, a assignment) bool {
	for _, t := range owned {
		for _, p := range t.parts {
			if !a.has(t.id, p) {
				return false
			}
		}
	}
	return true
}

// ownsAny is ownsRevokedPartitions: whether the heartbeat still lists one
// of the partitions (not listing its partitions at all, it does).
func ownsAny(owned []ownedTopic, a assignment) bool {
	if owned == nil {
		return true
	}
	for _, t := range owned {
		for _, p := range t.parts {
			if a.has(t.id, p) {
				return true
			}
		}
	}
	return false
}

// subscribedTopics is the group's subscribed topics that exist, with their
// ids and partition counts (the subscription metadata): the members' topic
// names and the topics their regular expressions match. A topic without a
// topic id (no partition.metadata) cannot be assigned by id and is left
// out.
func (c *coordinator) subscribedTopics(g *cgroup) map[string]subTopic {
	out := map[string]subTopic{}
	addTopic := func(name string) {
		if _, ok := out[name]; ok {
			return
		}
		t := c.srv.topic(name)
		if t == nil || t.id == ([16]byte{}) || len(t.parts) == 0 {
			return
		}
		out[name] = subTopic{id: t.id, parts: int32(len(t.parts))}
	}
	res := map[string]*regexp.Regexp{}
	for _, m := range g.members {
		for _, n := range m.topics {
			addTopic(n)
		}
		if m.re != nil {
			res[*m.regex] = m.re
		}
	}
	if len(res) > 0 {
		for _, n := range c.srv.topicNames() {
			for _, re := range res {
				if re.MatchString(n) {
					addTopic(n)
					break
				}
			}
		}
	}
	return out
}

func sameSubs(a, b map[string]subTopic) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// memberTopics is the topic ids of g.subs a member subscribes to.
func (g *cgroup) memberTopics(m *cmember) map[[16]byte]bool {
	out := map[[16]byte]bool{}
	for _, n := range m.topics {
		if t, ok := g.subs[n]; ok {
			out[t.id] = true
		}
	}
	if m.re != nil {
		for n, t := range g.subs {
			if m.re.MatchString(n) {
				out[t.id] = true
			}
		}
	}
	return out
}

// preferredAssignor is computePreferredServerAssignor: the assignor most
// members ask for (a tie goes to the name first in order), else the
// default.
func (g *cgroup) preferredAssignor() string {
	votes := map[string]int{}
	for _, m := range g.members {
		if m.assignor != nil {
			votes[*m.assignor]++
		}
	}
	best, n := consumerAssignors[0], 0
	for _, a := range consumerAssignors {
		if votes[a] > n {
			best, n = a, votes[a]
		}
	}
	return best
}

// cgTarget is updateTargetAssignment: the assignor's answer for the group
// epoch; the members whose target changed get a record, then the epoch.
func (c *coordinator) cgTarget(g *cgroup, rec *cgRecords) {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	subs := make([]memberSubscription, len(ids))
	for i, id := range ids {
		subs[i] = memberSubscription{id: id, topics: g.memberTopics(g.members[id])}
	}
	topics := map[[16]byte]int32{}
	for _, t := range g.subs {
		topics[t.id] = t.parts
	}
	target := assign(g.preferredAssignor(), subs, topics, g.target)
	for _, id := range ids {
		if old, ok := g.target[id]; !ok || !old.equal(target[id]) {
			rec.put(internaltopic.ConsumerGroupTargetAssignmentMemberRecord, id)(internaltopic.AppendTargetAssignmentMember(nil, target[id].record()))
		}
	}
	g.target = target
	g.assignmentEpoch = g.epoch
	rec.put(internaltopic.ConsumerGroupTargetAssignmentMetadataRecord, "")(internaltopic.AppendTargetAssignmentMetadata(nil, g.epoch))
}

// reconcile is maybeReconcile with CurrentAssignmentBuilder: m moves
// towards its target; a change is recorded and the member's partitions'
// owners follow it. A member left revoking gets the rebalance timeout.
func (c *coordinator) reconcile(g *cgroup, m *cmember, owned []ownedTopic, rec *cgRecords) {
	if m.state == memberStable && m.epoch == g.assignmentEpoch {
		return
	}
	target := g.target[m.id]
	if target == nil {
		target = assignment{}
	}
	before := m.current()
	switch m.state {
	case memberStable:
		c.nextAssignment(g, m, m.epoch, target, owned)
	case memberUnrevokedPartitions:
		if ownsAny(owned, m.revoking) {
			return
		}
		c.nextAssignment(g, m, m.epoch+1, target, owned)
	case memberUnreleasedPartitions:
		c.nextAssignment(g, m, m.epoch, target, owned)
	}
	if before.equal(m.current()) {
		return
	}
	g.setOwner(m, before)
	rec.currentAssignment(m)
	if m.state == memberUnrevokedPartitions {
		c.cgRebalanceTimeout(g, m)
	} else {
		m.stopRebalance()
	}
}

// nextAssignment is CurrentAssignmentBuilder.computeNextAssignment.
func (c *coordinator) nextAssignment(g *cgroup, m *cmember, epoch int32, target assignment, owned []ownedTopic) {
	assigned, revoking, pending := assignment{}, assignment{}, assignment{}
	unreleased := false
	ids := map[[16]byte]bool{}
	for id := range target {
		ids[id] = true
	}
	for id := range m.assigned {
		ids[id] = true
	}
	for id := range ids {
		for _, p := range m.assigned[id] {
			if target.has(id, p) {
				assigned.add(id, p)
			} else {
				revoking.add(id, p)
			}
		}
		for _, p := range target[id] {
			if assigned.has(id, p) {
				continue
			}
			if _, held := g.owner[topicPart{id, p}]; held {
				unreleased = true
				continue
			}
			pending.add(id, p)
		}
	}
	update := func(state int8, e int32) {
		m.state, m.prevEpoch, m.epoch = state, m.epoch, e
	}
	switch {
	case len(revoking) > 0 && ownsAny(owned, revoking):
		update(memberUnrevokedPartitions, epoch)
		m.assigned, m.revoking = assigned, revoking
	default:
		for id, ps := range pending {
			for _, p := range ps {
				assigned.add(id, p)
			}
		}
		state := memberStable
		if unreleased {
			state = memberUnreleasedPartitions
		}
		update(state, g.assignmentEpoch)
		m.assigned, m.revoking = assigned, assignment{}
	}
}

// setOwner moves the owners of m's partitions from before to now.
func (g *cgroup) setOwner(m *cmember, before currentState) {
	for _, a := range []assignment{before.assigned, before.revoking} {
		for id, ps := range a {
			for _, p := range ps {
				if g.owner[topicPart{id, p}] == m.id {
					delete(g.owner, topicPart{id, p})
				}
			}
		}
	}
	for _, a := range []assignment{m.assigned, m.revoking} {
		for id, ps := range a {
			for _, p := range ps {
				g.owner[topicPart{id, p}] = m.id
			}
		}
	}
}

// cgRemove is removeMember: the member's records are tombstoned
// (current assignment, target, subscription) and its partitions
// released.
func (c *coordinator) cgRemove(g *cgroup, m *cmember, rec *cgRecords) {
	rec.tombstone(internaltopic.ConsumerGroupCurrentMemberAssignmentRecord, m.id)
	rec.tombstone(internaltopic.ConsumerGroupTargetAssignmentMemberRecord, m.id)
	rec.tombstone(internaltopic.ConsumerGroupMemberMetadataRecord, m.id)
	gone := m.current()
	m.assigned, m.revoking = assignment{}, assignment{}
	g.setOwner(m, gone)
	delete(g.members, m.id)
	delete(g.target, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	m.stopSession()
	m.stopRebalance()
}

// cgFence is consumerGroupFenceMember: the member is removed and the
// group epoch bumped (with the subscription metadata without it).
func (c *coordinator) cgFence(g *cgroup, m *cmember, rec *cgRecords) {
	c.cgRemove(g, m, rec)
	g.subs = c.subscribedTopics(g)
	g.epoch++
	rec.epoch(g.epoch)
}

// consumerGroupLeave is consumerGroupLeave: epoch -1 leaves; a static
// member's -2 only marks it away (it keeps its partitions until its
// session times out or it comes back).
func (c *coordinator) consumerGroupLeave(r cgHeartbeat, w *waiter) {
	g := c.cgroups[r.group]
	if g == nil {
		c.cgFail(w, kerr.GroupIDNotFound.Code, "Consumer group "+r.group+" not found.")
		return
	}
	rec := &cgRecords{group: g.name}
	res := cgResult{memberID: r.memberID, epoch: r.epoch}
	var m *cmember
	if r.instanceID == nil {
		if m = g.members[r.memberID]; m == nil {
			c.cgFail(w, kerr.UnknownMemberID.Code, "Member "+r.memberID+" is not a member of group "+g.name+".")
			return
		}
		c.cgFence(g, m, rec)
	} else {
		if m = g.members[g.static[*r.instanceID]]; m == nil {
			c.cgFail(w, kerr.UnknownMemberID.Code, "Instance id "+*r.instanceID+" is unknown.")
			return
		}
		if m.id != r.memberID {
			c.cgFail(w, kerr.FencedInstanceID.Code, "Static member "+r.memberID+" with instance id "+*r.instanceID+" was fenced by member "+m.id+".")
			return
		}
		if r.epoch == staticLeaveEpoch {
			before := m.current()
			m.epoch, m.revoking = staticLeaveEpoch, assignment{}
			g.setOwner(m, before)
			m.stopRebalance()
			rec.currentAssignment(m)
			res.epoch = staticLeaveEpoch
		} else {
			c.cgFence(g, m, rec)
		}
	}
	c.answerWritten(w, rec, res)
	c.park(w, g.name, r.memberID)
}

// cgSession (re)starts the member's session timeout: a member that does
// not heartbeat within it is fenced.
func (c *coordinator) cgSession(g *cgroup, m *cmember) {
	m.stopSession()
	m.sessionSeq++
	seq := m.sessionSeq
	m.session = c.after(c.cgSessionTimeout, func() {
		if g.members[m.id] != m || m.sessionSeq != seq || c.cgroups[g.name] != g {
			return
		}
		rec := &cgRecords{group: g.name}
		c.cgFence(g, m, rec)
		c.writeRecords(rec, func(error) {})
		if c.hooks.consumerFenced != nil {
			c.hooks.consumerFenced(g.name, m.id)
		}
	})
}

// cgRebalanceTimeout fences a member that has not revoked its partitions
// within its rebalance timeout (scheduleConsumerGroupRebalanceTimeout).
func (c *coordinator) cgRebalanceTimeout(g *cgroup, m *cmember) {
	m.stopRebalance()
	m.rebSeq++
	seq, epoch := m.rebSeq, m.epoch
	d := time.Duration(m.rebalanceTimeoutMs) * time.Millisecond
	if d <= 0 {
		d = c.cgSessionTimeout
	}
	m.rebalance = c.after(d, func() {
		if g.members[m.id] != m || m.rebSeq != seq || m.epoch != epoch || c.cgroups[g.name] != g {
			return
		}
		rec := &cgRecords{group: g.name}
		c.cgFence(g, m, rec)
		c.writeRecords(rec, func(error) {})
		if c.hooks.consumerFenced != nil {
			c.hooks.consumerFenced(g.name, m.id)
		}
	})
}

func (m *cmember) stopSession() {
	if m.session != nil {
		m.session.Stop()
		m.session = nil
	}
	m.sessionSeq++
}

func (m *cmember) stopRebalance() {
	if m.rebalance != nil {
		m.rebalance.Stop()
		m.rebalance = nil
	}
	m.rebSeq++
}

// cgState is ConsumerGroup's state (maybeUpdateGroupState).
func (g *cgroup) state() string {
	switch {
	case len(g.members) == 0:
		return "Empty"
	case g.epoch != g.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if m.epoch != g.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// validateConsumerCommit is ConsumerGroup.validateOffsetCommit: a commit
// without a member (epoch < 0) to an empty group, or by a member at its
// current epoch with OffsetCommit v9+ (STALE_MEMBER_EPOCH at another
// epoch).
func (g *cgroup) validateCommit(version int16, id string, epoch int32, txn bool) int16 {
	if epoch < 0 && len(g.members) == 0 {
		return 0
	}
	m := g.members[id]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if !txn && version < 9 {
		return kerr.UnsupportedVersion.Code
	}
	if epoch != m.epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// validateConsumerFetch checks an OffsetFetch v9's member of a consumer
// group (0 for any other group).
func (c *coordinator) validateConsumerFetch(group string, id *string, epoch int32) int16 {
	var code int16
	c.do(func() {
		if g := c.cgroups[group]; g != nil {
			code = g.validateFetch(id, epoch)
		}
	})
	return code
}

// validateFetch is ConsumerGroup.validateOffsetFetch: an admin's fetch (no
// member id, epoch < 0) or a member's at its current epoch.
func (g *cgroup) validateFetch(id *string, epoch int32) int16 {
	if id == nil && epoch < 0 {
		return 0
	}
	if id == nil {
		return kerr.UnknownMemberID.Code
	}
	m := g.members[*id]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	if epoch != m.epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// deleteConsumerGroup forgets an empty consumer group and writes
// createGroupTombstoneRecords: the target assignment's epoch and the group
// epoch (its offsets are not touched).
func (c *coordinator) deleteConsumerGroup(g *cgroup) {
	delete(c.cgroups, g.name)
	if g.epoch == 0 {
		return // never written
	}
	c.writeRecords(consumerGroupTombstones(g.name), func(error) {})
}

func consumerGroupTombstones(name string) *cgRecords {
	rec := &cgRecords{group: name}
	rec.tombstone(internaltopic.ConsumerGroupTargetAssignmentMetadataRecord, "")
	rec.tombstone(internaltopic.ConsumerGroupMetadataRecord, "")
	return rec
}

// loadConsumerGroup is the consumer group replayed from
// __consumer_offsets at start (GroupMetadataManager.replay): its epochs,
// members, targets and current assignments. Its subscription metadata is
// left to the first heartbeat, which bumps the group epoch if the topics
// changed meanwhile (or were never known: a new target is computed, sticky
// to the loaded one).
func (c *coordinator) loadConsumerGroup(name string, cg *offsetstore.ConsumerGroup) {
	g := c.newConsumerGroup(name)
	g.epoch, g.assignmentEpoch = cg.Epoch, max(cg.AssignmentEpoch, 0)
	toAssignment := func(tps []internaltopic.TopicIDPartitions) assignment {
		a := assignment{}
		for _, t := range tps {
			for _, p := range t.Partitions {
				a.add(t.TopicID, p)
			}
		}
		return a
	}
	for id, md := range cg.Members {
		m := &cmember{id: id, instanceID: md.InstanceID, rackID: md.RackID, clientID: md.ClientID, clientHost: md.ClientHost,
			topics: md.SubscribedTopicNames, regex: md.SubscribedTopicRegex, assignor: md.ServerAssignor,
			rebalanceTimeoutMs: md.RebalanceTimeoutMs, assigned: assignment{}, revoking: assignment{}}
		if m.regex != nil && *m.regex != "" {
			if re, err := regexp.Compile("^(?:" + *m.regex + ")$"); err == nil {
				m.re = re
			}
		}
		if cur := cg.Current[id]; cur != nil {
			m.epoch, m.prevEpoch, m.state = cur.MemberEpoch, cur.PreviousMemberEpoch, cur.State
			m.assigned, m.revoking = toAssignment(cur.AssignedPartitions), toAssignment(cur.PartitionsPendingRevocation)
			if m.state > memberUnreleasedPartitions {
				m.state = memberStable // MemberState.UNKNOWN: reconciled again from its assignment
			}
		}
		if t, ok := cg.Targets[id]; ok {
			g.target[id] = toAssignment(t)
		}
		g.members[id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = id
		}
		g.setOwner(m, currentState{})
	}
}

// startConsumerSessions starts the loaded members' session timeouts (and
// the rebalance timeouts of those revoking), as the coordinator does when
// it loads its partition: a member that does not come back is fenced.
func (c *coordinator) startConsumerSessions() {
	for _, g := range c.cgroups {
		for _, m := range g.members {
			c.cgSession(g, m)
			if m.state == memberUnrevokedPartitions {
				c.cgRebalanceTimeout(g, m)
			}
		}
	}
}

// stopConsumerGroups stops every member's timers (shutdown).
func (c *coordinator) stopConsumerGroups() {
	for _, g := range c.cgroups {
		for _, m := range g.members {
			m.stopSession()
			m.stopRebalance()
		}
	}
}
