package tiered

import (
	"context"
	"sort"

	"github.com/klog-dev/klog/objstore"
)

// PartitionObjects is what a listing found of one partition: its segments
// in start-offset order (then segment id), and the keys under its
// directory that name no segment artifact.
type PartitionObjects struct {
	Layout    Layout
	Partition TopicPartition
	// Prefix is the layout's prefix (Name.Prefix) the partition was
	// found under.
	Prefix   string
	Segments []*Segment
	// Stray are objects beside the segments that are no artifact of
	// either layout.
	Stray []objstore.Object
}

// Listing summarises a whole listing.
type Listing struct {
	// Objects and Bytes count every object listed.
	Objects int64 `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Ignored counts objects that belong to no partition of either
	// layout.
	Ignored int64 `json:"ignored"`
}

// ListPartitions lists the store under prefix and calls fn once per
// partition directory, as soon as the listing has left it (the keys of one
// directory come together), so memory holds one partition's segments at a
// time. keep, if set, selects the partitions to report.
func ListPartitions(ctx context.Context, st objstore.Store, prefix string, keep func(TopicPartition) bool, fn func(*PartitionObjects) error) (Listing, error) {
	var sum Listing
	var cur *PartitionObjects
	var curDir string
	byBase := map[string]*Segment{}
	flush := func() error {
		if cur == nil {
			return nil
		}
		p := cur
		cur, curDir = nil, ""
		clear(byBase)
		sort.Slice(p.Segments, func(i, j int) bool {
			a, b := p.Segments[i], p.Segments[j]
			if a.StartOffset != b.StartOffset {
				return a.StartOffset < b.StartOffset
			}
			return a.SegmentID.String() < b.SegmentID.String()
		})
		return fn(p)
	}
	err := st.List(ctx, prefix, func(o objstore.Object) error {
		sum.Objects++
		sum.Bytes += o.Size
		n, ok := ParseKey(o.Key)
		dir := o.Key[:lastSlash(o.Key)]
		if !ok {
			if cur != nil && dir == curDir {
				cur.Stray = append(cur.Stray, o)
			} else {
				sum.Ignored++
			}
			return nil
		}
		if keep != nil && !keep(n.Partition) {
			sum.Ignored++
			return nil
		}
		if cur == nil || dir != curDir || n.Layout != cur.Layout || n.Partition != cur.Partition {
			if err := flush(); err != nil {
				return err
			}
			cur, curDir = &PartitionObjects{Layout: n.Layout, Partition: n.Partition, Prefix: n.Prefix}, dir
		}
		seg := byBase[n.Base]
		if seg == nil {
			seg = &Segment{Name: n, Objects: map[string]objstore.Object{}}
			seg.Suffix = ""
			byBase[n.Base] = seg
			cur.Segments = append(cur.Segments, seg)
		}
		seg.Objects[n.Suffix] = o
		return nil
	})
	if err != nil {
		return sum, err
	}
	return sum, flush()
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return 0
}
