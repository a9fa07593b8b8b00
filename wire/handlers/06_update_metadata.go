package handlers

// UpdateMetadata: v0-8 (inter-broker, controller → broker)
//
// Behaviour:
//   - Replaces this broker's metadata cache (live brokers with their
//     listeners, every partition's leader, leader epoch, ISR, replicas and
//     offline replicas), which Metadata and FindCoordinator answer from, so
//     every broker routes clients to the current leaders.
//   - A controller epoch older than the newest seen answers
//     STALE_CONTROLLER_EPOCH and changes nothing.
//
// Version notes:
//   - v1: endpoints per broker.  v2: rack.  v3: listener names.
//   - v4: OfflineReplicas.  v5: TopicStates layout, BrokerEpoch.
//   - v6: flexible.  v7: TopicID.  v8: IsKRaftController.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(6, 0, 8, handleUpdateMetadata) }

func handleUpdateMetadata(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.UpdateMetadataRequest)
	if denied, ok := b.interBrokerDenied(rc, req); !ok { // ClusterAction (Kafka's check)
		return denied
	}
	if b.Cluster == nil {
		resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return b.Cluster.HandleUpdateMetadata(req) })
}
