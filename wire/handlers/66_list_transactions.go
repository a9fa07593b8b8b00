package handlers

// ListTransactions: v0-v1
//
// Behaviour (Kafka's TransactionStateManager.listTransactionStates): the
// transactional ids coordinated by this broker, filtered by state names
// (names Kafka does not know are echoed in UnknownStateFilters and match
// nothing), producer ids and, v1+ (KIP-994), DurationFilterMillis ≥ 0:
// only transactions running longer than that.
// COORDINATOR_LOAD_IN_PROGRESS while a __transaction_state partition led
// here is loading. Without a transaction coordinator: an empty list.
//
// Version notes: v1 DurationFilterMillis. v2 (transactional id pattern) is
// Kafka 4.x's, not served.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(66, 0, 1, handleListTransactions) }

func handleListTransactions(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	if b.Txns == nil {
		return wire.Now(wire.Response{Msg: resp})
	}
	duration := int64(-1)
	if req.Version >= 1 {
		duration = req.DurationFilterMillis
	}
	ch := make(chan wire.Response, 1)
	b.Txns.ListTransactions(req.StateFilters, req.ProducerIDFilters, duration, func(code int16, unknown []string, listed []kmsg.ListTransactionsResponseTransactionState) {
		if b.Authorizer != nil { // only the ids the client may Describe (Kafka's filter)
			kept := listed[:0]
			for _, s := range listed {
				if b.authorizeQuiet(rc, acl.OpDescribe, acl.ResourceTransactionalID, s.TransactionalID) {
					kept = append(kept, s)
				}
			}
			listed = kept
		}
		resp.ErrorCode, resp.UnknownStateFilters, resp.TransactionStates = code, unknown, listed
		ch <- wire.Response{Msg: resp}
	})
	return wire.Later(ch)
}
