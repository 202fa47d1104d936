package serve

import (
	"sort"
	"time"

	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The transaction coordinator (KIP-98, with the epoch bump of KIP-890's
// transactions v2) as Kafka's TransactionCoordinator, TransactionMetadata
// and TransactionStateManager run it (read at apache/kafka 1eb7644). It
// lives on the group coordinator's loop: its state is loop-owned like the
// groups', its records (__transaction_state-N, Kafka's TransactionLogKey
// and TransactionLogValue) and the markers it writes into every partition
// of a transaction go through the same writer, in order, outside the loop,
// and a transaction's offset commits (TxnOffsetCommit) become the group's
// committed offsets on the loop when the COMMIT marker is written, so that
// OffsetFetch never sees half of it. A request waiting for a record (an
// InitProducerId, AddPartitionsToTxn, EndTxn) is parked as the write's
// waiter, as a commit is.
//
// Each transaction moves through Kafka's states: Empty after
// InitProducerId, Ongoing after its first partition, PrepareCommit or
// PrepareAbort after EndTxn (answered once that record is written), then
// the markers, then CompleteCommit or CompleteAbort. Between a Prepare
// and its Complete every request of the transactional id is answered
// CONCURRENT_TRANSACTIONS, which clients retry. A transaction Ongoing for
// longer than its timeout is aborted with a fenced epoch, checked every
// transaction.abort.timed.out.transaction.cleanup.interval.ms on the
// server's Clock.

const (
	// TransactionStateTopic is the internal topic of transaction state.
	TransactionStateTopic = "__transaction_state"
	// txnPartitions is transaction.state.log.num.partitions.
	txnPartitions = 50
	// TxnMaxTimeout is transaction.max.timeout.ms.
	TxnMaxTimeout = 15 * time.Minute
	// txnAbortInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms.
	txnAbortInterval = 10 * time.Second
	// txnCoordinatorEpoch is the epoch markers carry: the leader epoch
	// of the __transaction_state partition, 0 on a broker that has led
	// it since it was made.
	txnCoordinatorEpoch int32 = 0
	// serverTransactionVersion is the transaction.version feature this
	// server finalizes (ApiVersions): 2, Kafka 4's default.
	serverTransactionVersion int16 = 2
	// markerRetry is how long a marker that could not be written waits
	// before it is tried again (as the marker channel retries).
	markerRetry = time.Second
)

// txnStatus is TransactionState (its id is TransactionStatus in the log).
type txnStatus int8

const (
	txnEmpty txnStatus = iota
	txnOngoing
	txnPrepareCommit
	txnPrepareAbort
	txnCompleteCommit
	txnCompleteAbort
	txnDead
	txnPrepareEpochFence
)

// String is Kafka's name of the state (DescribeTransactions,
// ListTransactions).
func (s txnStatus) String() string { return internaltopic.TransactionStateName(int8(s)) }

// txnMeta is TransactionMetadata (loop-owned).
type txnMeta struct {
	id                    string
	pid, prevPID, nextPID int64
	epoch, lastEpoch      int16
	timeoutMs             int32
	state                 txnStatus
	pending               txnStatus
	hasPending            bool
	parts                 map[offsetstore.TopicPartition]struct{}
	start, lastUpdate     int64
	tv                    int16 // the client's transaction version
}

// txnTransit is TxnTransitMetadata: a transition being written.
type txnTransit struct {
	pid, prevPID, nextPID int64
	epoch, lastEpoch      int16
	timeoutMs             int32
	state                 txnStatus
	parts                 map[offsetstore.TopicPartition]struct{}
	start, lastUpdate     int64
	tv                    int16
}

// epochExhausted is TransactionMetadata.isEpochExhausted: an epoch of
// Short.MaxValue-1 or more leaves none for fencing.
func epochExhausted(e int16) bool { return e >= 32766 }

func (m *txnMeta) prepare(state txnStatus, pid, nextPID int64, epoch, lastEpoch int16, timeoutMs int32, parts map[offsetstore.TopicPartition]struct{}, start, now int64, tv int16) *txnTransit {
	m.pending, m.hasPending = state, true
	return &txnTransit{pid: pid, prevPID: m.pid, nextPID: nextPID, epoch: epoch, lastEpoch: lastEpoch, timeoutMs: timeoutMs,
		state: state, parts: parts, start: start, lastUpdate: now, tv: tv}
}

func copyParts(ps map[offsetstore.TopicPartition]struct{}) map[offsetstore.TopicPartition]struct{} {
	out := make(map[offsetstore.TopicPartition]struct{}, len(ps))
	for k := range ps {
		out[k] = struct{}{}
	}
	return out
}

// prepareFence is prepareFenceProducerEpoch.
func (m *txnMeta) prepareFence() *txnTransit {
	return m.prepare(txnPrepareEpochFence, m.pid, -1, m.epoch+1, -1, m.timeoutMs, copyParts(m.parts), m.start, m.lastUpdate, 0)
}

// prepareIncrement is prepareIncrementProducerEpoch; expected is the
// epoch the producer gave (InitProducerId v3+), or nil.
func (m *txnMeta) prepareIncrement(timeoutMs int32, expected *int16, now int64) (*txnTransit, int16) {
	next, last := m.epoch+1, int16(-1)
	if expected != nil {
		switch {
		case m.epoch == -1 || *expected == m.epoch:
			last = m.epoch
		case *expected == m.lastEpoch:
			// A retry of a bump that succeeded.
			next, last = m.epoch, m.lastEpoch
		default:
			return nil, kerr.ProducerFenced.Code
		}
	}
	return m.prepare(txnEmpty, m.pid, -1, next, last, timeoutMs, map[offsetstore.TopicPartition]struct{}{}, -1, now, 0), 0
}

// prepareRotation is prepareProducerIdRotation.
func (m *txnMeta) prepareRotation(pid int64, timeoutMs int32, now int64, recordLast bool) *txnTransit {
	last := int16(-1)
	if recordLast {
		last = m.epoch
	}
	return m.prepare(txnEmpty, pid, -1, 0, last, timeoutMs, map[offsetstore.TopicPartition]struct{}{}, -1, now, 0)
}

// prepareAdd is prepareAddPartitions.
func (m *txnMeta) prepareAdd(add []offsetstore.TopicPartition, now int64) *txnTransit {
	start := m.start
	if m.state == txnEmpty || m.state == txnCompleteAbort || m.state == txnCompleteCommit {
		start = now
	}
	ps := copyParts(m.parts)
	for _, p := range add {
		ps[p] = struct{}{}
	}
	return m.prepare(txnOngoing, m.pid, -1, m.epoch, m.lastEpoch, m.timeoutMs, ps, start, now, 0)
}

// prepareEnd is prepareAbortOrCommit: transactions v2 bump the epoch.
func (m *txnMeta) prepareEnd(state txnStatus, tv int16, nextPID int64, now int64) *txnTransit {
	epoch, last := m.epoch, m.lastEpoch
	if tv >= 2 {
		epoch, last = m.epoch+1, m.epoch
	}
	return m.prepare(state, m.pid, nextPID, epoch, last, m.timeoutMs, copyParts(m.parts), m.start, now, tv)
}

// prepareComplete is prepareComplete: a v2 transaction whose epoch ran
// out continues with its next producer id at epoch 0.
func (m *txnMeta) prepareComplete(now int64) *txnTransit {
	state := txnCompleteAbort
	if m.state == txnPrepareCommit {
		state = txnCompleteCommit
	}
	pid, epoch := m.pid, m.epoch
	if m.tv >= 2 && m.nextPID != -1 {
		pid, epoch = m.nextPID, 0
	}
	return m.prepare(state, pid, -1, epoch, m.epoch, m.timeoutMs, map[offsetstore.TopicPartition]struct{}{}, m.start, now, m.tv)
}

// complete is completeTransitionTo, once t's record is written.
func (m *txnMeta) complete(t *txnTransit) {
	switch t.state {
	case txnEmpty:
		m.timeoutMs, m.epoch, m.lastEpoch, m.pid, m.prevPID = t.timeoutMs, t.epoch, t.lastEpoch, t.pid, t.prevPID
	case txnOngoing:
		m.start = t.start
		m.parts = copyParts(t.parts)
	case txnPrepareCommit, txnPrepareAbort:
		if t.tv >= 2 {
			m.epoch, m.lastEpoch, m.nextPID = t.epoch, t.lastEpoch, t.nextPID
		}
	case txnCompleteCommit, txnCompleteAbort:
		m.start = t.start
		m.parts = map[offsetstore.TopicPartition]struct{}{}
		if t.tv >= 2 {
			m.epoch, m.lastEpoch, m.prevPID, m.pid, m.nextPID = t.epoch, t.lastEpoch, t.prevPID, t.pid, t.nextPID
		}
	}
	m.tv, m.lastUpdate, m.hasPending, m.state = t.tv, t.lastUpdate, false, t.state
}

// logValue is what valueToBytes writes for t.
func (t *txnTransit) logValue() *internaltopic.TransactionLogValue {
	v := &internaltopic.TransactionLogValue{ProducerID: t.pid, PreviousProducerID: -1, NextProducerID: -1, ProducerEpoch: t.epoch,
		TransactionTimeoutMs: t.timeoutMs, TransactionStatus: int8(t.state), LastUpdateTimestampMs: t.lastUpdate,
		StartTimestampMs: t.start, ClientTransactionVersion: t.tv}
	byTopic := map[string][]int32{}
	for p := range t.parts {
		byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
	}
	for topic, ids := range byTopic {
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		v.Partitions = append(v.Partitions, internaltopic.TransactionPartitions{Topic: topic, PartitionIDs: ids})
	}
	return v
}

// txnResult is a transactional request's answer: its code and, for
// InitProducerId and EndTxn, the producer id and epoch.
type txnResult struct {
	code  int16
	pid   int64
	epoch int16
}

func txnError(code int16) txnResult { return txnResult{code: code, pid: -1, epoch: -1} }

// appendTxn writes t's record (appendTransactionToLog) and completes the
// transition on the loop; a failed write leaves the state as it was.
func (c *coordinator) appendTxn(m *txnMeta, t *txnTransit, done func(code int16)) {
	id, v, now := m.id, t.logValue(), c.clock.Now().UnixMilli()
	c.write(func() error { return c.txnLog.append(id, v, now) }, func(err error) {
		if err != nil {
			m.hasPending = false
			done(kerr.NotCoordinator.Code)
			return
		}
		m.complete(t)
		if ch := c.hooks.txnChanged; ch != nil {
			select {
			case ch <- struct{}{}:
			default: // a signal is already pending
			}
		}
		done(0)
	})
}

// initProducerID is handleInitProducerId for a transactional id; expected
// is the producer's id and epoch (v3+ with an id), or nil.
func (c *coordinator) initProducerID(id string, timeoutMs int32, expected *txnResult, w *waiter) {
	switch {
	case id == "":
		w.answer(txnError(kerr.InvalidRequest.Code))
		return
	case timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > TxnMaxTimeout:
		w.answer(txnError(kerr.InvalidTransactionTimeout.Code))
		return
	}
	now := c.clock.Now().UnixMilli()
	m := c.txns[id]
	if m == nil {
		m = &txnMeta{id: id, pid: c.allocPID(), prevPID: -1, nextPID: -1, epoch: -1, lastEpoch: -1, timeoutMs: timeoutMs,
			state: txnEmpty, parts: map[offsetstore.TopicPartition]struct{}{}, start: -1, lastUpdate: now}
		c.txns[id] = m
	}
	if m.hasPending {
		w.answer(txnError(kerr.ConcurrentTransactions.Code))
		return
	}
	if expected != nil && !(m.epoch == -1 || expected.pid == m.pid || expected.pid == m.prevPID && epochExhausted(expected.epoch)) {
		w.answer(txnError(kerr.ProducerFenced.Code))
		return
	}
	var t *txnTransit
	switch m.state {
	case txnPrepareAbort, txnPrepareCommit:
		w.answer(txnError(kerr.ConcurrentTransactions.Code))
		return
	case txnOngoing:
		// Abort the open transaction with a fenced epoch, and let the
		// client retry (the retry bumps the epoch again).
		f := m.prepareFence()
		c.endTxn(id, f.pid, f.epoch, false, false, serverTransactionVersion, func(r txnResult) {
			if r.code == 0 {
				r = txnError(kerr.ConcurrentTransactions.Code)
			}
			w.answer(r)
		})
		c.park(w, id, "")
		return
	default:
		if epochExhausted(m.epoch) && (expected == nil || expected.epoch == m.epoch) {
			t = m.prepareRotation(c.allocPID(), timeoutMs, now, expected != nil)
		} else {
			var e *int16
			if expected != nil {
				e = &expected.epoch
			}
			var code int16
			if t, code = m.prepareIncrement(timeoutMs, e, now); code != 0 {
				w.answer(txnError(code))
				return
			}
		}
	}
	c.appendTxn(m, t, func(code int16) {
		if code != 0 {
			w.answer(txnError(code))
			return
		}
		w.answer(txnResult{pid: m.pid, epoch: m.epoch})
	})
	c.park(w, id, "")
}

// checkTxn is the producer checks every request of an open transaction
// starts with (handleAddPartitionsToTransaction).
func (c *coordinator) checkTxn(id string, pid int64, epoch int16) (*txnMeta, int16) {
	m := c.txns[id]
	switch {
	case id == "":
		return nil, kerr.InvalidRequest.Code
	case m == nil || m.pid != pid:
		return nil, kerr.InvalidProducerIDMapping.Code
	case m.epoch != epoch:
		return nil, kerr.ProducerFenced.Code
	case m.hasPending || m.state == txnPrepareCommit || m.state == txnPrepareAbort:
		return nil, kerr.ConcurrentTransactions.Code
	}
	return m, 0
}

// addPartitions is handleAddPartitionsToTransaction: done is called on
// the loop with the code, after the record when one is written.
func (c *coordinator) addPartitions(id string, pid int64, epoch int16, parts []offsetstore.TopicPartition, done func(code int16)) {
	m, code := c.checkTxn(id, pid, epoch)
	if code != 0 {
		done(code)
		return
	}
	if m.state == txnOngoing {
		all := true
		for _, p := range parts {
			if _, ok := m.parts[p]; !ok {
				all = false
			}
		}
		if all {
			done(0)
			return
		}
	}
	c.appendTxn(m, m.prepareAdd(parts, c.clock.Now().UnixMilli()), done)
}

// verifyPartitions is handleVerifyPartitionsInTransaction (AddPartitionsToTxn
// v5's verify-only form): each partition is NONE when it is in the
// transaction, else TRANSACTION_ABORTABLE.
func (c *coordinator) verifyPartitions(id string, pid int64, epoch int16, parts []offsetstore.TopicPartition) map[offsetstore.TopicPartition]int16 {
	out := make(map[offsetstore.TopicPartition]int16, len(parts))
	m := c.txns[id]
	code := int16(0)
	switch {
	case id == "":
		code = kerr.InvalidRequest.Code
	case m == nil || m.pid != pid:
		code = kerr.InvalidProducerIDMapping.Code
	case m.epoch != epoch:
		code = kerr.ProducerFenced.Code
	case m.state == txnPrepareCommit || m.state == txnPrepareAbort:
		code = kerr.ConcurrentTransactions.Code
	}
	for _, p := range parts {
		switch {
		case code != 0:
			out[p] = code
		default:
			if _, ok := m.parts[p]; ok {
				out[p] = 0
			} else {
				out[p] = kerr.TransactionAbortable.Code
			}
		}
	}
	return out
}

// produceCheck is what the partition's leader asks the coordinator before
// it appends a transactional batch: under transactions v2 (Produce v12+)
// the partition is added to the transaction implicitly (KIP-890), before
// it is verified (KIP-890 part 1: a partition the transaction does not
// hold is INVALID_TXN_STATE... TRANSACTION_ABORTABLE for v11+).
func (c *coordinator) produceCheck(id string, pid int64, epoch int16, p offsetstore.TopicPartition, add bool, version int16, w *waiter) {
	if add {
		c.addPartitions(id, pid, epoch, []offsetstore.TopicPartition{p}, func(code int16) { w.answer(code) })
		c.park(w, id, "")
		return
	}
	code := c.verifyPartitions(id, pid, epoch, []offsetstore.TopicPartition{p})[p]
	if code == kerr.TransactionAbortable.Code && version < 11 {
		code = kerr.InvalidTxnState.Code
	}
	w.answer(code)
}

// endTxn is endTransaction: fromClient is false for the coordinator's own
// aborts (a fence, a timeout). done is called on the loop once the
// Prepare record is written (the client's answer) or with the error; the
// markers and the Complete record follow.
func (c *coordinator) endTxn(id string, pid int64, epoch int16, commit, fromClient bool, tv int16, done func(txnResult)) {
	m := c.txns[id]
	if id == "" {
		done(txnError(kerr.InvalidRequest.Code))
		return
	}
	if m == nil {
		done(txnError(kerr.InvalidProducerIDMapping.Code))
		return
	}
	fencing := m.hasPending && m.pending == txnPrepareEpochFence
	v2 := !fencing && m.tv >= 2
	retryOnOverflow := v2 && m.prevPID == pid && epoch == 32766 && m.epoch == 0
	retryOnBump := v2 && m.epoch == epoch+1
	var valid bool
	if v2 {
		switch m.state {
		case txnPrepareCommit, txnPrepareAbort:
			valid = retryOnBump
		case txnCompleteCommit, txnCompleteAbort:
			valid = retryOnBump || retryOnOverflow
		default:
			valid = epoch == m.epoch
		}
	} else {
		valid = (!fromClient || epoch == m.epoch) && epoch >= m.epoch
	}
	switch {
	case m.pid != pid && !retryOnOverflow:
		done(txnError(kerr.InvalidProducerIDMapping.Code))
		return
	case !valid:
		done(txnError(kerr.ProducerFenced.Code))
		return
	case m.hasPending && !fencing:
		done(txnError(kerr.ConcurrentTransactions.Code))
		return
	}
	bad := func() { done(txnError(kerr.InvalidTxnState.Code)) }
	switch m.state {
	case txnOngoing:
	case txnCompleteCommit, txnCompleteAbort:
		if commit == (m.state == txnCompleteCommit) {
			done(txnResult{pid: m.pid, epoch: m.epoch})
		} else {
			bad()
		}
		return
	case txnPrepareCommit, txnPrepareAbort:
		if commit == (m.state == txnPrepareCommit) {
			done(txnError(kerr.ConcurrentTransactions.Code))
		} else {
			bad()
		}
		return
	default:
		bad()
		return
	}
	next := txnPrepareAbort
	if commit {
		next = txnPrepareCommit
	}
	nextPID := int64(-1)
	if tv >= 2 && !fencing && epochExhausted(m.epoch) {
		nextPID = c.allocPID()
	}
	if !commit && fencing {
		m.hasPending = false
		m.epoch, m.lastEpoch = epoch, -1
	}
	t := m.prepareEnd(next, tv, nextPID, c.clock.Now().UnixMilli())
	c.appendTxn(m, t, func(code int16) {
		if code != 0 {
			done(txnError(code))
			return
		}
		done(txnResult{pid: m.pid, epoch: m.epoch})
		c.sendMarkers(m, commit)
	})
}

// sendMarkers writes the transaction's marker into each of its partitions
// (the data partitions through their appenders, __consumer_offsets through
// the offsets store), then, on the loop, makes a committed transaction's
// offsets the groups', and writes the Complete record. A marker that
// cannot be written is tried again after markerRetry; the transaction
// stays in its Prepare state meanwhile.
func (c *coordinator) sendMarkers(m *txnMeta, commit bool) {
	pid, epoch := m.pid, m.epoch
	parts := make([]offsetstore.TopicPartition, 0, len(m.parts))
	for p := range m.parts {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].Topic != parts[j].Topic {
			return parts[i].Topic < parts[j].Topic
		}
		return parts[i].Partition < parts[j].Partition
	})
	c.write(func() error { return c.writeMarkers(parts, pid, epoch, commit) }, func(err error) {
		if err != nil {
			c.after(markerRetry, func() { c.sendMarkers(m, commit) })
			return
		}
		c.applyTxnOffsets(pid, commit)
		c.appendTxn(m, m.prepareComplete(c.clock.Now().UnixMilli()), func(int16) {})
	})
}

