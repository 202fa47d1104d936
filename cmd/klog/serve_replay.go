package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/serve"
	"github.com/urfave/cli/v2"
)

var serveBrokerPortsFlag = &cli.StringFlag{Name: "broker-ports", Usage: "a replay's listener `PORTS`, comma-separated, one per broker in broker id order (default: --listen's port, then the next ones; 0: any free port)"}

// replayDirs expands the --log-dir values (a folder of broker folders
// becomes their log dirs) and says whether they are a cluster to replay:
// more than one log dir.
func replayDirs(dirs []string) ([]string, bool, error) {
	expanded, err := cluster.ReplayDirs(dirs)
	if err != nil {
		return nil, false, err
	}
	return expanded, len(expanded) > 1, nil
}

// runReplay serves several brokers' log dirs as their cluster, each broker
// on its own listener, until SIGINT/SIGTERM.
func runReplay(c *cli.Context, dirs []string) error {
	for _, f := range []string{serveWritableFlag.Name, serveAdvertFlag.Name, tieredRemoteFlag.Name} {
		if c.IsSet(f) {
			return usageError("serve: --%s serves one log dir; a replay of several brokers is read-only, each broker on its own listener", f)
		}
	}
	base := serve.Config{MaxRequestBytes: int32(c.Int(serveMaxReqFlag.Name)), MaxConnections: c.Int(serveMaxConnFlag.Name),
		MaxConnectionsPerIP: c.Int(servePerIPFlag.Name), IdleTimeout: c.Duration(serveIdleFlag.Name)}
	if err := serveStateDir(c, &base, dirs[0]); err != nil {
		return err
	}
	if !c.IsSet(serveStateFlag.Name) {
		base.StateDir += "-replay"
	}
	for _, d := range dirs[1:] {
		if a, b := absPath(d), absPath(base.StateDir); a == b {
			return usageError("serve: --state must not be a log dir")
		}
	}
	closeLog, err := serveLogAndTLS(c, &base)
	if err != nil {
		return err
	}
	defer closeLog()
	lds, err := cluster.Discover(dirs)
	if err != nil {
		return fail("serve", err)
	}
	plan, err := cluster.PlanReplay(c.Context, lds, cluster.ReplayOptions{Base: base})
	if err != nil {
		return fail("serve", err)
	}
	host, ports, err := replayPorts(c, len(plan.Config.Brokers))
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	for _, n := range plan.Notes {
		fmt.Fprintln(stderr, "klog: serve: "+n)
	}
	r, err := serve.NewReplay(plan.Config)
	if err != nil {
		return troubleError("%w", err)
	}
	var lns []net.Listener
	for _, p := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			r.Close()
			return troubleError("serve: %w", err)
		}
		lns = append(lns, ln)
	}
	return replayUntilDone(c.Context, r, plan, lns, base.StateDir, stderr)
}

// replayPorts is the host and one port per broker: --broker-ports, else
// --listen's port and the next ones (0: any free port for each).
func replayPorts(c *cli.Context, n int) (string, []int, error) {
	host, p, err := net.SplitHostPort(c.String(serveListenFlag.Name))
	if err != nil {
		return "", nil, usageError("serve: --listen: %v", err)
	}
	base, err := strconv.Atoi(p)
	if err != nil || base < 0 || base+n-1 > 65535 {
		return "", nil, usageError("serve: --listen: bad port %q for %d brokers", p, n)
	}
	var ports []int
	if list := c.String(serveBrokerPortsFlag.Name); list != "" {
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || v < 0 || v > 65535 {
				return "", nil, usageError("serve: --broker-ports: bad port %q", f)
			}
			ports = append(ports, v)
		}
		if len(ports) != n {
			return "", nil, usageError("serve: --broker-ports lists %d ports for %d brokers", len(ports), n)
		}
		return host, ports, nil
	}
	for i := 0; i < n; i++ {
		if base == 0 {
			ports = append(ports, 0)
		} else {
			ports = append(ports, base+i)
		}
	}
	return host, ports, nil
}

// replayUntilDone serves each broker on its listener until ctx ends or a
// listener fails, then shuts every broker down (10 seconds for in-flight
// requests).
func replayUntilDone(ctx context.Context, r *serve.Replay, plan *cluster.ReplayPlan, lns []net.Listener, state string, stderr io.Writer) error {
	errc := make(chan error, len(lns))
	for i, s := range r.Servers() {
		b := plan.Config.Brokers[i]
		fmt.Fprintf(stderr, "klog: serve: broker %d (%s) on %s\n", b.ID, strings.Join(b.LogDirs, ", "), lns[i].Addr())
		go func() { errc <- s.Serve(lns[i]) }()
	}
	fmt.Fprintf(stderr, "klog: serve: %d brokers (read-only, offsets in %s)\n", len(lns), state)
	var first error
	pending := len(lns)
	select {
	case first = <-errc:
		pending--
	case <-ctx.Done():
	}
	// A signal is serve's normal end: connections get a second to
	// finish (a response being written ShutdownWriteGrace), then they
	// are closed; either way the exit code is 0.
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.Shutdown(sctx)
	for ; pending > 0; pending-- {
		if e := <-errc; first == nil || errors.Is(first, serve.ErrServerClosed) {
			first = e
		}
	}
	fmt.Fprintln(stderr, "klog: serve: stopped")
	if first != nil && !errors.Is(first, serve.ErrServerClosed) {
		return troubleError("serve: %w", first)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(stderr, "klog: serve: closed the connections that did not finish within a second")
		err = nil
	}
	if err != nil {
		return troubleError("serve: shutdown: %w", err)
	}
	return nil
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
