package handlers

// DescribeCluster: v0-1
//
// Behaviour: the cluster id, the controller id and the live brokers (the
// address of the listener the client connected on). Authorized operations
// are -2147483648 (no ACLs). v1 EndpointType: only brokers (1) are served;
// controller endpoints (2, KRaft) answer UNSUPPORTED_ENDPOINT_TYPE.
//
// Version notes: v0 flexible from the start (KIP-700); v1 EndpointType (KIP-919).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(60, 0, 1, handleDescribeCluster) }

func handleDescribeCluster(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterAuthorizedOperations = authorizedOpsUnknown
	resp.EndpointType = 1
	if req.Version >= 1 && req.EndpointType != 1 {
		resp.EndpointType = req.EndpointType
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		msg := "Only brokers can be described (endpoint type 1)."
		resp.ErrorMessage = &msg
		return wire.Now(wire.Response{Msg: resp})
	}
	// Anyone may describe the cluster; its authorized operations are
	// filled when asked (0 without cluster Describe), as Kafka does.
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = 0
		if b.authorizeCluster(rc, acl.OpDescribe) {
			resp.ClusterAuthorizedOperations = b.authorizedOperations(rc, acl.ResourceCluster, acl.ClusterName)
		}
	}
	snap := b.Topics.Snapshot()
	resp.ClusterID = snap.ClusterID
	resp.ControllerID = snap.ControllerID
	for _, br := range snap.Brokers {
		rb := kmsg.NewDescribeClusterResponseBroker()
		rb.NodeID = br.ID
		rb.Host, rb.Port = br.Endpoint(rc.Listener)
		rb.Rack = br.Rack
		resp.Brokers = append(resp.Brokers, rb)
	}
	return wire.Now(wire.Response{Msg: resp})
}
