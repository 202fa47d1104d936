package serve

import (
	"sort"
	"strings"

	"github.com/klog-dev/klog/offsetstore"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The administrator's view of the classic groups (ListGroups,
// DescribeGroups, DeleteGroups, OffsetDelete), as Kafka 4.3's
// GroupMetadataManager and OffsetMetadataManager answer them: every
// function here runs on the coordinator's loop.

// classicGroupType is the group type ListGroups v5 reports for a classic
// group (GroupType.CLASSIC).
const classicGroupType = "classic"

// consumerGroupType is a KIP-848 consumer group's type (GroupType.CONSUMER)
// and protocol type.
const consumerGroupType = "consumer"

// groupListing is one group as ListGroups lists it.
type groupListing struct {
	name, protocolType, state, groupType string
}

// listGroups lists the groups whose state and type pass the filters
// (case-insensitive; empty filters pass all), in name order. A group that
// only has committed offsets is an empty classic group, as Kafka loads it.
func (c *coordinator) listGroups(states, types []string) []groupListing {
	var out []groupListing
	for name, g := range c.groups {
		l := groupListing{name: name, protocolType: g.protocolType, state: g.state.String(), groupType: classicGroupType}
		if matchesFilter(states, l.state) && matchesFilter(types, l.groupType) {
			out = append(out, l)
		}
	}
	for name, g := range c.cgroups {
		l := groupListing{name: name, protocolType: consumerGroupType, state: g.state(), groupType: consumerGroupType}
		if matchesFilter(states, l.state) && matchesFilter(types, l.groupType) {
			out = append(out, l)
		}
	}
	for name := range c.offsets {
		if c.groups[name] != nil || c.cgroups[name] != nil {
			continue
		}
		l := groupListing{name: name, state: groupEmpty.String(), groupType: classicGroupType}
		if matchesFilter(states, l.state) && matchesFilter(types, l.groupType) {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func matchesFilter(filter []string, v string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if strings.EqualFold(f, v) {
			return true
		}
	}
	return false
}

// groupDescription is one group as DescribeGroups describes it.
type groupDescription struct {
	found                         bool
	notClassic                    bool // a consumer group (KIP-848)
	state, protocolType, protocol string
	members                       []memberDescription
}

type memberDescription struct {
	id, clientID, clientHost string
	instanceID               *string
	metadata, assignment     []byte
}

// describeGroup is ClassicGroup's describe: a stable group gives its
// protocol and each member's subscription and assignment; any other state
// the members alone.
func (c *coordinator) describeGroup(name string) groupDescription {
	g := c.groups[name]
	if c.cgroups[name] != nil {
		return groupDescription{state: "Dead", notClassic: true}
	}
	if g == nil {
		if _, ok := c.offsets[name]; ok {
			return groupDescription{found: true, state: groupEmpty.String()}
		}
		return groupDescription{state: "Dead"}
	}
	d := groupDescription{found: true, state: g.state.String(), protocolType: g.protocolType}
	stable := g.state == groupStable
	if stable {
		d.protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		md := memberDescription{id: m.id, clientID: m.clientID, clientHost: m.clientHost, instanceID: m.instanceID,
			metadata: []byte{}, assignment: []byte{}}
		if stable {
			if md.metadata = m.metadataFor(g.protocol); md.metadata == nil {
				md.metadata = []byte{}
			}
			if m.assignment != nil {
				md.assignment = m.assignment
			}
		}
		d.members = append(d.members, md)
	}
	return d
}

// deleteGroups deletes the empty groups among names (their offsets'
// tombstones and the group's tombstone, in one write each) and answers
// one code per name once the records are on disk.
func (c *coordinator) deleteGroups(names []string, w *waiter) {
	codes := make([]int16, len(names))
	var del []int
	for i, name := range names {
		g := c.groups[name]
		cg := c.cgroups[name]
		_, hasOffsets := c.offsets[name]
		switch {
		case name == "":
			codes[i] = kerr.InvalidGroupID.Code
		case cg != nil && len(cg.members) > 0:
			codes[i] = kerr.NonEmptyGroup.Code
		case g == nil && cg == nil && !hasOffsets:
			codes[i] = kerr.GroupIDNotFound.Code
		case g != nil && (g.state != groupEmpty || len(g.members) > 0 || len(g.pending) > 0):
			codes[i] = kerr.NonEmptyGroup.Code
		default:
			del = append(del, i)
		}
	}
	if len(del) == 0 {
		w.answer(codes)
		return
	}
	left := len(del)
	for _, i := range del {
		i, name := i, names[i]
		var tps []offsetstore.TopicPartition
		for k := range c.offsets[name] {
			tps = append(tps, k)
		}
		sort.Slice(tps, func(a, b int) bool {
			if tps[a].Topic != tps[b].Topic {
				return tps[a].Topic < tps[b].Topic
			}
			return tps[a].Partition < tps[b].Partition
		})
		consumer := c.cgroups[name] != nil
		c.write(func() error {
			if err := c.store.DeleteOffsets(name, tps); err != nil {
				return err
			}
			if consumer {
				return c.store.StoreRecords(name, consumerGroupTombstones(name).kvs, c.clock.Now().UnixMilli())
			}
			return c.store.DeleteGroup(name)
		}, func(err error) {
			if cg := c.cgroups[name]; err == nil && cg != nil && len(cg.members) == 0 {
				delete(c.cgroups, name)
			}
			if err != nil {
				codes[i] = storeError(err)
			} else if g := c.groups[name]; g == nil || (g.state == groupEmpty && len(g.members) == 0) {
				// A member that joined while the tombstones were
				// written keeps the group (Kafka's write and the
				// state change are one step; here the later join
				// wins, as a new group of the same name would).
				if g != nil {
					c.armJoin(g)
					c.stopSyncTimer(g)
				}
				delete(c.groups, name)
				delete(c.offsets, name)
			}
			if left--; left == 0 {
				w.answer(codes)
			}
		})
	}
	c.park(w, "", "")
}

// offsetDeleteResult is OffsetDelete's answer: a group error, or one
// code per partition asked for.
type offsetDeleteResult struct {
	code  int16
	codes map[offsetstore.TopicPartition]int16
}

// deleteOffsets is OffsetMetadataManager.deleteOffsets: a group that is
// not empty may lose only the offsets of topics none of its members
// subscribe to (GROUP_SUBSCRIBED_TO_TOPIC); a partition without a
// committed offset is answered without error.
func (c *coordinator) deleteOffsets(group string, req map[string][]int32, w *waiter) {
	g := c.groups[group]
	cg := c.cgroups[group]
	_, hasOffsets := c.offsets[group]
	switch {
	case group == "":
		w.answer(offsetDeleteResult{code: kerr.InvalidGroupID.Code})
		return
	case g == nil && cg == nil && !hasOffsets:
		w.answer(offsetDeleteResult{code: kerr.GroupIDNotFound.Code})
		return
	}
	empty := (g == nil || (g.state == groupEmpty && len(g.members) == 0)) && (cg == nil || len(cg.members) == 0)
	var subscribed map[string]bool
	if cg != nil && !empty {
		// ConsumerGroup.isSubscribedToTopic: the subscription metadata.
		subscribed = map[string]bool{}
		for name := range cg.subs {
			subscribed[name] = true
		}
	} else if !empty {
		var ok bool
		if subscribed, ok = g.subscribedTopics(); !ok {
			if g.protocolType != "consumer" {
				w.answer(offsetDeleteResult{code: kerr.NonEmptyGroup.Code})
				return
			}
		}
	}
	codes := map[offsetstore.TopicPartition]int16{}
	var tps []offsetstore.TopicPartition
	for topic, parts := range req {
		for _, p := range parts {
			k := offsetstore.TopicPartition{Topic: topic, Partition: p}
			switch {
			case !empty && (subscribed == nil || subscribed[topic]):
				codes[k] = kerr.GroupSubscribedToTopic.Code
			default:
				codes[k] = 0
				if _, ok := c.offsets[group][k]; ok {
					tps = append(tps, k)
				}
			}
		}
	}
	if len(tps) == 0 {
		w.answer(offsetDeleteResult{codes: codes})
		return
	}
	c.write(func() error { return c.store.DeleteOffsets(group, tps) }, func(err error) {
		if err != nil {
			w.answer(offsetDeleteResult{code: storeError(err)})
			return
		}
		for _, k := range tps {
			delete(c.offsets[group], k)
		}
		w.answer(offsetDeleteResult{codes: codes})
	})
	c.park(w, group, "")
}

// subscribedTopics is ClassicGroup.computeSubscribedTopics: the union of
// the members' subscriptions when the group uses the consumer protocol
// and every member's metadata decodes; false when it cannot be known.
func (g *group) subscribedTopics() (map[string]bool, bool) {
	if g.protocolType != "consumer" || g.protocol == "" {
		return nil, false
	}
	out := map[string]bool{}
	for _, m := range g.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, false
		}
		for _, t := range md.Topics {
			out[t] = true
		}
	}
	return out, true
}
