package cluster

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/ndjson"
)

// The groups as kafka-consumer-groups.sh --describe prints them
// (ConsumerGroupCommand.printOffsets, printMembers, printStates): its
// columns and widths, "-" for a missing value, and its notes on empty,
// rebalancing and missing groups (which it prints on stderr; here they
// precede the group's table on stdout).

const missing = "-"

// Tables that fit: through a dump.StyledWriter with a MaxWidth (the
// terminal's width, or $COLUMNS) a table the Kafka tool's layout would
// draw wider than that is drawn by dump.PlainLines instead, with the
// same headers where they fit (dump.Columns says how each gives way), so
// that a terminal never wraps it. A file or a pipe gets the tool's layout
// as it is.

// tableWidth is the width w's tables are fitted to (0: none).
func tableWidth(w io.Writer) int {
	if sw, ok := w.(*dump.StyledWriter); ok && !sw.Style.TSV {
		return sw.Style.MaxWidth
	}
	return 0
}

// writeTable writes the Kafka tool's lines of a table, or header and rows
// fitted into width when one of those lines is wider.
func writeTable(bw *bufio.Writer, width int, kafka []string, header []string, rows [][]string) {
	fits := true
	for _, l := range kafka {
		fits = fits && (width <= 0 || dump.LineWidth(l) <= width)
	}
	if !fits {
		kafka = dump.PlainLines(header, rows, width)
	}
	for _, l := range kafka {
		bw.WriteString(l + "\n")
	}
}

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
	fit := tableWidth(w)
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
		var kafka []string
		var cells [][]string
		line := func(cols ...string) {
			l := pad(cols[0], gw) + " " + pad(cols[1], tw) + " " + pad(cols[2], 10) + " " + pad(cols[3], 15) + " " +
				pad(cols[4], 15) + " " + pad(cols[5], 15) + " " + pad(cols[6], cw) + " " + pad(cols[7], hw) + " "
			if !verbose {
				kafka, cells = append(kafka, l+cols[8]), append(cells, cols[:9])
				return
			}
			kafka = append(kafka, strings.TrimRight(l+pad(cols[8], kw)+" "+pad(cols[9], 12)+" "+pad(cols[10], 24)+" "+cols[11], " "))
			cells = append(cells, cols)
		}
		bw.WriteString("\n")
		line("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID", "LEADER-EPOCH", "COMMIT-TIME", "METADATA")
		for _, r := range rows {
			line(g.GroupID, r.topic, r.partition, r.offset, r.end, r.lag, r.consumer, r.host, r.client, r.epoch, r.commitTime, r.metadata)
		}
		writeTable(bw, fit, kafka, cells[0], cells[1:])
	}
	return bw.Flush()
}

// WriteGroupMembers writes each group's members (--describe --members;
// verbose adds the assignment).
func WriteGroupMembers(w io.Writer, rep *GroupsReport, verbose bool) error {
	fit := tableWidth(w)
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
		var kafka []string
		var cells [][]string
		row := func(group, id, inst, host, client, n, assignment string) {
			l := pad(group, gw) + " " + pad(id, cw) + " "
			c := []string{group, id}
			if withInstance {
				l += pad(inst, iw) + " "
				c = append(c, inst)
			}
			l += pad(host, hw) + " " + pad(client, kw) + " " + pad(n, 15) + " "
			c = append(c, host, client, n)
			if verbose {
				l += assignment
				c = append(c, assignment)
			}
			kafka, cells = append(kafka, l), append(cells, c)
		}
		bw.WriteString("\n")
		row("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")
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
			assignment := missing
			if len(parts) > 0 {
				assignment = strings.Join(parts, ", ")
			}
			row(g.GroupID, m.MemberID, inst, orMissing(m.ClientHost), orMissing(m.ClientID), strconv.Itoa(n), assignment)
		}
		writeTable(bw, fit, kafka, cells[0], cells[1:])
	}
	return bw.Flush()
}

// WriteGroupStates writes each group's state (--describe --state); the
// coordinator is the __consumer_offsets partition that owns the group.
func WriteGroupStates(w io.Writer, rep *GroupsReport) error {
	fit := tableWidth(w)
	bw := bufio.NewWriter(w)
	for _, g := range rep.Groups {
		coord := OffsetsTopic + "-" + strconv.Itoa(int(g.CoordinatorPartition))
		if g.Partition != g.CoordinatorPartition {
			coord += " (read from -" + strconv.Itoa(int(g.Partition)) + ")"
		}
		cl := max(25, len(coord))
		strategy := g.assignor()
		row := func(group, c, s, st, n string) string {
			return pad(group, cl) + " " + pad(c, 25) + " " + pad(s, 20) + " " + pad(st, 15) + " " + n
		}
		bw.WriteString("\n")
		header := []string{"GROUP", "COORDINATOR (PARTITION)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"}
		cells := []string{g.GroupID, coord, strategy, g.State, strconv.Itoa(len(g.Members))}
		writeTable(bw, fit, []string{row(header[0], header[1], header[2], header[3], header[4]), row(cells[0], cells[1], cells[2], cells[3], cells[4])},
			header, [][]string{cells})
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
	fit := tableWidth(w)
	bw := bufio.NewWriter(w)
	gw := 15
	for _, g := range rep.Groups {
		gw = width(gw, g.GroupID)
	}
	kafka := []string{pad("GROUP", gw) + " " + pad("TYPE", 10) + " STATE"}
	var rows [][]string
	for _, g := range rep.Groups {
		kafka = append(kafka, pad(g.GroupID, gw)+" "+pad(g.Type, 10)+" "+g.State)
		rows = append(rows, []string{g.GroupID, g.Type, g.State})
	}
	writeTable(bw, fit, kafka, []string{"GROUP", "TYPE", "STATE"}, rows)
	return bw.Flush()
}

// WriteGroupDeleted writes the committed partitions whose last record is a
// tombstone, and offsets pending in open transactions.
func WriteGroupDeleted(w io.Writer, rep *GroupsReport) error {
	fit := tableWidth(w)
	bw := bufio.NewWriter(w)
	for _, g := range rep.Groups {
		if len(g.DeletedOffsets) == 0 && len(g.PendingOffsets) == 0 {
			continue
		}
		var kafka []string
		var cells [][]string
		line := func(c ...string) {
			kafka = append(kafka, pad(c[0], width(15, g.GroupID))+" "+pad(c[1], 15)+" "+pad(c[2], 10)+" "+pad(c[3], 15)+" "+pad(c[4], 30)+" "+c[5])
			cells = append(cells, c)
		}
		line("GROUP", "TOPIC", "PARTITION", "LAST-OFFSET", "STATUS", "AT")
		for _, d := range g.DeletedOffsets {
			last := missing
			if d.LastOffset >= 0 {
				last = strconv.FormatInt(d.LastOffset, 10)
			}
			line(g.GroupID, d.Topic, strconv.Itoa(int(d.Partition)), last, "deleted (tombstone "+strconv.FormatInt(d.TombstoneOffset, 10)+")", timeText(d.TombstoneTimestamp))
		}
		for _, o := range g.PendingOffsets {
			line(g.GroupID, o.Topic, strconv.Itoa(int(o.Partition)), strconv.FormatInt(o.Offset, 10), "pending (producer "+strconv.FormatInt(o.ProducerID, 10)+")", timeText(o.CommitTimestamp))
		}
		bw.WriteString("\n")
		writeTable(bw, fit, kafka, cells[0], cells[1:])
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
