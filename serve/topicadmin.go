package serve

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
)

// Topics created, grown and deleted by the admin APIs (CreateTopics,
// CreatePartitions, DeleteTopics) on a writable server: real partition
// directories, each with its partition.metadata, as a broker makes them.
// The topic table is replaced, never changed in place (copy on write
// under s.mu), so readers that hold a *topic keep a consistent one.

// newPart makes and opens the partition directory topic-n with topic id
// id (its partition.metadata).
func (s *Server) newPart(name string, n int32, id [16]byte) (*part, error) {
	dir := filepath.Join(s.cfg.LogDir, name+"-"+strconv.Itoa(int(n)))
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("%s already exists", dir)
	}
	p := &part{topic: name, index: n, dir: dir}
	opts := s.cfg.Produce
	opts.TopicID = id
	if err := p.openNewAppender(opts); err != nil {
		return nil, err
	}
	return p, nil
}

// replaceTopic installs t (nil removes name) in a new topic table; s.mu
// is held.
func (s *Server) replaceTopicLocked(name string, t *topic) {
	topics := make(map[string]*topic, len(s.topics)+1)
	for k, v := range s.topics {
		if k != name {
			topics[k] = v
		}
	}
	list := make([]string, 0, len(s.topicList)+1)
	for _, n := range s.topicList {
		if n != name {
			list = append(list, n)
		}
	}
	if t != nil {
		topics[name] = t
		list = append(list, name)
		sort.Strings(list)
	}
	s.topics, s.topicList = topics, list
}

// createTopicParts creates topic name with n partitions under a fresh
// topic id. A failure half-way removes what it made.
func (s *Server) createTopicParts(name string, n int32) (*topic, error) {
	id, err := partition.NewTopicID()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.topics[name] != nil {
		return nil, errTopicExists
	}
	if err := s.checkNewTopic(name); err != nil {
		return nil, err
	}
	if err := s.checkPartitionBudgetLocked(n); err != nil {
		return nil, err
	}
	t := &topic{name: name, id: id}
	for i := int32(0); i < n; i++ {
		p, err := s.newPart(name, i, id)
		if err != nil {
			s.discardParts(t.parts)
			return nil, err
		}
		t.parts = append(t.parts, p)
	}
	s.replaceTopicLocked(name, t)
	return t, nil
}

var errTopicExists = errors.New("topic exists")

// checkPartitionBudgetLocked is checkTopicBudget (limits.go) for n new
// partitions at once; s.mu is held.
func (s *Server) checkPartitionBudgetLocked(n int32) error {
	if s.lim.fdLimit <= 0 {
		return nil
	}
	parts := int(n)
	for _, t := range s.topics {
		parts += len(t.parts)
	}
	if parts*fdsPerPartition+fdReserve > s.lim.fdLimit/2 {
		return errTopicBudget
	}
	return nil
}

// addPartitions grows topic name to count partitions (with the topic's
// id).
func (s *Server) addPartitions(name string, count int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.topics[name]
	if old == nil {
		return errors.New("no topic")
	}
	if err := s.checkPartitionBudgetLocked(count - int32(len(old.parts))); err != nil {
		return err
	}
	t := &topic{name: name, id: old.id, parts: append([]*part(nil), old.parts...)}
	var added []*part
	for i := int32(len(old.parts)); i < count; i++ {
		p, err := s.newPart(name, i, old.id)
		if err != nil {
			s.discardParts(added)
			return err
		}
		added = append(added, p)
		t.parts = append(t.parts, p)
	}
	s.replaceTopicLocked(name, t)
	return nil
}

// discardParts removes partitions made by a creation that failed.
func (s *Server) discardParts(ps []*part) {
	for _, p := range ps {
		p.app.Close()
		os.RemoveAll(p.dir)
	}
}

// deleteTopic removes topic name as LogManager.asyncDelete does: each
// partition's appender is closed, its directory renamed to
// <topic>-<partition>.<uuid>-delete (so that a restart does not load it)
// and then removed. Neither the rename nor the removal follows a
// symbolic link: a partition directory that is a link is renamed as the
// link, and os.RemoveAll removes links, never what they point to.
func (s *Server) deleteTopic(name string) error {
	s.mu.Lock()
	t := s.topics[name]
	if t == nil {
		s.mu.Unlock()
		return errors.New("no topic")
	}
	s.replaceTopicLocked(name, nil)
	s.mu.Unlock()
	var first error
	for _, p := range t.parts {
		if p == nil {
			continue // a partition another broker holds
		}
		p.mu.Lock()
		if p.app != nil {
			if err := p.app.Close(); err != nil && first == nil {
				first = err
			}
			p.app = nil
		}
		p.mu.Unlock()
		del := filepath.Join(filepath.Dir(p.dir), deleteDirName(p.topic, p.index))
		if err := os.Rename(p.dir, del); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if err := partition.SyncDir(filepath.Dir(p.dir)); err != nil && first == nil {
			first = err
		}
		if err := os.RemoveAll(del); err != nil && first == nil {
			first = err
		}
	}
	if err := s.configs.drop(resourceTopic, name); err != nil && first == nil {
		first = err
	}
	return first
}

// deleteDirName is UnifiedLog.logDeleteDirName: topic-partition, a dot,
// a random UUID without dashes and "-delete", the topic cut so that the
// name fits in 255 bytes.
func deleteDirName(topic string, n int32) string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	suffix := "-" + strconv.Itoa(int(n)) + "." + hex.EncodeToString(b[:]) + "-delete"
	if len(topic)+len(suffix) > 255 {
		topic = topic[:255-len(suffix)]
	}
	return topic + suffix
}

// deleteTopicOffsets writes tombstones for every group's committed
// offsets of the deleted topics (GroupCoordinator.onPartitionsDeleted)
// and answers once they are on disk.
func (c *coordinator) deleteTopicOffsets(topics []string, w *waiter) {
	gone := map[string]bool{}
	for _, t := range topics {
		gone[t] = true
	}
	left := 0
	for group, offs := range c.offsets {
		var tps []offsetstore.TopicPartition
		for k := range offs {
			if gone[k.Topic] {
				tps = append(tps, k)
			}
		}
		if len(tps) == 0 {
			continue
		}
		left++
		group := group
		c.write(func() error { return c.store.DeleteOffsets(group, tps) }, func(err error) {
			if err == nil {
				for _, k := range tps {
					delete(c.offsets[group], k)
				}
			}
			if left--; left == 0 {
				w.answer(nil)
			}
		})
	}
	if left == 0 {
		w.answer(nil)
		return
	}
	c.park(w, "", "")
}
