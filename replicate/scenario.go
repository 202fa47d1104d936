package replicate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/produce"
)

// Scenario is a run of the cluster: produce requests at a pace, followers
// stopped and restarted at given ticks, the leader crashed, a consumer
// group reading, and when to stop. The zero value produces nothing and
// runs until the cluster is quiet.
type Scenario struct {
	// Records are produced one per request, every ProduceEvery ticks
	// (0 or 1: every tick), with Acks.
	Records      int
	ProduceEvery int
	Acks         Acks
	// Ticks is how many rounds to run; 0 runs until everything produced
	// is committed (and read by Group), every planned event happened and
	// the ISR holds every live broker, or MaxTicks.
	Ticks int
	// Stops and Restarts map a tick to the brokers stopped or restarted
	// then; CrashLeaderAt is the tick the leader crashes (-1: never).
	Stops, Restarts map[int][]int32
	CrashLeaderAt   int
	// Group runs a consumer in this group that fetches bounded by the high
	// watermark and commits; "" for none. With a virtual clock (Config.Now
	// nil) it fetches once per tick; in real time it long-polls on its
	// own goroutine, as a real consumer does.
	Group string
	// AfterTick is called after every tick (to print the tick's RPCs).
	AfterTick func()
}

// DefaultMaxTicks bounds a run whose Scenario.Ticks is 0.
const DefaultMaxTicks = 100000

// ConsumerRow is a consumer fetch: the moment row it added and the
// consumer's position after it.
type ConsumerRow struct {
	Moment   int
	Position int64
}

// RunResult is what a scenario did.
type RunResult struct {
	// Calls are the produce requests, in order.
	Calls []*ProduceCall
	// ConsumerRows are the consumer's fetches that moved it.
	ConsumerRows []ConsumerRow
}

// ParseAt reads ID@TICK values (--stop, --restart) into tick -> broker ids.
func ParseAt(vals []string) (map[int][]int32, error) {
	out := map[int][]int32{}
	for _, v := range vals {
		id, at, ok := strings.Cut(v, "@")
		i, err1 := strconv.ParseInt(id, 10, 32)
		t, err2 := strconv.Atoi(at)
		if !ok || err1 != nil || err2 != nil || t < 0 {
			return nil, fmt.Errorf("want ID@TICK, got %q", v)
		}
		out[t] = append(out[t], int32(i))
	}
	return out, nil
}

// ParseAcks reads 0, 1 or all (-1).
func ParseAcks(s string) (Acks, error) {
	switch s {
	case "0":
		return AcksNone, nil
	case "1":
		return AcksLeader, nil
	case "all", "-1":
		return AcksAll, nil
	}
	return 0, errors.New("acks must be 0, 1 or all")
}

// Run plays the scenario on the cluster until its stop condition or ctx
// ends. With a real clock (Config.Now set) each tick sleeps Config.Tick.
func (c *Cluster) Run(ctx context.Context, sc Scenario) (*RunResult, error) {
	r := &scenarioRun{c: c, sc: sc, res: &RunResult{}, readerPos: -1}
	defer r.close()
	limit := sc.Ticks
	if limit <= 0 {
		limit = DefaultMaxTicks
	}
	for t := 0; t < limit && ctx.Err() == nil; t++ {
		if err := r.tick(ctx, t); err != nil {
			return r.res, err
		}
		if sc.AfterTick != nil {
			sc.AfterTick()
		}
		if !c.virtual {
			time.Sleep(c.cfg.Tick)
		}
		if sc.Ticks <= 0 && r.quiet(t) {
			break
		}
	}
	return r.res, nil
}

type scenarioRun struct {
	c         *Cluster
	sc        Scenario
	res       *RunResult
	produced  int
	cons      *fetch.Consumer // virtual clock
	offsets   *offsetstore.Store
	rd        *reader // real time
	readerPos int64
}

func (r *scenarioRun) close() {
	if r.cons != nil {
		r.cons.Close()
		r.cons = nil
		r.offsets.Close()
	}
	if r.rd != nil {
		r.rd.stop()
		r.rd = nil
	}
}

