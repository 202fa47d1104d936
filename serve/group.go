package serve

import (
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/produce"
)

// The group coordinator is one goroutine, the loop, that owns every group,
// member and committed offset (as Kafka's coordinator runtime runs each
// __consumer_offsets partition's state machine on one thread). Requests
// reach it as functions on its queue and answer through a waiter. A
// request that must wait (a JoinGroup until the rebalance completes, a
// follower's SyncGroup until the leader's assignments, any commit until
// its record is on disk) is parked as the member's or the write's waiter,
// not as a goroutine inside the coordinator; the connection that sent it
// watches for its client hanging up, and then the loop forgets the waiter
// (release). Timers run on the server's Clock and hand their work back to
// the loop. Disk writes (__consumer_offsets) are made by a writer
// goroutine, in the order the loop queued them, and their completions come
// back to the loop: no request waits on a lock while another's record is
// written.

// coordinator is the classic group coordinator.
type coordinator struct {
	clock        Clock
	initialDelay time.Duration
	store        *offsetstore.Store
	hooks        hooks
	maxRecord    int       // message.max.bytes: the largest group record
	cap          *stateCap // a read-only server's bound of its state dir

	queue chan func()
	stop  chan struct{} // closed by shutdown: the loop answers the parked and ends
	quit  chan struct{} // closed when the loop has ended
	once  sync.Once

	writesMu sync.Mutex
	writes   []diskWrite
	wake     chan struct{} // one pending wake-up of the writer
	written  chan struct{} // closed when the writer has ended

	// Owned by the loop.
	groups   map[string]*group
	offsets  map[string]map[offsetstore.TopicPartition]offsetstore.Committed
	deferred []func()
	stopped  bool
	cleanup  Timer

	// The consumer groups of KIP-848 (consumer.go), loop-owned, and
	// their configs.
	cgroups          map[string]*cgroup
	cgSessionTimeout time.Duration
	cgInterval       time.Duration
	cgMaxSize        int

	// The transaction coordinator's (txn.go), loop-owned but srv,
	// txnLog (the writer's) and allocPID.
	srv        *Server
	txnLog     *txnLog
	allocPID   func() int64
	txns       map[string]*txnMeta
	txnOffsets map[int64]map[string]map[offsetstore.TopicPartition]offsetstore.Committed // by producer id, group
	txnTimer   Timer
}

// hooks let tests wait for what the server did instead of sleeping.
type hooks struct {
	// dispatched is called when a request's handler starts.
	dispatched func(key int16)
	// parked is called on the loop when a request is parked; released
	// when the loop forgets one whose client hung up.
	parked, released func(key int16, group, member string)
	// writing is called on the writer before each append.
	writing func()
	// fetchParked is called when a Fetch parks on its partitions'
	// waiter; fetchWoken when that waiter (an append to one of them,
	// and nothing else) wakes it.
	fetchParked, fetchWoken func()
	// consumerFenced is called on the loop when a consumer group member
	// is fenced by its session or rebalance timeout.
	consumerFenced func(group, member string)
	// txnChanged, if set, is signalled (without blocking) on the loop
	// each time a transaction's state changes.
	txnChanged chan struct{}
}

// waiter is a request waiting for the loop's answer: answer sends it once;
// a parked waiter is held by the group state until then.
type waiter struct {
	reply  chan any
	parked chan struct{}
	done   bool // answered or released (loop-owned)
	key    int16
}

func newWaiter(key int16) *waiter {
	return &waiter{reply: make(chan any, 1), parked: make(chan struct{}), key: key}
}

// answer sends the result, once; a released waiter's answer is dropped.
func (w *waiter) answer(res any) {
	if w == nil || w.done {
		return
	}
	w.done = true
	w.reply <- res
}

// diskWrite is one append to __consumer_offsets: do runs on the writer,
// done on the loop with its error.
type diskWrite struct {
	do   func() error
	done func(error)
}

// errClientGone ends a connection whose client hung up while its request
// was parked.
var errClientGone = errors.New("client closed the connection while its request was parked")

// newCoordinator loads the committed offsets (a log dir's own
// __consumer_offsets first, an archived broker's, then the state
// directory's, which are newer) and the groups' generations, and starts
// the loop and the writer.
func newCoordinator(s *Server) (*coordinator, error) {
	dir := s.cfg.StateDir
	if s.cfg.Writable {
		dir = ""
	}
	opts := s.cfg.Produce
	store, _, err := offsetstore.OpenFor(s.cfg.LogDir, dir, opts)
	if err != nil {
		return nil, err
	}
	st := offsetstore.NewState()
	if err := s.loadCommitted(st); err != nil {
		store.Close()
		return nil, err
	}
	if filepath.Clean(store.Dir()) != filepath.Clean(s.cfg.LogDir) {
		if err := st.Load(store.Dir()); err != nil {
			store.Close()
			return nil, err
		}
	}
	c := &coordinator{clock: s.cfg.Clock, initialDelay: s.cfg.GroupInitialDelay, store: store, hooks: s.cfg.hooks,
		maxRecord: int(s.cfg.MaxMessageBytes),
		queue:     make(chan func(), 64), stop: make(chan struct{}), quit: make(chan struct{}),
		wake: make(chan struct{}, 1), written: make(chan struct{}),
		groups: map[string]*group{}, offsets: st.Offsets, cgroups: map[string]*cgroup{},
		cgSessionTimeout: s.cfg.ConsumerSessionTimeout, cgInterval: s.cfg.ConsumerHeartbeatInterval, cgMaxSize: s.cfg.ConsumerGroupMaxSize,
		srv: s, allocPID: s.allocPID, txns: map[string]*txnMeta{}, txnOffsets: map[int64]map[string]map[offsetstore.TopicPartition]offsetstore.Committed{}}
	if c.cap, err = newStateCap(s.cfg, store); err != nil {
		store.Close()
		return nil, err
	}
	if s.cfg.Writable {
		// Transactions need a writable log dir: __transaction_state
		// lives beside the partitions, as a broker keeps it.
		txns, err := loadTxns(s.cfg.LogDir)
		if err != nil {
			store.Close()
			return nil, err
		}
		c.txns, c.txnLog = txns, &txnLog{dir: s.cfg.LogDir, opts: opts, apps: map[int32]*produce.Appender{}}
	}
	for name, gm := range st.Groups {
		// A restarted coordinator keeps each group's generation; the
		// members rejoin (their sessions did not survive the restart).
		g := c.newGroup(name)
		g.generation, g.protocolType = gm.Generation, gm.ProtocolType
	}
	for name, cg := range st.ConsumerGroups {
		if g := c.groups[name]; g != nil && len(cg.Members) == 0 {
			continue // the classic group that replaced it
		}
		delete(c.groups, name)
		c.loadConsumerGroup(name, cg)
	}
	go c.run()
	go c.writer()
	c.do(c.scheduleCleanup)
	c.do(c.startConsumerSessions)
	if c.txnLog != nil {
		c.do(func() {
			c.resumeTxns()
			c.scheduleTxnAborts()
		})
	}
	return c, nil
}

