package tiered

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/objstore"
	"github.com/klog-dev/klog/verify"
)

// Finding is one problem of the remote tier: verify's Problem (kind,
// position, offset, message; Path is the object's location) and which
// partition, segment, object and metadata record it concerns, with the
// repair klog proposes (it never applies one).
type Finding struct {
	verify.Problem
	Partition string `json:"partition"`
	TopicID   string `json:"topicId"`
	SegmentID string `json:"segmentId,omitempty"`
	// Key is the object the finding is about ("" for one about offsets
	// or metadata only); Keys lists every object concerned.
	Key  string   `json:"key,omitempty"`
	Keys []string `json:"keys,omitempty"`
	// Metadata is the __remote_log_metadata record concerned.
	Metadata *MetadataPos `json:"metadata,omitempty"`
	Repair   string       `json:"repair,omitempty"`
}

// SegmentReport is one remote segment: what the metadata says of it, what
// the store holds and, when it was read, what its batches show.
type SegmentReport struct {
	Partition      string       `json:"partition"`
	TopicID        string       `json:"topicId"`
	SegmentID      string       `json:"segmentId"`
	Layout         Layout       `json:"layout,omitempty"`
	State          string       `json:"state"`
	StartOffset    int64        `json:"startOffset"`
	EndOffset      int64        `json:"endOffset"`
	MaxTimestampMs int64        `json:"maxTimestampMs"`
	SizeInBytes    int64        `json:"segmentSizeInBytes"`
	LeaderEpochs   []EpochStart `json:"segmentLeaderEpochs"`
	TxnIdxEmpty    *bool        `json:"txnIdxEmpty,omitempty"`
	Metadata       *MetadataPos `json:"metadata,omitempty"`
	// Objects are the artifacts the layout writes, present or not.
	Objects []Artifact `json:"objects"`
	// Read is what reading the .log found (nil: not read).
	Read     *LogRead  `json:"read,omitempty"`
	Findings []Finding `json:"findings"`

	meta *SegmentMetadata
	seg  *Segment
}

// LogRead is what reading a remote .log found.
type LogRead struct {
	Batches        int64        `json:"batches"`
	Records        int64        `json:"records"`
	Bytes          int64        `json:"bytes"`
	FirstOffset    int64        `json:"firstOffset"`
	LastOffset     int64        `json:"lastOffset"`
	MaxTimestampMs int64        `json:"maxTimestampMs"`
	LeaderEpochs   []EpochStart `json:"leaderEpochs"`
	OK             bool         `json:"ok"`
	// crcs are the batches at or past the local log start, for the
	// comparison of the tiers.
	crcs map[int64]batchID
}

type batchID struct {
	pos  int64
	last int64
	crc  uint32
}

// PartitionReport is one partition of the remote tier.
type PartitionReport struct {
	Partition string `json:"partition"`
	Topic     string `json:"topic"`
	Number    int32  `json:"partitionNumber"`
	TopicID   string `json:"topicId"`
	Layout    Layout `json:"layout,omitempty"`
	// Prefix is the key prefix the segments were found under.
	Prefix string `json:"prefix"`
	// Deleted is the partition's delete state, if the metadata has one.
	Deleted string `json:"partitionDeleteState,omitempty"`
	// RemoteStart and RemoteEnd bound the finished remote segments (-1:
	// none); HighestTiered is ListOffsets -5's answer.
	RemoteStart   int64 `json:"remoteStartOffset"`
	RemoteEnd     int64 `json:"remoteEndOffset"`
	HighestTiered int64 `json:"highestTieredOffset"`
	RemoteBytes   int64 `json:"remoteBytes"`
	// LocalStart is the local log's first offset (-1: no local tail
	// given).
	LocalStart int64             `json:"localLogStartOffset"`
	LocalDir   string            `json:"localDir,omitempty"`
	Segments   []*SegmentReport  `json:"segments"`
	Findings   []Finding         `json:"findings"`
	Stray      []objstore.Object `json:"strayObjects,omitempty"`
}

// Count returns the findings of the partition and its segments, and how
// many of them are information only.
func (p *PartitionReport) Count() (findings, info int) {
	count := func(fs []Finding) {
		for _, f := range fs {
			if f.Info {
				info++
			} else {
				findings++
			}
		}
	}
	count(p.Findings)
	for _, s := range p.Segments {
		count(s.Findings)
	}
	return findings, info
}

