package main

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/redact"
	"github.com/urfave/cli/v2"
)

var (
	redactOutFlag        = &cli.StringFlag{Name: "output", Usage: "the new `DIR` to write the copy to (must not exist, or be empty)"}
	redactModeFlag       = &cli.StringFlag{Name: "mode", Value: "hash", Usage: "hash (keyed SHA-256 truncated to the original length: equality kept), zero or drop (null)"}
	redactKeyFileFlag    = &cli.StringFlag{Name: "hash-key-file", Usage: "key the hash mode with this `FILE`'s bytes, so several copies compare (default: a random key per run)"}
	redactHeaderKeysFlag = &cli.BoolFlag{Name: "redact-header-keys", Usage: "replace header keys too"}
	redactUnknownFlag    = &cli.BoolFlag{Name: "copy-unknown", Usage: "copy files that are not Kafka's unchanged (they are not redacted) instead of leaving them out"}
)

var redactCommand = &cli.Command{
	Name:      "redact",
	Usage:     "write a copy of a partition that is safe to share: payloads replaced, everything else kept",
	ArgsUsage: "DIR",
	Description: `Copies the partition directory DIR to --output. Record keys, values and
header values are replaced (--mode), header keys too with
--redact-header-keys; offsets, timestamps, batch boundaries, codecs, producer
ids, epochs and sequences, control records and transaction markers, leader
epochs and the directory's other Kafka files (producer snapshots, .txnindex,
leader-epoch-checkpoint, partition.metadata) are kept. Files that are not
Kafka's are left out (named on stderr) unless --copy-unknown. .log.deleted,
.log.cleaned and .log.swap files and KRaft .checkpoint snapshots are redacted
like logs. CRCs are recomputed and the
.index and .timeindex rebuilt, so the copy verifies clean; a batch whose CRC
is wrong in the source keeps its stored CRC, so it stays wrong. No byte is
copied that was not parsed as a header where a header must be (the start of
the segment or the end of a batch whose CRC is right): a batch that cannot
be decoded there keeps its header and has the rest zeroed; bytes reached
only through a length that cannot be trusted (after a corrupted length, the
middle of record values) are zeroed whole; bytes after the last whole batch
are zeroed, after their first 17 at such a position. A symlinked or
non-regular source file is refused, and a source that shrinks during the
copy is an error (exit 2). One batch is read at a time: memory stays flat.

--json writes one "redact" object; the fields are listed in the README.

Exit status: 0 written; 1 written, and the source's damage (wrong CRCs,
undecodable batches, zeroed bytes, trailing bytes) is carried into the copy;
2 usage or I/O trouble.`,
	Flags:  []cli.Flag{redactOutFlag, redactModeFlag, redactKeyFileFlag, redactHeaderKeysFlag, redactUnknownFlag, viewsJSONFlag, maxBatchFlag},
	Action: runRedact,
}

func runRedact(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) != 1 {
		return usageError("redact: give exactly one partition DIR (got %d arguments)", len(args))
	}
	if !partition.IsPartitionDir(args[0]) {
		return usageError("redact: %s is not a partition directory", args[0])
	}
	out := c.String(redactOutFlag.Name)
	if out == "" {
		return usageError("redact: --output DIR is required")
	}
	if out == "-" {
		return usageError("redact: --output -: the copy is a directory, never stdout; give a new DIR")
	}
	mode, ok := redact.ParseMode(c.String(redactModeFlag.Name))
	if !ok {
		return usageError("redact: --mode must be hash, zero or drop (got %q)", c.String(redactModeFlag.Name))
	}
	opts := redact.Options{Mode: mode, RedactHeaderKeys: c.Bool(redactHeaderKeysFlag.Name), CopyUnknown: c.Bool(redactUnknownFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name)}
	if p := c.String(redactKeyFileFlag.Name); p != "" {
		key, err := safeio.ReadFile(p, safeio.MaxCheckpointBytes)
		if err != nil {
			return viewError("redact", err)
		}
		opts.HashKey = key
	}
	res, err := redact.PartitionContext(c.Context, args[0], out, opts)
	if err != nil {
		if interrupted(c.Context) != nil {
			io.WriteString(c.App.ErrWriter, "klog: redact: "+out+" holds an incomplete copy; remove it before running again\n")
			return err
		}
		return viewError("redact", err)
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error {
		if c.Bool(viewsJSONFlag.Name) {
			b, err := json.Marshal(res)
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}
		_, err := io.WriteString(w, "redacted "+res.Source+" to "+res.Output+" ("+res.Mode+"): "+strconv.Itoa(res.Segments)+" segments, "+
			strconv.FormatInt(res.Batches, 10)+" batches, "+strconv.FormatInt(res.Records, 10)+" records, "+
			strconv.FormatInt(res.BytesIn, 10)+" -> "+strconv.FormatInt(res.BytesOut, 10)+" log bytes; "+
			strconv.Itoa(len(res.Copied))+" other files copied\n")
		if err == nil && res.Damaged() {
			_, err = io.WriteString(w, "carried over from the source: "+strconv.FormatInt(res.CorruptBatches, 10)+" batches with a wrong CRC, "+
				strconv.FormatInt(res.ZeroedBatches, 10)+" undecodable batches (zeroed after their header), "+
				strconv.FormatInt(res.ZeroedBytes, 10)+" bytes past an untrusted length (zeroed whole), "+
				strconv.FormatInt(res.TrailingBytes, 10)+" trailing bytes (zeroed)\n")
		}
		return err
	}); err != nil {
		return viewError("redact", err)
	}
	for _, name := range res.Skipped {
		io.WriteString(c.App.ErrWriter, "klog: redact: left out "+name+" (not a Kafka file; --copy-unknown copies it unredacted)\n")
	}
	if res.Damaged() {
		return findingsError("")
	}
	return nil
}
