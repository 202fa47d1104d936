package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/klog-dev/klog/inspect"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/objstore"
	"github.com/klog-dev/klog/serve"
	"github.com/klog-dev/klog/tiered"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

// klog tiered: the remote tier of tiered storage (KIP-405), read where it
// lives. Its own command, not --remote on the others: a remote segment is
// not a file path, and every subcommand shares the inputs that say where
// the tier, its metadata and the keys are.

var (
	tieredRemoteFlag    = &cli.StringFlag{Name: "remote", Usage: "where the remote tier is: s3://BUCKET[/PREFIX], or a `LOCATION` on disk (LocalTieredStorage's dir, the Aiven file-system root, a copy of a bucket); default: --rsm-config's"}
	tieredLogDirFlag    = &cli.StringSliceFlag{Name: "log-dir", Usage: "a broker log `DIR`: its __remote_log_metadata-N partitions and the partitions' local tails (repeatable)"}
	tieredMetadataFlag  = &cli.StringSliceFlag{Name: "metadata", Usage: "a __remote_log_metadata-N partition `DIR` or a copy of one, read as well as --log-dir's (repeatable)"}
	tieredTopicFlag     = &cli.StringFlag{Name: "topic", Usage: "only this topic"}
	tieredPartitionFlag = &cli.IntFlag{Name: "partition", Value: -1, Usage: "only this partition (-1: all)"}
	tieredPrefixFlag    = &cli.StringFlag{Name: "prefix", Usage: "list only keys under this `PREFIX` of the location"}
	tieredKeyPairFlag   = &cli.StringSliceFlag{Name: "key-pair", Usage: "`ID=PRIVATE.pem`: the private key of the Aiven plugin's key pair ID (PKCS#8 PEM, the plugin's encryption.key.pairs.ID.private.key.file; repeatable)"}
	tieredRSMFlag       = &cli.StringFlag{Name: "rsm-config", Usage: "the Aiven plugin's settings `FILE` (server.properties with rsm.config.*, or the plugin's own keys): key pairs, storage.s3.*, storage.root"}
	s3EndpointFlag      = &cli.StringFlag{Name: "s3-endpoint", Usage: "an S3-compatible service's `URL` (default: AWS, or AWS_ENDPOINT_URL_S3)"}
	s3RegionFlag        = &cli.StringFlag{Name: "s3-region", Usage: "the bucket's region (default: AWS_REGION or the AWS config file, else us-east-1)"}
	s3ProfileFlag       = &cli.StringFlag{Name: "s3-profile", Usage: "a profile of the AWS config and credentials files (default: AWS_PROFILE)"}
	s3AddressingFlag    = &cli.StringFlag{Name: "s3-addressing", Value: "auto", Usage: "path (https://endpoint/bucket/key), virtual (https://bucket.endpoint/key) or auto (path for an IP or localhost endpoint)"}
	s3AnonymousFlag     = &cli.BoolFlag{Name: "s3-anonymous", Usage: "send unsigned requests (a public bucket)"}
	tieredParallelFlag  = &cli.IntFlag{Name: "parallel", Value: objstore.DefaultParallel, Usage: "requests in flight at most"}
	tieredJobsFlag      = &cli.IntFlag{Name: "jobs", Value: 4, Usage: "segments read at once"}
	tieredNoReadFlag    = &cli.BoolFlag{Name: "no-read", Usage: "compare names, sizes and metadata only: do not read the segments' bytes"}
)

// tieredFlags are the inputs every tiered subcommand shares.
func tieredFlags(more ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{tieredRemoteFlag, tieredLogDirFlag, tieredMetadataFlag, tieredTopicFlag, tieredPartitionFlag, tieredPrefixFlag,
		tieredKeyPairFlag, tieredRSMFlag, s3EndpointFlag, s3RegionFlag, s3ProfileFlag, s3AddressingFlag, s3AnonymousFlag, tieredParallelFlag}, more...)
}

const tieredInputs = `The remote tier is read where it lives (--remote): a directory, or an
S3-compatible bucket (credentials, region and endpoint from the usual AWS
environment variables and config files, or the --s3-* flags). Both layouts
are recognised from the keys: Kafka's LocalTieredStorage
(<topic>-<partition>-<topicId>/<offset>-<segment id>.<suffix>) and Aiven's
plugin (<prefix><topic>-<topicId>/<partition>/<offset>-<segment
id>.{log,indexes,rsm-manifest}, chunked, zstd, AES-GCM: --key-pair or
--rsm-config for encrypted segments). --log-dir names broker log
directories: their __remote_log_metadata-N partitions are folded into each
partition's remote lineage and their partitions are the local tails.
klog only reads: it never writes, deletes or changes an object or a file.`

var tieredCommand = &cli.Command{
	Name:  "tiered",
	Usage: "the remote tier of tiered storage, in S3 or on disk: list, verify, dump, find, fetch, retention",
	Description: tieredInputs + `

Subcommands: ls (segments and their states), verify (every batch's CRC
and the store against the metadata and the local log), dump (a remote
segment as kafka-dump-log prints a local one), find and fetch (by offset
or timestamp across both tiers), retention (remote plus local).`,
	Subcommands: []*cli.Command{tieredLsCommand, tieredVerifyCommand, tieredDumpCommand, tieredFindCommand, tieredFetchCommand, tieredRetentionCommand},
}

