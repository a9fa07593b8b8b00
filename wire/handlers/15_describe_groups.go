package handlers

// DescribeGroups: v0-5
//
// Behaviour (Kafka's GroupCoordinator.handleDescribeGroup):
//   - State, protocol type, protocol and members; member metadata and
//     assignments only while the group is Stable. An unknown group is
//     described as Dead with no error.
//
//   - Authorization: Describe on each group, else GROUP_AUTHORIZATION_FAILED
//     (groups_auth.go).
//
// Version notes: v1 ThrottleMillis; v3 AuthorizedOperations (filled when
// include_authorized_operations, else -2147483648); v4 InstanceID; v5
// flexible.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(15, 0, 5, handleDescribeGroups) }

func handleDescribeGroups(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, noCoordinator
			resp.Groups = append(resp.Groups, rg)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	req, finish, now := b.authorizeDescribeGroups(rc, req) // group Describe
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	reply, fn := groupReply[*kmsg.DescribeGroupsResponse]()
	b.Groups.DescribeGroups(reqCtx(rc), req, then(fn, finish))
	return reply
}
