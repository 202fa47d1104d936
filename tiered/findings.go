package tiered

import (
	"context"
	"encoding/binary"
	"os"
	"strings"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// segmentFindings compares what the store holds of s with its metadata.
func (c *Checker) segmentFindings(rep *PartitionReport, s *SegmentReport, lin *PartitionLineage) {
	seg := s.seg
	var present []string
	for _, a := range s.Objects {
		if a.Present {
			present = append(present, a.Key)
		}
	}
	deleted := lin != nil && lin.Delete != nil
	switch {
	case s.meta == nil:
		if len(present) > 0 {
			f := s.finding(KindOrphanSegment, present[0], -1, seg.StartOffset, "objects of segment "+s.SegmentID+" (start offset "+itoa(seg.StartOffset)+
				" in their names) that no metadata record mentions: Kafka neither serves nor deletes them"+completeness(seg))
			if lin == nil {
				f.Message = "objects of segment " + s.SegmentID + " (start offset " + itoa(seg.StartOffset) + "); no metadata was given, so klog cannot tell whether any record references them" + completeness(seg)
				f.Info = true
			}
			f.Keys = present
			f.Repair = "if no broker is uploading it right now, delete the leftover objects (klog only reads): " + strings.Join(present, " ")
			s.Findings = append(s.Findings, f)
		}
		return
	case s.meta.State == CopySegmentStarted && len(present) > 0:
		f := s.finding(KindOrphanSegment, present[0], -1, s.meta.StartOffset, "the copy of offsets "+itoa(s.meta.StartOffset)+"-"+itoa(s.meta.EndOffset)+
			" started (metadata "+s.meta.Last.String()+") and never finished: an upload in progress, or one abandoned"+completeness(seg))
		f.Keys = present
		f.Repair = "if no broker is uploading it right now, the broker that retries the copy writes a new segment id; delete these objects: " + strings.Join(present, " ")
		s.Findings = append(s.Findings, f)
		return
	case s.meta.State >= DeleteSegmentStarted && len(present) > 0:
		msg := "the metadata finished deleting segment " + s.SegmentID + " (" + s.meta.Last.String() + ") but its objects are still stored"
		repair := "delete the leftover objects: " + strings.Join(present, " ")
		if s.meta.State == DeleteSegmentStarted {
			msg = "a delete of segment " + s.SegmentID + " started (" + s.meta.Last.String() + ") and never finished; its objects are still stored"
			repair = "a leader retries the delete on its next retention pass; if the partition has no leader any more, " + repair
		}
		f := s.finding(KindDeletedPresent, present[0], -1, s.meta.StartOffset, msg)
		f.Keys, f.Repair = present, repair
		s.Findings = append(s.Findings, f)
		return
	case deleted && len(present) > 0:
		f := s.finding(KindDeletedPresent, present[0], -1, s.meta.StartOffset, "the partition is "+lin.Delete.String()+" ("+lin.DeletePos.String()+") and segment "+s.SegmentID+"'s objects are still stored")
		f.Keys, f.Repair = present, "delete the leftover objects once the partition's delete has finished: "+strings.Join(present, " ")
		s.Findings = append(s.Findings, f)
		return
	case s.meta.State != CopySegmentFinished:
		return
	}
	// COPY_SEGMENT_FINISHED: the objects must be there.
	if !seg.Has(SuffixLog) {
		var keys []string
		for _, a := range s.Objects {
			if !a.Present {
				keys = append(keys, a.Key)
			}
		}
		what := "no object of the segment is stored"
		if len(present) > 0 {
			what = "its .log is not stored (" + itoa(int64(len(present))) + " other objects are)"
		}
		f := s.finding(KindMissingRemoteFiles, seg.Key(SuffixLog), -1, s.meta.StartOffset, "the metadata says COPY_SEGMENT_FINISHED ("+s.meta.Last.String()+") for offsets "+
			itoa(s.meta.StartOffset)+"-"+itoa(s.meta.EndOffset)+", but "+what)
		f.Keys = keys
		f.Repair = repairLost(s)
		s.Findings = append(s.Findings, f)
		return
	}
	var missing []string
	for _, sfx := range seg.Missing() {
		missing = append(missing, seg.Key(sfx))
	}
	if seg.Layout == LayoutKafka && !s.meta.TxnIdxEmpty && !seg.Has(SuffixTxnIndex) {
		missing = append(missing, seg.Key(SuffixTxnIndex))
	}
	if len(missing) > 0 {
		f := s.finding(KindMissingIndexFiles, missing[0], -1, s.meta.StartOffset, "the .log of offsets "+itoa(s.meta.StartOffset)+"-"+itoa(s.meta.EndOffset)+
			" is stored without "+suffixes(missing)+": a fetch of the segment fails (RemoteResourceNotFoundException)")
		f.Keys = missing
		f.Repair = "restore " + strings.Join(missing, " ") + " from a replica that still holds the local segment " + FilenamePrefix(s.meta.StartOffset) + ".* (its index files), or " + moveStart(s)
		s.Findings = append(s.Findings, f)
	}
	if seg.Layout == LayoutKafka && int64(s.meta.SizeInBytes) != seg.Objects[SuffixLog].Size {
		f := s.finding(KindSizeMismatch, seg.Key(SuffixLog), -1, s.meta.StartOffset, "the .log object is "+itoa(seg.Objects[SuffixLog].Size)+
			" bytes; the metadata's segmentSizeInBytes is "+itoa(int64(s.meta.SizeInBytes)))
		f.Repair = repairData(s, seg.Key(SuffixLog), -1)
		s.Findings = append(s.Findings, f)
	}
	if seg.Layout == LayoutAiven {
		if cf, ok := AivenCustomFields(s.meta.CustomMetadata); ok && cf.HasRemoteSize {
			var total int64
			for _, a := range s.Objects {
				total += a.Size
			}
			if len(missing) == 0 && total != cf.RemoteSize {
				f := s.finding(KindSizeMismatch, seg.Key(SuffixLog), -1, s.meta.StartOffset, "the segment's objects add up to "+itoa(total)+
					" bytes; the plugin's custom metadata remote_size says "+itoa(cf.RemoteSize))
				f.Keys, f.Repair = present, repairData(s, seg.Key(SuffixLog), -1)
				s.Findings = append(s.Findings, f)
			}
		}
	}
	if seg.StartOffset != s.meta.StartOffset {
		f := s.finding(KindStartOffsetMismatch, seg.Key(SuffixLog), -1, s.meta.StartOffset, "the object names start offset "+itoa(seg.StartOffset)+
			"; the metadata "+itoa(s.meta.StartOffset))
		f.Repair = repairData(s, seg.Key(SuffixLog), -1)
		s.Findings = append(s.Findings, f)
	}
	c.dataFindings(s)
}

// dataFindings compares the batches read with the metadata.
func (c *Checker) dataFindings(s *SegmentReport) {
	rd, m, key := s.Read, s.meta, s.seg.Key(SuffixLog)
	if rd == nil || rd.Batches == 0 {
		return
	}
	add := func(kind verify.Kind, offset int64, msg string) {
		f := s.finding(kind, key, -1, offset, msg)
		f.Repair = repairData(s, key, offset)
		s.Findings = append(s.Findings, f)
	}
	if rd.FirstOffset != m.StartOffset {
		add(KindStartOffsetMismatch, rd.FirstOffset, "the first batch starts at offset "+itoa(rd.FirstOffset)+"; the metadata's startOffset is "+itoa(m.StartOffset))
	}
	if rd.LastOffset != m.EndOffset {
		add(KindEndOffsetMismatch, rd.LastOffset, "the last batch ends at offset "+itoa(rd.LastOffset)+"; the metadata's endOffset is "+itoa(m.EndOffset))
	}
	if rd.MaxTimestampMs != m.MaxTimestampMs {
		add(KindTimestampMismatch, -1, "the batches' largest timestamp is "+itoa(rd.MaxTimestampMs)+"; the metadata's maxTimestampMs is "+itoa(m.MaxTimestampMs))
	}
	if !sameEpochs(rd.LeaderEpochs, m.LeaderEpochs) {
		off := int64(-1)
		if len(rd.LeaderEpochs) > 0 {
			off = rd.LeaderEpochs[0].Offset
		}
		add(KindEpochMismatch, off, "the batches' leader epochs are "+epochString(rd.LeaderEpochs)+"; the metadata's segmentLeaderEpochs "+epochString(m.LeaderEpochs))
	}
}

func sameEpochs(a, b []EpochStart) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// epochString prints epochs as Kafka's map does: {0=8, 1=11}.
func epochString(es []EpochStart) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(itoa(int64(e.Epoch)) + "=" + itoa(e.Offset))
	}
	b.WriteByte('}')
	return b.String()
}

