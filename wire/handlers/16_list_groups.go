package handlers

// ListGroups: v0-4
//
// Behaviour: the groups of every __consumer_offsets partition this broker
// leads (a cluster client asks every broker), with their protocol type;
// v4 adds each group's state and the states filter (case-insensitive
// Kafka state names, KIP-518). Partitions still loading are waited for.
//
// Version notes: v1 ThrottleMillis; v3 flexible; v4 states.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(16, 0, 4, handleListGroups) }

func handleListGroups(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ListGroupsRequest)
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		return wire.Now(wire.Response{Msg: resp})
	}
	reply, fn := groupReply[*kmsg.ListGroupsResponse]()
	b.Groups.ListGroups(reqCtx(rc), req, then(fn, b.authorizeListGroups(rc))) // cluster or group Describe
	return reply
}
