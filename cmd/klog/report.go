package main

import (
	"io"

	"github.com/klog-dev/klog/inspect"
	kreport "github.com/klog-dev/klog/report"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

var (
	reportOutFlag    = &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the HTML report to `FILE` (- for stdout)"}
	reportJSONFlag   = &cli.BoolFlag{Name: "json", Usage: "write the data the HTML is built from as one JSON object on stdout"}
	reportWhatIfFlag = &cli.StringFlag{Name: "what-if", Value: "gzip,snappy,lz4,zstd", Usage: "the codecs the what-if section recompresses the batches with (comma-separated; \"\" for no what-if)"}
	reportSampleFlag = &cli.Float64Flag{Name: "sample", Value: 0.1, Usage: "the `FRACTION` of batches the what-if recompresses (0 < f <= 1; deterministic)"}
)

var reportCommand = &cli.Command{
	Name:      "report",
	Usage:     "one self-contained HTML page of what the disks hold: overview, segments on a time axis, bytes per hour, retention, verify's findings, replica divergence, group lag, compression what-if",
	ArgsUsage: "DIR...",
	Description: `Each DIR is a partition directory or a log dir; several brokers' log dirs
give the replica divergence section (klog diff of every partition more than
one broker holds). The page has no external reference: its styles, its
charts (inline SVG) and the script that draws a partition's detail when it
is opened are in the file; it opens offline. It holds the overview (topics,
partitions, sizes, segments, codecs), bytes and records per hour, one row per
partition directory (opened: its segments on a time axis, its bytes and
records per hour, its retention timeline: when each segment becomes
deletable and why, by klog retention's rules and the --retention-ms,
--retention-bytes, --cleanup-policy, --config and --now flags as there),
verify's findings with file, byte position and offset, the consumer groups'
lag where a __consumer_offsets partition is among the DIRs (klog groups), and
what --what-if's codecs would store (klog stats --what-if, on a --sample of
the batches).

-o FILE writes the HTML (replacing FILE only once it is complete; - is
stdout); --json writes the data it is built from, one object (type
"report"), on stdout. One of them is needed; both may be given.

Exit status: 0 written, nothing found; 1 written, and verify found problems
(the first is named on stderr with its file, byte position and offset);
2 usage or I/O trouble.`,
	Flags: []cli.Flag{reportOutFlag, reportJSONFlag, retentionMsFlag, retentionBytesFlag, retentionNowFlag, retentionConfigFlag,
		retentionPolicyFlag, reportWhatIfFlag, reportSampleFlag, maxBatchFlag},
	Action: runReport,
}

func runReport(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("report: no DIR given")
	}
	out, asJSON := c.String(reportOutFlag.Name), c.Bool(reportJSONFlag.Name)
	if out == "" && !asJSON {
		return usageError("report: give -o FILE for the HTML, or --json")
	}
	if out == "-" && asJSON {
		return usageError("report: -o - and --json both write to stdout")
	}
	cfg, now, err := retentionConfig(c)
	if err != nil {
		return err
	}
	opts := kreport.Options{Now: now, Retention: cfg, MaxBatchBytes: c.Int(maxBatchFlag.Name)}
	if s := c.String(reportWhatIfFlag.Name); s != "" {
		if opts.WhatIfCodecs, err = inspect.ParseWhatIfCodecs(s); err != nil {
			return usageError("report: --what-if: %v", err)
		}
	}
	if opts.WhatIfSample = c.Float64(reportSampleFlag.Name); opts.WhatIfSample <= 0 || opts.WhatIfSample > 1 {
		return usageError("report: --sample must be in (0, 1], got %v", opts.WhatIfSample)
	}
	rep, err := kreport.Build(c.Context, args, opts)
	if err != nil {
		return fail("report", err)
	}
	switch out {
	case "":
	case "-":
		if err := writeView(c.App.Writer, func(w io.Writer) error { return kreport.WriteHTML(w, rep) }); err != nil {
			return fail("report", err)
		}
	default:
		if err := kreport.WriteFile(out, rep); err != nil {
			return fail("report", err)
		}
	}
	if asJSON {
		if err := writeView(c.App.Writer, func(w io.Writer) error { return kreport.WriteJSON(w, rep) }); err != nil {
			return fail("report", err)
		}
	}
	var first *verify.Problem
	if len(rep.Findings) > 0 {
		first = &rep.Findings[0]
	}
	return viewExit(c, false, rep.FindingCount, first)
}
