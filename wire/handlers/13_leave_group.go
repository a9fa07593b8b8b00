package handlers

// LeaveGroup: v0-5
//
// Behaviour (Kafka's GroupCoordinator.handleLeaveGroup):
//   - Removes the members and rebalances the group. v3+ batches members,
//     each with its own error (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID); a
//     member id "" with a group.instance.id removes that static member
//     (administrative removal, KIP-345). v0–v2: the member's error is the
//     top-level error.
//   - COORDINATOR_NOT_AVAILABLE (top level) for a Dead group.
//
// Version notes: v1 ThrottleMillis; v3 Members; v4 flexible; v5 Reason.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(13, 0, 5, handleLeaveGroup) }

func handleLeaveGroup(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.LeaveGroupRequest)
	if denied, ok := b.groupReadDenied(rc, req, req.Group); !ok { // group Read
		return denied
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = noCoordinator
		return wire.Now(wire.Response{Msg: resp})
	}
	reply, fn := groupReply[*kmsg.LeaveGroupResponse]()
	b.Groups.LeaveGroup(reqCtx(rc), req, fn)
	return reply
}
