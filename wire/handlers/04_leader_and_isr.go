package handlers

// LeaderAndIsr: v0-7 (inter-broker, controller → broker)
//
// Behaviour:
//   - Applies the partition states to the replica manager: partitions this
//     broker is a replica of become leaders or followers (fetchers start
//     or stop); topic configs come from /config/topics/<t>.
//   - A controller epoch older than the newest seen answers
//     STALE_CONTROLLER_EPOCH for the request and every partition.
//   - A partition this broker is not assigned answers
//     UNKNOWN_TOPIC_OR_PARTITION; one that failed to start
//     KAFKA_STORAGE_ERROR.
//   - Without a cluster source wired (Broker.Cluster nil):
//     STALE_CONTROLLER_EPOCH, so nothing applies.
//
// Version notes:
//   - v1: IsNew.  v2: TopicStates layout, BrokerEpoch.  v3: adding/removing
//     replicas (ignored).  v4: flexible.  v5: TopicID, Type, response by
//     topic.  v6: LeaderRecoveryState.  v7: IsKRaftController.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(4, 0, 7, handleLeaderAndIsr) }

func handleLeaderAndIsr(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.LeaderAndISRRequest)
	if denied, ok := b.interBrokerDenied(rc, req); !ok { // ClusterAction (Kafka's check)
		return denied
	}
	if b.Cluster == nil {
		resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return b.Cluster.HandleLeaderAndIsr(req) })
}
