package kraft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Text renderings of the image for people: a summary (kcat -L's shape),
// and the shell's ls, cat, tree and find over paths.

// valueText is a leaf's value on one line: scalars as they are, structs
// as compact JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int16, int32, int64:
		return fmt.Sprint(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// WriteLs writes each match's children (a leaf: its own name), one per
// line; several matches are headed by their path, as ls does.
func WriteLs(w io.Writer, ms []Match) error {
	bw := bufio.NewWriter(w)
	for i, m := range ms {
		if len(ms) > 1 && m.Node.IsDir() {
			if i > 0 {
				bw.WriteString("\n")
			}
			bw.WriteString(m.Path + ":\n")
		}
		if !m.Node.IsDir() {
			bw.WriteString(m.Node.Name + "\n")
			continue
		}
		for _, c := range m.Node.Children {
			bw.WriteString(c.Name + "\n")
		}
	}
	return bw.Flush()
}

// WriteCat writes each leaf's value (structs as indented JSON).
func WriteCat(w io.Writer, ms []Match) error {
	bw := bufio.NewWriter(w)
	for _, m := range ms {
		switch v := m.Node.Value.(type) {
		case string, int16, int32, int64, float64:
			bw.WriteString(valueText(v) + "\n")
		default:
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return err
			}
			bw.Write(append(b, '\n'))
		}
	}
	return bw.Flush()
}

// WriteTree writes each match (named by its path) and everything below
// it: "name:" for a directory with its children indented two spaces,
// "name: value" for a leaf (ShellNodePrinter's layout, a leaf on one
// line).
func WriteTree(w io.Writer, ms []Match) error {
	bw := bufio.NewWriter(w)
	var walk func(name string, n *Node, depth int)
	walk = func(name string, n *Node, depth int) {
		ind := strings.Repeat("  ", depth)
		if !n.IsDir() {
			bw.WriteString(ind + name + ": " + valueText(n.Value) + "\n")
			return
		}
		bw.WriteString(ind + name + ":\n")
		for _, c := range n.Children {
			walk(c.Name, c, depth+1)
		}
	}
	for _, m := range ms {
		walk(m.Path, m.Node, 0)
	}
	return bw.Flush()
}

// WriteFind writes the path of each match and of every node below it.
func WriteFind(w io.Writer, ms []Match) error {
	bw := bufio.NewWriter(w)
	for _, m := range ms {
		m.Node.Walk(m.Path, func(p string, _ *Node) { bw.WriteString(p + "\n") })
	}
	return bw.Flush()
}

func timeText(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

func listeners(es []Endpoint) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, e.Name+"://"+e.Host+":"+strconv.Itoa(int(e.Port)))
	}
	return strings.Join(parts, ",")
}

// WriteSummary writes a one-screen overview of the image, the shape of
// kcat -L: the quorum, brokers, topics with their partition health, and
// the counts of everything else.
func WriteSummary(w io.Writer, im *Image) error {
	bw := bufio.NewWriter(w)
	p := im.Provenance
	from := "the log replayed from its first segment"
	if p.Snapshot != "" {
		from = "snapshot " + filepath.Base(p.Snapshot) + " and the log after it"
	}
	fmt.Fprintf(bw, "Metadata image at offset %d (epoch %d, %s), from %s: %d records in %d batches\n",
		p.LastContainedOffset, p.LastContainedEpoch, timeText(p.LastContainedLogTimeMs), from, p.Records, p.Batches)
	if p.PendingTransaction >= 0 {
		fmt.Fprintf(bw, "  a metadata transaction begun at offset %d had not ended: its records are not in the image\n", p.PendingTransaction)
	}
	fmt.Fprintf(bw, "metadata.version %s", metadataVersionText(im.Features.MetadataVersion))
	names := make([]string, 0, len(im.Features.Finalized))
	for n := range im.Features.Finalized {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(bw, ", %s=%d", n, im.Features.Finalized[n])
	}
	bw.WriteString("\n")
	q := im.Quorum
	if q.Leader >= 0 {
		fmt.Fprintf(bw, "Quorum: leader %d at epoch %d", q.Leader, q.LeaderEpoch)
	} else {
		bw.WriteString("Quorum: no LeaderChange record read")
	}
	if len(q.Voters) > 0 {
		var ids []string
		for _, v := range q.Voters {
			ids = append(ids, strconv.Itoa(int(v.ID)))
		}
		fmt.Fprintf(bw, ", voters %s (kraft.version %d)", strings.Join(ids, ","), q.KRaftVersion)
	}
	bw.WriteString("\n")
	fmt.Fprintf(bw, "%d controllers:\n", len(im.Controllers))
	for _, c := range im.Controllers {
		fmt.Fprintf(bw, "  controller %d at %s\n", c.ID, listeners(c.Listeners))
	}
	fmt.Fprintf(bw, "%d brokers:\n", len(im.Brokers))
	for _, b := range im.Brokers {
		var flags []string
		if b.Fenced {
			flags = append(flags, "fenced")
		}
		if b.InControlledShutdown {
			flags = append(flags, "in controlled shutdown")
		}
		if b.Rack != nil {
			flags = append(flags, "rack "+*b.Rack)
		}
		flags = append(flags, "epoch "+strconv.FormatInt(b.Epoch, 10), strconv.Itoa(len(b.Directories))+" log dirs")
		fmt.Fprintf(bw, "  broker %d at %s (%s)\n", b.ID, listeners(b.Listeners), strings.Join(flags, ", "))
	}
	parts, offline, under := 0, 0, 0
	for _, t := range im.Topics {
		for _, pt := range t.Partitions {
			parts++
			if pt.Leader < 0 {
				offline++
			}
			if len(pt.Isr) < len(pt.Replicas) {
				under++
			}
		}
	}
	fmt.Fprintf(bw, "%d topics, %d partitions (%d without a leader, %d under-replicated):\n", len(im.Topics), parts, offline, under)
	for _, t := range im.Topics {
		fmt.Fprintf(bw, "  topic %q with %d partitions, id %s:\n", t.Name, len(t.Partitions), t.ID)
		for _, pt := range t.Partitions {
			fmt.Fprintf(bw, "    partition %d, leader %d, epoch %d, replicas: %s, isrs: %s", pt.Partition, pt.Leader, pt.LeaderEpoch, ints(pt.Replicas), ints(pt.Isr))
			if len(pt.EligibleLeaderReplicas) > 0 {
				fmt.Fprintf(bw, ", elr: %s", ints(pt.EligibleLeaderReplicas))
			}
			if pt.Leader < 0 {
				bw.WriteString(", Broker: Leader not available")
			}
			bw.WriteString("\n")
		}
	}
	fmt.Fprintf(bw, "%d config resources, %d client quota entities, %d ACLs, %d delegation tokens, %d SCRAM credentials; next producer id %d\n",
		len(im.Configs), len(im.ClientQuotas), len(im.ACLs), len(im.Tokens), len(im.Scram), im.ProducerIDs.NextProducerID)
	if im.ProblemCount > 0 {
		fmt.Fprintf(bw, "Problems (%d):\n", im.ProblemCount)
		for _, pr := range im.Problems {
			fmt.Fprintf(bw, "  %s at offset %d: %s\n", filepath.Base(pr.File), pr.Offset, pr.Message)
		}
		if im.ProblemCount > len(im.Problems) {
			fmt.Fprintf(bw, "  ... and %d more\n", im.ProblemCount-len(im.Problems))
		}
	}
	return bw.Flush()
}

func ints(v []int32) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}
