package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klog-dev/klog/kraft"
	"github.com/urfave/cli/v2"
)

var (
	metadataOffsetFlag     = &cli.Int64Flag{Name: "offset", Value: -1, Usage: "replay up to and including this `OFFSET` (-1: the whole log); the snapshot used is the latest that ends at or before it"}
	metadataNoSnapshotFlag = &cli.BoolFlag{Name: "no-snapshot", Usage: "replay the log from its first segment and ignore the snapshots"}
	metadataJSONFlag       = &cli.BoolFlag{Name: "json", Usage: "write JSON: the whole image as one object, or with ls/cat/tree/find one object per node"}
)

var metadataCommand = &cli.Command{
	Name:      "metadata",
	Usage:     "the KRaft metadata image from __cluster_metadata: brokers, controllers, topics and partitions, configs, features, quotas, ACLs, tokens; browse it like kafka-metadata-shell",
	ArgsUsage: "DIR [ls|cat|tree|find [PATH...]]",
	Description: `DIR is a __cluster_metadata-0 partition directory (or one snapshot
file, <end offset>-<epoch>.checkpoint or bootstrap.checkpoint). The image is
the latest snapshot that ends at or before --offset, then the log records
after it up to --offset, replayed as Kafka's metadata image code applies
them (PartitionChangeRecord through PartitionRegistration.merge: a new leader
bumps the leader epoch, every change the partition epoch). Records of a
metadata transaction (KIP-868) count only once its EndTransactionRecord is
read; an aborted one never does. A record Kafka's loader could not apply (a
change to a partition it does not know, a fence at the wrong broker epoch) is
a problem, and the replay goes on, as a broker's does.

Without a command: a summary (quorum, controllers, brokers, each topic's
partitions with leader, epoch, replicas and ISR, and counts of the rest).
With one, as kafka-metadata-shell's, over the image's paths (globs allowed,
default /):

  ls PATH...     the children of each path
  cat PATH...    each leaf's value (registrations as JSON)
  tree PATH...   everything below each path
  find PATH...   every path below each path

Paths: /provenance, /features/{metadataVersion,zkMigrationState,finalized_F},
/brokers/ID, /controllers/ID, /quorum/{leader,leaderEpoch,kraftVersion,voters/ID},
/topics/NAME/{name,id,PARTITION}, /topicIds/ID, /configs/TYPE[:NAME]/KEY,
/clientQuotas/ENTITY/KEY, /producerIds/{nextProducerId,blocks/BROKER},
/acls/ID, /delegationTokens/ID, /scram/MECHANISM/USER (never the salt or keys).

--json writes the image as one object (type "metadataImage"; the fields are
listed in the README), or with a command one object per node: type
("metadataNode"), path, isDir, and children (ls), value (cat, tree: a
directory as an object of its children) or nothing (find).

Exit status: 0 the image was built and every PATH found; 1 the replay met
problems (records it could not apply, offsets missing between the snapshot
and the log, a corrupt batch where it stopped) or a PATH names nothing (the
output is printed first); 2 usage or I/O trouble.`,
	Flags:  []cli.Flag{metadataOffsetFlag, metadataNoSnapshotFlag, metadataJSONFlag, maxBatchFlag},
	Action: runMetadata,
}

var metadataVerbs = map[string]func(io.Writer, []kraft.Match) error{
	"ls": kraft.WriteLs, "cat": kraft.WriteCat, "tree": kraft.WriteTree, "find": kraft.WriteFind,
}

