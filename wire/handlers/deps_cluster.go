package handlers

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/controller"
)

// ClusterSource is what the inter-broker handlers (LeaderAndIsr,
// StopReplica, UpdateMetadata, ControlledShutdown) need: the broker side
// of the controller protocol, fenced by controller epoch, and the
// controller side of controlled shutdown. *controller.Controller
// implements it. Each call may write to the replica manager or the
// metadata store, so the handlers run it off the connection's reader.
type ClusterSource interface {
	// HandleLeaderAndIsr makes this broker lead or follow partitions.
	HandleLeaderAndIsr(req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse
	// HandleStopReplica stops (and maybe deletes) replicas.
	HandleStopReplica(req *kmsg.StopReplicaRequest) *kmsg.StopReplicaResponse
	// HandleUpdateMetadata replaces the metadata cache.
	HandleUpdateMetadata(req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse
	// HandleControlledShutdown moves leadership away from a broker
	// (NOT_CONTROLLER when this broker is not the controller).
	HandleControlledShutdown(req *kmsg.ControlledShutdownRequest) *kmsg.ControlledShutdownResponse
}

var _ ClusterSource = (*controller.Controller)(nil)
