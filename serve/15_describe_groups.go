package serve

// DescribeGroups, key 15: v0-v6.
//
// Version notes (DescribeGroupsRequest.json):
//   - v0: each group's state, protocol and members; v1: throttle time;
//     v2: as v1.
//   - v3: IncludeAuthorizedOperations (KIP-430).
//   - v4: each member's GroupInstanceID (KIP-345).
//   - v5: flexible.
//   - v6: an error message, and GROUP_ID_NOT_FOUND for a group that does
//     not exist, where earlier versions describe it as Dead (KIP-1043).

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(15, 0, 6, (*conn).handleDescribeGroups) }

// Authorized operations as a broker without an authorizer reports them
// (every operation the resource type supports, as a bit field), and the
// value when they were not asked for (Int.MinValue).
const (
	opsNotAsked = math.MinInt32
	groupOps    = 1<<3 | 1<<6 | 1<<8                                      // READ, DELETE, DESCRIBE
	topicOps    = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11 // READ..ALTER_CONFIGS
	clusterOps  = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12       // CREATE..IDEMPOTENT_WRITE
)

// handleDescribeGroups describes each group from the coordinator.
func (cn *conn) handleDescribeGroups(r *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
	c := cn.s.groups
	ds := make([]groupDescription, len(r.Groups))
	ok := c.do(func() {
		for i, name := range r.Groups {
			ds[i] = c.describeGroup(name)
		}
	})
	for i, name := range r.Groups {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group = name
		g.AuthorizedOperations = opsNotAsked
		switch d := ds[i]; {
		case !ok:
			g.ErrorCode = kerr.CoordinatorNotAvailable.Code
		case name == "" && r.Version >= 6:
			g.ErrorCode = kerr.InvalidGroupID.Code
		case !d.found && r.Version >= 6:
			g.ErrorCode = kerr.GroupIDNotFound.Code
			msg := "Group " + name + " not found."
			if d.notClassic {
				msg = "Group " + name + " is not a classic group."
			}
			g.ErrorMessage = &msg
			g.State = d.state
		default:
			g.State, g.ProtocolType, g.Protocol = d.state, d.protocolType, d.protocol
			if r.IncludeAuthorizedOperations && r.Version >= 3 {
				g.AuthorizedOperations = groupOps
			}
			for _, m := range d.members {
				gm := kmsg.NewDescribeGroupsResponseGroupMember()
				gm.MemberID, gm.InstanceID, gm.ClientID, gm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
				gm.ProtocolMetadata, gm.MemberAssignment = m.metadata, m.assignment
				g.Members = append(g.Members, gm)
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
