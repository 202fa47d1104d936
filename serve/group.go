package serve

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"sync"
	"time"

	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Group states (ClassicGroupState).
type groupState int

const (
	groupEmpty groupState = iota
	groupPreparingRebalance
	groupCompletingRebalance
	groupStable
)

// coordinator is the classic group coordinator (GroupCoordinator /
// ClassicGroup): membership, generations, rebalances, session timeouts,
// and committed offsets, persisted in __consumer_offsets-N.
type coordinator struct {
	s       *Server
	mu      sync.Mutex
	groups  map[string]*group
	offsets map[string]map[tp]committed
	store   *offsetStore
}

type group struct {
	name         string
	state        groupState
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	pending      map[string]bool // KIP-394 member ids handed out, not joined yet
	order        []string        // members in join order
	timer        *time.Timer     // the rebalance timeout
}

type member struct {
	id, clientID     string
	clientHost       string
	instanceID       *string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []protocol
	joined           bool // joined the current rebalance
	join             chan joinResult
	sync             chan syncResult
	assignment       []byte
	session          *time.Timer
	lastSeen         time.Time
	joinVersion      int16
}

type protocol struct {
	name     string
	metadata []byte
}

type joinResult struct {
	code       int16
	generation int32
	protocol   string
	leader     string
	memberID   string
	members    []*member // the leader's list
	metas      [][]byte
}

type syncResult struct {
	code       int16
	assignment []byte
}

func newCoordinator(s *Server) (*coordinator, error) {
	dir := s.cfg.StateDir
	if s.cfg.Writable {
		dir = s.cfg.LogDir
	}
	c := &coordinator{s: s, groups: map[string]*group{}, offsets: map[string]map[tp]committed{},
		store: &offsetStore{dir: dir, opts: s.cfg.Produce}}
	c.store.apps = map[int32]*produce.Appender{}
	// A broker's own committed offsets come first (an archived log dir's
	// __consumer_offsets), then the state directory's, which are newer.
	if err := loadOffsets(s.cfg.LogDir, c.offsets); err != nil {
		return nil, err
	}
	if !s.cfg.Writable && filepath.Clean(dir) != filepath.Clean(s.cfg.LogDir) {
		if err := loadOffsets(dir, c.offsets); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *coordinator) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.groups {
		if g.timer != nil {
			g.timer.Stop()
		}
		for _, m := range g.members {
			if m.session != nil {
				m.session.Stop()
			}
		}
	}
	return c.store.close()
}

