package handlers

// Heartbeat: v0-4
//
// Behaviour (Kafka's GroupCoordinator.handleHeartbeat):
//   - NONE in Stable and CompletingRebalance (a member may heartbeat
//     between its JoinGroup and SyncGroup); REBALANCE_IN_PROGRESS in
//     PreparingRebalance (the signal to rejoin); UNKNOWN_MEMBER_ID for an
//     unknown member or an Empty/unknown group; ILLEGAL_GENERATION;
//     FENCED_INSTANCE_ID; COORDINATOR_NOT_AVAILABLE for a Dead group.
//   - A heartbeat resets the member's session timeout.
//
// Version notes: v1 ThrottleMillis; v3 InstanceID; v4 flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(12, 0, 4, handleHeartbeat) }

func handleHeartbeat(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.HeartbeatRequest)
	if denied, ok := b.groupReadDenied(rc, req, req.Group); !ok { // group Read
		return denied
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = noCoordinator
		return wire.Now(wire.Response{Msg: resp})
	}
	reply, fn := groupReply[*kmsg.HeartbeatResponse]()
	b.Groups.Heartbeat(reqCtx(rc), req, fn)
	return reply
}
