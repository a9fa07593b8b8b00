package handlers

// StopReplica: v0-4 (inter-broker, controller → broker)
//
// Behaviour:
//   - Stops the named replicas; with delete (DeletePartitions before v3,
//     per partition from v3) their logs are deleted too (topic deletion).
//   - A controller epoch older than the newest seen answers
//     STALE_CONTROLLER_EPOCH; a failed stop KAFKA_STORAGE_ERROR.
//
// Version notes:
//   - v1: BrokerEpoch, partitions grouped by topic.  v2: flexible.
//   - v3: per-partition LeaderEpoch and Delete.  v4: IsKRaftController.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(5, 0, 4, handleStopReplica) }

func handleStopReplica(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.StopReplicaRequest)
	if denied, ok := b.interBrokerDenied(rc, req); !ok { // ClusterAction (Kafka's check)
		return denied
	}
	if b.Cluster == nil {
		resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return b.Cluster.HandleStopReplica(req) })
}
