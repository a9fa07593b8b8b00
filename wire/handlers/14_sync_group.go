package handlers

// SyncGroup: v0-5
//
// Behaviour (Kafka's GroupCoordinator.handleSyncGroup):
//   - In CompletingRebalance followers wait until the leader's assignment
//     is stored in __consumer_offsets, then everyone gets their assignment
//     (wire.Later); in Stable the current assignment comes back at once.
//   - REBALANCE_IN_PROGRESS in PreparingRebalance, ILLEGAL_GENERATION,
//     UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL
//     (v5 protocol type/name mismatch), COORDINATOR_NOT_AVAILABLE (Dead or
//     the assignment could not be stored).
//
// Version notes: v1 ThrottleMillis; v3 InstanceID; v4 flexible; v5
// ProtocolType/Protocol in request and response.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(14, 0, 5, handleSyncGroup) }

func handleSyncGroup(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.SyncGroupRequest)
	if denied, ok := b.groupReadDenied(rc, req, req.Group); !ok { // group Read
		return denied
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = noCoordinator
		return wire.Now(wire.Response{Msg: resp})
	}
	reply, fn := groupReply[*kmsg.SyncGroupResponse]()
	b.Groups.SyncGroup(reqCtx(rc), req, fn)
	return reply
}
