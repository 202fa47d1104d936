package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
// as Kafka 4.3's GroupMetadataManager runs a ClassicGroup, with static
// membership (KIP-345): every function here runs on the coordinator's
// loop.

// Group states (ClassicGroupState).
type groupState int

const (
	groupEmpty groupState = iota
	groupPreparingRebalance
	groupCompletingRebalance
	groupStable
)

// String is Kafka's name of the state (DescribeGroups, ListGroups).
func (s groupState) String() string {
	switch s {
	case groupPreparingRebalance:
		return "PreparingRebalance"
	case groupCompletingRebalance:
		return "CompletingRebalance"
	case groupStable:
		return "Stable"
	}
	return "Empty"
}

// Bounds a broker applies to JoinGroup (group.min.session.timeout.ms,
// group.max.session.timeout.ms) and the time a new member may wait in its
// first JoinGroup (classicGroupNewMemberJoinTimeoutMs).
const (
	GroupMinSessionTimeout = 6 * time.Second
	GroupMaxSessionTimeout = 30 * time.Minute
	newMemberJoinTimeout   = 5 * time.Minute
)

type group struct {
	name         string
	state        groupState
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	order        []string          // member ids in join order
	static       map[string]string // group instance id -> member id
	pending      map[string]*pendingMember
	pendingSync  map[string]bool // members of the generation that have not synced
	// initial is set during the join phase of a group that was empty: only
	// its timer completes it (the initial delay gathers members).
	initial bool
	// newMemberAdded extends the initial rebalance delay.
	newMemberAdded bool
	// joinTimer ends the join phase; syncTimer the sync phase. Their
	// sequence numbers make a stopped timer's late firing a no-op.
	joinTimer, syncTimer Timer
	joinSeq, syncSeq     int
	// assigned is the generation whose leader's assignments are being
	// (or were) stored; inflight counts the group's records being
	// written.
	assigned int32
	inflight int
	// stateSince is when the group entered its state (epoch ms).
	stateSince int64
}

// pendingMember is a member id handed out with MEMBER_ID_REQUIRED
// (KIP-394) that has not joined yet; it expires after the session
// timeout.
type pendingMember struct {
	timer Timer
	seq   int
}

type member struct {
	id, clientID, clientHost string
	instanceID               *string
	sessionTimeout           time.Duration
	rebalanceTimeout         time.Duration
	protocolType             string
	protocols                []protocol
	join                     *waiter // a parked JoinGroup (awaiting join)
	sync                     *waiter // a parked SyncGroup (awaiting sync)
	assignment               []byte
	isNew                    bool
	// The session: deadline is when the member expires without a
	// heartbeat; a timer fires at timerAt (not later than the deadline)
	// and re-arms for what is left.
	deadline time.Time
	timer    Timer
	timerAt  time.Time
	timerSeq int
}

type protocol struct {
	name     string
	metadata []byte
}

// joinRequest is JoinGroup's fields in every version.
type joinRequest struct {
	group, memberID, clientID string
	instanceID                *string
	session, rebalance        time.Duration
	protocolType              string
	protocols                 []protocol
	version                   int16
	clientHost                string
}

type joinResult struct {
	code           int16
	generation     int32
	protocolType   string
	protocol       string
	leader         string
	memberID       string
	members        []joinMember // the leader's list
	skipAssignment bool
}

type joinMember struct {
	id         string
	instanceID *string
	metadata   []byte
}

type syncResult struct {
	code                   int16
	protocolType, protocol string
	assignment             []byte
}

func (c *coordinator) newGroup(name string) *group {
	g := &group{name: name, members: map[string]*member{}, static: map[string]string{}, pending: map[string]*pendingMember{},
		pendingSync: map[string]bool{}, stateSince: c.clock.Now().UnixMilli(), assigned: -1}
	c.groups[name] = g
	return g
}

func (c *coordinator) transition(g *group, s groupState) {
	g.state, g.stateSince = s, c.clock.Now().UnixMilli()
}

