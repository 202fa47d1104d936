// Package tiered reads and checks a topic's remote tier (KIP-405 tiered
// storage) where it lives: in a local directory or an S3-compatible bucket
// (package objstore), in either layout in use — Kafka's LocalTieredStorage
// and Aiven's tiered-storage-for-apache-kafka (manifest, chunk indexes,
// zstd, AES-GCM with an RSA-wrapped data key) — and folds the broker's
// __remote_log_metadata partitions into each partition's remote segment
// lineage to check the store against it. It only reads: no call here
// writes, deletes or changes an object or a file.
package tiered

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/klog-dev/klog/objstore"
	"github.com/klog-dev/klog/verify"
)

// Options says where a remote tier and its broker state are.
type Options struct {
	Remote *Remote
	// Prefix narrows the listing to keys under it ("" lists the whole
	// store).
	Prefix string
	// Metadata are __remote_log_metadata partition directories (see
	// MetadataDirs); none means no metadata: segments are listed
	// without states and nothing is compared with a lineage.
	Metadata []string
	// LogDirs are broker log directories holding the partitions' local
	// tails (<dir>/<topic>-<partition>).
	LogDirs []string
	// Keep, if set, selects the partitions.
	Keep func(TopicPartition) bool
	// Checker's Read, Jobs and Verify apply; its Remote is Remote.
	Checker Checker
}

// Summary is what a run saw.
type Summary struct {
	Listing
	Partitions int `json:"partitions"`
	Segments   int `json:"segments"`
	Findings   int `json:"findings"`
	Info       int `json:"info"`
	// MetadataRecords counts the __remote_log_metadata records folded.
	MetadataRecords int64 `json:"metadataRecords"`
	// Unplaced are metadata problems of no partition klog reports.
	Unplaced []Finding `json:"unplacedFindings,omitempty"`
}

// Run lists the store, folds the metadata and checks every partition,
// calling fn with each partition's report as soon as it is done: the
// partitions the store holds as the listing passes them, then those only
// the metadata knows, by topic and partition.
func Run(ctx context.Context, o Options, fn func(*PartitionReport) error) (*Summary, error) {
	sum := &Summary{}
	var lin *Lineage
	if len(o.Metadata) > 0 {
		lin = NewLineage()
		if err := ReadMetadata(ctx, o.Metadata, lin); err != nil {
			return sum, err
		}
		sum.MetadataRecords = lin.Records
	}
	c := o.Checker
	c.Remote = o.Remote
	keep := o.Keep
	seen := map[TopicPartition]bool{}
	prefixes := map[Layout]string{}
	var layouts []Layout
	emit := func(rep *PartitionReport) error {
		sum.Partitions++
		sum.Segments += len(rep.Segments)
		f, i := rep.Count()
		sum.Findings += f
		sum.Info += i
		return fn(rep)
	}
	listing, err := ListPartitions(ctx, o.Remote.Store, o.Prefix, keep, func(p *PartitionObjects) error {
		seen[p.Partition] = true
		if _, ok := prefixes[p.Layout]; !ok {
			prefixes[p.Layout] = p.Prefix
			layouts = append(layouts, p.Layout)
		}
		var pl *PartitionLineage
		if lin != nil {
			pl = lin.Partitions[p.Partition]
		}
		rep := c.CheckPartition(ctx, p, pl, findLocal(o.LogDirs, p.Partition))
		placeProblems(rep, lin)
		return emit(rep)
	})
	sum.Listing = listing
	if err != nil {
		return sum, err
	}
	if lin == nil {
		return sum, nil
	}
	var rest []*PartitionLineage
	for tp, pl := range lin.Partitions {
		if !seen[tp] && (keep == nil || keep(tp)) {
			rest = append(rest, pl)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		a, b := rest[i].Partition, rest[j].Partition
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	for _, pl := range rest {
		layout := LayoutKafka
		if len(layouts) > 0 {
			layout = layouts[0]
		}
		for _, m := range pl.Segments {
			if f, ok := AivenCustomFields(m.CustomMetadata); ok && (f.HasKey || f.HasPrefix) {
				layout = LayoutAiven
			}
			break
		}
		objs := &PartitionObjects{Layout: layout, Partition: pl.Partition, Prefix: prefixes[layout]}
		rep := c.CheckPartition(ctx, objs, pl, findLocal(o.LogDirs, pl.Partition))
		placeProblems(rep, lin)
		if err := emit(rep); err != nil {
			return sum, err
		}
	}
	for _, p := range lin.Problems {
		if p.placed {
			continue
		}
		pos := p.Pos
		sum.Unplaced = append(sum.Unplaced, Finding{Problem: verify.Problem{Kind: KindMetadataInvalid, Position: -1, Offset: -1, Message: p.Message},
			Partition: partName(p.Partition), TopicID: segID(p.Partition.TopicID), SegmentID: segID(p.SegmentID), Metadata: &pos})
		sum.Findings++
	}
	return sum, nil
}

// partName is tp's name, "" for a problem of no partition (a metadata
// batch that fails its CRC, bytes that are no batch), not "-0".
func partName(tp TopicPartition) string {
	if tp == (TopicPartition{}) {
		return ""
	}
	return tp.String()
}

func segID(u Uuid) string {
	if u == (Uuid{}) {
		return ""
	}
	return u.String()
}

// placeProblems moves the metadata problems of rep's partition into it.
func placeProblems(rep *PartitionReport, lin *Lineage) {
	if lin == nil {
		return
	}
	for i := range lin.Problems {
		p := &lin.Problems[i]
		if p.placed || p.Partition.String() != rep.Partition || p.Partition.TopicID.String() != rep.TopicID {
			continue
		}
		p.placed = true
		pos := p.Pos
		rep.Findings = append(rep.Findings, Finding{Problem: verify.Problem{Kind: KindMetadataInvalid, Position: -1, Offset: -1, Message: p.Message},
			Partition: rep.Partition, TopicID: rep.TopicID, SegmentID: segID(p.SegmentID), Metadata: &pos,
			Repair: "nothing to do in the store: Kafka skipped this record too; look for the broker bug or the hand-written record that produced it"})
	}
}

// findLocal is tp's local tail in the first log dir that has it with the
// same topic id (or none recorded).
func findLocal(logDirs []string, tp TopicPartition) *Local {
	for _, ld := range logDirs {
		dir := filepath.Join(ld, tp.String())
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		l, err := LoadLocal(dir)
		if err != nil {
			continue
		}
		if l.TopicID != (Uuid{}) && l.TopicID != tp.TopicID {
			continue // another incarnation of the topic
		}
		return l
	}
	return nil
}

// ObjectsOf lists the objects of one partition report's segments, present
// ones first: what a caller needs to read them again.
func ObjectsOf(rep *PartitionReport) []objstore.Object {
	var out []objstore.Object
	for _, s := range rep.Segments {
		for _, a := range s.Objects {
			if a.Present {
				out = append(out, objstore.Object{Key: a.Key, Size: a.Size})
			}
		}
	}
	return out
}
