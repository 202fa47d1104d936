package inspect

import (
	"io"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/ndjson"
	"github.com/klog-dev/klog/tiered"
)

// The views of a remote tier (klog tiered ls, verify, find): tables for
// people, NDJSON for scripts. The reports come from package tiered.

// WriteTieredSegments is klog tiered ls's table of one partition: a row
// per remote segment with its state, offsets, size, leader epochs and
// which of its objects the store holds.
func WriteTieredSegments(w io.Writer, rep *tiered.PartitionReport) error {
	title := rep.Partition + " (topic id " + rep.TopicID + ")"
	if rep.Layout != "" {
		title += ", layout " + string(rep.Layout) + ", prefix " + strconv.Quote(rep.Prefix)
	}
	if rep.Deleted != "" {
		title += ", partition " + rep.Deleted
	}
	if _, err := io.WriteString(w, title+"\n"); err != nil {
		return err
	}
	rows := make([][]string, 0, len(rep.Segments))
	for _, s := range rep.Segments {
		present, all := 0, 0
		for _, a := range s.Objects {
			all++
			if a.Present {
				present++
			}
		}
		end := i64(s.EndOffset)
		if s.EndOffset < 0 {
			end = "?"
		}
		size := "?"
		if s.SizeInBytes >= 0 {
			size = bytesCell(s.SizeInBytes)
		}
		epochs := ""
		for i, e := range s.LeaderEpochs {
			if i > 0 {
				epochs += " "
			}
			epochs += strconv.Itoa(int(e.Epoch)) + "@" + i64(e.Offset)
		}
		health := "ok"
		if n := len(s.Findings); n > 0 {
			health = string(s.Findings[0].Kind)
			if n > 1 {
				health += " +" + strconv.Itoa(n-1)
			}
		}
		rows = append(rows, []string{i64(s.StartOffset), end, s.State, s.SegmentID, size, epochs, strconv.Itoa(present) + "/" + strconv.Itoa(all), health})
	}
	if err := dump.WriteTable(w, []string{"start", "end", "state", "segment id", "bytes", "leader epochs", "objects", "health"}, rows); err != nil {
		return err
	}
	return writeTieredTotals(w, rep)
}