// newMemberID is ClassicGroup.generateMemberId: the group instance id or
// the client id, a dash and a random UUID.
func newMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return prefix + "-" + hex.EncodeToString(b[:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" +
		hex.EncodeToString(b[6:8]) + "-" + hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
}

// join is classicGroupJoin: it answers w at once, or parks it as the
// member's awaiting join until the join phase completes.
func (c *coordinator) join(r joinRequest, w *waiter) {
	fail := func(code int16, memberID string) {
		w.answer(joinResult{code: code, generation: -1, memberID: memberID})
	}
	switch {
	case r.group == "":
		fail(kerr.InvalidGroupID.Code, r.memberID)
		return
	case r.session < GroupMinSessionTimeout || r.session > GroupMaxSessionTimeout:
		fail(kerr.InvalidSessionTimeout.Code, r.memberID)
		return
	case r.protocolType == "" || len(r.protocols) == 0:
		fail(kerr.InconsistentGroupProtocol.Code, r.memberID)
		return
	}
	if cg := c.cgroups[r.group]; cg != nil {
		// A consumer group (KIP-848) takes no classic member (online
		// migration is not served); an empty one gives way to the
		// classic group, as maybeDeleteEmptyConsumerGroup does.
		if len(cg.members) > 0 {
			fail(kerr.InconsistentGroupProtocol.Code, r.memberID)
			return
		}
		c.deleteConsumerGroup(cg)
	}
	g := c.groups[r.group]
	if g == nil {
		if r.memberID != "" {
			fail(kerr.UnknownMemberID.Code, r.memberID)
			return
		}
		if !c.admitGroup() {
			// The state directory's bound (statecap.go).
			fail(kerr.CoordinatorNotAvailable.Code, r.memberID)
			return
		}
		g = c.newGroup(r.group)
	}
	if !supportsProtocols(g, r.protocolType, r.protocols) {
		fail(kerr.InconsistentGroupProtocol.Code, r.memberID)
		return
	}
	if groupRecordBytes(g, r) > c.maxRecord {
		// The group record would not fit message.max.bytes (limits.go).
		fail(kerr.UnknownServerError.Code, r.memberID)
		return
	}
	if r.memberID == "" {
		c.joinNewMember(g, r, w)
	} else {
		c.joinExistingMember(g, r, w)
	}
	if !w.done {
		c.park(w, g.name, w.memberHint(g))
	}
}

// memberHint names the member a parked join belongs to (for the hook).
func (w *waiter) memberHint(g *group) string {
	for id, m := range g.members {
		if m.join == w || m.sync == w {
			return id
		}
	}
	return ""
}

// supportsProtocols is ClassicGroup.supportsProtocols: an empty group
// takes any; otherwise the type must match and one protocol be shared by
// every member.
func supportsProtocols(g *group, ptype string, ps []protocol) bool {
	if len(g.members) == 0 {
		return true
	}
	if g.protocolType != ptype {
		return false
	}
	for _, p := range ps {
		all := true
		for _, m := range g.members {
			if m.metadataFor(p.name) == nil && !m.supports(p.name) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func (m *member) supports(name string) bool {
	for _, p := range m.protocols {
		if p.name == name {
			return true
		}
	}
	return false
}

func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

func (c *coordinator) joinNewMember(g *group, r joinRequest, w *waiter) {
	id := newMemberID(r.clientID, r.instanceID)
	if r.instanceID != nil {
		if old, ok := g.static[*r.instanceID]; ok {
			c.replaceStaticMember(g, r, old, id, w)
			return
		}
		c.addMember(g, r, id, w)
		return
	}
	if r.version >= 4 {
		// KIP-394: the client must join again with this id; until it
		// does (or its session timeout passes), the join phase waits.
		pm := &pendingMember{}
		g.pending[id] = pm
		pm.seq++
		seq := pm.seq
		pm.timer = c.after(r.session, func() {
			if p := g.pending[id]; p == pm && p.seq == seq {
				delete(g.pending, id)
				c.maybeCompleteJoinPhase(g)
			}
		})
		w.answer(joinResult{code: kerr.MemberIDRequired.Code, generation: -1, memberID: id})
		return
	}
	c.addMember(g, r, id, w)
}

func (c *coordinator) joinExistingMember(g *group, r joinRequest, w *waiter) {
	if pm := g.pending[r.memberID]; pm != nil {
		if r.instanceID != nil {
			w.answer(joinResult{code: kerr.UnknownMemberID.Code, generation: -1, memberID: r.memberID})
			return
		}
		pm.timer.Stop()
		delete(g.pending, r.memberID)
		c.addMember(g, r, r.memberID, w)
		return
	}
	if code := g.validateMember(r.memberID, r.instanceID); code != 0 {
		w.answer(joinResult{code: code, generation: -1, memberID: r.memberID})
		return
	}
	m := g.members[r.memberID]
	switch g.state {
	case groupPreparingRebalance:
		c.updateMemberAndRebalance(g, m, r, w)
	case groupCompletingRebalance:
		if m.matches(r.protocols) {
			// It missed the JoinGroup answer: give it again.
			w.answer(c.joinAnswer(g, m, false))
			return
		}
		c.updateMemberAndRebalance(g, m, r, w)
	case groupStable:
		if m.id == g.leader || !m.matches(r.protocols) {
			// The leader's rejoin, or new metadata, rebalances.
			c.updateMemberAndRebalance(g, m, r, w)
			return
		}
		w.answer(c.joinAnswer(g, m, false))
	default:
		w.answer(joinResult{code: kerr.UnknownMemberID.Code, generation: -1, memberID: r.memberID})
	}
}

// validateMember is ClassicGroup.validateMember: a group instance id must
// map to this member id (else FENCED_INSTANCE_ID), and the member exist.
func (g *group) validateMember(id string, instanceID *string) int16 {
	if instanceID != nil {
		cur, ok := g.static[*instanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if cur != id {
			return kerr.FencedInstanceID.Code
		}
	}
	if g.members[id] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

func (m *member) matches(ps []protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i := range ps {
		if ps[i].name != m.protocols[i].name || string(ps[i].metadata) != string(m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

func (m *member) update(r joinRequest) {
	m.clientID, m.clientHost = r.clientID, r.clientHost
	m.sessionTimeout, m.rebalanceTimeout = r.session, r.rebalance
	if m.rebalanceTimeout <= 0 {
		m.rebalanceTimeout = m.sessionTimeout
	}
	m.protocolType, m.protocols = r.protocolType, r.protocols
}

func (c *coordinator) addMember(g *group, r joinRequest, id string, w *waiter) {
	m := &member{id: id, instanceID: r.instanceID, isNew: true}
	m.update(r)
	if g.state == groupPreparingRebalance && g.initial {
		g.newMemberAdded = true
	}
	g.members[id] = m
	g.order = append(g.order, id)
	if m.instanceID != nil {
		g.static[*m.instanceID] = id
	}
	if g.leader == "" {
		g.leader = id
	}
	if len(g.members) == 1 {
		g.protocolType = r.protocolType
	}
	m.join = w
	// A new member cannot heartbeat yet; it expires if the join phase
	// outlasts newMemberJoinTimeout.
	c.heartbeatDeadline(g, m, newMemberJoinTimeout)
	c.maybePrepareRebalanceOrCompleteJoin(g)
}

func (c *coordinator) updateMemberAndRebalance(g *group, m *member, r joinRequest, w *waiter) {
	m.update(r)
	if m.join != nil && m.join != w {
		// The same member joined again on another connection: the
		// newer request is the one answered.
		m.join.answer(joinResult{code: kerr.RebalanceInProgress.Code, generation: -1, memberID: m.id})
	}
	m.join = w
	c.maybePrepareRebalanceOrCompleteJoin(g)
}

// replaceStaticMember gives a known group instance id its new member id
// (KIP-345): the old member's parked requests are fenced. A Stable group
// whose protocol would not change keeps its assignment: the generation is
// stored again and the member answered at once, without a rebalance.
func (c *coordinator) replaceStaticMember(g *group, r joinRequest, oldID, newID string, w *waiter) {
	old := g.members[oldID]
	old.join.answer(joinResult{code: kerr.FencedInstanceID.Code, generation: -1, memberID: oldID})
	old.sync.answer(syncResult{code: kerr.FencedInstanceID.Code})
	old.join, old.sync = nil, nil
	c.stopSession(old)
	delete(g.members, oldID)
	m := &member{id: newID, instanceID: old.instanceID, clientID: old.clientID, clientHost: old.clientHost,
		sessionTimeout: old.sessionTimeout, rebalanceTimeout: old.rebalanceTimeout, protocolType: old.protocolType,
		protocols: old.protocols, assignment: old.assignment}
	g.members[newID] = m
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	g.static[*r.instanceID] = newID
	wasLeader := g.leader == oldID
	if wasLeader {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	prevProtocols := m.protocols
	m.update(r)
	m.join = w
	c.heartbeatDeadline(g, m, m.sessionTimeout)
	switch g.state {
	case groupStable:
		if c.selectProtocol(g) != g.protocol {
			c.maybePrepareRebalanceOrCompleteJoin(g)
			return
		}
		c.storeGeneration(g, func(err error) {
			if w.done {
				return // a rebalance answered it meanwhile
			}
			if err != nil && g.members[newID] == m && g.state == groupStable {
				// Revert to the old member id (GroupMetadataManager does).
				m.protocols = prevProtocols
				m.join = nil
				delete(g.members, newID)
				g.members[oldID] = old
				for i, id := range g.order {
					if id == newID {
						g.order[i] = oldID
					}
				}
				g.static[*r.instanceID] = oldID
				if wasLeader {
					g.leader = oldID
				}
				c.heartbeatDeadline(g, old, old.sessionTimeout)
			}
			if err != nil {
				w.answer(joinResult{code: storeError(err), generation: -1, memberID: ""})
				return
			}
			res := c.joinAnswer(g, m, false)
			if wasLeader {
				if r.version >= 9 {
					// The leader skips assigning: the group keeps its
					// assignment (KIP-814).
					res = c.joinAnswer(g, m, true)
					res.skipAssignment = true
				} else {
					// Older leaders are told the old member id leads,
					// so they only sync for their assignment.
					res.leader, res.members = oldID, nil
				}
			}
			if m.join == w {
				m.join = nil
			}
			w.answer(res)
		})
	case groupCompletingRebalance:
		c.prepareRebalance(g)
	default:
		c.maybeCompleteJoinPhase(g)
	}
}

// joinAnswer is the JoinGroup answer for m in the current generation; the
// leader (or withMembers) gets every member's metadata.
func (c *coordinator) joinAnswer(g *group, m *member, withMembers bool) joinResult {
	res := joinResult{generation: g.generation, protocolType: g.protocolType, protocol: g.protocol, leader: g.leader, memberID: m.id}
	if m.id == g.leader || withMembers {
		for _, id := range g.order {
			mm := g.members[id]
			res.members = append(res.members, joinMember{id: mm.id, instanceID: mm.instanceID, metadata: mm.metadataFor(g.protocol)})
		}
	}
	return res
}

// canRebalance: PreparingRebalance may follow Empty, Stable and
// CompletingRebalance.
func (g *group) canRebalance() bool { return g.state != groupPreparingRebalance }

func (c *coordinator) maybePrepareRebalanceOrCompleteJoin(g *group) {
	if g.canRebalance() {
		c.prepareRebalance(g)
		return
	}
	c.maybeCompleteJoinPhase(g)
}

// prepareRebalance starts a join phase: members awaiting their assignment
// are told REBALANCE_IN_PROGRESS and must join again within the
// rebalance timeout; a group that was empty waits the initial delay for
// more members.
func (c *coordinator) prepareRebalance(g *group) {
	if g.state == groupCompletingRebalance {
		c.propagateAssignment(g, kerr.RebalanceInProgress.Code, true)
	}
	c.stopSyncTimer(g)
	initial := g.state == groupEmpty
	c.transition(g, groupPreparingRebalance)
	g.initial = initial
	if !initial {
		c.maybeCompleteJoinElseSchedule(g)
		return
	}
	delay := c.initialDelay
	remaining := max(g.rebalanceTimeout()-delay, 0)
	c.scheduleInitial(g, delay, remaining)
}

func (c *coordinator) scheduleInitial(g *group, delay, remaining time.Duration) {
	seq := c.armJoin(g)
	fire := func() {
		if g.joinSeq != seq || g.state != groupPreparingRebalance {
			return
		}
		if g.newMemberAdded && remaining > 0 {
			g.newMemberAdded = false
			next := min(c.initialDelay, remaining)
			c.scheduleInitial(g, next, max(remaining-delay, 0))
			return
		}
		c.completeJoin(g)
	}
	if delay <= 0 {
		c.soon(fire)
		return
	}
	g.joinTimer = c.after(delay, fire)
}

// armJoin stops the join timer and returns the sequence of the next.
func (c *coordinator) armJoin(g *group) int {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	g.joinSeq++
	return g.joinSeq
}

func (c *coordinator) maybeCompleteJoinElseSchedule(g *group) {
	if g.allJoined() {
		c.completeJoin(g)
		return
	}
	seq := c.armJoin(g)
	g.joinTimer = c.after(g.rebalanceTimeout(), func() {
		if g.joinSeq == seq && g.state == groupPreparingRebalance {
			c.completeJoin(g)
		}
	})
}

// maybeCompleteJoinPhase completes the join phase when every member has
// joined (not during the initial delay).
func (c *coordinator) maybeCompleteJoinPhase(g *group) {
	if g.state == groupPreparingRebalance && !g.initial && g.allJoined() {
		c.completeJoin(g)
	}
}

// allJoined is hasAllMembersJoined: every member awaits its join answer
// and no KIP-394 member is still to join.
func (g *group) allJoined() bool {
	for _, m := range g.members {
		if m.join == nil {
			return false
		}
	}
	return len(g.pending) == 0
}

// rebalanceTimeout is the largest of the members' (the join phase's
// length).
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// completeJoin ends the join phase: dynamic members that did not join
// again are removed, the generation advances, the protocol is chosen, and
// every member is answered (the leader with the members' metadata); then
// the group waits for their SyncGroups.
func (c *coordinator) completeJoin(g *group) {
	c.armJoin(g)
	g.initial, g.newMemberAdded = false, false
	for _, id := range append([]string(nil), g.order...) {
		if m := g.members[id]; m.join == nil && m.instanceID == nil {
			c.removeMember(g, m)
		}
	}
	if len(g.members) > 0 && !c.electJoinedLeader(g) {
		// No member joined again: wait another rebalance timeout for
		// the session timeouts to remove the silent ones.
		seq := c.armJoin(g)
		g.joinTimer = c.after(g.rebalanceTimeout(), func() {
			if g.joinSeq == seq && g.state == groupPreparingRebalance {
				c.completeJoin(g)
			}
		})
		return
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		c.transition(g, groupEmpty)
		c.storeGeneration(g, func(error) {})
		return
	}
	g.protocol = c.selectProtocol(g)
	c.transition(g, groupCompletingRebalance)
	for _, id := range g.order {
		m := g.members[id]
		m.join.answer(c.joinAnswer(g, m, false))
		m.join = nil
		m.isNew = false
		c.heartbeatDeadline(g, m, m.sessionTimeout)
		g.pendingSync[id] = true
	}
	c.schedulePendingSync(g)
}

// electJoinedLeader keeps the leader if it joined, else picks the first
// member that did; false when none did.
func (c *coordinator) electJoinedLeader(g *group) bool {
	if l := g.members[g.leader]; l != nil && l.join != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].join != nil {
			g.leader = id
			return true
		}
	}
	return false
}

// selectProtocol is ClassicGroup.selectProtocol: every member votes for
// its first protocol that all members support; the most votes win (a tie
// goes to the leader's order).
func (c *coordinator) selectProtocol(g *group) string {
	all := func(name string) bool {
		for _, m := range g.members {
			if !m.supports(name) {
				return false
			}
		}
		return true
	}
	votes := map[string]int{}
	for _, id := range g.order {
		for _, p := range g.members[id].protocols {
			if all(p.name) {
				votes[p.name]++
				break
			}
		}
	}
	best, n := "", -1
	leader := g.members[g.leader]
	if leader == nil {
		leader = g.members[g.order[0]]
	}
	for _, p := range leader.protocols {
		if v, ok := votes[p.name]; ok && v > n {
			best, n = p.name, v
		}
	}
	return best
}

// schedulePendingSync removes, at the rebalance timeout, the members that
// have not sent their SyncGroup, and rebalances.
func (c *coordinator) schedulePendingSync(g *group) {
	c.stopSyncTimer(g)
	g.syncSeq++
	seq, gen := g.syncSeq, g.generation
	g.syncTimer = c.after(g.rebalanceTimeout(), func() {
		if g.syncSeq != seq || g.generation != gen || len(g.pendingSync) == 0 ||
			(g.state != groupCompletingRebalance && g.state != groupStable) {
			return
		}
		for id := range g.pendingSync {
			if m := g.members[id]; m != nil {
				c.removeMember(g, m)
			}
		}
		c.prepareRebalance(g)
	})
}

func (c *coordinator) stopSyncTimer(g *group) {
	clear(g.pendingSync)
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
	g.syncSeq++
}

// propagateAssignment answers every parked SyncGroup with its member's
// assignment, or code (reset clears the assignments first).
func (c *coordinator) propagateAssignment(g *group, code int16, reset bool) {
	for _, id := range g.order {
		m := g.members[id]
		if reset {
			m.assignment = nil
		}
		if m.sync == nil {
			continue
		}
		res := syncResult{code: code, assignment: m.assignment}
		if code == 0 {
			res.protocolType, res.protocol = g.protocolType, g.protocol
		}
		m.sync.answer(res)
		m.sync = nil
		c.heartbeatDeadline(g, m, m.sessionTimeout)
	}
}

// syncGroup is classicGroupSync: the leader's assignments are stored with
// the generation, then every member waiting is answered.
func (c *coordinator) syncGroup(groupID, id string, instanceID *string, generation int32, ptype, proto *string,
	assignments map[string][]byte, w *waiter) {
	g := c.groups[groupID]
	if groupID == "" {
		w.answer(syncResult{code: kerr.InvalidGroupID.Code})
		return
	}
	if g == nil || len(g.members) == 0 {
		w.answer(syncResult{code: kerr.UnknownMemberID.Code})
		return
	}
	if code := g.validateMember(id, instanceID); code != 0 {
		w.answer(syncResult{code: code})
		return
	}
	switch {
	case generation != g.generation:
		w.answer(syncResult{code: kerr.IllegalGeneration.Code})
		return
	case ptype != nil && *ptype != g.protocolType, proto != nil && *proto != g.protocol:
		w.answer(syncResult{code: kerr.InconsistentGroupProtocol.Code})
		return
	}
	m := g.members[id]
	switch g.state {
	case groupPreparingRebalance:
		w.answer(syncResult{code: kerr.RebalanceInProgress.Code})
	case groupCompletingRebalance:
		m.sync = w
		c.syncReceived(g, id)
		if id != g.leader || g.assigned == g.generation {
			break
		}
		gen := g.generation
		for mid, mm := range g.members {
			mm.assignment = assignments[mid]
		}
		g.assigned = gen
		c.storeGeneration(g, func(err error) {
			if g.state != groupCompletingRebalance || g.generation != gen {
				return
			}
			if err != nil {
				c.propagateAssignment(g, storeError(err), true)
				c.maybePrepareRebalanceOrCompleteJoin(g)
				return
			}
			c.propagateAssignment(g, 0, false)
			c.transition(g, groupStable)
		})
	case groupStable:
		c.syncReceived(g, id)
		c.heartbeatDeadline(g, m, m.sessionTimeout)
		w.answer(syncResult{protocolType: g.protocolType, protocol: g.protocol, assignment: m.assignment})
	}
	if !w.done {
		c.park(w, g.name, id)
	}
}

func (c *coordinator) syncReceived(g *group, id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 && g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
}

// heartbeat is classicGroupHeartbeat.
func (c *coordinator) heartbeat(groupID, id string, instanceID *string, generation int32) int16 {
	g := c.groups[groupID]
	switch {
	case groupID == "":
		return kerr.InvalidGroupID.Code
	case g == nil:
		return kerr.UnknownMemberID.Code
	}
	if code := g.validateMember(id, instanceID); code != 0 {
		return code
	}
	if generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	m := g.members[id]
	switch g.state {
	case groupEmpty:
		return kerr.UnknownMemberID.Code
	case groupPreparingRebalance:
		c.heartbeatDeadline(g, m, m.sessionTimeout)
		return kerr.RebalanceInProgress.Code
	}
	c.heartbeatDeadline(g, m, m.sessionTimeout)
	return 0
}

// leaveMember is one LeaveGroup member identity.
type leaveMember struct {
	id         string
	instanceID *string
}

// leave is classicGroupLeave: each member (by member id, or by group
// instance id alone for an administrator's removal) leaves; the rest
// rebalance.
func (c *coordinator) leave(groupID string, ms []leaveMember) (int16, []int16) {
	g := c.groups[groupID]
	codes := make([]int16, len(ms))
	if groupID == "" {
		return kerr.InvalidGroupID.Code, codes
	}
	if g == nil {
		for i := range codes {
			codes[i] = kerr.UnknownMemberID.Code
		}
		return kerr.UnknownMemberID.Code, codes
	}
	left := false
	for i, lm := range ms {
		switch {
		case lm.id == "":
			if lm.instanceID == nil || g.static[*lm.instanceID] == "" {
				codes[i] = kerr.UnknownMemberID.Code
				continue
			}
			c.removeMember(g, g.members[g.static[*lm.instanceID]])
		case g.pending[lm.id] != nil:
			g.pending[lm.id].timer.Stop()
			delete(g.pending, lm.id)
		default:
			if codes[i] = g.validateMember(lm.id, lm.instanceID); codes[i] != 0 {
				continue
			}
			c.removeMember(g, g.members[lm.id])
		}
		left = true
	}
	if left {
		switch g.state {
		case groupStable, groupCompletingRebalance:
			c.maybePrepareRebalanceOrCompleteJoin(g)
		case groupPreparingRebalance:
			c.maybeCompleteJoinPhase(g)
		}
	}
	return 0, codes
}

// removeMember drops m; its parked requests are answered UNKNOWN_MEMBER_ID.
func (c *coordinator) removeMember(g *group, m *member) {
	m.join.answer(joinResult{code: kerr.UnknownMemberID.Code, generation: -1})
	m.sync.answer(syncResult{code: kerr.UnknownMemberID.Code})
	m.join, m.sync = nil, nil
	c.stopSession(m)
	delete(g.members, m.id)
	delete(g.pendingSync, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	for i, id := range g.order {
		if id == m.id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	if g.leader == m.id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// heartbeatDeadline moves m's session deadline to d from now
// (rescheduleClassicGroupMemberHeartbeat).
func (c *coordinator) heartbeatDeadline(g *group, m *member, d time.Duration) {
	now := c.clock.Now()
	m.deadline = now.Add(d)
	if m.timer != nil && !m.timerAt.After(m.deadline) {
		return // it fires first and re-arms for the rest
	}
	c.armSession(g, m, d)
}

func (c *coordinator) armSession(g *group, m *member, d time.Duration) {
	c.stopSession(m)
	m.timerSeq++
	seq := m.timerSeq
	m.timerAt = c.clock.Now().Add(d)
	m.timer = c.after(d, func() {
		if g.members[m.id] != m || m.timerSeq != seq {
			return
		}
		m.timer = nil
		if left := m.deadline.Sub(c.clock.Now()); left > 0 {
			c.armSession(g, m, left)
			return
		}
		c.expire(g, m)
	})
}

func (c *coordinator) stopSession(m *member) {
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	m.timerSeq++
}

// expire is expireClassicGroupMemberHeartbeat: a member whose session
// passed is removed unless it is waiting in a rebalance (a new member is
// removed even then).
func (c *coordinator) expire(g *group, m *member) {
	if !m.isNew && (m.join != nil || m.sync != nil) {
		c.heartbeatDeadline(g, m, m.sessionTimeout)
		return
	}
	c.removeMember(g, m)
	switch g.state {
	case groupStable, groupCompletingRebalance:
		c.maybePrepareRebalanceOrCompleteJoin(g)
	case groupPreparingRebalance:
		if g.allJoined() {
			c.completeJoin(g)
		}
	}
}

// release forgets a parked request whose client hung up: a parked
// JoinGroup of a dynamic member removes it (it cannot receive the answer,
// and the group need not wait its rebalance timeout for it); a static
// member stays, no longer awaiting its join; a parked SyncGroup is
// dropped.
func (c *coordinator) release(w *waiter) {
	if w.done {
		return
	}
	w.done = true
	group, id := "", ""
	defer func() {
		if c.hooks.released != nil {
			c.hooks.released(w.key, group, id)
		}
	}()
	for _, g := range c.groups {
		for _, m := range g.members {
			switch w {
			case m.join:
				group, id = g.name, m.id
				m.join = nil
				if m.instanceID == nil {
					c.removeMember(g, m)
					c.afterRemoval(g)
				}
				return
			case m.sync:
				group, id = g.name, m.id
				m.sync = nil
				return
			}
		}
	}
}

// afterRemoval continues a group's rebalance after a member left it.
func (c *coordinator) afterRemoval(g *group) {
	switch g.state {
	case groupStable, groupCompletingRebalance:
		c.maybePrepareRebalanceOrCompleteJoin(g)
	case groupPreparingRebalance:
		c.maybeCompleteJoinPhase(g)
	}
}

// groupCleanupInterval is offsets.retention.check.interval.ms: how often
// empty groups with nothing committed are forgotten.
const groupCleanupInterval = 10 * time.Minute

// scheduleCleanup forgets, every groupCleanupInterval, the empty groups
// that have nothing committed and no member to come, as the coordinator's
// periodic cleanup deletes them.
func (c *coordinator) scheduleCleanup() {
	c.cleanup = c.after(groupCleanupInterval, func() {
		for name, g := range c.groups {
			if g.state == groupEmpty && len(g.members) == 0 && len(g.pending) == 0 && g.inflight == 0 && len(c.offsets[name]) == 0 {
				c.armJoin(g)
				c.stopSyncTimer(g)
				delete(c.groups, name)
			}
		}
		for name, g := range c.cgroups {
			if len(g.members) == 0 && len(c.offsets[name]) == 0 {
				c.deleteConsumerGroup(g)
			}
		}
		c.scheduleCleanup()
	})
}

// storeGeneration writes the group's metadata (its generation, protocol,
// leader and members with their subscriptions and assignments) and calls
// done on the loop with the result.
func (c *coordinator) storeGeneration(g *group, done func(error)) {
	gm := &internaltopic.GroupMetadataValue{ProtocolType: g.protocolType, Generation: g.generation,
		CurrentStateTimestamp: c.clock.Now().UnixMilli(), Members: []internaltopic.GroupMember{}}
	if g.protocol != "" {
		p := g.protocol
		gm.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		gm.Leader = &l
	}
	for _, id := range g.order {
		m := g.members[id]
		gm.Members = append(gm.Members, internaltopic.GroupMember{MemberID: m.id, GroupInstanceID: m.instanceID,
			ClientID: m.clientID, ClientHost: m.clientHost, RebalanceTimeout: int32(m.rebalanceTimeout.Milliseconds()),
			SessionTimeout: int32(m.sessionTimeout.Milliseconds()), Subscription: m.metadataFor(g.protocol), Assignment: m.assignment})
	}
	g.inflight++
	name := g.name
	c.write(c.capped(groupBytes(name, gm), func() error { return c.store.StoreGroup(name, gm) }), func(err error) {
		g.inflight--
		if errors.Is(err, errStateFull) {
			// Kept in memory only: the group works on (statecap.go).
			err = nil
		}
		done(err)
	})
}

// commit checks the committer (validateOffsetCommit), writes the offsets
// and answers once they are on disk; the in-memory offsets change then.
func (c *coordinator) commit(version int16, groupID, id string, instanceID *string, generation int32, commits []offsetstore.Commit, w *waiter) {
	if groupID == "" {
		w.answer(kerr.InvalidGroupID.Code)
		return
	}
	if cg := c.cgroups[groupID]; cg != nil {
		if code := cg.validateCommit(version, id, generation, false); code != 0 {
			w.answer(code)
			return
		}
		c.writeCommit(groupID, id, commits, w)
		return
	}
	g := c.groups[groupID]
	if g == nil {
		switch {
		case generation < 0 && len(commits) > 0 && !c.admitGroup():
			// The state directory's bound (statecap.go).
			w.answer(kerr.CoordinatorNotAvailable.Code)
			return
		case generation < 0:
			// A simple group (no member): created by its commit.
			g = c.newGroup(groupID)
		case version >= 9:
			w.answer(kerr.GroupIDNotFound.Code)
			return
		default:
			w.answer(kerr.IllegalGeneration.Code)
			return
		}
	}
	if code := c.validateCommit(g, id, instanceID, generation); code != 0 {
		w.answer(code)
		return
	}
	if m := g.members[id]; m != nil {
		c.heartbeatDeadline(g, m, m.sessionTimeout)
	}
	c.writeCommit(groupID, id, commits, w)
}

// writeCommit writes the offsets and answers once they are on disk; the
// in-memory offsets change then.
func (c *coordinator) writeCommit(groupID, id string, commits []offsetstore.Commit, w *waiter) {
	if len(commits) == 0 {
		w.answer(int16(0))
		return
	}
	now := c.clock.Now().UnixMilli()
	for i := range commits {
		commits[i].CommitTimestamp = now
	}
	c.write(c.capped(commitBytes(groupID, commits), func() error { return c.store.Commit(groupID, commits) }), func(err error) {
		if err != nil {
			w.answer(storeError(err))
			return
		}
		if c.offsets[groupID] == nil {
			c.offsets[groupID] = map[offsetstore.TopicPartition]offsetstore.Committed{}
		}
		for _, cm := range commits {
			c.offsets[groupID][cm.TopicPartition] = cm.Committed
		}
		w.answer(int16(0))
	})
	c.park(w, groupID, id)
}

// validateCommit is ClassicGroup.validateOffsetCommit.
func (c *coordinator) validateCommit(g *group, id string, instanceID *string, generation int32) int16 {
	if generation < 0 && g.state == groupEmpty {
		return 0 // a simple commit (no member) to an empty group
	}
	if generation >= 0 || id != "" || instanceID != nil {
		if code := g.validateMember(id, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	} else if g.state != groupEmpty {
		return kerr.UnknownMemberID.Code
	}
	if g.state == groupCompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// fetchOffsetsStable returns a copy of a group's committed offsets and the
// partitions an open transaction holds an offset for (unstableOffset).
func (c *coordinator) fetchOffsetsStable(groupID string) (map[offsetstore.TopicPartition]offsetstore.Committed, map[offsetstore.TopicPartition]bool) {
	out, pending := map[offsetstore.TopicPartition]offsetstore.Committed{}, map[offsetstore.TopicPartition]bool{}
	c.do(func() {
		for k, v := range c.offsets[groupID] {
			out[k] = v
		}
		for _, byGroup := range c.txnOffsets {
			for k := range byGroup[groupID] {
				pending[k] = true
			}
		}
	})
	return out, pending
}

// fetchOffsets returns a copy of a group's committed offsets.
func (c *coordinator) fetchOffsets(groupID string) map[offsetstore.TopicPartition]offsetstore.Committed {
	out := map[offsetstore.TopicPartition]offsetstore.Committed{}
	c.do(func() {
		for k, v := range c.offsets[groupID] {
			out[k] = v
		}
	})
	return out
}

// shutdownGroups answers every parked request and stops the timers (on
// the loop, at its end).
func (c *coordinator) shutdownGroups() {
	c.stopped = true
	c.stopConsumerGroups()
	for _, g := range c.groups {
		c.armJoin(g)
		c.stopSyncTimer(g)
		for _, pm := range g.pending {
			pm.timer.Stop()
		}
		for _, m := range g.members {
			m.join.answer(joinResult{code: kerr.CoordinatorNotAvailable.Code, generation: -1, memberID: m.id})
			m.sync.answer(syncResult{code: kerr.CoordinatorNotAvailable.Code})
			c.stopSession(m)
		}
	}
	if c.cleanup != nil {
		c.cleanup.Stop()
	}
	if c.txnTimer != nil {
		c.txnTimer.Stop()
	}
	// Commits whose records are still being written are answered by
	// call (COORDINATOR_NOT_AVAILABLE): they may be on disk, and a
	// retry is harmless.
}
