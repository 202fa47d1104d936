package cluster

import (
	"context"

	"github.com/klog-dev/klog/inspect"
)

// PartitionDiff is klog diff over one partition's replicas in several
// log dirs (several brokers'), matched by topic id.
type PartitionDiff struct {
	Topic     string              `json:"topic"`
	Partition int32               `json:"partition"`
	TopicID   string              `json:"topicId"`
	Brokers   []int32             `json:"brokers"`
	Dirs      []string            `json:"dirs"`
	Report    *inspect.DiffReport `json:"diff"`
}

// DiffAll runs inspect.Diff over the replicas of every partition that
// more than one of the log dirs holds (the current replicas; -future ones
// are moves within a broker). A partition held once is not listed.
func DiffAll(ctx context.Context, dirs []*LogDir, opts inspect.DiffOptions) ([]*PartitionDiff, error) {
	var all []*Replica
	for _, ld := range dirs {
		for _, pd := range ld.Partitions {
			r := &Replica{Topic: pd.Topic, Number: pd.Partition, Path: pd.Path, broker: ld.BrokerID}
			if pd.TopicID != ([16]byte{}) {
				r.TopicID = formatID(pd.TopicID)
			}
			all = append(all, r)
		}
	}
	var out []*PartitionDiff
	for _, t := range topicViews(all, nil) {
		for _, p := range t.Partitions {
			if len(p.Replicas) < 2 {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d := &PartitionDiff{Topic: t.Name, Partition: p.Partition, TopicID: p.TopicID}
			for _, r := range p.Replicas {
				d.Brokers, d.Dirs = append(d.Brokers, r.Broker), append(d.Dirs, r.LogDir)
			}
			o := opts
			o.Leader = -1
			rep, err := inspect.Diff(d.Dirs, o)
			if err != nil {
				return nil, err
			}
			d.Report = rep
			out = append(out, d)
		}
	}
	return out, nil
}