func suffixes(keys []string) string {
	var out []string
	for _, k := range keys {
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			out = append(out, k[i:])
		}
	}
	return strings.Join(out, ", ")
}

// completeness says which artifacts an orphan lacks.
func completeness(seg *Segment) string {
	if m := seg.Missing(); len(m) > 0 {
		return "; only " + suffixes(keysOf(seg)) + " is stored, without " + strings.Join(m, ", ")
	}
	return ""
}

func keysOf(seg *Segment) []string {
	var out []string
	for _, sfx := range seg.Layout.Suffixes() {
		if seg.Has(sfx) {
			out = append(out, seg.Key(sfx))
		}
	}
	return out
}

func moveStart(s *SegmentReport) string {
	return "give the offsets up: kafka-delete-records.sh with offset " + itoa(s.EndOffset+1) +
		" for " + s.Partition + " moves the log start past them, and the broker then deletes the segment and its metadata"
}

func repairLost(s *SegmentReport) string {
	return "if a replica still holds the local segment " + FilenamePrefix(s.StartOffset) + ".log (local retention may have kept it), copy its files back under these keys; otherwise offsets " +
		itoa(s.StartOffset) + "-" + itoa(s.EndOffset) + " are lost and fetches of them fail: " + moveStart(s)
}

func repairData(s *SegmentReport, key string, offset int64) string {
	at := ""
	if offset >= 0 {
		at = " at offset " + itoa(offset)
	}
	return "the stored segment is not the copy the metadata describes" + at + ": if a replica still holds the local segment " + FilenamePrefix(s.StartOffset) +
		".log, compare it and upload it again under a new segment id (a leader does so when the remote copy is deleted); otherwise " + moveStart(s) + " (" + key + ")"
}