// writeMarkers runs on the writer. The appender tells each partition's
// model, which moves its last stable offset and wakes its long polls.
func (c *coordinator) writeMarkers(parts []offsetstore.TopicPartition, pid int64, epoch int16, commit bool) error {
	for _, p := range parts {
		if p.Topic == offsetstore.Topic {
			if err := c.store.EndTxn(p.Partition, pid, epoch, commit, txnCoordinatorEpoch); err != nil {
				return err
			}
			continue
		}
		sp := c.srv.lookup(p.Topic, p.Partition)
		if sp == nil {
			continue // deleted since: nothing to mark
		}
		if err := sp.writeMarker(pid, epoch, commit); err != nil {
			return err
		}
	}
	return nil
}

// writeMarker appends a transaction marker to the partition.
func (p *part) writeMarker(pid int64, epoch int16, commit bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.app == nil {
		return errPartitionClosed
	}
	_, err := p.app.WriteTxnMarker(pid, epoch, commit, txnCoordinatorEpoch)
	return err
}

// applyTxnOffsets makes the producer's transactional offsets the groups'
// committed offsets (a commit) or forgets them (an abort).
func (c *coordinator) applyTxnOffsets(pid int64, commit bool) {
	byGroup := c.txnOffsets[pid]
	delete(c.txnOffsets, pid)
	if !commit {
		return
	}
	for group, offs := range byGroup {
		if c.offsets[group] == nil {
			c.offsets[group] = map[offsetstore.TopicPartition]offsetstore.Committed{}
		}
		for k, v := range offs {
			c.offsets[group][k] = v
		}
	}
}

