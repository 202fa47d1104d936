package serve

// ListGroups, key 16: v0-v5.
//
// Version notes (ListGroupsRequest.json):
//   - v0: every group the coordinator has; v1: throttle time; v2: as v1.
//   - v3: flexible.
//   - v4: StatesFilter, and each group's state (KIP-518).
//   - v5: TypesFilter, and each group's type (KIP-848): classic here.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(16, 0, 5, (*conn).handleListGroups) }

// handleListGroups lists the groups, narrowed by state (v4+) and type
// (v5+) as the coordinator's listGroups filters them.
func (cn *conn) handleListGroups(r *kmsg.ListGroupsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	var states, types []string
	if r.Version >= 4 {
		states = r.StatesFilter
	}
	if r.Version >= 5 {
		types = r.TypesFilter
	}
	c := cn.s.groups
	var ls []groupListing
	if !c.do(func() { ls = c.listGroups(states, types) }) {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp, nil
	}
	resp.Groups = make([]kmsg.ListGroupsResponseGroup, 0, len(ls))
	for _, l := range ls {
		g := kmsg.NewListGroupsResponseGroup()
		g.Group, g.ProtocolType, g.GroupState, g.GroupType = l.name, l.protocolType, l.state, l.groupType
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
