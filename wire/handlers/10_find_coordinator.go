package handlers

// FindCoordinator: v0-6
//
// Behaviour:
//   - Key type GROUP (0): the leader of partition
//     abs(javaStringHashCode(group)) % offsets.topic.num.partitions of
//     __consumer_offsets, which is created on first use; while it is being
//     created or has no leader: COORDINATOR_NOT_AVAILABLE (clients retry).
//   - Key type TRANSACTION (1): the leader of partition
//     abs(javaStringHashCode(transactionalId)) %
//     transaction.state.log.num.partitions of __transaction_state, created
//     on first use, answered by the transaction coordinator (Txns);
//     COORDINATOR_NOT_AVAILABLE while it cannot be created, has no leader,
//     or the broker runs without a transaction coordinator.
//   - Other key types: INVALID_REQUEST.
//
// Version notes:
//   - v1: CoordinatorType, ErrorMessage, ThrottleMillis.
//   - v3: flexible.
//   - v4: batched CoordinatorKeys with one Coordinators entry each (KIP-699).
//   - v5/v6: same shape (v5: transaction error semantics, v6: share groups
//     key type, which gets INVALID_REQUEST here).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(10, 0, 6, handleFindCoordinator) }

func handleFindCoordinator(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	req, finish, now := b.authorizeFindCoordinator(rc, req) // group / transactional id Describe
	if now != nil {
		return wire.Now(wire.Response{Msg: now})
	}
	if req.CoordinatorType == 1 && b.Txns != nil {
		reply, fn := groupReply[*kmsg.FindCoordinatorResponse]()
		b.Txns.FindCoordinator(reqCtx(rc), req, then(fn, finish))
		return reply
	}
	if b.Groups == nil {
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.NodeID, resp.Port = noCoordinator, -1, -1
		for _, k := range req.CoordinatorKeys {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.ErrorCode, c.NodeID, c.Port = k, noCoordinator, -1, -1
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	reply, fn := groupReply[*kmsg.FindCoordinatorResponse]()
	b.Groups.FindCoordinator(reqCtx(rc), req, then(fn, finish))
	return reply
}
