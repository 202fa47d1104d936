package cluster

import (
	"bufio"
	"fmt"
	"github.com/klog-dev/klog/ndjson"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The groups as kafka-consumer-groups.sh --describe prints them
// (ConsumerGroupCommand.printOffsets, printMembers, printStates): its
// columns and widths, "-" for a missing value, and its notes on empty,
// rebalancing and missing groups (which it prints on stderr; here they
// precede the group's table on stdout).

const missing = "-"

func pad(s string, w int) string {
	if n := len([]rune(s)); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func width(min int, vals ...string) int {
	for _, v := range vals {
		min = max(min, len([]rune(v)))
	}
	return min
}

// timeText is an epoch ms time in UTC (RFC 3339), "-" when negative.
func timeText(ms int64) string {
	if ms < 0 {
		return missing
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

func i64(p *int64) string {
	if p == nil {
		return missing
	}
	return strconv.FormatInt(*p, 10)
}

func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

// groupNote is what the tool says of a group that is not Stable
// (ConsumerGroupCommand.shouldPrintMemberState), "" for none.
func groupNote(g *Group) string {
	switch g.State {
	case "Dead":
		return "Consumer group '" + g.GroupID + "' does not exist."
	case "Empty":
		return "Consumer group '" + g.GroupID + "' has no active members."
	case "Assigning", "Reconciling", "PreparingRebalance", "CompletingRebalance", "NotReady":
		return "Warning: Consumer group '" + g.GroupID + "' is rebalancing."
	}
	return ""
}

// offsetRow is one row of the offsets table.
type offsetRow struct {
	topic, partition, offset, end, lag, consumer, host, client string
	epoch, commitTime, metadata                                string
}

func (g *Group) offsetRows() []offsetRow {
	var rows []offsetRow
	committed := map[tp]bool{}
	for _, o := range g.Offsets {
		committed[tp{o.Topic, o.Partition}] = true
		rows = append(rows, offsetRow{o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10), i64(o.LogEndOffset), i64(o.Lag),
			orMissing(o.ConsumerID), orMissing(o.Host), orMissing(o.ClientID),
			strconv.Itoa(int(o.LeaderEpoch)), timeText(o.CommitTimestamp), o.Metadata})
	}
	// Assigned partitions with no committed offset.
	for _, m := range g.Members {
		for _, a := range m.Assignment {
			for _, p := range a.Partitions {
				if !committed[tp{a.Topic, p}] {
					rows = append(rows, offsetRow{a.Topic, strconv.Itoa(int(p)), missing, missing, missing,
						m.MemberID, orMissing(m.ClientHost), orMissing(m.ClientID), missing, missing, ""})
				}
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].topic != rows[j].topic {
			return rows[i].topic < rows[j].topic
		}
		a, _ := strconv.Atoi(rows[i].partition)
		b, _ := strconv.Atoi(rows[j].partition)
		return a < b
	})
	return rows
}

// WriteGroupOffsets writes each group's offsets table (the default
// --describe view); verbose adds LEADER-EPOCH, COMMIT-TIME and METADATA.
func WriteGroupOffsets(w io.Writer, rep *GroupsReport, verbose bool) error {
	bw := bufio.NewWriter(w)
	for _, g := range rep.Groups {
		if n := groupNote(g); n != "" {
			fmt.Fprintf(bw, "\n%s\n", n)
		}
		rows := g.offsetRows()
		if g.State == "Dead" || len(rows) == 0 {
			continue
		}
		gw, tw, cw, hw, kw := width(15, g.GroupID), 15, 15, 15, 15
		for _, r := range rows {
			tw, cw, hw, kw = width(tw, r.topic), width(cw, r.consumer), width(hw, r.host), width(kw, r.client)
		}
		line := func(cols ...string) {
			bw.WriteString(pad(cols[0], gw) + " " + pad(cols[1], tw) + " " + pad(cols[2], 10) + " " + pad(cols[3], 15) + " " +
				pad(cols[4], 15) + " " + pad(cols[5], 15) + " " + pad(cols[6], cw) + " " + pad(cols[7], hw) + " ")
			if !verbose {
				bw.WriteString(cols[8] + "\n")
				return
			}
			bw.WriteString(strings.TrimRight(pad(cols[8], kw)+" "+pad(cols[9], 12)+" "+pad(cols[10], 24)+" "+cols[11], " ") + "\n")
		}
		bw.WriteString("\n")
		line("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID", "LEADER-EPOCH", "COMMIT-TIME", "METADATA")
		for _, r := range rows {
			line(g.GroupID, r.topic, r.partition, r.offset, r.end, r.lag, r.consumer, r.host, r.client, r.epoch, r.commitTime, r.metadata)
		}
	}
	return bw.Flush()
}

// WriteGroupMembers writes each group's members (--describe --members;
// verbose adds the assignment).
func WriteGroupMembers(w io.Writer, rep *GroupsReport, verbose bool) error {
	bw := bufio.NewWriter(w)
	for _, g := range rep.Groups {
		if n := groupNote(g); n != "" {
			fmt.Fprintf(bw, "\n%s\n", n)
		}
		if g.State == "Dead" {
			continue
		}
		gw, cw, iw, hw, kw := width(15, g.GroupID), 15, 17, 15, 15
		withInstance := false
		for _, m := range g.Members {
			cw, hw, kw = width(cw, m.MemberID), width(hw, m.ClientHost), width(kw, m.ClientID)
			if m.GroupInstanceID != nil && *m.GroupInstanceID != "" {
				iw, withInstance = width(iw, *m.GroupInstanceID), true
			}
		}
		row := func(group, id, inst, host, client, n string) {
			bw.WriteString(pad(group, gw) + " " + pad(id, cw) + " ")
			if withInstance {
				bw.WriteString(pad(inst, iw) + " ")
			}
			bw.WriteString(pad(host, hw) + " " + pad(client, kw) + " " + pad(n, 15) + " ")
		}
		bw.WriteString("\n")
		row("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
		if verbose {
			bw.WriteString("ASSIGNMENT")
		}
		bw.WriteString("\n")
		for _, m := range g.Members {
			n := 0
			var parts []string
			for _, a := range m.Assignment {
				n += len(a.Partitions)
				var ps []string
				for _, p := range a.Partitions {
					ps = append(ps, strconv.Itoa(int(p)))
				}
				sort.Strings(ps)
				parts = append(parts, a.Topic+"("+strings.Join(ps, ",")+")")
			}
			sort.Strings(parts)
			inst := missing
			if m.GroupInstanceID != nil {
				inst = *m.GroupInstanceID
			}
			row(g.GroupID, m.MemberID, inst, orMissing(m.ClientHost), orMissing(m.ClientID), strconv.Itoa(n))
			if verbose {
				if len(parts) == 0 {
					bw.WriteString(missing)
				} else {
					bw.WriteString(strings.Join(parts, ", "))
				}
			}
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}

// WriteGroupStates writes each group's state (--describe --state); the
// coordinator is the __consumer_offsets partition that owns the group.
func WriteGroupStates(w io.Writer, rep *GroupsReport) error {
	bw := bufio.NewWriter(w)
	for _, g := range rep.Groups {
		coord := OffsetsTopic + "-" + strconv.Itoa(int(g.CoordinatorPartition))
		if g.Partition != g.CoordinatorPartition {
			coord += " (read from -" + strconv.Itoa(int(g.Partition)) + ")"
		}
		cl := max(25, len(coord))
		strategy := g.assignor()
		row := func(group, c, s, st, n string) {
			bw.WriteString(pad(group, cl) + " " + pad(c, 25) + " " + pad(s, 20) + " " + pad(st, 15) + " " + n + "\n")
		}
		bw.WriteString("\n")
		row("GROUP", "COORDINATOR (PARTITION)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
		row(g.GroupID, coord, strategy, g.State, strconv.Itoa(len(g.Members)))
	}
	return bw.Flush()
}

// assignor is the group's assignment strategy as DescribeGroups gives
// it: a classic group's protocol, a KIP-848 group's server assignor (the
// members', else the default, uniform), "" otherwise.
func (g *Group) assignor() string {
	if g.Type == GroupConsumer {
		for _, m := range g.Members {
			if m.ServerAssignor != nil {
				return *m.ServerAssignor
			}
		}
		return "uniform"
	}
	if g.Type == GroupClassic {
		return g.Protocol
	}
	return ""
}

// WriteGroupList writes one line per group: its id, type and state
// (kafka-consumer-groups.sh --list --state, with the type).
func WriteGroupList(w io.Writer, rep *GroupsReport) error {
	bw := bufio.NewWriter(w)
	gw := 15
	for _, g := range rep.Groups {
		gw = width(gw, g.GroupID)
	}
	bw.WriteString(pad("GROUP", gw) + " " + pad("TYPE", 10) + " STATE\n")
	for _, g := range rep.Groups {
		bw.WriteString(pad(g.GroupID, gw) + " " + pad(g.Type, 10) + " " + g.State + "\n")
	}
	return bw.Flush()
}

// WriteGroupDeleted writes the committed partitions whose last record is a
// tombstone, and offsets pending in open transactions.
func WriteGroupDeleted(w io.Writer, rep *GroupsReport) error {
	bw := bufio.NewWriter(w)
	for _, g := range rep.Groups {
		if len(g.DeletedOffsets) == 0 && len(g.PendingOffsets) == 0 {
			continue
		}
		bw.WriteString("\n" + pad("GROUP", width(15, g.GroupID)) + " " + pad("TOPIC", 15) + " " + pad("PARTITION", 10) + " " +
			pad("LAST-OFFSET", 15) + " " + pad("STATUS", 30) + " AT\n")
		for _, d := range g.DeletedOffsets {
			last := missing
			if d.LastOffset >= 0 {
				last = strconv.FormatInt(d.LastOffset, 10)
			}
			bw.WriteString(pad(g.GroupID, width(15, g.GroupID)) + " " + pad(d.Topic, 15) + " " + pad(strconv.Itoa(int(d.Partition)), 10) + " " +
				pad(last, 15) + " " + pad("deleted (tombstone "+strconv.FormatInt(d.TombstoneOffset, 10)+")", 30) + " " + timeText(d.TombstoneTimestamp) + "\n")
		}
		for _, o := range g.PendingOffsets {
			bw.WriteString(pad(g.GroupID, width(15, g.GroupID)) + " " + pad(o.Topic, 15) + " " + pad(strconv.Itoa(int(o.Partition)), 10) + " " +
				pad(strconv.FormatInt(o.Offset, 10), 15) + " " + pad("pending (producer "+strconv.FormatInt(o.ProducerID, 10)+")", 30) + " " + timeText(o.CommitTimestamp) + "\n")
		}
	}
	return bw.Flush()
}

// WriteGroupsJSON writes one object per group (type "group"), then one
// summary (type "groups").
func WriteGroupsJSON(w io.Writer, rep *GroupsReport) error {
	for _, g := range rep.Groups {
		if err := writeTyped(w, "group", g); err != nil {
			return err
		}
	}
	return writeTyped(w, "groups", struct {
		*GroupsReport
		Groups int `json:"groups"`
	}{rep, len(rep.Groups)})
}

// writeTyped writes v as one JSON line with "type" first (the one
// encoding every command's JSON lines use).
func writeTyped(w io.Writer, typ string, v any) error { return ndjson.WriteTyped(w, typ, v) }
