package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/replicate"
	"github.com/urfave/cli/v2"
)

var (
	replDirFlag     = &cli.StringFlag{Name: "dir", Usage: "cluster directory: broker-<id>/<topic>-<partition> per broker", Required: true}
	replBrokersFlag = &cli.StringFlag{Name: "brokers", Value: "1,2,3", Usage: "replica broker ids; the first leads"}
	replTopicFlag   = &cli.StringFlag{Name: "topic", Value: "orders", Usage: "topic name"}
	replPartFlag    = &cli.IntFlag{Name: "partition", Value: 0, Usage: "partition number"}
	replPreloadFlag = &cli.IntFlag{Name: "preload", Value: 0, Usage: "records already committed on every replica before the run"}
	replRecordsFlag = &cli.IntFlag{Name: "records", Value: 1, Usage: "records to produce, one per produce request"}
	replEveryFlag   = &cli.IntFlag{Name: "produce-every", Value: 1, Usage: "ticks between produce requests"}
	replAcksFlag    = &cli.StringFlag{Name: "acks", Value: "all", Usage: "0, 1 or all"}
	replMinISRFlag  = &cli.IntFlag{Name: "min-insync-replicas", Value: 1, Usage: "min.insync.replicas for acks=all"}
	replLagFlag     = &cli.DurationFlag{Name: "replica-lag-time-max", Value: 30 * time.Second, Usage: "replica.lag.time.max.ms"}
	replDelayFlag   = &cli.StringSliceFlag{Name: "follower-delay", Usage: "broker=duration: that follower fetches only this often (repeatable)"}
	replTickFlag    = &cli.DurationFlag{Name: "tick", Value: 10 * time.Millisecond, Usage: "one fetch round"}
	replTicksFlag   = &cli.IntFlag{Name: "ticks", Value: 0, Usage: "rounds to run (default: until everything produced is committed and read)"}
	replStepFlag    = &cli.BoolFlag{Name: "step", Usage: "deterministic: a virtual clock, no waiting (reproducible output)"}
	replJSONFlag    = &cli.BoolFlag{Name: "json", Usage: "one line per RPC, shaped like Kafka's request log"}
	replGroupFlag   = &cli.StringFlag{Name: "consumer-group", Usage: "run a consumer in this group that fetches every tick, bounded by the HW, and commits"}
	replStopFlag    = &cli.StringSliceFlag{Name: "stop", Usage: "ID@TICK: stop that follower at that tick (repeatable)"}
	replRestartFlag = &cli.StringSliceFlag{Name: "restart", Usage: "ID@TICK: restart a stopped broker at that tick; it truncates where it diverges and catches up (repeatable)"}
	replCrashFlag   = &cli.IntFlag{Name: "crash-leader-at", Value: -1, Usage: "stop the leader at this tick and elect an in-sync follower"}
)

var replicateCommand = &cli.Command{
	Name:  "replicate",
	Usage: "run the produce-to-fetch pipeline: a leader, followers that fetch, the high watermark, acks",
	Description: `Each broker is a partition directory under --dir. Followers replicate only
through their own fetch requests; the leader learns their log end offsets from
the fetch offsets, sets the high watermark to the smallest over the ISR and
writes it to each broker's replication-offset-checkpoint (so klog tail and
klog offsets show it move). Producers use acks 0, 1 or all. Prints the moments
table (one row per change) and a line per produce request; --format tsv prints
them as tab-separated values under a header (the produce lines as # comments),
--format json (or --json) one line per RPC.`,
	Flags: []cli.Flag{replDirFlag, replBrokersFlag, replTopicFlag, replPartFlag, replPreloadFlag, replRecordsFlag, replEveryFlag,
		replAcksFlag, replMinISRFlag, replLagFlag, replDelayFlag, replTickFlag, replTicksFlag, replStepFlag, replJSONFlag,
		replGroupFlag, replCrashFlag, replStopFlag, replRestartFlag, formatFlag},
	Action: runReplicate,
}

