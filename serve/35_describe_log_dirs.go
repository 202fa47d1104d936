package serve

// DescribeLogDirs, key 35: v0-v4.
//
// Version notes (DescribeLogDirsRequest.json):
//   - v0: each log dir's partitions with their size, offset lag and
//     whether they are a -future replica (KIP-113); v1: throttle time.
//   - v2: flexible; v3: a top-level error code.
//   - v4: each log dir's total and usable bytes (KIP-827).
//   - v5 (cordoned log dirs) is not served.

import (
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(35, 0, 4, (*conn).handleDescribeLogDirs) }

// handleDescribeLogDirs describes the one log dir: each partition's size
// (its segments' bytes, UnifiedLog.size) and offset lag (the high
// watermark's lead over the log end, 0 for the only replica, as
// ReplicaManager.getLogEndOffsetLag answers for a current replica).
func (cn *conn) handleDescribeLogDirs(r *kmsg.DescribeLogDirsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	d := kmsg.NewDescribeLogDirsResponseDir()
	d.Dir = s.cfg.LogDir
	if abs, err := filepath.Abs(s.cfg.LogDir); err == nil {
		d.Dir = abs
	}
	d.TotalBytes, d.UsableBytes = diskSpace(s.cfg.LogDir)
	add := func(name string, parts []int32) {
		t := s.topic(name)
		if t == nil {
			return
		}
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = name
		for i, p := range t.parts {
			if p == nil || (parts != nil && !containsInt32(parts, int32(i))) {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition = p.index
			for _, sg := range p.log.Segments() {
				dp.Size += sg.Size
			}
			dp.OffsetLag = max(p.log.HighWatermark()-p.log.LogEndOffset(), 0)
			dt.Partitions = append(dt.Partitions, dp)
		}
		if len(dt.Partitions) > 0 {
			d.Topics = append(d.Topics, dt)
		}
	}
	if r.Topics == nil {
		for _, name := range s.topicNames() {
			add(name, nil)
		}
	} else {
		for _, t := range r.Topics {
			add(t.Topic, t.Partitions)
		}
	}
	resp.Dirs = append(resp.Dirs, d)
	return resp, nil
}

func containsInt32(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