// txnOffsetCommit is TxnOffsetCommit on the group coordinator: the
// committer's checks, the producer's (its transaction must hold the
// group's __consumer_offsets partition: AddOffsetsToTxn, or implicitly
// under transactions v2), then the offsets as a transactional batch,
// pending until the marker.
func (c *coordinator) txnOffsetCommit(version int16, txnID, groupID string, pid int64, epoch int16, id string, instanceID *string,
	generation int32, commits []offsetstore.Commit, w *waiter) {
	if groupID == "" {
		w.answer(kerr.InvalidGroupID.Code)
		return
	}
	if cg := c.cgroups[groupID]; cg != nil {
		// A consumer group's member commits at its member epoch
		// (validateOffsetCommit, transactional).
		if code := cg.validateCommit(version, id, generation, true); code != 0 {
			if code == kerr.StaleMemberEpoch.Code {
				code = kerr.IllegalGeneration.Code
			}
			w.answer(code)
			return
		}
	} else if g := c.groups[groupID]; g != nil && (generation >= 0 || id != "" || instanceID != nil) {
		if code := g.validateMember(id, instanceID); code != 0 {
			w.answer(code)
			return
		}
		if generation != g.generation {
			w.answer(kerr.IllegalGeneration.Code)
			return
		}
	} else if c.groups[groupID] == nil && generation >= 0 {
		w.answer(kerr.IllegalGeneration.Code)
		return
	}
	off := offsetstore.TopicPartition{Topic: offsetstore.Topic, Partition: offsetstore.Partition(groupID)}
	write := func() {
		now := c.clock.Now().UnixMilli()
		for i := range commits {
			commits[i].CommitTimestamp = now
		}
		c.write(func() error { return c.store.TxnCommit(groupID, pid, epoch, commits) }, func(err error) {
			if err != nil {
				w.answer(storeError(err))
				return
			}
			byGroup := c.txnOffsets[pid]
			if byGroup == nil {
				byGroup = map[string]map[offsetstore.TopicPartition]offsetstore.Committed{}
				c.txnOffsets[pid] = byGroup
			}
			if byGroup[groupID] == nil {
				byGroup[groupID] = map[offsetstore.TopicPartition]offsetstore.Committed{}
			}
			for _, cm := range commits {
				byGroup[groupID][cm.TopicPartition] = cm.Committed
			}
			w.answer(int16(0))
		})
	}
	if version >= 5 {
		// Transactions v2: the group coordinator adds its partition
		// to the transaction (there is no AddOffsetsToTxn).
		c.addPartitions(txnID, pid, epoch, []offsetstore.TopicPartition{off}, func(code int16) {
			if code != 0 {
				w.answer(code)
				return
			}
			write()
		})
	} else {
		m, code := c.checkTxn(txnID, pid, epoch)
		if code == 0 {
			if _, ok := m.parts[off]; !ok {
				code = kerr.InvalidTxnState.Code
			}
		}
		if code != 0 {
			w.answer(code)
			return
		}
		write()
	}
	c.park(w, groupID, id)
}

