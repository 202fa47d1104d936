// Package replicate runs the produce-to-fetch pipeline of the reference
// texts on real segment files: one leader and N followers, each a partition
// directory (DIR/broker-N/<topic>-<partition>). Followers replicate only
// through their own fetch requests, whose fetch offset is how the leader
// learns what they hold; the leader computes the high watermark as the
// smallest log end offset over the in-sync replicas and writes it to every
// broker's replication-offset-checkpoint. Producers use acks 0, 1 or all;
// consumers fetch bounded by the high watermark.
//
// Time is a clock of ticks: Step advances one tick, in which each follower
// whose turn has come fetches once. With a virtual clock every run is
// reproducible; the CLI can also pace ticks in real time.
package replicate

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
)

// Acks is a producer's acks setting.
type Acks int8

// Acks values as they travel on the wire: all is -1.
const (
	AcksNone   Acks = 0
	AcksLeader Acks = 1
	AcksAll    Acks = -1
)

// ErrNotEnoughReplicas is NOT_ENOUGH_REPLICAS: acks=all with fewer in-sync
// replicas than min.insync.replicas.
var ErrNotEnoughReplicas = errors.New("NOT_ENOUGH_REPLICAS")

// ErrNotEnoughReplicasAfterAppend is NOT_ENOUGH_REPLICAS_AFTER_APPEND: an
// acks=all batch the high watermark passed while the ISR was smaller than
// min.insync.replicas (Partition.checkEnoughReplicasReachOffset). The
// batch is in the log; the producer is told it is not safe.
var ErrNotEnoughReplicasAfterAppend = errors.New("NOT_ENOUGH_REPLICAS_AFTER_APPEND")

// ErrRequestTimedOut is REQUEST_TIMED_OUT: an acks=all produce whose
// batch the high watermark did not pass within the request's timeout
// (DelayedProduce expiring).
var ErrRequestTimedOut = errors.New("REQUEST_TIMED_OUT")

// Kafka error codes (Errors.java).
const (
	codeRequestTimedOut              = 7
	codeNotEnoughReplicas            = 19
	codeNotEnoughReplicasAfterAppend = 20
	defaultProduceTimeout            = 30 * time.Second
)

// Config describes a cluster for one partition.
type Config struct {
	// Dir holds broker-<id>/<topic>-<partition> for every broker.
	Dir       string
	Topic     string
	Partition int32
	// Brokers are the replica ids; the first is the initial leader.
	Brokers []int32
	// MinInsyncReplicas is min.insync.replicas (default 1).
	MinInsyncReplicas int
	// Tick is the virtual duration of one step (default 10ms).
	Tick time.Duration
	// ReplicaLagTimeMax removes a follower that has not caught up for this
	// long from the ISR (replica.lag.time.max.ms, default 30s).
	ReplicaLagTimeMax time.Duration
	// FollowerDelay makes a follower fetch only every delay/Tick ticks.
	FollowerDelay map[int32]time.Duration
	// MaxFetchBytes bounds a follower fetch (replica.fetch.max.bytes).
	MaxFetchBytes int32
	// ProduceTimeout is an acks=all produce's timeoutMs (the producer's
	// request.timeout.ms, default 30s): past it, REQUEST_TIMED_OUT.
	ProduceTimeout time.Duration
	// Now is the wall clock for record timestamps (default: a fixed
	// virtual clock starting at 1700000000000 ms and moving by Tick).
	Now func() time.Time
	// TopicID is the topic's id, which every replica records in its
	// partition.metadata as a cluster's brokers do (default: the id
	// a broker's directory already records, else a new one).
	TopicID [16]byte
}

// Broker is one replica's partition directory.
type Broker struct {
	ID int32
	// epoch is the last leader epoch this replica followed or led.
	epoch   int32
	Dir     string
	app     *produce.Appender // its partition model is app.Log()
	hw      int64
	alive   bool
	writing bool // fetched records not yet acknowledged by a later fetch
}

// LEO is the broker's log end offset.
func (b *Broker) LEO() int64 { return b.app.LogEndOffset() }