// partitionFindings checks the finished segments' offsets against each
// other and against the local log.
func (c *Checker) partitionFindings(ctx context.Context, rep *PartitionReport, lin *PartitionLineage, local *Local) {
	if lin == nil {
		return
	}
	var fin []*SegmentReport
	for _, s := range rep.Segments {
		if s.meta != nil && s.meta.State == CopySegmentFinished {
			fin = append(fin, s)
			rep.RemoteBytes += int64(s.meta.SizeInBytes)
		}
	}
	if len(fin) == 0 {
		return
	}
	rep.RemoteStart = fin[0].meta.StartOffset
	var prev *SegmentReport
	end := int64(-1)
	for _, s := range fin {
		m := s.meta
		if prev != nil {
			switch {
			case m.StartOffset > end+1:
				f := Finding{Problem: verify.Problem{Kind: KindRemoteGap, Position: -1, Offset: end + 1,
					Message: "offsets " + itoa(end+1) + "-" + itoa(m.StartOffset-1) + " are in no remote segment: " + prev.SegmentID + " ends at " + itoa(end) + ", " + s.SegmentID + " starts at " + itoa(m.StartOffset)},
					Partition: rep.Partition, TopicID: rep.TopicID, SegmentID: s.SegmentID}
				f.Repair = "fetches of offsets " + itoa(end+1) + "-" + itoa(m.StartOffset-1) + " fail (OFFSET_OUT_OF_RANGE); if the data is somewhere (an orphan segment with these offsets, a replica's local segment), restore it; otherwise it is lost"
				rep.Findings = append(rep.Findings, f)
			case m.StartOffset <= end:
				f := Finding{Problem: verify.Problem{Kind: KindRemoteOverlap, Position: -1, Offset: m.StartOffset,
					Message: "segments " + prev.SegmentID + " and " + s.SegmentID + " both hold offsets " + itoa(m.StartOffset) + "-" + itoa(min(end, m.EndOffset))},
					Partition: rep.Partition, TopicID: rep.TopicID, SegmentID: s.SegmentID}
				switch pr, sr := lin.Referenced(prev.meta.ID), lin.Referenced(m.ID); {
				case pr && !sr:
					f.Message += "; the leader-epoch chains serve " + prev.SegmentID + ", " + s.SegmentID + " is a leftover"
					f.Key = s.seg.Key(SuffixLog)
				case sr && !pr:
					f.Message += "; the leader-epoch chains serve " + s.SegmentID + ", " + prev.SegmentID + " is a leftover"
					f.SegmentID, f.Key = prev.SegmentID, prev.seg.Key(SuffixLog)
				}
				f.Repair = "keep the segment the leader-epoch chain serves (klog tiered ls shows it); the other one's objects and metadata are a leftover (KAFKA-16511)"
				rep.Findings = append(rep.Findings, f)
			}
		}
		if m.EndOffset > end {
			end, prev = m.EndOffset, s
		}
	}
	rep.RemoteEnd = end
	if local == nil || local.StartOffset < 0 {
		return
	}
	switch {
	case end+1 < local.StartOffset:
		f := Finding{Problem: verify.Problem{Kind: KindLocalGap, Position: -1, Offset: end + 1,
			Message: "the remote tier ends at offset " + itoa(end) + " and the local log starts at " + itoa(local.StartOffset) + ": offsets " + itoa(end+1) + "-" + itoa(local.StartOffset-1) + " are in neither tier"},
			Partition: rep.Partition, TopicID: rep.TopicID}
		f.Repair = "fetches of those offsets fail; if a replica still holds them locally, let it lead until they are copied; otherwise they are lost"
		rep.Findings = append(rep.Findings, f)
	case end >= local.StartOffset:
		f := Finding{Problem: verify.Problem{Kind: KindLocalOverlap, Info: true, Position: -1, Offset: local.StartOffset,
			Message: "offsets " + itoa(local.StartOffset) + "-" + itoa(end) + " are in both tiers (local retention keeps tiered segments until local.retention.* deletes them)"},
			Partition: rep.Partition, TopicID: rep.TopicID}
		rep.Findings = append(rep.Findings, f)
		if c.Read {
			rep.Findings = append(rep.Findings, c.compareTiers(ctx, rep, fin, local)...)
		}
	}
}