// scheduleTxnAborts checks for timed-out transactions every
// txnAbortInterval (abortTimedOutTransactions).
func (c *coordinator) scheduleTxnAborts() {
	c.txnTimer = c.after(txnAbortInterval, func() {
		c.abortTimedOut()
		c.scheduleTxnAborts()
	})
}

// abortTimedOut aborts, with a fenced epoch, every transaction Ongoing for
// longer than its timeout (timedOutTransactions).
func (c *coordinator) abortTimedOut() {
	now := c.clock.Now().UnixMilli()
	ids := make([]string, 0, len(c.txns))
	for id, m := range c.txns {
		if m.state == txnOngoing && !m.hasPending && m.start+int64(m.timeoutMs) < now {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := c.txns[id]
		f := m.prepareFence()
		c.endTxn(id, f.pid, f.epoch, false, false, serverTransactionVersion, func(txnResult) {})
	}
}

// resumeTxns finishes, at start, the transactions the log left between
// Prepare and Complete: their markers are written again (a partition
// holding its marker already gets a second one, harmless, as a broker's
// reload does).
func (c *coordinator) resumeTxns() {
	for _, m := range c.txns {
		if m.state == txnPrepareCommit || m.state == txnPrepareAbort {
			c.sendMarkers(m, m.state == txnPrepareCommit)
		}
	}
}

// TxnState is one transaction as the coordinator holds it (for
// ListTransactions and DescribeTransactions).
type TxnState struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	// State is Kafka's name of it (Empty, Ongoing, PrepareCommit, ...).
	State string
	// StartTimestamp is when the open transaction started (epoch ms), -1
	// when none is.
	StartTimestamp int64
	Partitions     []offsetstore.TopicPartition // sorted
}

// Transactions returns every transactional id's state, sorted by id
// (on the loop; nil once the coordinator has stopped).
func (s *Server) Transactions() []TxnState {
	out, _ := s.transactions()
	return out
}

// transactions is Transactions, and whether the coordinator answered
// (false once it has stopped: Kafka's coordinator is then not active).
func (s *Server) transactions() ([]TxnState, bool) {
	var out []TxnState
	ok := s.groups.do(func() {
		for _, m := range s.groups.txns {
			st := TxnState{TransactionalID: m.id, ProducerID: m.pid, ProducerEpoch: m.epoch, TimeoutMs: m.timeoutMs,
				State: m.state.String(), StartTimestamp: m.start}
			for p := range m.parts {
				st.Partitions = append(st.Partitions, p)
			}
			sort.Slice(st.Partitions, func(i, j int) bool {
				a, b := st.Partitions[i], st.Partitions[j]
				return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
			})
			out = append(out, st)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].TransactionalID < out[j].TransactionalID })
	return out, ok
}