// tieredSetup is what the shared flags say.
type tieredSetup struct {
	remote   *tiered.Remote
	loc      objstore.Location
	prefix   string
	metadata []string
	logDirs  []string
	keep     func(tiered.TopicPartition) bool
}

func readTieredSetup(c *cli.Context) (*tieredSetup, error) {
	cmd := "tiered " + c.Command.Name
	remote, loc, err := openRemote(c, cmd)
	if err != nil {
		return nil, err
	}
	s := &tieredSetup{remote: remote, loc: loc, prefix: loc.Prefix + c.String(tieredPrefixFlag.Name), logDirs: c.StringSlice(tieredLogDirFlag.Name)}
	if s.metadata, err = tiered.MetadataDirs(append(c.StringSlice(tieredLogDirFlag.Name), c.StringSlice(tieredMetadataFlag.Name)...)); err != nil {
		return nil, fail(cmd, err)
	}
	topic, part := c.String(tieredTopicFlag.Name), c.Int(tieredPartitionFlag.Name)
	if topic != "" || part >= 0 {
		s.keep = func(tp tiered.TopicPartition) bool {
			return (topic == "" || tp.Topic == topic) && (part < 0 || int(tp.Partition) == part)
		}
	}
	return s, nil
}

// openRemote reads where the remote tier is (--remote, --rsm-config), its
// keys and the S3 flags.
func openRemote(c *cli.Context, cmd string) (*tiered.Remote, objstore.Location, error) {
	var rsm *tiered.RSMConfig
	if p := c.String(tieredRSMFlag.Name); p != "" {
		data, err := safeio.ReadFile(p, safeio.MaxCheckpointBytes)
		if err != nil {
			return nil, objstore.Location{}, fail(cmd, err)
		}
		if rsm, err = tiered.ParseRSMConfig(data, filepath.Dir(p)); err != nil {
			return nil, objstore.Location{}, usageError("%s: %s: %v", cmd, p, err)
		}
	}
	where := c.String(tieredRemoteFlag.Name)
	if where == "" && rsm != nil {
		where = rsm.Location()
	}
	if where == "" {
		return nil, objstore.Location{}, usageError("%s: say where the remote tier is (--remote s3://BUCKET[/PREFIX] or --remote DIR)", cmd)
	}
	loc, err := objstore.ParseLocation(where)
	if err != nil {
		return nil, loc, usageError("%s: --remote: %v", cmd, err)
	}
	keys, err := tieredKeys(c, rsm)
	if err != nil {
		return nil, loc, err
	}
	store, err := openStore(c, loc, rsm)
	if err != nil {
		return nil, loc, fail(cmd, err)
	}
	return &tiered.Remote{Store: store, Keys: keys}, loc, nil
}

// serveRemote sets serve's remote tier from --remote and its flags (none:
// no remote tier).
func serveRemote(c *cli.Context, cfg *serve.Config) error {
	if c.String(tieredRemoteFlag.Name) == "" && c.String(tieredRSMFlag.Name) == "" {
		return nil
	}
	remote, loc, err := openRemote(c, "serve")
	if err != nil {
		return err
	}
	cfg.Remote, cfg.RemotePrefix = remote, loc.Prefix+c.String(tieredPrefixFlag.Name)
	return nil
}

func tieredKeys(c *cli.Context, rsm *tiered.RSMConfig) (tiered.KeyRing, error) {
	cmd := commandPath(c) // "tiered verify", "serve"
	keys := tiered.KeyRing{}
	if rsm != nil {
		kr, err := rsm.Keys()
		if err != nil {
			return nil, fail(cmd, err)
		}
		keys = kr
	}
	for _, kp := range c.StringSlice(tieredKeyPairFlag.Name) {
		id, path, ok := strings.Cut(kp, "=")
		if !ok || id == "" || path == "" {
			return nil, usageError("%s: --key-pair wants ID=PRIVATE.pem, got %q", cmd, kp)
		}
		k, err := tiered.ReadPrivateKey(path)
		if err != nil {
			return nil, fail(cmd, err)
		}
		keys[id] = k
	}
	return keys, nil
}

func openStore(c *cli.Context, loc objstore.Location, rsm *tiered.RSMConfig) (objstore.Store, error) {
	if loc.Dir != "" {
		return objstore.NewDir(loc.Dir)
	}
	o := objstore.S3Options{Endpoint: c.String(s3EndpointFlag.Name), Region: c.String(s3RegionFlag.Name), Profile: c.String(s3ProfileFlag.Name),
		Anonymous: c.Bool(s3AnonymousFlag.Name), Parallel: c.Int(tieredParallelFlag.Name)}
	if rsm != nil {
		if o.Endpoint == "" {
			o.Endpoint = rsm.Endpoint
		}
		if o.Region == "" {
			o.Region = rsm.Region
		}
		if rsm.PathStyle == "true" && !c.IsSet(s3AddressingFlag.Name) {
			o.Addressing = objstore.AddressingPath
		}
	}
	switch a := c.String(s3AddressingFlag.Name); a {
	case "auto":
	case "path":
		o.Addressing = objstore.AddressingPath
	case "virtual":
		o.Addressing = objstore.AddressingVirtual
	default:
		return nil, usageError("%s: --s3-addressing must be path, virtual or auto, got %q", commandPath(c), a)
	}
	return objstore.NewS3(c.Context, loc.Bucket, o)
}