// Checker checks partitions of a remote tier against their metadata and
// local tail.
type Checker struct {
	Remote *Remote
	// Read reads every segment's .log (CRC of every batch, framing,
	// records; offsets, timestamps and epochs against the metadata);
	// without it only names, sizes and metadata are compared.
	Read bool
	// Jobs is how many segments are read at once (0: 4).
	Jobs int
	// Verify are the limits of the .log checks.
	Verify verify.Options
}

// CheckPartition reports one partition: objs is what the store holds (nil:
// nothing), lin what the metadata says (nil: no metadata given), local the
// broker's local tail (nil: none given).
func (c *Checker) CheckPartition(ctx context.Context, objs *PartitionObjects, lin *PartitionLineage, local *Local) *PartitionReport {
	var tp TopicPartition
	switch {
	case objs != nil:
		tp = objs.Partition
	case lin != nil:
		tp = lin.Partition
	}
	rep := &PartitionReport{Partition: tp.String(), Topic: tp.Topic, Number: tp.Partition, TopicID: tp.TopicID.String(),
		RemoteStart: -1, RemoteEnd: -1, HighestTiered: -1, LocalStart: -1}
	if objs != nil {
		rep.Layout, rep.Prefix, rep.Stray = objs.Layout, objs.Prefix, objs.Stray
	}
	if local != nil {
		rep.LocalStart, rep.LocalDir = local.StartOffset, local.Dir
	}
	if lin != nil {
		rep.HighestTiered = lin.HighestOffset()
		if lin.Delete != nil {
			rep.Deleted = lin.Delete.String()
		}
	}
	rep.Segments = c.match(rep, objs, lin)
	c.readSegments(ctx, rep, local)
	for _, s := range rep.Segments {
		c.segmentFindings(rep, s, lin)
	}
	c.partitionFindings(ctx, rep, lin, local)
	return rep
}

// match pairs the stored segments with their metadata by segment id.
func (c *Checker) match(rep *PartitionReport, objs *PartitionObjects, lin *PartitionLineage) []*SegmentReport {
	var out []*SegmentReport
	seen := map[Uuid]bool{}
	layout, prefix := rep.Layout, rep.Prefix
	if objs != nil {
		for _, seg := range objs.Segments {
			s := &SegmentReport{Partition: rep.Partition, TopicID: rep.TopicID, SegmentID: seg.SegmentID.String(), Layout: seg.Layout,
				StartOffset: seg.StartOffset, EndOffset: -1, MaxTimestampMs: -1, SizeInBytes: -1, State: "NO_METADATA", seg: seg}
			if lin != nil {
				if m := lin.Segments[seg.SegmentID]; m != nil {
					s.setMeta(m)
					seen[seg.SegmentID] = true
				}
			}
			s.Objects = artifacts(seg)
			out = append(out, s)
		}
	}
	if lin != nil {
		if layout == "" {
			layout = LayoutKafka
		}
		for _, m := range lin.Sorted() {
			if seen[m.ID] {
				continue
			}
			// Metadata with nothing stored: build the keys the layout
			// would use.
			pre := prefix
			if layout == LayoutAiven {
				if f, ok := AivenCustomFields(m.CustomMetadata); ok && f.HasPrefix {
					pre = f.ObjectPrefix
				}
			}
			n := Name{Layout: layout, Partition: m.Partition, StartOffset: m.StartOffset, SegmentID: m.ID, Prefix: pre,
				Base: KeyBase(layout, pre, m.Partition, m.StartOffset, m.ID)}
			seg := &Segment{Name: n, Objects: map[string]objstore.Object{}}
			s := &SegmentReport{Partition: rep.Partition, TopicID: rep.TopicID, SegmentID: m.ID.String(), Layout: layout, seg: seg}
			s.setMeta(m)
			s.Objects = artifacts(seg)
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].StartOffset != out[j].StartOffset {
			return out[i].StartOffset < out[j].StartOffset
		}
		return out[i].SegmentID < out[j].SegmentID
	})
	return out
}

func (s *SegmentReport) setMeta(m *SegmentMetadata) {
	s.meta = m
	s.State = m.State.String()
	s.StartOffset, s.EndOffset, s.MaxTimestampMs = m.StartOffset, m.EndOffset, m.MaxTimestampMs
	s.SizeInBytes = int64(m.SizeInBytes)
	s.LeaderEpochs = m.LeaderEpochs
	t := m.TxnIdxEmpty
	s.TxnIdxEmpty = &t
	pos := m.Last
	s.Metadata = &pos
}