// compareTiers compares the batches both tiers hold, by base offset and
// CRC.
func (c *Checker) compareTiers(ctx context.Context, rep *PartitionReport, fin []*SegmentReport, local *Local) []Finding {
	remote := map[int64]batchID{}
	where := map[int64]*SegmentReport{}
	for _, s := range fin {
		if s.Read == nil {
			continue
		}
		for off, b := range s.Read.crcs {
			remote[off], where[off] = b, s
		}
	}
	var out []Finding
	seen := map[int64]bool{}
	_ = local.Batches(ctx, func(path string, b *format.Batch) bool {
		r, ok := remote[b.BaseOffset]
		if !ok {
			return true
		}
		seen[b.BaseOffset] = true
		if r.crc != b.CRC || r.last != b.LastOffset() {
			s := where[b.BaseOffset]
			f := Finding{Problem: verify.Problem{Kind: KindLocalDivergence, Position: r.pos, Offset: b.BaseOffset,
				Message: "the batch at offset " + itoa(b.BaseOffset) + " differs between the tiers: remote (position " + itoa(r.pos) + ") crc " + format.CRC(r.crc).String() +
					", last offset " + itoa(r.last) + "; local " + path + " (position " + itoa(b.Pos) + ") crc " + format.CRC(b.CRC).String() + ", last offset " + itoa(b.LastOffset())},
				Partition: rep.Partition, TopicID: rep.TopicID, SegmentID: s.SegmentID, Key: s.seg.Key(SuffixLog)}
			f.Repair = "the tiers disagree on committed data; find which replica's copy is right (klog verify on each) before the local copy is deleted by local retention"
			out = append(out, f)
		}
		return true
	})
	return out
}