// tieredRun runs the checks and renders each partition as it is done.
func tieredRun(c *cli.Context, s *tieredSetup, read bool, render func(io.Writer, *tiered.PartitionReport) error) (*tiered.Summary, *tiered.Finding, error) {
	var first *tiered.Finding
	opts := tiered.Options{Remote: s.remote, Prefix: s.prefix, Metadata: s.metadata, LogDirs: s.logDirs, Keep: s.keep,
		Checker: tiered.Checker{Read: read, Jobs: c.Int(tieredJobsFlag.Name)}}
	opts.Checker.Verify.MaxBatchBytes = c.Int(maxBatchFlag.Name)
	sum, err := tiered.Run(c.Context, opts, func(rep *tiered.PartitionReport) error {
		if first == nil {
			first = inspect.FirstTieredFinding(rep)
		}
		return render(c.App.Writer, rep)
	})
	if err == nil && first == nil && len(sum.Unplaced) > 0 {
		first = &sum.Unplaced[0]
	}
	return sum, first, err
}

func tieredExit(c *cli.Context, sum *tiered.Summary, first *tiered.Finding, err error, judge bool) error {
	cmd := "tiered " + c.Command.Name
	if e := interrupted(c.Context); e != nil {
		return e
	}
	if err != nil {
		return fail(cmd, err)
	}
	if sum.Partitions == 0 {
		fmt.Fprintln(c.App.ErrWriter, "klog: "+cmd+": no remote segment found under "+c.String(tieredRemoteFlag.Name)+" and no metadata names one")
		return troubleError("")
	}
	if judge && sum.Findings > 0 && first != nil {
		// Named by its object, else its partition, else (a metadata batch
		// of no partition) the metadata record, as the other views' line.
		at := first.Key
		if at == "" {
			at = first.Partition
		}
		if at == "" && first.Metadata != nil {
			at = first.Metadata.Partition
			if first.Metadata.Offset >= 0 {
				at = first.Metadata.String()
			}
		}
		fmt.Fprintf(c.App.ErrWriter, "klog: %s: %s\n", cmd, findingsLine(sum.Findings, &verify.Problem{Path: at, Position: first.Position, Offset: first.Offset, Kind: first.Kind, Message: first.Message}))
		return findingsError("")
	}
	return nil
}

var errNoPartition = errors.New("no such partition in either tier")

// tieredTiers is the one partition --topic and --partition name, in both
// tiers.
func tieredTiers(ctx context.Context, c *cli.Context, s *tieredSetup) (*tiered.Tiers, error) {
	cmd := "tiered " + c.Command.Name
	if c.String(tieredTopicFlag.Name) == "" || c.Int(tieredPartitionFlag.Name) < 0 {
		return nil, usageError("%s: name the partition with --topic and --partition", cmd)
	}
	var lin *tiered.Lineage
	if len(s.metadata) > 0 {
		lin = tiered.NewLineage()
		if err := tiered.ReadMetadata(ctx, s.metadata, lin); err != nil {
			return nil, fail(cmd, err)
		}
	}
	t := &tiered.Tiers{Remote: s.remote, MaxBatchBytes: c.Int(maxBatchFlag.Name)}
	_, err := tiered.ListPartitions(ctx, s.remote.Store, s.prefix, s.keep, func(p *tiered.PartitionObjects) error {
		if t.Objects != nil && t.Objects.Partition != p.Partition {
			return fmt.Errorf("%s is in the store under two topic ids (%s and %s): narrow it with --prefix", p.Partition, t.Objects.Partition.TopicID, p.Partition.TopicID)
		}
		t.Objects = p
		return nil
	})
	if err != nil {
		return nil, fail(cmd, err)
	}
	if lin != nil {
		for tp, pl := range lin.Partitions {
			if s.keep(tp) && (t.Objects == nil || t.Objects.Partition == tp) {
				t.Lineage = pl
			}
		}
	}
	tp := tiered.TopicPartition{Topic: c.String(tieredTopicFlag.Name), Partition: int32(c.Int(tieredPartitionFlag.Name))}
	for _, ld := range s.logDirs {
		if l, err := tiered.LoadLocal(filepath.Join(ld, tp.String())); err == nil {
			t.Local = l
			break
		}
	}
	if t.Objects == nil && t.Lineage == nil && t.Local == nil {
		return nil, fail(cmd, fmt.Errorf("%s: %w", tp, errNoPartition))
	}
	return t, nil
}