func writeTieredTotals(w io.Writer, rep *tiered.PartitionReport) error {
	var b strings.Builder
	if rep.RemoteStart >= 0 {
		b.WriteString("remote offsets " + i64(rep.RemoteStart) + "-" + i64(rep.RemoteEnd) + ", " + bytesCell(rep.RemoteBytes) + " bytes; highest tiered offset " + i64(rep.HighestTiered))
	} else {
		b.WriteString("no finished remote segment")
	}
	if rep.LocalStart >= 0 {
		b.WriteString("; local log starts at " + i64(rep.LocalStart) + " (" + rep.LocalDir + ")")
	}
	b.WriteString("\n")
	for _, f := range rep.Findings {
		b.WriteString(findingLine(&f))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTieredFindings is klog tiered verify's text: one paragraph per
// finding (kind, partition, segment, object, position, offset, message,
// the proposed repair), then the partition's totals.
func WriteTieredFindings(w io.Writer, rep *tiered.PartitionReport) error {
	var b strings.Builder
	for _, s := range rep.Segments {
		for i := range s.Findings {
			b.WriteString(findingLine(&s.Findings[i]))
		}
	}
	for i := range rep.Findings {
		b.WriteString(findingLine(&rep.Findings[i]))
	}
	n, info := rep.Count()
	b.WriteString(rep.Partition + ": " + strconv.Itoa(len(rep.Segments)) + " remote segments, " + strconv.Itoa(n) + " findings")
	if info > 0 {
		b.WriteString(", " + strconv.Itoa(info) + " notes")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// findingLine is "KIND partition [segment id] [key] [at position P]
// [offset O]: message" and, indented, "repair: ...".
func findingLine(f *tiered.Finding) string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	if f.Info {
		b.WriteString(" (note)")
	}
	b.WriteString(" " + f.Partition)
	if f.SegmentID != "" {
		b.WriteString(" segment " + f.SegmentID)
	}
	if f.Key != "" {
		b.WriteString(" " + f.Key)
	}
	if f.Position >= 0 {
		b.WriteString(" at position " + i64(f.Position))
	}
	if f.Offset >= 0 {
		b.WriteString(" offset " + i64(f.Offset))
	}
	if f.Metadata != nil {
		b.WriteString(" (metadata " + f.Metadata.String() + ")")
	}
	b.WriteString(": " + f.Message + "\n")
	if f.Repair != "" {
		b.WriteString("  repair: " + f.Repair + "\n")
	}
	return b.String()
}

// WriteTieredJSON writes one partition as NDJSON: a "remoteSegment"
// object per segment, a "remoteFinding" object per finding, then a
// "remotePartition" object with the totals (the README lists the fields).
func WriteTieredJSON(w io.Writer, rep *tiered.PartitionReport) error {
	for _, s := range rep.Segments {
		if err := ndjson.WriteTyped(w, "remoteSegment", s); err != nil {
			return err
		}
	}
	for _, f := range allFindings(rep) {
		if err := ndjson.WriteTyped(w, "remoteFinding", f); err != nil {
			return err
		}
	}
	n, info := rep.Count()
	type partitionLine struct {
		*tiered.PartitionReport
		Segments int `json:"segments"`
		Findings int `json:"findings"`
		Info     int `json:"info"`
	}
	return ndjson.WriteTyped(w, "remotePartition", partitionLine{PartitionReport: rep, Segments: len(rep.Segments), Findings: n, Info: info})
}

func allFindings(rep *tiered.PartitionReport) []*tiered.Finding {
	var out []*tiered.Finding
	for _, s := range rep.Segments {
		for i := range s.Findings {
			out = append(out, &s.Findings[i])
		}
	}
	for i := range rep.Findings {
		out = append(out, &rep.Findings[i])
	}
	return out
}

// FirstTieredFinding is the first finding (not a note) of rep, or nil.
func FirstTieredFinding(rep *tiered.PartitionReport) *tiered.Finding {
	for _, f := range allFindings(rep) {
		if !f.Info && f.Kind != tiered.KindKeyMissing {
			return f
		}
	}
	return nil
}

// WriteTieredRetention is klog tiered retention's table: a row per remote
// and local segment with its verdict now and when time retention deletes
// it.
func WriteTieredRetention(w io.Writer, rep *tiered.RetentionReport) error {
	rows := make([][]string, 0, len(rep.Segments))
	for _, s := range rep.Segments {
		verdict := s.Reason
		if s.Delete {
			verdict = "delete: " + s.Reason
		}
		at := "never"
		if s.DeletableAt >= 0 {
			at = msTime(s.DeletableAt)
		}
		end := i64(s.EndOffset)
		if s.EndOffset < 0 {
			end = "(active)"
		}
		rows = append(rows, []string{s.Tier, i64(s.StartOffset), end, bytesCell(s.Bytes), s.Key, verdict, at})
	}
	if _, err := io.WriteString(w, rep.Partition+": now "+msTime(rep.Now)+"; retention.ms "+i64(rep.Config.RetentionMs)+", retention.bytes "+
		i64(rep.Config.RetentionBytes)+", local.retention.ms "+i64(rep.Config.LocalRetentionMs)+", local.retention.bytes "+i64(rep.Config.LocalRetentionBytes)+"\n"); err != nil {
		return err
	}
	if err := dump.WriteTable(w, []string{"tier", "start", "end", "bytes", "object", "verdict now", "time retention deletes at"}, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, "remote "+bytesCell(rep.RemoteBytes)+" bytes, local "+bytesCell(rep.LocalBytes)+" bytes; highest tiered offset "+i64(rep.HighestTiered)+
		", log start offset "+i64(rep.LogStartOffset)+"\n")
	return err
}

// WriteTieredRetentionJSON writes a "remoteRetentionSegment" object per segment
// and a "remoteRetentionSummary", whose segments is their number.
func WriteTieredRetentionJSON(w io.Writer, rep *tiered.RetentionReport) error {
	for _, s := range rep.Segments {
		if err := ndjson.WriteTyped(w, "remoteRetentionSegment", s); err != nil {
			return err
		}
	}
	// The outer Segments, shallower, hides the report's list.
	sum := struct {
		*tiered.RetentionReport
		Segments int `json:"segments"`
	}{rep, len(rep.Segments)}
	return ndjson.WriteTyped(w, "remoteRetentionSummary", sum)
}