func newMemberID(clientID string) string {
	var b [16]byte
	rand.Read(b[:])
	return clientID + "-" + hex.EncodeToString(b[:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" +
		hex.EncodeToString(b[6:8]) + "-" + hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
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

// join adds or updates a member and waits for the rebalance to complete.
func (c *coordinator) join(r joinRequest, done <-chan struct{}) joinResult {
	c.mu.Lock()
	g := c.groups[r.group]
	if g == nil {
		g = &group{name: r.group, members: map[string]*member{}, pending: map[string]bool{}}
		c.groups[r.group] = g
	}
	if len(g.members) > 0 && g.protocolType != r.protocolType {
		c.mu.Unlock()
		return joinResult{code: kerr.InconsistentGroupProtocol.Code, generation: -1}
	}
	if len(r.protocols) == 0 || r.session <= 0 {
		c.mu.Unlock()
		return joinResult{code: kerr.InconsistentGroupProtocol.Code, generation: -1}
	}
	id := r.memberID
	if id == "" {
		id = newMemberID(r.clientID)
		if r.version >= 4 {
			// KIP-394: the client must rejoin with the id.
			g.pending[id] = true
			c.mu.Unlock()
			return joinResult{code: kerr.MemberIDRequired.Code, generation: -1, memberID: id}
		}
	} else if g.members[id] == nil && !g.pending[id] {
		c.mu.Unlock()
		return joinResult{code: kerr.UnknownMemberID.Code, generation: -1, memberID: id}
	}
	delete(g.pending, id)
	m := g.members[id]
	if m == nil {
		m = &member{id: id}
		g.members[id] = m
		g.order = append(g.order, id)
	}
	m.clientID, m.instanceID, m.sessionTimeout, m.rebalanceTimeout = r.clientID, r.instanceID, r.session, r.rebalance
	m.clientHost = r.clientHost
	m.protocolType, m.protocols, m.joinVersion = r.protocolType, r.protocols, r.version
	if m.rebalanceTimeout <= 0 {
		m.rebalanceTimeout = m.sessionTimeout
	}
	g.protocolType = r.protocolType
	ch := make(chan joinResult, 1)
	m.join, m.joined = ch, true
	c.touch(g, m)
	if g.state != groupPreparingRebalance {
		c.prepareRebalance(g)
	}
	c.tryCompleteJoin(g)
	c.mu.Unlock()
	select {
	case res := <-ch:
		return res
	case <-done:
		return joinResult{code: kerr.CoordinatorNotAvailable.Code, generation: -1, memberID: id}
	}
}

// prepareRebalance moves the group to PreparingRebalance: every member must
// rejoin within the largest rebalance timeout; members waiting in
// SyncGroup are told REBALANCE_IN_PROGRESS.
func (c *coordinator) prepareRebalance(g *group) {
	wasEmpty := g.state == groupEmpty
	g.state = groupPreparingRebalance
	var timeout time.Duration
	for _, m := range g.members {
		if m.sync != nil {
			m.sync <- syncResult{code: kerr.RebalanceInProgress.Code}
			m.sync = nil
		}
		if m.join == nil {
			m.joined = false
		}
		timeout = max(timeout, m.rebalanceTimeout)
	}
	if wasEmpty {
		timeout = c.s.cfg.GroupInitialDelay
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	gen := g.generation
	g.timer = time.AfterFunc(timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if g.state == groupPreparingRebalance && g.generation == gen {
			c.completeJoin(g)
		}
	})
}

// tryCompleteJoin completes the rebalance once every member has joined
// (after the initial delay for a group that was empty).
func (c *coordinator) tryCompleteJoin(g *group) {
	if g.state != groupPreparingRebalance {
		return
	}
	for _, m := range g.members {
		if !m.joined {
			return
		}
	}
	if c.s.cfg.GroupInitialDelay > 0 && g.generation == 0 {
		return // the timer completes it
	}
	c.completeJoin(g)
}

// completeJoin drops members that did not rejoin, bumps the generation,
// picks the protocol and the leader, and answers every joined member.
func (c *coordinator) completeJoin(g *group) {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	var order []string
	for _, id := range g.order {
		m := g.members[id]
		if m == nil {
			continue
		}
		if !m.joined {
			c.remove(g, m)
			continue
		}
		order = append(order, id)
	}
	g.order = order
	g.generation++
	if len(g.members) == 0 {
		g.state, g.protocol, g.leader = groupEmpty, "", ""
		return
	}
	if g.members[g.leader] == nil {
		g.leader = order[0]
	}
	g.protocol = selectProtocol(g, order)
	g.state = groupCompletingRebalance
	var members []*member
	var metas [][]byte
	for _, id := range order {
		m := g.members[id]
		members = append(members, m)
		metas = append(metas, m.metadataFor(g.protocol))
	}
	for _, id := range order {
		m := g.members[id]
		res := joinResult{generation: g.generation, protocol: g.protocol, leader: g.leader, memberID: id}
		if id == g.leader {
			res.members, res.metas = members, metas
		}
		if m.join != nil {
			m.join <- res
			m.join = nil
		}
		m.joined = false
		c.touch(g, m)
	}
}

// selectProtocol is ClassicGroup.selectProtocol: every member votes for
// its first protocol that all members support; the most votes win (ties:
// the leader's order).
func selectProtocol(g *group, order []string) string {
	supported := func(name string) bool {
		for _, id := range order {
			ok := false
			for _, p := range g.members[id].protocols {
				if p.name == name {
					ok = true
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
	votes := map[string]int{}
	for _, id := range order {
		for _, p := range g.members[id].protocols {
			if supported(p.name) {
				votes[p.name]++
				break
			}
		}
	}
	best, n := "", -1
	for _, p := range g.members[g.leader].protocols {
		if v, ok := votes[p.name]; ok && v > n {
			best, n = p.name, v
		}
	}
	return best
}

func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

// remove drops a member (the caller rebalances).
func (c *coordinator) remove(g *group, m *member) {
	if m.session != nil {
		m.session.Stop()
	}
	if m.join != nil {
		m.join <- joinResult{code: kerr.UnknownMemberID.Code, generation: -1, memberID: m.id}
		m.join = nil
	}
	if m.sync != nil {
		m.sync <- syncResult{code: kerr.UnknownMemberID.Code}
		m.sync = nil
	}
	delete(g.members, m.id)
	for i, id := range g.order {
		if id == m.id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	if g.leader == m.id {
		g.leader = ""
	}
}

// touch restarts a member's session timer. A member waiting in JoinGroup
// is not expired (GroupCoordinator suspends its heartbeat).
func (c *coordinator) touch(g *group, m *member) {
	m.lastSeen = time.Now()
	if m.session != nil {
		m.session.Stop()
	}
	timeout := m.sessionTimeout
	m.session = time.AfterFunc(timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if g.members[m.id] != m || m.join != nil || time.Since(m.lastSeen) < timeout {
			return
		}
		c.remove(g, m)
		c.afterLeave(g)
	})
}

// afterLeave rebalances the remaining members, or empties the group.
func (c *coordinator) afterLeave(g *group) {
	if len(g.members) == 0 {
		if g.timer != nil {
			g.timer.Stop()
			g.timer = nil
		}
		if g.state != groupEmpty {
			g.generation++
		}
		g.state, g.protocol, g.leader = groupEmpty, "", ""
		return
	}
	if g.state == groupPreparingRebalance {
		c.tryCompleteJoin(g)
		return
	}
	c.prepareRebalance(g)
}

// member finds a member, checking the generation (-1 skips the check).
func (c *coordinator) member(groupID, id string, generation int32) (*group, *member, int16) {
	g := c.groups[groupID]
	if g == nil || g.members[id] == nil {
		return g, nil, kerr.UnknownMemberID.Code
	}
	if generation >= 0 && generation != g.generation {
		return g, g.members[id], kerr.IllegalGeneration.Code
	}
	return g, g.members[id], 0
}

// sync answers SyncGroup: the leader's assignments complete the rebalance;
// followers wait for them.
func (c *coordinator) sync(groupID, id string, generation int32, assignments map[string][]byte, done <-chan struct{}) syncResult {
	c.mu.Lock()
	g, m, code := c.member(groupID, id, generation)
	if code != 0 {
		c.mu.Unlock()
		return syncResult{code: code}
	}
	c.touch(g, m)
	switch g.state {
	case groupPreparingRebalance:
		c.mu.Unlock()
		return syncResult{code: kerr.RebalanceInProgress.Code}
	case groupStable:
		a := m.assignment
		c.mu.Unlock()
		return syncResult{assignment: a}
	}
	if id == g.leader {
		for mid, mm := range g.members {
			mm.assignment = assignments[mid]
			if mm.sync != nil && mid != id {
				mm.sync <- syncResult{assignment: mm.assignment}
				mm.sync = nil
			}
		}
		g.state = groupStable
		// GroupCoordinator stores the generation before answering; a
		// failed write answers the leader with the error and the
		// group rebalances (COORDINATOR_NOT_AVAILABLE here).
		if err := c.store.appendGroup(g, c.s.cfg.Now().UnixMilli()); err != nil {
			c.prepareRebalance(g)
			c.mu.Unlock()
			return syncResult{code: kerr.CoordinatorNotAvailable.Code}
		}
		a := m.assignment
		c.mu.Unlock()
		return syncResult{assignment: a}
	}
	ch := make(chan syncResult, 1)
	m.sync = ch
	c.mu.Unlock()
	select {
	case res := <-ch:
		return res
	case <-done:
		return syncResult{code: kerr.CoordinatorNotAvailable.Code}
	}
}

// heartbeat keeps a member's session alive and tells it of rebalances.
func (c *coordinator) heartbeat(groupID, id string, generation int32) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m, code := c.member(groupID, id, generation)
	if code != 0 {
		return code
	}
	c.touch(g, m)
	if g.state == groupPreparingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// leave removes members and rebalances the rest.
func (c *coordinator) leave(groupID string, ids []string) []int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	codes := make([]int16, len(ids))
	g := c.groups[groupID]
	left := false
	for i, id := range ids {
		if g == nil || g.members[id] == nil {
			codes[i] = kerr.UnknownMemberID.Code
			continue
		}
		c.remove(g, g.members[id])
		left = true
	}
	if left {
		c.afterLeave(g)
	}
	return codes
}

// commit checks the member and generation (a simple commit, generation -1
// with no member id, is allowed for a group without members), then writes
// the offsets to __consumer_offsets and remembers them.
func (c *coordinator) commit(groupID, id string, generation int32, offsets map[tp]committed) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[groupID]
	if generation >= 0 || id != "" {
		gg, m, code := c.member(groupID, id, generation)
		if code != 0 {
			return code
		}
		// ClassicGroup.validateOffsetCommit: a member of the current
		// generation may commit while the group prepares a rebalance
		// (its revocation commit), not between join and sync.
		if gg.state == groupCompletingRebalance {
			return kerr.RebalanceInProgress.Code
		}
		c.touch(gg, m)
	} else if g != nil && len(g.members) > 0 {
		return kerr.UnknownMemberID.Code
	}
	if len(offsets) == 0 {
		return 0
	}
	if err := c.store.appendCommits(groupID, offsets, c.s.cfg.Now().UnixMilli()); err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	if c.offsets[groupID] == nil {
		c.offsets[groupID] = map[tp]committed{}
	}
	for k, v := range offsets {
		c.offsets[groupID][k] = v
	}
	return 0
}

// fetchOffsets returns a group's committed offsets (all when parts is nil).
func (c *coordinator) fetchOffsets(groupID string) map[tp]committed {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[tp]committed, len(c.offsets[groupID]))
	for k, v := range c.offsets[groupID] {
		out[k] = v
	}
	return out
}