func runReplicate(c *cli.Context) error {
	outFormat, err := outputFormat(c, replJSONFlag.Name)
	if err != nil {
		return err
	}
	var brokers []int32
	for _, s := range strings.Split(c.String(replBrokersFlag.Name), ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return usageError("replicate: bad --brokers %q", c.String(replBrokersFlag.Name))
		}
		brokers = append(brokers, int32(v))
	}
	var acks replicate.Acks
	switch c.String(replAcksFlag.Name) {
	case "0":
		acks = replicate.AcksNone
	case "1":
		acks = replicate.AcksLeader
	case "all", "-1":
		acks = replicate.AcksAll
	default:
		return usageError("replicate: --acks must be 0, 1 or all")
	}
	delays := map[int32]time.Duration{}
	for _, d := range c.StringSlice(replDelayFlag.Name) {
		id, dur, ok := strings.Cut(d, "=")
		v, err1 := strconv.ParseInt(id, 10, 32)
		dd, err2 := time.ParseDuration(dur)
		if !ok || err1 != nil || err2 != nil {
			return usageError("replicate: --follower-delay takes broker=duration, got %q", d)
		}
		delays[int32(v)] = dd
	}
	stops, err := parseAt(c.StringSlice(replStopFlag.Name), "--stop")
	if err != nil {
		return err
	}
	restarts, err := parseAt(c.StringSlice(replRestartFlag.Name), "--restart")
	if err != nil {
		return err
	}
	tick := c.Duration(replTickFlag.Name)
	cfg := replicate.Config{Dir: c.String(replDirFlag.Name), Topic: c.String(replTopicFlag.Name), Partition: int32(c.Int(replPartFlag.Name)),
		Brokers: brokers, MinInsyncReplicas: c.Int(replMinISRFlag.Name), Tick: tick,
		ReplicaLagTimeMax: c.Duration(replLagFlag.Name), FollowerDelay: delays}
	step := c.Bool(replStepFlag.Name)
	if !step {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
	}
	cl, err := replicate.New(cfg)
	if err != nil {
		return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
	}
	defer cl.Close()
	if err := cl.Preload(c.Int(replPreloadFlag.Name)); err != nil {
		return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
	}
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	jsonOut := outFormat == "json"
	enc := json.NewEncoder(out)
	rpcSeen := len(cl.RPCs())
	flushRPCs := func() {
		for _, r := range cl.RPCs()[rpcSeen:] {
			if jsonOut {
				enc.Encode(r)
			}
		}
		rpcSeen = len(cl.RPCs())
		out.Flush()
	}
	var cons *fetch.Consumer
	var rd *reader
	readerPos := int64(-1)
	group := c.String(replGroupFlag.Name)
	type consRow struct {
		moment int
		pos    int64
	}
	var consRows []consRow
	records, every := c.Int(replRecordsFlag.Name), max(1, c.Int(replEveryFlag.Name))
	maxTicks := c.Int(replTicksFlag.Name)
	limit := maxTicks
	if limit <= 0 {
		limit = 100000
	}
	produced := 0
	var calls []*replicate.ProduceCall
	crashAt := c.Int(replCrashFlag.Name)
	for t := 0; t < limit; t++ {
		if c.Context.Err() != nil {
			break
		}
		if t == crashAt {
			if _, err := cl.CrashLeader(); err != nil {
				return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
			}
			if cons != nil {
				cons.Close()
				cons = nil
			}
			if rd != nil {
				rd.stop()
				rd = nil
			}
		}
		for _, id := range stops[t] {
			cl.Stop(id)
		}
		for _, id := range restarts[t] {
			if err := cl.Restart(id); err != nil {
				return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
			}
		}
		if produced < records && t%every == 0 {
			v := []byte("record-" + strconv.FormatInt(cl.Leader().LEO(), 10))
			calls = append(calls, cl.Produce([][]byte{v}, acks))
			produced++
		}
		if err := cl.Step(); err != nil {
			return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
		}
		if group != "" && step {
			if cons == nil {
				cons, err = fetch.NewConsumer(cl.Leader().Dir, fetch.ConsumerConfig{Group: group, StartOffset: -1, HighWatermark: -1})
				if err != nil {
					return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
				}
			}
			before := cons.Position()
			if _, err := cl.Consume(cons); err != nil {
				return &exitError{code: ExitTrouble, msg: "replicate: consumer: " + err.Error()}
			}
			if cons.Position() != before {
				cl.Commit(cons, group)
				consRows = append(consRows, consRow{noteRead(cl, before, cons.Position()), cons.Position()})
			}
			readerPos = cons.Position()
		}
		if group != "" && !step {
			if rd == nil {
				rd, err = startReader(c.Context, cl.Leader().Dir, group)
				if err != nil {
					return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
				}
			}
		drain:
			for {
				select {
				case ev := <-rd.events:
					if ev.err != nil {
						return &exitError{code: ExitTrouble, msg: "replicate: consumer: " + ev.err.Error()}
					}
					cl.LogConsumerFetch(&ev.fetched, ev.took)
					if ev.after != ev.before {
						cl.LogCommit(group, ev.after, ev.commitErr)
						consRows = append(consRows, consRow{noteRead(cl, ev.before, ev.after), ev.after})
					}
					readerPos = ev.after
				default:
					break drain
				}
			}
		}
		flushRPCs()
		if !step {
			time.Sleep(tick)
		}
		if maxTicks <= 0 && produced == records && cl.HighWatermark() == cl.Leader().LEO() && allDone(calls) &&
			t >= lastPlanned(stops, restarts, crashAt) && len(cl.ISR()) == aliveCount(cl) &&
			(group == "" || readerPos == cl.HighWatermark()) {
			break
		}
	}
	if cons != nil {
		cons.Close()
	}
	if rd != nil {
		rd.stop()
	}
	flushRPCs()
	if jsonOut {
		return nil
	}
	header := []string{"Moment", "Leader log end offset"}
	for _, b := range cl.Brokers()[1:] {
		name := "Follower " + cl.Name(b.ID)
		header = append(header, name+" next fetch")
	}
	header = append(header, "High watermark", "A reader can see")
	if group != "" {
		header = append(header, "Consumer position")
	}
	var rows [][]string
	ci := 0
	lastPos := "0"
	for i, m := range cl.Moments() {
		for ci < len(consRows) && consRows[ci].moment <= i {
			lastPos = strconv.FormatInt(consRows[ci].pos, 10)
			ci++
		}
		r := []string{m.Label, strconv.FormatInt(m.LeaderLEO, 10)}
		r = append(r, m.Followers...)
		r = append(r, strconv.FormatInt(m.HW, 10), m.Visible)
		if group != "" {
			r = append(r, lastPos)
		}
		rows = append(rows, r)
	}
	table := styled(c, out, outFormat)
	if err := dump.WriteTable(table, header, rows); err != nil {
		return &exitError{code: ExitTrouble, msg: "replicate: " + err.Error()}
	}
	for i, call := range calls {
		status := "no response (acks=0)"
		switch {
		case call.Err != nil:
			status = call.Err.Error()
		case call.Done:
			status = fmt.Sprintf("answered at tick %d", call.DoneTick)
		case call.Acks == replicate.AcksAll:
			status = "waiting for the high watermark"
		}
		fmt.Fprintf(table, "produce %d: offset %d: %s\n", i+1, call.BaseOffset, status)
	}
	return nil
}