// run is the loop.
func (c *coordinator) run() {
	defer close(c.quit)
	for {
		select {
		case f := <-c.queue:
			f()
			for len(c.deferred) > 0 {
				d := c.deferred[0]
				c.deferred = c.deferred[1:]
				d()
			}
		case <-c.stop:
			c.shutdownGroups()
			return
		}
	}
}

// post queues f for the loop; false once the loop has ended.
func (c *coordinator) post(f func()) bool {
	select {
	case c.queue <- f:
		return true
	case <-c.quit:
		return false
	case <-c.stop:
		// The loop may still be answering the parked: queue if it
		// reads, else give up.
		select {
		case c.queue <- f:
			return true
		case <-c.quit:
			return false
		}
	}
}

// soon runs f on the loop after the current work item (a zero-length
// timer).
func (c *coordinator) soon(f func()) { c.deferred = append(c.deferred, f) }

// after runs f on the loop once d has passed on the clock.
func (c *coordinator) after(d time.Duration, f func()) Timer {
	return c.clock.AfterFunc(d, func() { c.post(f) })
}

// park records that the loop holds w until it answers it; a waiter
// answered already is not parked.
func (c *coordinator) park(w *waiter, group, member string) {
	if w.done {
		return
	}
	close(w.parked)
	if c.hooks.parked != nil {
		c.hooks.parked(w.key, group, member)
	}
}

// call runs f on the loop with a new waiter and returns what the loop
// answers through it, or stopped once the coordinator has shut down.
// While the request is parked the connection is watched: a client that
// hangs up releases the request in the loop (release) and the call
// returns errClientGone, which closes the connection.
func (c *coordinator) call(cn *conn, key int16, stopped any, f func(w *waiter)) (any, error) {
	w := newWaiter(key)
	if !c.post(func() {
		if c.stopped {
			w.answer(stopped)
			return
		}
		f(w)
	}) {
		return stopped, nil
	}
	select {
	case res := <-w.reply:
		return res, nil
	case <-w.parked:
	case <-c.quit:
		return c.lastAnswer(w, stopped), nil
	}
	gone, unwatch := cn.watchHangUp()
	defer unwatch()
	select {
	case res := <-w.reply:
		return res, nil
	case <-gone:
		if !c.post(func() { c.release(w) }) {
			return c.lastAnswer(w, stopped), nil
		}
		return nil, errClientGone
	case <-c.quit:
		return c.lastAnswer(w, stopped), nil
	}
}

// lastAnswer is w's answer if the loop gave one before it ended.
func (c *coordinator) lastAnswer(w *waiter, stopped any) any {
	select {
	case res := <-w.reply:
		return res
	default:
		return stopped
	}
}

// write queues an append for the writer (on the loop).
func (c *coordinator) write(do func() error, done func(error)) {
	c.writesMu.Lock()
	c.writes = append(c.writes, diskWrite{do, done})
	c.writesMu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writer makes the queued appends in order and hands each result back to
// the loop. It ends when the loop has ended and the queue is empty.
func (c *coordinator) writer() {
	defer close(c.written)
	for {
		c.writesMu.Lock()
		ws := c.writes
		c.writes = nil
		c.writesMu.Unlock()
		for _, w := range ws {
			if c.hooks.writing != nil {
				c.hooks.writing()
			}
			err := w.do()
			c.post(func() { w.done(err) })
		}
		if len(ws) > 0 {
			continue
		}
		select {
		case <-c.wake:
		case <-c.quit:
			c.writesMu.Lock()
			n := len(c.writes)
			c.writesMu.Unlock()
			if n == 0 {
				return
			}
		}
	}
}

// shutdown answers every parked request (COORDINATOR_NOT_AVAILABLE, as an
// unloaded coordinator does) and ends the loop; queued writes are still
// made.
func (c *coordinator) shutdown() {
	c.once.Do(func() { close(c.stop) })
	<-c.quit
}

// close ends the loop and the writer and closes the store.
func (c *coordinator) close() error {
	c.shutdown()
	<-c.written
	err := c.store.Close()
	if c.txnLog != nil {
		err = errors.Join(err, c.txnLog.close())
	}
	return err
}

// sync runs f on the loop and waits for it (tests and the handlers that
// only read).
func (c *coordinator) do(f func()) bool {
	done := make(chan struct{})
	if !c.post(func() { f(); close(done) }) {
		return false
	}
	select {
	case <-done:
		return true
	case <-c.quit:
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}
