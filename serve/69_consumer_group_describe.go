package serve

// ConsumerGroupDescribe, key 69: v0-v1.
//
// Version notes (ConsumerGroupDescribeRequest.json, KIP-848):
//   - v0: each consumer group's epochs, assignor and members with their
//     current and target assignments.
//   - v1: each member's MemberType (1 consumer protocol; KIP-1099).

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(69, 0, 1, (*conn).handleConsumerGroupDescribe) }

// cgDescription is one group as ConsumerGroupDescribe describes it.
type cgDescription struct {
	code                   int16
	msg                    string
	state, assignor        string
	epoch, assignmentEpoch int32
	members                []cgMemberDescription
}

type cgMemberDescription struct {
	id, clientID, clientHost string
	instanceID, rackID       *string
	epoch                    int32
	topics                   []string
	regex                    *string
	assigned, target         assignment
}

// handleConsumerGroupDescribe describes consumer groups
// (GroupMetadataManager.consumerGroupDescribe): GROUP_ID_NOT_FOUND for a
// group that does not exist or is a classic group.
func (cn *conn) handleConsumerGroupDescribe(r *kmsg.ConsumerGroupDescribeRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	c := cn.s.groups
	ds := make([]cgDescription, len(r.Groups))
	ok := c.do(func() {
		for i, name := range r.Groups {
			ds[i] = c.describeConsumerGroup(name)
		}
	})
	names := map[[16]byte]string{}
	for _, n := range cn.s.topicNames() {
		if t := cn.s.topic(n); t != nil {
			names[t.id] = n
		}
	}
	toAssignment := func(a assignment) kmsg.Assignment {
		out := kmsg.Assignment{TopicPartitions: []kmsg.AssignmentTopicPartition{}}
		for _, id := range a.ids() {
			tp := kmsg.AssignmentTopicPartition{TopicID: id, Topic: names[id], Partitions: a[id]}
			out.TopicPartitions = append(out.TopicPartitions, tp)
		}
		return out
	}
	for i, name := range r.Groups {
		g := kmsg.NewConsumerGroupDescribeResponseGroup()
		g.Group = name
		d := ds[i]
		switch {
		case !ok:
			d.code, d.msg = kerr.CoordinatorNotAvailable.Code, "The coordinator is not available."
		case name == "":
			d.code, d.msg = kerr.InvalidGroupID.Code, "GroupId can't be empty."
		}
		if d.code != 0 {
			msg := d.msg
			g.ErrorCode, g.ErrorMessage = d.code, &msg
			resp.Groups = append(resp.Groups, g)
			continue
		}
		g.State, g.Epoch, g.AssignmentEpoch, g.AssignorName = d.state, d.epoch, d.assignmentEpoch, d.assignor
		if r.IncludeAuthorizedOperations {
			g.AuthorizedOperations = groupOps
		}
		g.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{}
		for _, m := range d.members {
			gm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			gm.MemberID, gm.InstanceID, gm.RackID, gm.MemberEpoch = m.id, m.instanceID, m.rackID, m.epoch
			gm.ClientID, gm.ClientHost, gm.SubscribedTopics, gm.SubscribedTopicRegex = m.clientID, m.clientHost, m.topics, m.regex
			if gm.SubscribedTopics == nil {
				gm.SubscribedTopics = []string{}
			}
			gm.Assignment, gm.TargetAssignment = toAssignment(m.assigned), toAssignment(m.target)
			if r.Version >= 1 {
				gm.MemberType = 1 // the consumer protocol (classic members are not served)
			}
			g.Members = append(g.Members, gm)
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}

// describeConsumerGroup is ConsumerGroup.asDescribedGroup, members in
// member id order.
func (c *coordinator) describeConsumerGroup(name string) cgDescription {
	g := c.cgroups[name]
	if g == nil {
		if c.groups[name] != nil {
			return cgDescription{code: kerr.GroupIDNotFound.Code, msg: "Group " + name + " is not a consumer group."}
		}
		return cgDescription{code: kerr.GroupIDNotFound.Code, msg: "Group " + name + " not found."}
	}
	d := cgDescription{state: g.state(), assignor: g.preferredAssignor(), epoch: g.epoch, assignmentEpoch: g.assignmentEpoch}
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := g.members[id]
		d.members = append(d.members, cgMemberDescription{id: m.id, clientID: m.clientID, clientHost: m.clientHost, instanceID: m.instanceID,
			rackID: m.rackID, epoch: m.epoch, topics: m.topics, regex: m.regex, assigned: m.assigned.clone(), target: g.target[m.id].clone()})
	}
	return d
}