// Alive reports whether the broker is running.
func (b *Broker) Alive() bool { return b.alive }

// HW is the broker's high watermark (the leader's, or what it last heard).
func (b *Broker) HW() int64 { return b.hw }

// RPC is one request/response, shaped like a broker request-log line.
type RPC struct {
	Tick        int64          `json:"tick"`
	APIKeyName  string         `json:"requestApiKeyName"`
	ClientID    string         `json:"clientId"`
	Request     map[string]any `json:"request"`
	Response    any            `json:"response"`
	TotalTimeMs float64        `json:"totalTimeMs"`
}

// Moment is a row of the reference text's table.
type Moment struct {
	Tick      int64
	Label     string
	LeaderLEO int64
	// Followers holds, in broker order, the offset each follower's next
	// fetch asks for as the leader knows it, with " (writing it)" when the
	// moment is that follower's fetch returning records.
	Followers []string
	HW        int64
	Visible   string
}

// ProduceCall is an in-flight produce.
type ProduceCall struct {
	Acks       Acks
	BaseOffset int64
	LastOffset int64
	// Done is set once the response is sent (acks=1 at once, acks=all
	// when the high watermark passes LastOffset); acks=0 never has one.
	Done bool
	Err  error
	// DoneTick is when the response was sent.
	DoneTick int64
	sent     int64
}

// Cluster is the running partition.
type Cluster struct {
	cfg      Config
	brokers  []*Broker
	byID     map[int32]*Broker
	leader   *Broker
	epoch    int32
	isr      map[int32]bool
	fetchOff map[int32]int64 // leader's view: each follower's last fetch offset
	caughtUp map[int32]int64 // tick when the follower last caught up
	// leoAtFetch is the leader's log end offset at each follower's
	// previous fetch.
	leoAtFetch map[int32]int64
	nextTurn   map[int32]int64
	tick       int64
	calls      []*ProduceCall
	rpcs       []RPC
	moments    []Moment
	names      map[int32]string
	epochs     []epochEntry
	buf        []byte
	// virtual is set when Config.Now was nil: the cluster runs on its own
	// virtual clock (New fills in Now, so Now != nil says nothing).
	virtual bool
}

type epochEntry struct {
	epoch int32
	start int64
}