// tick plays tick t: planned events, a produce request, a fetch round and
// the consumer's fetch.
func (r *scenarioRun) tick(ctx context.Context, t int) error {
	c, sc := r.c, &r.sc
	if t == sc.CrashLeaderAt {
		if _, err := c.CrashLeader(); err != nil {
			return err
		}
		r.close() // the consumer reconnects to the new leader
	}
	for _, id := range sc.Stops[t] {
		c.Stop(id)
	}
	for _, id := range sc.Restarts[t] {
		if err := c.Restart(id); err != nil {
			return err
		}
	}
	if r.produced < sc.Records && t%max(1, sc.ProduceEvery) == 0 {
		v := []byte("record-" + strconv.FormatInt(c.Leader().LEO(), 10))
		r.res.Calls = append(r.res.Calls, c.Produce([][]byte{v}, sc.Acks))
		r.produced++
	}
	if err := c.Step(); err != nil {
		return err
	}
	if sc.Group == "" {
		return nil
	}
	if c.virtual {
		return r.consumeStep()
	}
	return r.consumeRealTime(ctx)
}

// consumeStep is the consumer's fetch of a virtual-clock tick.
func (r *scenarioRun) consumeStep() error {
	c := r.c
	if r.cons == nil {
		r.offsets = groupOffsets(c.Leader().Dir, c.cfg.Now)
		cons, err := fetch.NewConsumer(c.Leader().Dir, fetch.ConsumerConfig{Group: r.sc.Group, Offsets: r.offsets,
			MaxBytes: fetch.DefaultMaxBytes, PartitionMaxBytes: fetch.DefaultPartitionMaxBytes})
		if err != nil {
			r.offsets.Close()
			return err
		}
		r.cons = cons
	}
	before := r.cons.Position()
	if _, err := c.Consume(r.cons); err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	if r.cons.Position() != before {
		c.Commit(r.cons, r.sc.Group)
		r.res.ConsumerRows = append(r.res.ConsumerRows, ConsumerRow{c.noteRead(before, r.cons.Position()), r.cons.Position()})
	}
	r.readerPos = r.cons.Position()
	return nil
}

// consumeRealTime takes what the reader goroutine fetched since the last
// tick.
func (r *scenarioRun) consumeRealTime(ctx context.Context) error {
	c := r.c
	if r.rd == nil {
		rd, err := startReader(ctx, c.Leader().Dir, r.sc.Group, c.cfg.Now)
		if err != nil {
			return err
		}
		r.rd = rd
	}
	for {
		select {
		case ev := <-r.rd.events:
			if ev.err != nil {
				return fmt.Errorf("consumer: %w", ev.err)
			}
			c.LogConsumerFetch(&ev.fetched, ev.took)
			if ev.after != ev.before {
				c.LogCommit(r.sc.Group, ev.after, ev.commitErr)
				r.res.ConsumerRows = append(r.res.ConsumerRows, ConsumerRow{c.noteRead(ev.before, ev.after), ev.after})
			}
			r.readerPos = ev.after
		default:
			return nil
		}
	}
}

// quiet is the stop condition of a run without Ticks: everything produced
// is committed and answered, every planned event happened, the ISR holds
// every live broker and the consumer has read to the high watermark.
func (r *scenarioRun) quiet(t int) bool {
	c, sc := r.c, &r.sc
	return r.produced == sc.Records && c.HighWatermark() == c.Leader().LEO() && allDone(r.res.Calls) &&
		t >= lastPlanned(sc.Stops, sc.Restarts, sc.CrashLeaderAt) && len(c.ISR()) == c.aliveCount() &&
		(sc.Group == "" || r.readerPos == c.HighWatermark())
}

func allDone(calls []*ProduceCall) bool {
	for _, c := range calls {
		if !c.Done && c.Acks != AcksNone {
			return false
		}
	}
	return true
}

// noteRead adds the table row for a reader's fetch and returns its index.
func (c *Cluster) noteRead(before, after int64) int {
	label := "The reader fetches offsets " + strconv.FormatInt(before, 10) + " to " + strconv.FormatInt(after-1, 10)
	if after-1 == before {
		label = "The reader fetches offset " + strconv.FormatInt(before, 10)
	}
	c.Note(label)
	return len(c.Moments()) - 1
}