func allDone(calls []*replicate.ProduceCall) bool {
	for _, c := range calls {
		if !c.Done && c.Acks != replicate.AcksNone {
			return false
		}
	}
	return true
}

// noteRead adds the table row for a reader's fetch and returns its index.
func noteRead(cl *replicate.Cluster, before, after int64) int {
	label := "The reader fetches offsets " + strconv.FormatInt(before, 10) + " to " + strconv.FormatInt(after-1, 10)
	if after-1 == before {
		label = "The reader fetches offset " + strconv.FormatInt(before, 10)
	}
	cl.Note(label)
	return len(cl.Moments()) - 1
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

func startReader(ctx context.Context, dir, group string) (*reader, error) {
	cons, err := fetch.NewConsumer(dir, fetch.ConsumerConfig{Group: group, StartOffset: -1, HighWatermark: -1,
		MinBytes: 1, MaxWait: 500 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &reader{events: make(chan readEvent, 64), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
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

// parseAt reads ID@TICK values into tick -> broker ids.
func parseAt(vals []string, flag string) (map[int][]int32, error) {
	out := map[int][]int32{}
	for _, v := range vals {
		id, at, ok := strings.Cut(v, "@")
		i, err1 := strconv.ParseInt(id, 10, 32)
		t, err2 := strconv.Atoi(at)
		if !ok || err1 != nil || err2 != nil || t < 0 {
			return nil, usageError("replicate: %s takes ID@TICK, got %q", flag, v)
		}
		out[t] = append(out[t], int32(i))
	}
	return out, nil
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
func aliveCount(cl *replicate.Cluster) int {
	n := 0
	for _, b := range cl.Brokers() {
		if b.Alive() {
			n++
		}
	}
	return n
}
