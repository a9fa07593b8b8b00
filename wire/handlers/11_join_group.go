package handlers

// JoinGroup: v0-9
//
// Behaviour (Kafka's GroupCoordinator.handleJoinGroup, see actors/coordinator):
//   - The answer is delayed until the join phase of the rebalance ends
//     (everyone rejoined, the rebalance timeout, or
//     group.initial.rebalance.delay.ms for a new group): wire.Later.
//   - v4+: a member without an id gets MEMBER_ID_REQUIRED and its id, and
//     must join again with it (KIP-394); static members (v5+
//     group.instance.id, KIP-345) get their id at once.
//   - INVALID_SESSION_TIMEOUT outside group.min/max.session.timeout.ms,
//     GROUP_MAX_SIZE_REACHED beyond group.max.size,
//     INCONSISTENT_GROUP_PROTOCOL, FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID,
//     INVALID_GROUP_ID for an empty group id, NOT_COORDINATOR.
//
// Version notes:
//   - v1: RebalanceTimeoutMillis (v0 uses the session timeout).
//   - v2: ThrottleMillis. v3: same. v4: KIP-394.
//   - v5: InstanceID (static membership). v6: flexible.
//   - v7: ProtocolType in the response. v8: Reason.
//   - v9: SkipAssignment (a restarted static leader of a Stable group).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(11, 0, 9, handleJoinGroup) }

func handleJoinGroup(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.JoinGroupRequest)
	if denied, ok := b.groupReadDenied(rc, req, req.Group); !ok { // group Read
		return denied
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation, resp.MemberID = noCoordinator, -1, req.MemberID
		return wire.Now(wire.Response{Msg: resp})
	}
	reply, fn := groupReply[*kmsg.JoinGroupResponse]()
	b.Groups.JoinGroup(reqCtx(rc), rc.ClientID, clientHost(rc), req, fn)
	return reply
}