// New creates (or reopens) the brokers' directories and elects the first
// broker leader at epoch 0.
func New(cfg Config) (*Cluster, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("replicate: no brokers")
	}
	if cfg.MinInsyncReplicas <= 0 {
		cfg.MinInsyncReplicas = 1
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 10 * time.Millisecond
	}
	if cfg.ProduceTimeout <= 0 {
		cfg.ProduceTimeout = defaultProduceTimeout
	}
	if cfg.ReplicaLagTimeMax <= 0 {
		cfg.ReplicaLagTimeMax = 30 * time.Second
	}
	if cfg.MaxFetchBytes <= 0 {
		cfg.MaxFetchBytes = 1 << 20
	}
	c := &Cluster{cfg: cfg, byID: map[int32]*Broker{}, isr: map[int32]bool{}, fetchOff: map[int32]int64{},
		caughtUp: map[int32]int64{}, nextTurn: map[int32]int64{}, names: map[int32]string{}, leoAtFetch: map[int32]int64{}}
	if c.cfg.Now == nil {
		c.virtual = true
		c.cfg.Now = func() time.Time { return time.UnixMilli(1700000000000).Add(time.Duration(c.tick) * c.cfg.Tick) }
	}
	if c.cfg.TopicID == ([16]byte{}) {
		var err error
		if c.cfg.TopicID, err = clusterTopicID(cfg); err != nil {
			return nil, err
		}
	}
	for i, id := range cfg.Brokers {
		b := &Broker{ID: id, Dir: brokerDir(cfg, id), alive: true}
		app, err := produce.Open(b.Dir, produce.Options{Now: c.cfg.Now, Sync: produce.SyncNever, TopicID: c.cfg.TopicID})
		if err != nil {
			c.Close()
			return nil, err
		}
		b.app = app
		c.brokers = append(c.brokers, b)
		c.byID[id] = b
		if i > 0 {
			c.names[id] = string(rune('A' + i - 1))
			// Followers' fetch loops are out of phase: the i-th
			// follower's first turn is tick i.
			c.nextTurn[id] = int64(i)
		}
	}
	c.leader = c.brokers[0]
	c.epochs = []epochEntry{{0, c.leader.LEO()}}
	for _, b := range c.brokers {
		c.isr[b.ID] = true
		c.caughtUp[b.ID] = 0
		if b != c.leader {
			c.fetchOff[b.ID] = b.LEO()
		}
	}
	c.leader.hw = c.computeHW()
	if err := c.writeCheckpoints(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes every broker's files.
func (c *Cluster) Close() error {
	var err error
	for _, b := range c.brokers {
		if b.app != nil {
			if cerr := b.app.Close(); err == nil {
				err = cerr
			}
			b.app = nil
		}
	}
	return err
}

// Leader is the current leader.
func (c *Cluster) Leader() *Broker { return c.leader }

// Broker returns a broker by id.
func (c *Cluster) Broker(id int32) *Broker { return c.byID[id] }

// Brokers returns the brokers in configuration order.
func (c *Cluster) Brokers() []*Broker { return c.brokers }

// Tick is the current tick.
func (c *Cluster) Tick() int64 { return c.tick }

// HighWatermark is the leader's high watermark.
func (c *Cluster) HighWatermark() int64 { return c.leader.hw }

// ISR lists the in-sync replicas in broker order.
func (c *Cluster) ISR() []int32 {
	var out []int32
	for _, b := range c.brokers {
		if c.isr[b.ID] {
			out = append(out, b.ID)
		}
	}
	return out
}

// RPCs is the request log so far.
func (c *Cluster) RPCs() []RPC { return c.rpcs }

// Moments are the table rows so far.
func (c *Cluster) Moments() []Moment { return c.moments }

// Name is a follower's letter (A, B, ...) in the reference text's table.
func (c *Cluster) Name(id int32) string { return c.names[id] }

// Preload appends n committed records (values "record-0"...) replicated to
// every broker, as a partition that already holds data.
func (c *Cluster) Preload(n int) error {
	for i := 0; i < n; i++ {
		if _, err := c.appendLeader([][]byte{[]byte("record-" + strconv.FormatInt(c.leader.LEO(), 10))}); err != nil {
			return err
		}
	}
	for _, b := range c.brokers {
		if b == c.leader {
			continue
		}
		if err := c.copyFromLeader(b); err != nil {
			return err
		}
		c.fetchOff[b.ID] = b.LEO()
	}
	c.leader.hw = c.computeHW()
	for _, b := range c.brokers {
		b.hw = c.leader.hw
	}
	return c.writeCheckpoints()
}

func (c *Cluster) copyFromLeader(b *Broker) error {
	for b.LEO() < c.leader.LEO() {
		frame, err := c.readFor(b.LEO(), c.cfg.MaxFetchBytes)
		if err != nil {
			return err
		}
		if _, err := c.appendFrame(b, frame); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) appendLeader(values [][]byte) (produce.Result, error) {
	recs := make([]format.Record, len(values))
	for i, v := range values {
		recs[i] = format.Record{Value: v}
	}
	return c.leader.app.Append(&produce.Batch{Records: recs})
}

// Produce sends one ProduceRequest with these values as one batch. acks=0
// gets no response at all; acks=1 is answered after the leader's append;
// acks=all after the high watermark passes the batch, and fails at once with
// NOT_ENOUGH_REPLICAS when the ISR is smaller than min.insync.replicas.
func (c *Cluster) Produce(values [][]byte, acks Acks) *ProduceCall {
	call := &ProduceCall{Acks: acks, BaseOffset: -1, LastOffset: -1, sent: c.tick}
	req := map[string]any{"acks": int(acks), "timeoutMs": c.cfg.ProduceTimeout.Milliseconds(), "topicData": []any{map[string]any{"name": c.cfg.Topic,
		"partitionData": []any{map[string]any{"index": c.cfg.Partition, "recordsCount": len(values)}}}}}
	if acks == AcksAll && len(c.ISR()) < c.cfg.MinInsyncReplicas {
		call.Err, call.Done, call.DoneTick = ErrNotEnoughReplicas, true, c.tick
		c.rpc("PRODUCE", "producer", req, c.produceResponse(call, codeNotEnoughReplicas))
		return call
	}
	res, err := c.appendLeader(values)
	if err != nil {
		call.Err, call.Done, call.DoneTick = err, true, c.tick
		c.rpc("PRODUCE", "producer", req, c.produceResponse(call, -1))
		return call
	}
	call.BaseOffset, call.LastOffset = res.BaseOffset, res.LastOffset
	c.leader.hw = c.computeHW() // a single-replica ISR commits at once
	c.writeCheckpoints()
	label := "Record " + strconv.FormatInt(res.BaseOffset, 10) + " appended on the leader"
	if res.LastOffset > res.BaseOffset {
		label = "Records " + strconv.FormatInt(res.BaseOffset, 10) + " to " + strconv.FormatInt(res.LastOffset, 10) + " appended on the leader"
	}
	c.moment(label, nil, 0)
	switch acks {
	case AcksNone:
		c.rpc("PRODUCE", "producer", req, "")
	case AcksLeader:
		call.Done, call.DoneTick = true, c.tick
		c.rpc("PRODUCE", "producer", req, c.produceResponse(call, 0))
	default:
		c.calls = append(c.calls, call)
		c.completeCalls()
	}
	return call
}

func (c *Cluster) produceResponse(call *ProduceCall, code int) map[string]any {
	return map[string]any{"responses": []any{map[string]any{"name": c.cfg.Topic, "partitionResponses": []any{map[string]any{
		"index": c.cfg.Partition, "errorCode": code, "baseOffset": call.BaseOffset, "logAppendTimeMs": -1,
		"logStartOffset": c.leader.app.LogStartOffset()}}}}, "throttleTimeMs": 0}
}

// completeCalls answers acks=all produces (DelayedProduce): once the HW
// has passed the batch, with NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when
// the ISR is then smaller than min.insync.replicas
// (Partition.checkEnoughReplicasReachOffset); once the request's timeout has
// passed, with REQUEST_TIMED_OUT.
func (c *Cluster) completeCalls() {
	kept := c.calls[:0]
	timeout := int64(c.cfg.ProduceTimeout / c.cfg.Tick)
	for _, call := range c.calls {
		code := -1
		switch {
		case c.leader.hw > call.LastOffset && len(c.ISR()) < c.cfg.MinInsyncReplicas:
			code, call.Err = codeNotEnoughReplicasAfterAppend, ErrNotEnoughReplicasAfterAppend
		case c.leader.hw > call.LastOffset:
			code = 0
		case c.tick-call.sent >= timeout:
			code, call.Err = codeRequestTimedOut, ErrRequestTimedOut
		}
		if code < 0 {
			kept = append(kept, call)
			continue
		}
		call.Done, call.DoneTick = true, c.tick
		req := map[string]any{"acks": -1, "timeoutMs": c.cfg.ProduceTimeout.Milliseconds()}
		r := RPC{Tick: call.sent, APIKeyName: "PRODUCE", ClientID: "producer", Request: req, Response: c.produceResponse(call, code),
			TotalTimeMs: float64(c.tick-call.sent) * float64(c.cfg.Tick.Microseconds()) / 1000}
		c.rpcs = append(c.rpcs, r)
	}
	c.calls = kept
}

func (c *Cluster) rpc(api, client string, req map[string]any, resp any) {
	c.rpcs = append(c.rpcs, RPC{Tick: c.tick, APIKeyName: api, ClientID: client, Request: req, Response: resp})
}

// computeHW is the smallest log end offset over the ISR, as the leader knows
// it: its own, and each in-sync follower's last fetch offset.
func (c *Cluster) computeHW() int64 {
	hw := c.leader.LEO()
	for id := range c.isr {
		if id == c.leader.ID {
			continue
		}
		if off, ok := c.fetchOff[id]; ok && off < hw {
			hw = off
		}
	}
	return max(hw, c.leader.hw)
}

// Step advances one tick: every live follower whose turn has come sends one
// fetch (in broker order), the leader updates the ISR and the high
// watermark, and acks=all produces are answered. It records a Moment when
// anything in the table changed.
func (c *Cluster) Step() error {
	c.tick++
	type fetched struct {
		b       *Broker
		offset  int64
		changed bool
		records int64
		first   int64
	}
	var fs []fetched
	for _, b := range c.brokers {
		if b == c.leader || !b.alive {
			continue
		}
		if c.tick < c.nextTurn[b.ID] {
			continue
		}
		every := int64(1)
		if d, ok := c.cfg.FollowerDelay[b.ID]; ok && d > 0 {
			every = max(1, int64(d/c.cfg.Tick))
		}
		c.nextTurn[b.ID] = c.tick + every
		off := b.LEO()
		prev, known := c.fetchOff[b.ID]
		n, first, err := c.followerFetch(b)
		if err != nil {
			return err
		}
		fs = append(fs, fetched{b: b, offset: off, changed: !known || prev != off, records: n, first: first})
	}
	c.updateISR()
	hw := c.computeHW()
	hwMoved := hw != c.leader.hw
	c.leader.hw = hw
	if hwMoved {
		c.writeCheckpoints()
	}
	c.completeCalls()
	// The table's row for this moment.
	var parts []string
	writing := int32(-1)
	var listed []fetched
	for _, f := range fs {
		if f.changed || f.records > 0 {
			listed = append(listed, f)
		}
	}
	if len(listed) == 1 && listed[0].records > 0 && !listed[0].changed {
		f := listed[0]
		what := "record " + strconv.FormatInt(f.first, 10)
		if f.records > 1 {
			what = "records " + strconv.FormatInt(f.first, 10) + " to " + strconv.FormatInt(f.first+f.records-1, 10)
		}
		parts = append(parts, c.who(f.b.ID)+"'s fetch for offset "+strconv.FormatInt(f.offset, 10)+" returns "+what)
		writing = f.b.ID
	} else {
		for _, f := range listed {
			parts = append(parts, c.who(f.b.ID)+" asks for offset "+strconv.FormatInt(f.offset, 10))
		}
	}
	if len(parts) > 0 || hwMoved {
		label := strings.Join(parts, ", ")
		if label == "" {
			label = "High watermark moves to " + strconv.FormatInt(hw, 10)
		}
		c.moment(label, nil, writing)
	}
	return nil
}

func (c *Cluster) who(id int32) string {
	if n := c.names[id]; n != "" {
		return n
	}
	return "broker " + strconv.Itoa(int(id))
}

// followerFetch is one replica fetch: the request's fetch offset is the
// follower's log end offset; the leader records it, answers with its log
// (bounded by its log end offset) and its high watermark; the follower
// appends the whole batches byte for byte and raises its high watermark.
func (c *Cluster) followerFetch(b *Broker) (records, first int64, err error) {
	off := b.LEO()
	c.fetchOff[b.ID] = off
	// Kafka's rule (Replica.updateFetchStateOrThrow): a follower is caught
	// up when its fetch offset reaches the leader's log end as of its
	// previous fetch, so a follower one fetch behind a busy leader stays
	// in sync.
	if off >= c.leader.LEO() || off >= c.leoAtFetch[b.ID] {
		c.caughtUp[b.ID] = c.tick
	}
	c.leoAtFetch[b.ID] = c.leader.LEO()
	// The leader learns from this request: the ISR and the HW may move
	// before the response is built (Partition.updateFollowerFetchState).
	c.maybeExpandISR(b, off)
	if hw := c.computeHW(); hw != c.leader.hw {
		c.leader.hw = hw
		c.writeCheckpoints()
	}
	frame, err := c.readFor(off, c.cfg.MaxFetchBytes)
	if err != nil {
		return 0, 0, err
	}
	resp := map[string]any{"errorCode": 0, "highWatermark": c.leader.hw, "logStartOffset": c.leader.app.LogStartOffset(),
		"recordsSizeInBytes": len(frame)}
	c.rpc("FETCH", "broker-"+strconv.Itoa(int(b.ID))+"-fetcher",
		map[string]any{"replicaId": b.ID, "maxWaitMs": 500, "minBytes": 1, "topics": []any{map[string]any{"topic": c.cfg.Topic,
			"partitions": []any{map[string]any{"partition": c.cfg.Partition, "fetchOffset": off, "currentLeaderEpoch": c.epoch,
				"partitionMaxBytes": c.cfg.MaxFetchBytes}}}}}, map[string]any{"responses": []any{resp}})
	n, err := c.appendFrame(b, frame)
	if err != nil {
		return 0, 0, err
	}
	b.hw = min(c.leader.hw, b.LEO())
	if n > 0 {
		b.writing = true
	}
	return n, off, c.writeCheckpoint(b)
}

// readFor reads from the leader for a follower at offset.
func (c *Cluster) readFor(offset int64, maxBytes int32) ([]byte, error) {
	if c.leader.app == nil {
		return nil, errors.New("replicate: the leader, broker " + strconv.Itoa(int(c.leader.ID)) + ", is not running")
	}
	// The leader's partition model is its Appender's, current after every
	// append: nothing is opened or read again.
	f, err := fetch.Read(c.leader.app.Log(), fetch.Request{FetchOffset: offset, PartitionMaxBytes: maxBytes, MaxBytes: maxBytes, Replica: true}, c.buf[:0])
	if err != nil {
		return nil, err
	}
	if f.Frame != nil {
		c.buf = f.Frame
	}
	return f.Frame, nil
}

// appendFrame appends the whole batches of a fetched frame.
func (c *Cluster) appendFrame(b *Broker, frame []byte) (int64, error) {
	var n int64
	for batch, err := range format.FrameBatches(frame, 0) {
		if err != nil {
			return n, err
		}
		res, err := b.app.AppendRaw(batch.Raw)
		if err != nil {
			return n, err
		}
		n += res.LastOffset - res.BaseOffset + 1
	}
	return n, nil
}

// updateISR applies replica.lag.time.max (Partition.maybeShrinkIsr): a
// follower that has not caught up with the leader's log end within it
// leaves the ISR.
func (c *Cluster) updateISR() {
	lagTicks := int64(c.cfg.ReplicaLagTimeMax / c.cfg.Tick)
	for _, b := range c.brokers {
		if b != c.leader && c.isr[b.ID] && c.tick-c.caughtUp[b.ID] > lagTicks {
			delete(c.isr, b.ID)
			c.moment(c.who(b.ID)+" (broker "+strconv.Itoa(int(b.ID))+") leaves the ISR: not caught up for "+c.cfg.ReplicaLagTimeMax.String(), nil, -1)
		}
	}
}

// maybeExpandISR adds back a follower whose fetch shows it has reached the
// high watermark (Partition.maybeExpandIsr), on its fetch.
func (c *Cluster) maybeExpandISR(b *Broker, off int64) {
	if !c.isr[b.ID] && off >= c.leader.hw && off >= c.leader.LEO() {
		c.isr[b.ID] = true
		c.caughtUp[b.ID] = c.tick
		c.moment(c.who(b.ID)+" (broker "+strconv.Itoa(int(b.ID))+") rejoins the ISR", nil, -1)
	}
}

// moment appends a table row.
func (c *Cluster) moment(label string, _ []string, writing int32) {
	m := Moment{Tick: c.tick, Label: label, LeaderLEO: c.leader.LEO(), HW: c.leader.hw}
	for _, b := range c.brokers {
		if b == c.leader {
			continue
		}
		s := strconv.FormatInt(c.fetchOff[b.ID], 10)
		if b.ID == writing {
			s += " (writing it)"
		}
		m.Followers = append(m.Followers, s)
	}
	switch {
	case c.leader.hw <= c.leader.app.LogStartOffset():
		m.Visible = "nothing"
	case c.leader.hw-1 == c.leader.app.LogStartOffset():
		m.Visible = "offset " + strconv.FormatInt(c.leader.hw-1, 10)
	default:
		m.Visible = "offsets " + strconv.FormatInt(c.leader.app.LogStartOffset(), 10) + " to " + strconv.FormatInt(c.leader.hw-1, 10)
	}
	c.moments = append(c.moments, m)
}

// writeCheckpoints writes every live broker's replication-offset-checkpoint
// (its high watermark), as brokers do.
func (c *Cluster) writeCheckpoints() error {
	for _, b := range c.brokers {
		if b == c.leader {
			b.hw = c.leader.hw
		}
		if err := c.writeCheckpoint(b); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) writeCheckpoint(b *Broker) error {
	if !b.alive {
		return nil
	}
	if err := partition.UpdateCheckpointOffsets(filepath.Dir(b.Dir), partition.ReplicationCheckpoint,
		[]format.OffsetEntry{{Topic: c.cfg.Topic, Partition: c.cfg.Partition, Offset: b.hw}}, partition.WriteOptions{}); err != nil {
		return err
	}
	// Only the entries this replica holds.
	var held []format.EpochEntry
	for _, e := range c.epochs {
		if e.start <= b.LEO() {
			held = append(held, format.EpochEntry{Epoch: e.epoch, StartOffset: e.start})
		}
	}
	le := format.AppendLeaderEpochCheckpoint(nil, held)
	return partition.WriteFileAtomic(filepath.Join(b.Dir, partition.LeaderEpochCheckpoint), le, partition.WriteOptions{})
}

// CrashLeader stops the leader (its directory stays as it was) and elects
// the first in-sync follower at the next leader epoch. The new leader keeps
// its log; the other followers truncate to it when they diverge (Kafka's
// leader-epoch truncation, KIP-101), which is how records the old leader
// had alone (acks=1, above the high watermark) are lost.
func (c *Cluster) CrashLeader() (*Broker, error) {
	old := c.leader
	old.alive = false
	if old.app != nil {
		old.app.Close()
		old.app = nil
	}
	var next *Broker
	for _, b := range c.brokers {
		if b != old && b.alive && c.isr[b.ID] {
			next = b
			break
		}
	}
	if next == nil {
		return nil, errors.New("replicate: no in-sync replica to elect")
	}
	c.epoch++
	c.epochs = append(c.epochs, epochEntry{c.epoch, next.LEO()})
	c.leader = next
	if err := next.app.SetLeaderEpoch(c.epoch); err != nil {
		return nil, err
	}
	next.epoch = c.epoch
	delete(c.isr, old.ID)
	delete(c.fetchOff, next.ID)
	for _, b := range c.brokers {
		if b != next && b.alive {
			if err := c.truncateFollower(b); err != nil {
				return nil, err
			}
		}
	}
	// The new leader's HW starts at what it knew and moves as followers fetch.
	c.leader.hw = c.computeHW()
	c.rpc("LEADER_AND_ISR", "controller", map[string]any{"leader": next.ID, "leaderEpoch": c.epoch, "isr": c.ISR()}, map[string]any{"errorCode": 0})
	c.moment("Broker "+strconv.Itoa(int(old.ID))+" fails; broker "+strconv.Itoa(int(next.ID))+" leads at epoch "+strconv.Itoa(int(c.epoch)), nil, -1)
	return next, c.writeCheckpoints()
}

// truncateFollower cuts a follower's log where it diverges from the
// leader's, by Kafka's leader-epoch rule (KIP-101/KIP-279,
// partition.FollowerTruncation): the follower's history is the cluster's
// epochs up to the last one it followed or led, as far as its log reaches.
func (c *Cluster) truncateFollower(b *Broker) error {
	end := partition.FollowerTruncation(c.epochCache(c.epoch, c.leader.LEO()), c.leader.LEO(), c.epochCache(b.epoch, b.LEO()), b.LEO(), b.hw)
	b.epoch = c.epoch
	if b.LEO() > end {
		if _, err := b.app.TruncateTo(end); err != nil {
			return err
		}
	}
	c.fetchOff[b.ID] = b.LEO()
	return nil
}

// epochCache is the leader-epoch cache of a replica that knows epochs up to
// epoch and holds offsets below leo.
func (c *Cluster) epochCache(epoch int32, leo int64) []format.EpochEntry {
	var out []format.EpochEntry
	for _, e := range c.epochs {
		if e.epoch <= epoch && e.start <= leo {
			out = append(out, format.EpochEntry{Epoch: e.epoch, StartOffset: e.start})
		}
	}
	return out
}

// brokerDir is broker id's replica of the partition.
func brokerDir(cfg Config, id int32) string {
	return filepath.Join(cfg.Dir, "broker-"+strconv.Itoa(int(id)), cfg.Topic+"-"+strconv.Itoa(int(cfg.Partition)))
}

// clusterTopicID is the id the first broker's partition.metadata records,
// or a new one: replicas of one partition share their topic's id.
func clusterTopicID(cfg Config) ([16]byte, error) {
	for _, id := range cfg.Brokers {
		tid, ok, err := partition.ReadTopicID(brokerDir(cfg, id))
		if err != nil || ok {
			return tid, err
		}
	}
	return partition.NewTopicID()
}

// Restart brings a stopped broker back as a follower: it truncates to the
// leader's log end offset where it diverges, then fetches like the others.
func (c *Cluster) Restart(id int32) error {
	b := c.byID[id]
	if b == nil || b.alive {
		return nil
	}
	app, err := produce.Open(b.Dir, produce.Options{Now: c.cfg.Now, Sync: produce.SyncNever, TopicID: c.cfg.TopicID})
	if err != nil {
		return err
	}
	b.app, b.alive = app, true
	if err := c.truncateFollower(b); err != nil {
		return err
	}
	c.caughtUp[id] = c.tick
	return c.writeCheckpoint(b)
}

// Stop stops a follower (it no longer fetches; the ISR drops it after
// replica.lag.time.max).
func (c *Cluster) Stop(id int32) {
	if b := c.byID[id]; b != nil && b != c.leader {
		b.alive = false
		b.app.Close()
		b.app = nil
	}
}

// Consume reads from the leader bounded by the high watermark.
func (c *Cluster) Consume(cons *fetch.Consumer) ([]fetch.Record, error) {
	recs, f, err := cons.Poll(context.Background())
	if f != nil {
		c.LogConsumerFetch(f, 0)
	}
	return recs, err
}

// LogConsumerFetch records a consumer's FETCH in the request log (for a
// consumer polling on its own goroutine, which must not touch the cluster).
func (c *Cluster) LogConsumerFetch(f *fetch.Fetched, took time.Duration) {
	resp := map[string]any{"errorCode": 0, "highWatermark": f.HighWatermark, "lastStableOffset": f.LastStableOffset,
		"logStartOffset": f.LogStartOffset, "recordsSizeInBytes": len(f.Frame)}
	c.rpc("FETCH", "consumer", map[string]any{"replicaId": -1, "fetchOffset": f.FetchOffset, "isolationLevel": int(f.Isolation)},
		map[string]any{"responses": []any{resp}})
	c.rpcs[len(c.rpcs)-1].TotalTimeMs = float64(took.Microseconds()) / 1000
}

// Commit commits a consumer's position.
func (c *Cluster) Commit(cons *fetch.Consumer, group string) error {
	err := cons.Commit()
	c.LogCommit(group, cons.Position(), err)
	return err
}

// LogCommit records an OFFSET_COMMIT in the request log.
func (c *Cluster) LogCommit(group string, offset int64, err error) {
	code := 0
	if err != nil {
		code = -1
	}
	c.rpc("OFFSET_COMMIT", "consumer", map[string]any{"groupId": group, "topics": []any{map[string]any{"name": c.cfg.Topic,
		"partitions": []any{map[string]any{"partitionIndex": c.cfg.Partition, "committedOffset": offset}}}}},
		map[string]any{"topics": []any{map[string]any{"name": c.cfg.Topic, "partitions": []any{map[string]any{"partitionIndex": c.cfg.Partition, "errorCode": code}}}}})
}

// Note records a table row for an event outside the cluster's own steps (a
// consumer's fetch, say), with the current offsets.
func (c *Cluster) Note(label string) { c.moment(label, nil, -1) }
