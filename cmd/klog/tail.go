package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/tail"
	"github.com/urfave/cli/v2"
)

var (
	tailJSONFlag    = &cli.BoolFlag{Name: "json", Aliases: []string{"J"}, Usage: "one JSON object per event per line (type, topic, partition, logEndOffset, highWatermark, time, ...)"}
	tailTableFlag   = &cli.BoolFlag{Name: "table", Usage: "a live table, one row per partition: LEO, HW, LEO−HW, last batch, batches/s"}
	tailBeginFlag   = &cli.BoolFlag{Name: "from-beginning", Usage: "report the batches already there first, as --from earliest"}
	tailFromFlag    = &cli.StringFlag{Name: "from", Aliases: []string{"o"}, Usage: "where to start: latest (the end; the default), earliest, N (the batches holding offsets from N) or -N (the batches holding the last N offsets), reported before new ones; with one partition also s@T or @T (the first offset at time T) and stored (--group's commit)"}
	tailDataFlag    = &cli.BoolFlag{Name: "print-data-log", Usage: "print every record of each new batch, with keys and values"}
	tailTimeoutFlag = &cli.DurationFlag{Name: "timeout", Usage: "stop after this long (default: until interrupted)"}
)

var tailCommand = &cli.Command{
	Name:      "tail",
	Usage:     "watch partitions live: new batches, log end offset, high watermark, rolls, deletions, truncations",
	ArgsUsage: "PATH...",
	Description: `Each PATH is a partition directory or a log directory (every partition in it,
and those that appear later). Prints, as they happen: each new batch (the
kafka-dump-log batch line after the partition name; its records with
--print-data-log), log end offset and high watermark changes with the gap
between them (records consumers cannot see yet; the high watermark is the
partition's entry in the log dir's replication-offset-checkpoint), segment
rolls, deletions and truncations, partitions appearing and disappearing.
--json prints one event object per line; --table a live table, redrawn in
place on a terminal and printed as snapshots otherwise. Watches directories
with inotify (one watch per directory; see fs.inotify.max_user_watches) and
never polls. Exit status 0 on --timeout (or -c N), 1 then if a record printed
did not decode as --key-format/--value-format asks (each said on stderr as it
came), 130 on Ctrl-C (143 on SIGTERM), 2 on trouble (an unreadable partition
is reported and the others followed).`,
	Flags: append([]cli.Flag{tailJSONFlag, tailTableFlag, tailFromFlag, tailBeginFlag, tailDataFlag, tailTimeoutFlag, keyEncFlag, valueEncFlag,
		groupFlag}, recordPayloadFlags...),
	Action: runTail,
}

// tailOptions reads where to start (--from-beginning, --from); a time or
// stored is resolved against the one partition directory of paths.
func tailOptions(c *cli.Context, paths []string) (tail.Options, error) {
	opts := tail.Options{FromBeginning: c.Bool(tailBeginFlag.Name)}
	if c.IsSet(tailFromFlag.Name) {
		o, err := parseOffset(c.String(tailFromFlag.Name))
		if err != nil {
			return opts, usageError("tail: --from: %v", err)
		}
		if opts.FromBeginning && o.kind != offsetEarliest {
			return opts, usageError("tail: --from-beginning and --from %s exclude each other", o)
		}
		if o.kind == offsetTime || o.kind == offsetStored {
			var err error
			if o, err = tailResolve(c, o, paths); err != nil {
				return opts, err
			}
		}
		switch o.kind {
		case offsetEarliest:
			opts.FromBeginning = true
		case offsetLast:
			opts.FromLast = o.n
		case offsetAbsolute:
			opts.FromOffset = o.n
			opts.FromBeginning = o.n == 0
		}
	}
	return opts, nil
}

// tailResolve turns --from s@T or stored into the offset it names in the
// one partition directory given.
func tailResolve(c *cli.Context, o offsetSpec, paths []string) (offsetSpec, error) {
	if len(paths) != 1 {
		return o, usageError("tail: --from %s is read in one partition directory; %d paths given", o, len(paths))
	}
	if !partition.IsPartitionDir(paths[0]) {
		// One path, but a log dir (or no partition): "1 paths given" did
		// not say what was wrong with it.
		return o, usageError("tail: --from %s is read in one partition directory; %s is not one (give DIR/TOPIC-N, or -t TOPIC -p N)", o, paths[0])
	}
	off, err := o.resolveIn(paths[0], c.String(groupFlag.Name))
	switch {
	case errors.Is(err, errStoredNeedsGroup):
		return o, usageError("tail: --from: %v", err)
	case err != nil:
		return o, fail("tail", err)
	}
	return offsetSpec{kind: offsetAbsolute, n: off}, nil
}

