package handlers

// EndTxn: v0-v4
//
// Behaviour (Kafka's TransactionCoordinator.handleEndTransaction): the
// answer comes once PrepareCommit/PrepareAbort is in __transaction_state;
// the markers are written to the transaction's partitions afterwards.
// Codes in Kafka's order: INVALID_REQUEST (empty transactional id),
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
// below v2), CONCURRENT_TRANSACTIONS, INVALID_TXN_STATE (e.g. commit of an
// Empty or aborting transaction); a repeated commit (abort) of a completed
// one answers success. Without a transaction coordinator:
// COORDINATOR_NOT_AVAILABLE.
//
// Version notes: v1 same as v0; v2 PRODUCER_FENCED; v3 flexible; v4
// TRANSACTION_ABORTABLE (KIP-890). v5 (KIP-890 part 2 epoch bump) is
// Kafka 4.0's, not served.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(26, 0, 4, handleEndTxn) }

func handleEndTxn(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	if !b.authorize(rc, acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID) { // Kafka's check
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	if b.Txns == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	ch := make(chan wire.Response, 1)
	b.Txns.EndTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, func(code int16) {
		if req.Version < 2 && code == kerr.ProducerFenced.Code {
			code = kerr.InvalidProducerEpoch.Code
		}
		resp.ErrorCode = code
		ch <- wire.Response{Msg: resp}
	})
	return wire.Later(ch)
}
