package handlers

// ControlledShutdown: v0-3 (inter-broker, broker → controller)
//
// Behaviour:
//   - On the controller: moves leadership of every replicated partition
//     the broker leads to another live ISR member, removes it from the
//     ISRs it follows in, and answers the partitions it still leads (no
//     other ISR member alive); the broker retries until none remain.
//   - On another broker: NOT_CONTROLLER (the broker re-reads /controller).
//
// Version notes:
//   - v1: (v0 used a non-standard header).  v2: BrokerEpoch.  v3: flexible.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(7, 1, 3, handleControlledShutdown) }

func handleControlledShutdown(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ControlledShutdownRequest)
	if denied, ok := b.interBrokerDenied(rc, req); !ok { // ClusterAction (Kafka's check)
		return denied
	}
	if b.Cluster == nil {
		resp := req.ResponseKind().(*kmsg.ControlledShutdownResponse)
		resp.ErrorCode = kerr.NotController.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.async(func() kmsg.Response { return b.Cluster.HandleControlledShutdown(req) })
}
