package handlers

// DeleteGroups: v0-2
//
// Behaviour (Kafka's GroupCoordinator.handleDeleteGroups): an Empty group's
// metadata and offsets are tombstoned in __consumer_offsets and the group
// is removed; NON_EMPTY_GROUP while it has members; GROUP_ID_NOT_FOUND for
// unknown groups.
//
// Version notes: v1 same as v0; v2 flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(42, 0, 2, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, noCoordinator
			resp.Groups = append(resp.Groups, rg)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	req, finish, now := b.authorizeDeleteGroups(rc, req) // group Delete
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	reply, fn := groupReply[*kmsg.DeleteGroupsResponse]()
	b.Groups.DeleteGroups(reqCtx(rc), req, then(fn, finish))
	return reply
}