func artifacts(seg *Segment) []Artifact {
	var out []Artifact
	for _, sfx := range seg.Layout.Suffixes() {
		o, ok := seg.Objects[sfx]
		if !ok && !seg.Layout.Mandatory(sfx) {
			continue
		}
		out = append(out, Artifact{Suffix: sfx, Key: seg.Key(sfx), Size: o.Size, Present: ok})
	}
	return out
}

// readSegments reads the .log of every stored segment, Jobs at a time.
func (c *Checker) readSegments(ctx context.Context, rep *PartitionReport, local *Local) {
	if !c.Read {
		return
	}
	jobs := c.Jobs
	if jobs <= 0 {
		jobs = 4
	}
	localStart := int64(-1)
	if local != nil {
		localStart = local.StartOffset
	}
	work := make(chan *SegmentReport)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lc := verify.NewLogChecker(ctx, c.Verify)
			for s := range work {
				c.readSegment(ctx, lc, s, localStart)
			}
		}()
	}
	for _, s := range rep.Segments {
		if s.seg.Has(SuffixLog) && ctx.Err() == nil {
			work <- s
		}
	}
	close(work)
	wg.Wait()
}

func (c *Checker) readSegment(ctx context.Context, lc *verify.LogChecker, s *SegmentReport, localStart int64) {
	seg := s.seg
	logKey := seg.Key(SuffixLog)
	var m *Manifest
	if seg.Layout == LayoutAiven {
		if !seg.Has(SuffixManifest) {
			return // reported as a missing artifact
		}
		var err error
		m, err = c.Remote.ReadManifest(ctx, seg.Key(SuffixManifest))
		if err != nil {
			s.addErr(seg.Key(SuffixManifest), c.Remote.Store.Location(seg.Key(SuffixManifest)), err)
			return
		}
		c.manifestFindings(s, m)
	}
	lr, err := c.Remote.OpenLog(ctx, seg, m)
	if err != nil {
		s.addErr(logKey, c.Remote.Store.Location(logKey), err)
		return
	}
	defer lr.Close()
	rd := &LogRead{FirstOffset: -1, LastOffset: -1, MaxTimestampMs: -1, Bytes: lr.Size()}
	prevEpoch := int32(-2)
	onBatch := func(b *format.Batch) {
		if rd.FirstOffset < 0 {
			rd.FirstOffset = b.BaseOffset
		}
		if l := b.LastOffset(); l > rd.LastOffset {
			rd.LastOffset = l
		}
		if b.IsV2() && b.MaxTimestamp > rd.MaxTimestampMs {
			rd.MaxTimestampMs = b.MaxTimestamp
		}
		if b.IsV2() && b.PartitionLeaderEpoch != prevEpoch {
			// RecordBatch.NO_PARTITION_LEADER_EPOCH (-1) batches
			// are not in a leader epoch cache either.
			if b.PartitionLeaderEpoch >= 0 {
				rd.LeaderEpochs = append(rd.LeaderEpochs, EpochStart{Epoch: b.PartitionLeaderEpoch, Offset: b.BaseOffset})
			}
			prevEpoch = b.PartitionLeaderEpoch
		}
		if localStart >= 0 && b.LastOffset() >= localStart {
			if rd.crcs == nil {
				rd.crcs = map[int64]batchID{}
			}
			rd.crcs[b.BaseOffset] = batchID{pos: b.Pos, last: b.LastOffset(), crc: b.CRC}
		}
	}
	// The broker reads the segment by its metadata: its start offset is
	// the base of the offsets (a name that says otherwise is reported
	// once, as start-offset-mismatch).
	base := seg.StartOffset
	if s.meta != nil {
		base = s.meta.StartOffset
	}
	fr := lc.Check(c.Remote.Store.Location(logKey), lr, lr.Size(), base, onBatch)
	rd.Batches, rd.Records, rd.OK = fr.Batches, fr.Records, fr.OK
	s.Read = rd
	for _, p := range fr.Problems {
		if p.Info {
			continue
		}
		f := s.finding(p.Kind, logKey, p.Position, p.Offset, p.Message)
		f.Stored, f.Computed, f.Bytes = p.Stored, p.Computed, p.Bytes
		f.Repair = repairData(s, logKey, p.Offset)
		s.Findings = append(s.Findings, f)
	}
	if err := fr.IOError(); err != nil {
		s.addErr(logKey, c.Remote.Store.Location(logKey), err)
	}
}

