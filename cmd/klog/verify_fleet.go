package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

// Flags for scheduled runs on live brokers (README: "running verify on a
// live broker").
var (
	verifyRateFlag  = &cli.StringFlag{Name: "rate", Usage: "cap reads at `BYTES` per second across all jobs (e.g. 200MiB, 50MB; default: no cap)"}
	verifyKeepCache = &cli.BoolFlag{Name: "keep-cache", Usage: "leave the pages verify reads in the page cache (default: drop those that were not cached before)"}
	verifyStateFlag = &cli.StringFlag{Name: "state", Usage: "incremental runs: skip files unchanged since they were found clean, check only what logs appended; recorded in `FILE`"}
	verifyFullFlag  = &cli.BoolFlag{Name: "full", Usage: "with --state: read everything again (and record it)"}
	verifyPromFlag  = &cli.StringFlag{Name: "prometheus", Usage: "write node_exporter textfile-collector metrics to `FILE` (atomically)"}
)

var verifyFleetFlags = []cli.Flag{verifyRateFlag, verifyKeepCache, verifyStateFlag, verifyFullFlag, verifyPromFlag}

// fleetOptions reads the live-broker flags into opts.
func fleetOptions(c *cli.Context, opts *verify.Options) error {
	// A soft memory limit, unless GOMEMLIMIT set one (the limit is then
	// not the default, math.MaxInt64).
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(verify.MemoryLimit)
	}
	if s := c.String(verifyRateFlag.Name); s != "" {
		n, err := parseBytes(s)
		if err != nil || n <= 0 {
			return usageError("verify: --rate %q: want a positive number of bytes per second, like 200MiB", s)
		}
		opts.Rate = n
	}
	opts.KeepCache = c.Bool(verifyKeepCache.Name)
	opts.Full = c.Bool(verifyFullFlag.Name)
	if opts.Full && c.String(verifyStateFlag.Name) == "" {
		return usageError("verify: --full needs --state FILE")
	}
	// The state and metrics files are written after the run: a directory
	// that is not there is said now, not after hours of reading.
	for _, f := range []*cli.StringFlag{verifyStateFlag, verifyPromFlag} {
		if p := c.String(f.Name); p != "" {
			if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
				return usageError("verify: --%s %s: %s is not a directory", f.Name, p, filepath.Dir(p))
			}
			// A device, FIFO or symlink there is never replaced.
			if err := safeio.CheckReplaceable(p); err != nil {
				return usageError("verify: --%s: %v", f.Name, err)
			}
		}
	}
	if p := c.String(verifyStateFlag.Name); p != "" {
		st, err := verify.LoadState(p)
		if err != nil {
			return troubleError("verify: --state %w", err)
		}
		opts.State = st
	}
	return nil
}

// fleetOutputs records a run in the state and metrics files.
type fleetOutputs struct {
	state, prom string
	st          *verify.State
	m           *verify.Metrics
}

func newFleetOutputs(c *cli.Context, opts *verify.Options, start time.Time) *fleetOutputs {
	o := &fleetOutputs{state: c.String(verifyStateFlag.Name), prom: c.String(verifyPromFlag.Name), st: opts.State}
	if o.prom != "" {
		o.m = verify.NewMetrics(start)
	}
	return o
}

// add counts a file in the metrics (the run records the state itself).
func (o *fleetOutputs) add(f *verify.FileReport) {
	if o.m != nil {
		o.m.Add(f)
	}
}

// write saves the state and the metrics of a run that took d.
func (o *fleetOutputs) write(d time.Duration) error {
	if o.state != "" {
		if err := o.st.Save(o.state); err != nil {
			return troubleError("verify: --state: %w", err)
		}
	}
	if o.prom != "" {
		if err := o.m.Write(o.prom, d); err != nil {
			return troubleError("verify: --prometheus: %w", err)
		}
	}
	return nil
}

// parseBytes reads a byte count with an optional unit: B, KB/MB/GB/TB
// (powers of 1000), KiB/MiB/GiB/TiB (powers of 1024), K/M/G/T (as KiB...),
// and an optional "/s".
func parseBytes(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "tib": 1 << 40, "tb": 1e12}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || v < 0 || v*mult > 1<<62 {
		return 0, strconv.ErrSyntax
	}
	return int64(v * mult), nil
}