// newTailRenderer is the renderer the flags ask for.
func newTailRenderer(c *cli.Context, out *bufio.Writer, paths []string) (tail.Renderer, *payload.View, error) {
	view, err := payloadView(c, paths, c.Bool(tailJSONFlag.Name))
	if err != nil {
		return nil, nil, err
	}
	switch {
	case c.Bool(tailJSONFlag.Name):
		opts, err := recordOptions(c, true)
		if err != nil {
			return nil, nil, err
		}
		return tail.NewJSONView(out, c.Bool(tailDataFlag.Name), opts, view), view, nil
	case c.Bool(tailTableFlag.Name):
		if view != nil {
			return nil, nil, usageError("tail: --table shows partitions, not records: the payload flags (-f, --where, -c, --value-format) go without it")
		}
		return tail.NewTable(out, isTerminal(c.App.Writer), func() int { return terminalWidth(c.App.Writer) }), nil, nil
	}
	return tail.NewTextView(out, c.Bool(tailDataFlag.Name), view), view, nil
}

// pumpTail renders events until the channel closes (flushing whenever it
// is drained) and, for the table, redraws on a ticker. The first write
// error cancels the tail; events are drained until Run returns.
func pumpTail(events <-chan tail.Event, r tail.Renderer, out *bufio.Writer, cancel context.CancelFunc) error {
	var tick <-chan time.Time
	if r.Redraws() {
		t := time.NewTicker(tableRefresh)
		defer t.Stop()
		tick = t.C
	}
	var werr error
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return werr
			}
			if werr != nil {
				continue // drain until Run returns
			}
			werr = r.Event(ev)
			if werr == nil && len(events) == 0 {
				werr = out.Flush()
			}
			if werr != nil {
				cancel()
			}
		case now := <-tick:
			if werr == nil {
				if werr = r.Tick(now); werr == nil {
					werr = out.Flush()
				}
				if werr != nil {
					cancel()
				}
			}
		}
	}
}

// tableRefresh is how often --table redraws while anything changes.
const tableRefresh = 500 * time.Millisecond

func runTail(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return usageError("tail: no PATH given (a partition directory or a log directory)")
	}
	if c.Bool(tailJSONFlag.Name) && c.Bool(tailTableFlag.Name) {
		return usageError("tail: --json and --table exclude each other")
	}
	signalEndsFollow(c)
	opts, err := tailOptions(c, paths)
	if err != nil {
		return err
	}
	// A path that is not there is said and the others are followed, as
	// verify and the views read the rest; the run then ends with exit 2
	// (unless a signal ends it: 130/143). None left is exit 2 at once.
	paths, missing := existingPaths(c.App.ErrWriter, "tail", paths)
	if len(paths) == 0 {
		return troubleError("")
	}
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	if d := c.Duration(tailTimeoutFlag.Name); d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	out := bufio.NewWriterSize(c.App.Writer, 64<<10)
	r, view, err := newTailRenderer(c, out, paths)
	if err != nil {
		return err
	}
	defer whereFailed(c, view)
	sayDecodeFailures(c, view)
	cr := &corruptCount{Renderer: r}
	r = cr
	events := make(chan tail.Event, 256)
	done := make(chan error, 1)
	go func() { done <- tail.Run(ctx, paths, opts, events) }()
	werr := pumpTail(events, r, out, cancel)
	err = <-done
	if werr == tail.ErrCount {
		// -c N: the count was printed; the cancel that ended Run is ours.
		werr, err = nil, nil
	}
	if werr == nil {
		werr = r.Close()
		if ferr := out.Flush(); werr == nil {
			werr = ferr
		}
	}
	if werr != nil {
		return fail("tail", werr)
	}
	if errors.Is(err, tail.ErrUnreadable) || err == nil && missing {
		return troubleError("")
	}
	if err != nil {
		return fail("tail", err)
	}
	if cr.n > 0 {
		// Data the tail could not read: a finding, said again on stderr.
		return findingsError("tail: %d findings; the first: %s", cr.n, cr.first)
	}
	// Records that did not decode were said as they came: a finding.
	return decodeFindings(view, nil)
}

// corruptCount counts the corrupt events about a segment's data (not an
// unreadable checkpoint) the renderer is given and keeps the first's words:
// data the tail cannot read is a finding, never a quiet exit 0.
type corruptCount struct {
	tail.Renderer
	n     int
	first string
}

func (c *corruptCount) Event(ev tail.Event) error {
	if ev.Type == tail.TypeCorrupt && ev.Segment != "" && ev.Problem != nil {
		if c.n == 0 {
			c.first = filepath.Join(ev.Dir, ev.Segment) + " at position " + strconv.FormatInt(ev.Problem.Position, 10) + ": " + ev.Problem.Message
		}
		c.n++
	}
	return c.Renderer.Event(ev)
}

// existingPaths says on w each path that cannot be stat'ed (naming it and
// why, once) and returns the others; missing reports whether any was left
// out.
func existingPaths(w io.Writer, cmd string, paths []string) (kept []string, missing bool) {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			why := err.Error()
			var pe *fs.PathError
			if errors.As(err, &pe) {
				why = pe.Err.Error()
			}
			fmt.Fprintf(w, "klog: %s: %s: %s\n", cmd, p, why)
			missing = true
			continue
		}
		kept = append(kept, p)
	}
	return kept, missing
}