// finding builds a finding about segment s.
func (s *SegmentReport) finding(kind verify.Kind, key string, pos, offset int64, msg string) Finding {
	f := Finding{Problem: verify.Problem{Kind: kind, Position: pos, Offset: offset, Message: msg}, Partition: s.Partition, TopicID: s.TopicID,
		SegmentID: s.SegmentID, Key: key, Metadata: s.Metadata}
	return f
}

// addErr reports an error reading an object: a finding when the bytes are
// at fault (a manifest, a chunk), a key-missing note otherwise.
func (s *SegmentReport) addErr(key, loc string, err error) {
	var oe *ObjectError
	pos := int64(-1)
	if errors.As(err, &oe) {
		pos = oe.Pos
	}
	kind := verify.Kind("")
	switch {
	case errors.Is(err, ErrManifest):
		kind = KindManifestInvalid
	case errors.Is(err, ErrDecrypt) && strings.Contains(err.Error(), "key pair"):
		kind = KindKeyMissing
	case errors.Is(err, ErrDecrypt), errors.Is(err, ErrChunk):
		kind = KindChunkInvalid
	case objstore.IsNotExist(err):
		kind = KindMissingRemoteFiles
	}
	if kind == "" {
		// An I/O error: not a finding about the data.
		f := s.finding("", key, pos, -1, err.Error())
		f.Kind = "io-error"
		s.Findings = append(s.Findings, f)
		return
	}
	f := s.finding(kind, key, pos, -1, err.Error())
	if kind == KindKeyMissing {
		f.Info = true
		f.Repair = "give klog the key pair's private key (--key-pair ID=PRIVATE.pem, or --rsm-config with the plugin's encryption.key.pairs.ID.private.key.file)"
	} else {
		f.Repair = repairData(s, key, -1)
	}
	s.Findings = append(s.Findings, f)
}

// manifestFindings compares an Aiven manifest with the objects it
// describes and with the metadata.
func (c *Checker) manifestFindings(s *SegmentReport, m *Manifest) {
	seg := s.seg
	logObj := seg.Objects[SuffixLog]
	if want := m.Chunks().TransformedSize(); seg.Has(SuffixLog) && want != logObj.Size {
		f := s.finding(KindSizeMismatch, seg.Key(SuffixLog), -1, -1, "the .log object is "+itoa(logObj.Size)+" bytes; its manifest's chunk index makes "+itoa(want))
		f.Repair = repairData(s, seg.Key(SuffixLog), -1)
		s.Findings = append(s.Findings, f)
	}
	if ix := seg.Objects[SuffixIndexes]; seg.Has(SuffixIndexes) {
		end := int64(0)
		for _, r := range []*IndexRange{m.Indexes.Offset, m.Indexes.Timestamp, m.Indexes.ProducerSnapshot, m.Indexes.LeaderEpoch, m.Indexes.Transaction} {
			if r != nil {
				end = max(end, int64(r.Position)+int64(r.Size))
			}
		}
		if end != ix.Size {
			f := s.finding(KindSizeMismatch, seg.Key(SuffixIndexes), -1, -1, "the .indexes object is "+itoa(ix.Size)+" bytes; its manifest places indexes up to byte "+itoa(end))
			f.Repair = repairData(s, seg.Key(SuffixIndexes), -1)
			s.Findings = append(s.Findings, f)
		}
	}
	if s.meta != nil && int64(m.Chunks().OriginalFileSize) != int64(s.meta.SizeInBytes) {
		f := s.finding(KindSizeMismatch, seg.Key(SuffixManifest), -1, -1, "the manifest's originalFileSize is "+itoa(int64(m.Chunks().OriginalFileSize))+
			"; the metadata's segmentSizeInBytes "+itoa(int64(s.meta.SizeInBytes)))
		f.Repair = repairData(s, seg.Key(SuffixManifest), -1)
		s.Findings = append(s.Findings, f)
	}
	if ms := m.Segment; ms != nil && s.meta != nil && (ms.StartOffset != s.meta.StartOffset || ms.EndOffset != s.meta.EndOffset) {
		f := s.finding(KindEndOffsetMismatch, seg.Key(SuffixManifest), -1, ms.EndOffset, "the manifest says offsets "+itoa(ms.StartOffset)+"-"+itoa(ms.EndOffset)+
			"; the metadata "+itoa(s.meta.StartOffset)+"-"+itoa(s.meta.EndOffset))
		if ms.StartOffset != s.meta.StartOffset {
			f.Kind = KindStartOffsetMismatch
			f.Offset = ms.StartOffset
		}
		f.Repair = repairData(s, seg.Key(SuffixManifest), -1)
		s.Findings = append(s.Findings, f)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
