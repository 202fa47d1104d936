package serve

// DescribeCluster, key 60: v0-v2.
//
// Version notes (DescribeClusterRequest.json):
//   - v0: the cluster id, controller and brokers (KIP-700).
//   - v1: EndpointType (KIP-919): 1 brokers, 2 controllers; a broker asked
//     for controllers answers MISMATCHED_ENDPOINT_TYPE.
//   - v2: IncludeFencedBrokers, and each broker's IsFenced (KIP-1073).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(60, 0, 2, (*conn).handleDescribeCluster) }

// handleDescribeCluster describes the one broker this server is: it is
// the controller clients are told of, as a KRaft broker names a live
// broker there.
func (cn *conn) handleDescribeCluster(r *kmsg.DescribeClusterRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterAuthorizedOperations = opsNotAsked
	if r.Version >= 1 {
		resp.EndpointType = r.EndpointType
		if r.EndpointType != 1 {
			resp.ErrorCode = kerr.MismatchedEndpointType.Code
			msg := "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type " + endpointTypeName(r.EndpointType)
			resp.ErrorMessage = &msg
			return resp, nil
		}
	}
	resp.ClusterID = s.clusterID
	resp.ControllerID = s.cfg.NodeID
	host, port := s.advertised()
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port = s.cfg.NodeID, host, port
	resp.Brokers = append(resp.Brokers, b)
	if r.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterOps
	}
	return resp, nil
}

// endpointTypeName is EndpointType's name (KIP-919).
func endpointTypeName(t int8) string {
	switch t {
	case 1:
		return "BROKER"
	case 2:
		return "CONTROLLER"
	}
	return "UNKNOWN"
}
