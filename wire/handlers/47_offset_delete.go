package handlers

// OffsetDelete: v0
//
// Behaviour (KIP-496, Kafka's GroupCoordinator.handleDeleteOffsets):
//   - Deletes committed offsets (tombstones in __consumer_offsets) of an
//     Empty group, or of topics no member of a consumer group subscribes
//     to; subscribed topics get GROUP_SUBSCRIBED_TO_TOPIC per partition.
//   - GROUP_ID_NOT_FOUND for unknown groups; NON_EMPTY_GROUP for a
//     non-consumer group with members.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(47, 0, 0, handleOffsetDelete) }

func handleOffsetDelete(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = noCoordinator
		return wire.Now(wire.Response{Msg: resp})
	}
	req, finish, now := b.authorizeOffsetDelete(rc, req) // group Delete, topic Read
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	reply, fn := groupReply[*kmsg.OffsetDeleteResponse]()
	b.Groups.OffsetDelete(reqCtx(rc), req, then(fn, finish))
	return reply
}
