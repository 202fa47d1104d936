package serve

// ListPartitionReassignments, key 46: v0.
//
// Version notes (ListPartitionReassignmentsRequest.json):
//   - v0: the ongoing reassignments of the topics asked for, or all (KIP-455).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(46, 0, 0, (*conn).handleListPartitionReassignments) }

// handleListPartitionReassignments lists no reassignment: none can be
// ongoing (one broker holds every replica it serves, and a replay is a
// record of a cluster, not a controller), and the KRaft controller's
// ReplicationControlManager.listPartitionReassignments lists only
// partitions being reassigned, skipping topics it does not know, so the
// answer is empty with no error whatever is asked.
func (cn *conn) handleListPartitionReassignments(r *kmsg.ListPartitionReassignmentsRequest) (kmsg.Response, error) {
	return r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse), nil
}
