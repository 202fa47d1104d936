package main

import (
	"io"
	"time"

	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/urfave/cli/v2"
)

var (
	retentionMsFlag       = &cli.Int64Flag{Name: "retention-ms", Usage: "retention.ms (-1: no time limit; default: the --config file, else 604800000)"}
	retentionBytesFlag    = &cli.Int64Flag{Name: "retention-bytes", Usage: "retention.bytes (-1: no size limit; default: the --config file, else -1)"}
	retentionNowFlag      = &cli.StringFlag{Name: "now", Usage: "the broker's clock `T` (epoch ms or RFC 3339; default: now)"}
	retentionConfigFlag   = &cli.StringFlag{Name: "config", Usage: "topic configs from a properties `FILE` or kafka-configs --describe output"}
	retentionPolicyFlag   = &cli.StringFlag{Name: "cleanup-policy", Usage: "cleanup.policy: delete, compact or compact,delete (default: the --config file, else delete)"}
	retentionHWFlag       = &cli.Int64Flag{Name: "high-watermark", Value: -1, Usage: "high watermark (-1: the log dir's replication-offset-checkpoint, else the log end offset)"}
	retentionLSOFlag      = &cli.Int64Flag{Name: "log-start-offset", Value: -1, Usage: "log start offset (-1: the log dir's log-start-offset-checkpoint, else the first segment)"}
	retentionRecoverdFlag = &cli.BoolFlag{Name: "recovered", Usage: "age segments as after the broker's recovery (an unclean shutdown rebuilds time indexes from the batches) instead of from the index files as they are"}
)

var retentionCommand = &cli.Command{
	Name:      "retention",
	Usage:     "the broker's retention decision, segment by segment: what goes now, why, and when the rest will",
	ArgsUsage: "DIR",
	Description: `DIR is a partition directory. The rules are Kafka 4.3.1's
UnifiedLog.deleteOldSegments: a log start offset pass, then retention.bytes,
then retention.ms, each deleting only a prefix of the segments and only
segments whose next base offset the high watermark has reached. A segment's
age is the timestamp of its last .timeindex entry, or the .log file's
modification time when the time index has no entry; a segment whose age lies
in the future blocks time retention for itself and every later segment
(KAFKA-20609). When everything goes, the broker first rolls an empty active
segment, so the log start offset becomes the log end offset. For compacted
topics (cleanup.policy contains compact) the log cleaner's first dirty
offset, first uncleanable offset and dirty ratio are shown.

--json writes one "segment" object per segment and one "summary" object;
the fields are listed in the README.

Exit status: 0 answered; 1 a largest timestamp in the future holds back time
retention (KAFKA-20609; the report is printed in full, then one line on
stderr names the first such segment's file, byte position and base offset,
and counts them); 2 usage or I/O trouble.`,
	Flags: []cli.Flag{retentionMsFlag, retentionBytesFlag, retentionNowFlag, retentionConfigFlag, retentionPolicyFlag,
		retentionHWFlag, retentionLSOFlag, retentionRecoverdFlag, viewsJSONFlag, formatFlag, maxBatchFlag},
	Action: runRetention,
}

func runRetention(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) != 1 {
		return usageError("retention: give exactly one partition DIR (got %d arguments)", len(args))
	}
	if !partition.IsPartitionDir(args[0]) {
		return usageError("retention: %s is not a partition directory", args[0])
	}
	format, err := viewFormat(c)
	if err != nil {
		return err
	}
	cfg, now, err := retentionConfig(c)
	if err != nil {
		return err
	}
	rep, err := inspect.Retention(args[0], inspect.RetentionOptions{Config: cfg, Now: now,
		HighWatermark: c.Int64(retentionHWFlag.Name), LogStartOffset: c.Int64(retentionLSOFlag.Name), CleanerOffset: -1,
		Recovered: c.Bool(retentionRecoverdFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name)})
	if err != nil {
		return viewError("retention", err)
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if format == "json" {
			return inspect.WriteRetentionJSON(w, rep)
		}
		return inspect.WriteRetentionTable(styled(c, w, format), rep)
	}); err != nil {
		return viewError("retention", err)
	}
	n, first := rep.Findings()
	return viewExit(c, false, n, first)
}

// retentionConfig reads the topic config (--config, then --retention-ms,
// --retention-bytes, --cleanup-policy over it) and the clock (--now) of
// retention and report.
func retentionConfig(c *cli.Context) (inspect.RetentionConfig, int64, error) {
	name := commandPath(c)
	cfg := inspect.DefaultRetentionConfig()
	if p := c.String(retentionConfigFlag.Name); p != "" {
		data, err := safeio.ReadFile(p, safeio.MaxCheckpointBytes)
		if err != nil {
			return cfg, 0, viewError(name, err)
		}
		if cfg, err = inspect.ParseRetentionConfig(data, cfg); err != nil {
			return cfg, 0, usageError("%s: %s: %v", name, p, err)
		}
	}
	if c.IsSet(retentionMsFlag.Name) {
		cfg.RetentionMs = c.Int64(retentionMsFlag.Name)
	}
	if c.IsSet(retentionBytesFlag.Name) {
		cfg.RetentionBytes = c.Int64(retentionBytesFlag.Name)
	}
	if c.IsSet(retentionPolicyFlag.Name) {
		cfg.CleanupPolicy = c.String(retentionPolicyFlag.Name)
	}
	if err := cfg.Validate(); err != nil {
		// Kafka refuses such a config: answering with it (a typo in the
		// policy meaning "never delete") would mislead.
		return cfg, 0, usageError("%s: %v", name, err)
	}
	now := time.Now().UnixMilli()
	if s := c.String(retentionNowFlag.Name); s != "" {
		v, err := parseTime(s)
		if err != nil {
			return cfg, 0, usageError("%s: --now: %v", name, err)
		}
		now = v
	}
	return cfg, now, nil
}