// Local is the broker's local tail of a partition.
type Local struct {
	Dir string
	// StartOffset is the local log start offset: the first local
	// segment's base offset (-1: no segment).
	StartOffset int64
	// LogStartOffset is the partition's log start offset from the log
	// dir's log-start-offset-checkpoint (-1: unknown).
	LogStartOffset int64
	// TopicID is from partition.metadata (zero: none).
	TopicID Uuid
	Logs    []string
	Epochs  []format.EpochEntry
}

// Batches walks the local segments' batches in order until fn returns
// false.
func (l *Local) Batches(ctx context.Context, fn func(path string, b *format.Batch) bool) error {
	for _, p := range l.Logs {
		f, size, err := safeio.OpenSized(p)
		if err != nil {
			return err
		}
		sc := format.NewScanner(f, size, format.ScanOptions{})
		for {
			if err := ctx.Err(); err != nil {
				f.Close()
				return err
			}
			b, err := sc.Next()
			if err != nil {
				break
			}
			if !fn(p, b) {
				f.Close()
				return nil
			}
		}
		f.Close()
	}
	return nil
}

// AivenFields is the plugin's custom metadata
// (SegmentCustomMetadataField): a Kafka tagged-fields section with
// remote_size (0, varlong), object_prefix (1) and object_key (2)
// (compact strings).
type AivenFields struct {
	RemoteSize    int64
	HasRemoteSize bool
	ObjectPrefix  string
	HasPrefix     bool
	ObjectKey     string
	HasKey        bool
}

// AivenCustomFields decodes the plugin's custom metadata; ok is false when
// there is none or it is not the plugin's.
func AivenCustomFields(b []byte) (f AivenFields, ok bool) {
	if len(b) == 0 {
		return f, false
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > 16 {
		return f, false
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		tag, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return f, false
		}
		size, k2 := binary.Uvarint(b[k1:])
		if k2 <= 0 || uint64(len(b)-k1-k2) < size {
			return f, false
		}
		v := b[k1+k2 : k1+k2+int(size)]
		b = b[k1+k2+int(size):]
		switch tag {
		case 0:
			x, m := binary.Varint(v)
			if m != len(v) {
				return f, false
			}
			f.RemoteSize, f.HasRemoteSize = x, true
		case 1, 2:
			l, m := binary.Uvarint(v)
			if m <= 0 || l == 0 || uint64(len(v)-m) != l-1 {
				return f, false
			}
			s := string(v[m:])
			if tag == 1 {
				f.ObjectPrefix, f.HasPrefix = s, true
			} else {
				f.ObjectKey, f.HasKey = s, true
			}
		}
	}
	return f, len(b) == 0
}

// LoadLocal reads the broker's local tail of a partition directory: its
// segments, leader epochs, topic id and the log start offset its log dir
// checkpoints.
func LoadLocal(dir string) (*Local, error) {
	d, err := partition.Open(dir)
	if err != nil {
		return nil, err
	}
	l := &Local{Dir: dir, StartOffset: -1, LogStartOffset: -1}
	for _, s := range d.Segments {
		if s.Log == "" {
			continue
		}
		if l.StartOffset < 0 {
			l.StartOffset = s.BaseOffset
		}
		l.Logs = append(l.Logs, s.Log)
	}
	if off, ok, err := partition.CheckpointOffset(dir, partition.LogStartCheckpoint); err == nil && ok {
		l.LogStartOffset = off
	}
	if id, ok, err := partition.ReadTopicID(dir); err == nil && ok {
		l.TopicID = Uuid(id)
	}
	if d.LeaderEpochs != "" {
		if data, err := os.ReadFile(d.LeaderEpochs); err == nil {
			l.Epochs, _ = format.ParseLeaderEpochCheckpoint(data)
		}
	}
	return l, nil
}
