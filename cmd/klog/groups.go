package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/klog-dev/klog/cluster"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/urfave/cli/v2"
)

var (
	groupsGroupFlag      = &cli.StringSliceFlag{Name: "group", Usage: "only this group `ID` (repeatable)"}
	groupsMembersFlag    = &cli.BoolFlag{Name: "members", Usage: "the members of each group (kafka-consumer-groups --describe --members)"}
	groupsStateFlag      = &cli.BoolFlag{Name: "state", Usage: "each group's coordinator partition, assignment strategy, state and member count (--describe --state)"}
	groupsListFlag       = &cli.BoolFlag{Name: "list", Usage: "one line per group: id, type, state"}
	groupsDeletedFlag    = &cli.BoolFlag{Name: "deleted", Usage: "the committed offsets deleted by a tombstone (expired or deleted) and those pending in open transactions"}
	groupsVerboseFlag    = &cli.BoolFlag{Name: "verbose", Usage: "offsets: also each commit's leader epoch, time and metadata; members: also their assignment"}
	groupsPartitionsFlag = &cli.IntFlag{Name: "offsets-partitions", Usage: "offsets.topic.num.partitions for the coordinator partitions (default: the metadata image's, else 50)"}
	groupsCoordFlag      = &cli.StringFlag{Name: "coordinator-of", Usage: "print the __consumer_offsets partition that owns group `ID` (DIR optional) and exit"}
	groupsNoLagFlag      = &cli.BoolFlag{Name: "no-lag", Usage: "do not read the committed partitions' high watermarks"}
	groupsJSONFlag       = &cli.BoolFlag{Name: "json", Usage: "write one JSON object per group, then a summary"}
)

var groupsCommand = &cli.Command{
	Name:      "groups",
	Usage:     "consumer groups offline from __consumer_offsets: state, members, assignments, committed offsets and lag, as kafka-consumer-groups --describe",
	ArgsUsage: "DIR...",
	Description: `Each DIR is a log dir (or a partition directory); every __consumer_offsets-N
in them is replayed as the group coordinator loads it: records in log order,
offsets committed in a transaction pending until the producer's COMMIT marker
(dropped at ABORT), tombstones removing what their key names. Classic groups,
KIP-848 consumer groups, share and Streams groups are read where their records
are. A classic group is Empty or Stable as loaded; a KIP-848 group Empty,
Assigning, Reconciling or Stable by its epochs; Dead once deleted. Several
replicas of one __consumer_offsets partition (several brokers' log dirs): the
one with the highest log end offset is read.

Lag is each committed partition's high watermark (LOG-END-OFFSET, as
kafka-consumer-groups prints it: a read_uncommitted ListOffsets latest) minus
the committed offset, the high watermark read from the partitions in the same
DIRs (the log dir's replication-offset-checkpoint, capped at the log end; the
highest of several replicas): "-" for a partition not on these disks.

The coordinator partition of a group is abs(hashCode(group id)) % the
partition count, with Java's String.hashCode and Kafka's Utils.abs
(--coordinator-of prints it).

Output: kafka-consumer-groups.sh --describe's tables and widths (--members,
--state; fitted to a narrower terminal or $COLUMNS), its notes on empty, rebalancing and missing groups (on stdout,
before the table); --json one object per group (type "group"), then a
summary (type "groups"); the fields are listed in the README.

Exit status: 0 read; 1 a record could not be read or decoded (a CRC
mismatch, a torn batch, a record the serde rejects), or a --group is not
found (everything is printed first); 2 usage or I/O trouble.`,
	Flags: []cli.Flag{groupsGroupFlag, groupsMembersFlag, groupsStateFlag, groupsListFlag, groupsDeletedFlag, groupsVerboseFlag,
		groupsPartitionsFlag, groupsCoordFlag, groupsNoLagFlag, groupsJSONFlag, maxBatchFlag},
	Action: runGroups,
}