// lastPlanned is the last tick with a planned stop, restart or crash.
func lastPlanned(stops, restarts map[int][]int32, crash int) int {
	last := crash
	for t := range stops {
		last = max(last, t)
	}
	for t := range restarts {
		last = max(last, t)
	}
	return last
}

// aliveCount is how many brokers are running.
func (c *Cluster) aliveCount() int {
	n := 0
	for _, b := range c.Brokers() {
		if b.Alive() {
			n++
		}
	}
	return n
}

// Table is the moments table: one row per moment with the leader's log
// end offset, each follower's next fetch, the high watermark and what a
// reader can see, and with a consumer its position.
func (c *Cluster) Table(res *RunResult, consumer bool) (header []string, rows [][]string) {
	header = []string{"Moment", "Leader log end offset"}
	for _, b := range c.Brokers()[1:] {
		header = append(header, "Follower "+c.Name(b.ID)+" next fetch")
	}
	header = append(header, "High watermark", "A reader can see")
	if consumer {
		header = append(header, "Consumer position")
	}
	ci := 0
	lastPos := "0"
	for i, m := range c.Moments() {
		for ci < len(res.ConsumerRows) && res.ConsumerRows[ci].Moment <= i {
			lastPos = strconv.FormatInt(res.ConsumerRows[ci].Position, 10)
			ci++
		}
		row := []string{m.Label, strconv.FormatInt(m.LeaderLEO, 10)}
		row = append(row, m.Followers...)
		row = append(row, strconv.FormatInt(m.HW, 10), m.Visible)
		if consumer {
			row = append(row, lastPos)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// Status is a produce request's outcome for people.
func (p *ProduceCall) Status() string {
	switch {
	case p.Err != nil:
		return p.Err.Error()
	case p.Done:
		return "answered at tick " + strconv.FormatInt(p.DoneTick, 10)
	case p.Acks == AcksNone:
		return "no response (acks=0)"
	case p.Acks == AcksAll:
		return "waiting for the high watermark"
	}
	return "no response (acks=0)"
}

// reader is a consumer long-polling the leader on its own goroutine, as a
// real consumer does concurrently with replication (real-time mode).
type reader struct {
	events chan readEvent
	cancel context.CancelFunc
	done   chan struct{}
}

type readEvent struct {
	before, after int64
	fetched       fetch.Fetched
	took          time.Duration
	commitErr     error
	err           error
}

// groupOffsets is the consumer group's committed offsets: the
// __consumer_offsets partitions of the leader's log dir, as its group
// coordinator would keep them.
func groupOffsets(partDir string, now func() time.Time) *offsetstore.Store {
	return offsetstore.Open(filepath.Dir(filepath.Clean(partDir)), produce.Options{Now: now, Sync: produce.SyncNever})
}

func startReader(ctx context.Context, dir, group string, now func() time.Time) (*reader, error) {
	store := groupOffsets(dir, now)
	cons, err := fetch.NewConsumer(dir, fetch.ConsumerConfig{Group: group, Offsets: store, MaxBytes: fetch.DefaultMaxBytes,
		PartitionMaxBytes: fetch.DefaultPartitionMaxBytes, MinBytes: 1, MaxWait: 500 * time.Millisecond})
	if err != nil {
		store.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &reader{events: make(chan readEvent, 64), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		defer store.Close()
		defer cons.Close()
		for ctx.Err() == nil {
			before := cons.Position()
			start := time.Now()
			_, f, err := cons.Poll(ctx)
			if ctx.Err() != nil {
				return
			}
			ev := readEvent{before: before, after: cons.Position(), took: time.Since(start), err: err}
			if f != nil {
				// Only the frame's length is logged; its bytes belong to
				// the consumer's buffer.
				ev.fetched = *f
			}
			if ev.after != before {
				ev.commitErr = cons.Commit()
			}
			select {
			case r.events <- ev:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r, nil
}

func (r *reader) stop() {
	r.cancel()
	<-r.done
}
