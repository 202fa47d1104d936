package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
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
	replFormatFlag  = &cli.StringFlag{Name: "format", Value: "table", Usage: "table (the moments, fitted to the terminal), tsv, json (as --json) or mermaid (the run as a Mermaid sequence diagram)"}
	replTimeoutFlag = &cli.DurationFlag{Name: "request-timeout", Value: 30 * time.Second, Usage: "an acks=all produce's timeout (request.timeout.ms): past it, REQUEST_TIMED_OUT"}
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
--format json (or --json) one line per RPC, --format mermaid the run as a
Mermaid sequence diagram: producer, leader, followers, consumer and group
coordinator; ProduceRequest, each FetchRequest with its fetch offset, each
FetchResponse with the high watermark, OffsetCommit; a note per tick.`,
	Flags: []cli.Flag{replDirFlag, replBrokersFlag, replTopicFlag, replPartFlag, replPreloadFlag, replRecordsFlag, replEveryFlag,
		replAcksFlag, replMinISRFlag, replLagFlag, replDelayFlag, replTickFlag, replTicksFlag, replStepFlag, replJSONFlag,
		replGroupFlag, replCrashFlag, replStopFlag, replRestartFlag, replTimeoutFlag, replFormatFlag},
	Action: runReplicate,
}

func runReplicate(c *cli.Context) error {
	outFormat, err := replicateFormat(c)
	if err != nil {
		return err
	}
	cfg, sc, err := replicateConfig(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fail("replicate", err)
	}
	cl, err := replicate.New(cfg)
	if err != nil {
		return fail("replicate", err)
	}
	defer cl.Close()
	if err := cl.Preload(c.Int(replPreloadFlag.Name)); err != nil {
		return fail("replicate", err)
	}
	out := bufio.NewWriter(c.App.Writer)
	defer out.Flush()
	jsonOut := outFormat == "json"
	rpcSeen := len(cl.RPCs())
	sc.AfterTick = func() {
		for _, r := range cl.RPCs()[rpcSeen:] {
			if jsonOut {
				writeJSONLine(out, "rpc", r)
			}
		}
		rpcSeen = len(cl.RPCs())
		out.Flush()
	}
	res, err := cl.Run(c.Context, sc)
	sc.AfterTick()
	if err != nil {
		return fail("replicate", err)
	}
	if jsonOut {
		return nil
	}
	if outFormat == "mermaid" {
		return cl.WriteMermaid(out, cfg.Tick)
	}
	header, rows := cl.Table(res, sc.Group != "")
	table := styled(c, out, outFormat)
	if err := dump.WriteTable(table, header, rows); err != nil {
		return fail("replicate", err)
	}
	for i, call := range res.Calls {
		fmt.Fprintf(table, "produce %d: offset %d: %s\n", i+1, call.BaseOffset, call.Status())
	}
	return nil
}

// replicateFormat is outputFormat with replicate's mermaid besides.
func replicateFormat(c *cli.Context) (string, error) {
	if c.String(replFormatFlag.Name) != "mermaid" {
		return outputFormat(c, replJSONFlag.Name)
	}
	if c.Bool(replJSONFlag.Name) {
		return "", usageError("replicate: --json and --format mermaid exclude each other")
	}
	return "mermaid", nil
}

// replicateConfig reads the flags into the cluster's configuration and the
// scenario to run.
func replicateConfig(c *cli.Context) (replicate.Config, replicate.Scenario, error) {
	var cfg replicate.Config
	var sc replicate.Scenario
	for _, s := range strings.Split(c.String(replBrokersFlag.Name), ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return cfg, sc, usageError("replicate: bad --brokers %q", c.String(replBrokersFlag.Name))
		}
		cfg.Brokers = append(cfg.Brokers, int32(v))
	}
	acks, err := replicate.ParseAcks(c.String(replAcksFlag.Name))
	if err != nil {
		return cfg, sc, usageError("replicate: --%s: %v", replAcksFlag.Name, err)
	}
	delays := map[int32]time.Duration{}
	for _, d := range c.StringSlice(replDelayFlag.Name) {
		id, dur, ok := strings.Cut(d, "=")
		v, err1 := strconv.ParseInt(id, 10, 32)
		dd, err2 := time.ParseDuration(dur)
		if !ok || err1 != nil || err2 != nil {
			return cfg, sc, usageError("replicate: --follower-delay takes broker=duration, got %q", d)
		}
		delays[int32(v)] = dd
	}
	stops, err := replicate.ParseAt(c.StringSlice(replStopFlag.Name))
	if err != nil {
		return cfg, sc, usageError("replicate: --stop: %v", err)
	}
	restarts, err := replicate.ParseAt(c.StringSlice(replRestartFlag.Name))
	if err != nil {
		return cfg, sc, usageError("replicate: --restart: %v", err)
	}
	cfg.Dir, cfg.Topic, cfg.Partition = c.String(replDirFlag.Name), c.String(replTopicFlag.Name), int32(c.Int(replPartFlag.Name))
	if cfg.Dir == "-" {
		return cfg, sc, usageError("replicate: --dir -: the cluster is a directory, never a stream; give a DIR")
	}
	cfg.MinInsyncReplicas, cfg.Tick = c.Int(replMinISRFlag.Name), c.Duration(replTickFlag.Name)
	cfg.ReplicaLagTimeMax, cfg.FollowerDelay = c.Duration(replLagFlag.Name), delays
	cfg.ProduceTimeout = c.Duration(replTimeoutFlag.Name)
	if !c.Bool(replStepFlag.Name) {
		cfg.Now = time.Now
	}
	sc = replicate.Scenario{Records: c.Int(replRecordsFlag.Name), ProduceEvery: c.Int(replEveryFlag.Name), Acks: acks,
		Ticks: c.Int(replTicksFlag.Name), Stops: stops, Restarts: restarts, CrashLeaderAt: c.Int(replCrashFlag.Name),
		Group: c.String(replGroupFlag.Name)}
	return cfg, sc, replicateCheck(c, cfg, sc)
}

// replicateCheck refuses what no cluster is (a broker id twice or below 0,
// min.insync.replicas 0, a zero tick) and flags naming a broker that is not
// in --brokers: before, a negative --records ran forever and a delay or
// stop for an unknown broker was dropped without a word. (The first broker
// may be delayed, stopped or restarted: after --crash-leader-at it follows.)
func replicateCheck(c *cli.Context, cfg replicate.Config, sc replicate.Scenario) error {
	if err := int32Flags(c, replPartFlag.Name, replPreloadFlag.Name, replRecordsFlag.Name, replTicksFlag.Name); err != nil {
		return err
	}
	known := map[int32]bool{}
	for _, b := range cfg.Brokers {
		switch {
		case b < 0:
			return usageError("replicate: --brokers: broker id %d is negative", b)
		case known[b]:
			return usageError("replicate: --brokers: broker %d is given twice", b)
		}
		known[b] = true
	}
	switch {
	case sc.ProduceEvery < 1:
		return usageError("replicate: --produce-every must be at least 1, got %d", sc.ProduceEvery)
	case cfg.MinInsyncReplicas < 1:
		return usageError("replicate: --min-insync-replicas must be at least 1 (Kafka's min.insync.replicas), got %d", cfg.MinInsyncReplicas)
	case cfg.Tick <= 0:
		return usageError("replicate: --tick must be positive, got %v", cfg.Tick)
	case sc.CrashLeaderAt < -1:
		return usageError("replicate: --crash-leader-at must be a tick (0 or more) or -1 for never, got %d", sc.CrashLeaderAt)
	}
	for b, d := range cfg.FollowerDelay {
		if !known[b] || d < 0 {
			return usageError("replicate: --follower-delay %d=%v: want a broker of --brokers %s and a duration of 0 or more",
				b, d, c.String(replBrokersFlag.Name))
		}
	}
	for flag, at := range map[string]map[int][]int32{replStopFlag.Name: sc.Stops, replRestartFlag.Name: sc.Restarts} {
		for _, ids := range at {
			for _, b := range ids {
				if !known[b] {
					return usageError("replicate: --%s %d@...: broker %d is not one of --brokers %s", flag, b, b, c.String(replBrokersFlag.Name))
				}
			}
		}
	}
	return nil
}