func runGroups(c *cli.Context) error {
	args := c.Args().Slice()
	n := c.Int(groupsPartitionsFlag.Name)
	if n < 0 || n > math.MaxInt32 {
		return usageError("groups: --offsets-partitions must be between 1 and %d, got %d", math.MaxInt32, n)
	}
	if id := c.String(groupsCoordFlag.Name); c.IsSet(groupsCoordFlag.Name) && len(args) == 0 {
		if n == 0 {
			n = cluster.DefaultOffsetsPartitions
		}
		fmt.Fprintf(c.App.Writer, "%s-%d\n", cluster.OffsetsTopic, internaltopic.CoordinatorPartition(id, int32(n)))
		return nil
	}
	if len(args) == 0 {
		return usageError("groups: no DIR given")
	}
	views := 0
	for _, f := range []string{groupsMembersFlag.Name, groupsStateFlag.Name, groupsListFlag.Name, groupsDeletedFlag.Name} {
		if c.Bool(f) {
			views++
		}
	}
	if views > 1 {
		return usageError("groups: give at most one of --members, --state, --list and --deleted")
	}
	dirs, err := cluster.Discover(args)
	if err != nil {
		return fail("groups", err)
	}
	rep, err := cluster.Groups(c.Context, dirs, cluster.GroupsOptions{Groups: c.StringSlice(groupsGroupFlag.Name),
		OffsetsPartitions: int32(n), NoLag: c.Bool(groupsNoLagFlag.Name), MaxBatchBytes: c.Int(maxBatchFlag.Name)})
	if err != nil {
		return fail("groups", err)
	}
	if c.IsSet(groupsCoordFlag.Name) {
		id := c.String(groupsCoordFlag.Name)
		fmt.Fprintf(c.App.Writer, "%s-%d\n", cluster.OffsetsTopic, internaltopic.CoordinatorPartition(id, rep.OffsetsPartitions))
		return nil
	}
	if err := writeView(c.App.Writer, func(w io.Writer) error { return renderGroups(c, w, rep) }); err != nil {
		return fail("groups", err)
	}
	if len(rep.Read) == 0 {
		// The tables are empty: say why, or an operator pointing at the
		// wrong directory reads "no group" in a blank screen.
		fmt.Fprintf(c.App.ErrWriter, "klog: groups: no %s-N partition directory in %s\n", cluster.OffsetsTopic, strings.Join(args, ", "))
	}
	return groupsExit(c, rep)
}

func renderGroups(c *cli.Context, w io.Writer, rep *cluster.GroupsReport) error {
	verbose := c.Bool(groupsVerboseFlag.Name)
	if c.Bool(groupsJSONFlag.Name) {
		return cluster.WriteGroupsJSON(w, rep)
	}
	w = styled(c, w, "table") // fitted to the terminal (or $COLUMNS)
	switch {
	case c.Bool(groupsMembersFlag.Name):
		return cluster.WriteGroupMembers(w, rep, verbose)
	case c.Bool(groupsStateFlag.Name):
		return cluster.WriteGroupStates(w, rep)
	case c.Bool(groupsListFlag.Name):
		return cluster.WriteGroupList(w, rep)
	case c.Bool(groupsDeletedFlag.Name):
		return cluster.WriteGroupDeleted(w, rep)
	}
	return cluster.WriteGroupOffsets(w, rep, verbose)
}

// groupsExit is 1 when records could not be read or a --group is missing.
func groupsExit(c *cli.Context, rep *cluster.GroupsReport) error {
	missing := 0
	for _, id := range c.StringSlice(groupsGroupFlag.Name) {
		if rep.GroupByID(id) == nil {
			fmt.Fprintf(c.App.ErrWriter, "klog: groups: group %q not found in the __consumer_offsets partitions read\n", id)
			missing++
		}
	}
	if rep.ProblemCount > 0 {
		p := rep.Problems[0]
		fmt.Fprintf(c.App.ErrWriter, "klog: groups: %d problems; the first: %s at position %d, offset %d: %s\n", rep.ProblemCount, p.File, p.Position, p.Offset, p.Message)
	}
	if missing > 0 || rep.ProblemCount > 0 {
		return findingsError("")
	}
	return nil
}
