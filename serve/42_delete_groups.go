package serve

// DeleteGroups, key 42: v0-v3.
//
// Version notes (DeleteGroupsRequest.json):
//   - v0: the groups to delete; v1: as v0.
//   - v2: flexible.
//   - v3: each group's error message.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(42, 0, 3, (*conn).handleDeleteGroups) }

// handleDeleteGroups deletes empty groups and their committed offsets
// (tombstones in __consumer_offsets, as the coordinator writes them); a
// group with members is NON_EMPTY_GROUP, an unknown one
// GROUP_ID_NOT_FOUND.
func (cn *conn) handleDeleteGroups(r *kmsg.DeleteGroupsRequest) (kmsg.Response, error) {
	resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
	c := cn.s.groups
	stopped := make([]int16, len(r.Groups))
	for i := range stopped {
		stopped[i] = kerr.CoordinatorNotAvailable.Code
	}
	out, err := c.call(cn, r.Key(), stopped, func(w *waiter) { c.deleteGroups(r.Groups, w) })
	if err != nil {
		return nil, err
	}
	codes := out.([]int16)
	for i, name := range r.Groups {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group, g.ErrorCode = name, codes[i]
		if r.Version >= 3 && g.ErrorCode != 0 {
			if e := kerr.ErrorForCode(g.ErrorCode); e != nil {
				msg := e.Error()
				g.ErrorMessage = &msg
			}
		}
		resp.Groups = append(resp.Groups, g)
	}
	return resp, nil
}