func runMetadata(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return usageError("metadata: no DIR given")
	}
	verb, paths := "", []string(nil)
	if len(args) > 1 {
		verb, paths = args[1], args[2:]
		if metadataVerbs[verb] == nil {
			return usageError("metadata: unknown command %q after DIR (ls, cat, tree or find)", verb)
		}
		if len(paths) == 0 {
			paths = []string{"/"}
		}
	}
	if c.Int64(metadataOffsetFlag.Name) < -1 {
		return usageError("metadata: --offset must be -1 (the whole log) or an offset, got %d", c.Int64(metadataOffsetFlag.Name))
	}
	im, err := kraft.Load(c.Context, args[0], kraft.Options{UpTo: c.Int64(metadataOffsetFlag.Name),
		NoSnapshot: c.Bool(metadataNoSnapshotFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name)})
	if err != nil {
		return fail("metadata", err)
	}
	missing := 0
	err = writeView(c.App.Writer, func(w io.Writer) error {
		if verb == "" {
			if c.Bool(metadataJSONFlag.Name) {
				return json.NewEncoder(w).Encode(struct {
					Type string `json:"type"`
					*kraft.Image
				}{"metadataImage", im})
			}
			return kraft.WriteSummary(w, im)
		}
		var err error
		missing, err = writeMetadataNodes(c, w, im.Tree(), verb, paths)
		return err
	})
	if err != nil {
		return fail("metadata", err)
	}
	return metadataExit(c, im, missing)
}

// writeMetadataNodes runs verb over each path; a path that names nothing
// is said on stderr and counted.
func writeMetadataNodes(c *cli.Context, w io.Writer, root *kraft.Node, verb string, paths []string) (missing int, err error) {
	for _, p := range paths {
		ms, err := root.Find(p)
		if errors.Is(err, kraft.ErrNoNode) {
			fmt.Fprintf(c.App.ErrWriter, "klog: metadata: %s: %s: %v\n", verb, p, err)
			missing++
			continue
		}
		if err != nil {
			return missing, usageError("metadata: %s: %v", verb, err)
		}
		if verb == "cat" {
			var leaves []kraft.Match
			for _, m := range ms {
				if m.Node.IsDir() {
					fmt.Fprintf(c.App.ErrWriter, "klog: metadata: cat: %s: is a directory\n", m.Path)
					missing++
					continue
				}
				leaves = append(leaves, m)
			}
			ms = leaves
		}
		if c.Bool(metadataJSONFlag.Name) {
			err = writeMetadataJSON(w, verb, ms)
		} else {
			err = metadataVerbs[verb](w, ms)
		}
		if err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// metadataNodeJSON is one node in --json: ls gives its children, cat and
// tree its value, find each path below it.
type metadataNodeJSON struct {
	Type     string   `json:"type"`
	Path     string   `json:"path"`
	IsDir    bool     `json:"isDir"`
	Children []string `json:"children,omitempty"`
	Value    any      `json:"value,omitempty"`
}

func writeMetadataJSON(w io.Writer, verb string, ms []kraft.Match) error {
	enc := json.NewEncoder(w)
	for _, m := range ms {
		if verb == "find" {
			var err error
			m.Node.Walk(m.Path, func(p string, n *kraft.Node) {
				if err == nil {
					err = enc.Encode(metadataNodeJSON{Type: "metadataNode", Path: p, IsDir: n.IsDir()})
				}
			})
			if err != nil {
				return err
			}
			continue
		}
		o := metadataNodeJSON{Type: "metadataNode", Path: m.Path, IsDir: m.Node.IsDir()}
		if verb == "ls" && m.Node.IsDir() {
			o.Children = []string{}
			for _, ch := range m.Node.Children {
				o.Children = append(o.Children, ch.Name)
			}
		} else if verb != "ls" {
			o.Value = m.Node.JSON()
		}
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return nil
}

// metadataExit is 1 when the replay met problems or a path named nothing.
func metadataExit(c *cli.Context, im *kraft.Image, missing int) error {
	if im.ProblemCount > 0 {
		pr := im.Problems[0]
		more := ""
		if im.ProblemCount > 1 {
			more = fmt.Sprintf(" (and %d more problems)", im.ProblemCount-1)
		}
		fmt.Fprintf(c.App.ErrWriter, "klog: metadata: %s: offset %d: %s%s\n", strings.TrimSpace(pr.File), pr.Offset, pr.Message, more)
	}
	if im.ProblemCount > 0 || missing > 0 {
		return findingsError("")
	}
	return nil
}
