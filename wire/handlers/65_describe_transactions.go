package handlers

// DescribeTransactions: v0
//
// Behaviour (Kafka's TransactionCoordinator.handleDescribeTransactions),
// per transactional id (clients send each to its coordinator):
// INVALID_REQUEST for an empty id, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, TRANSACTIONAL_ID_NOT_FOUND, else its
// producer id and epoch, state name (Empty, Ongoing, PrepareCommit, …),
// transaction.timeout.ms, start time (-1: none open) and partitions.
// Without a transaction coordinator: COORDINATOR_NOT_AVAILABLE.

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
)

func init() { register(65, 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(b *Broker, _ *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	resp.TransactionStates = make([]kmsg.DescribeTransactionsResponseTransactionState, len(req.TransactionalIDs))
	if b.Txns == nil || len(req.TransactionalIDs) == 0 {
		for i, id := range req.TransactionalIDs {
			s := kmsg.NewDescribeTransactionsResponseTransactionState()
			s.TransactionalID, s.ErrorCode = id, kerr.CoordinatorNotAvailable.Code
			resp.TransactionStates[i] = s
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	ch := make(chan wire.Response, 1)
	var mu sync.Mutex
	left := len(req.TransactionalIDs)
	for i, id := range req.TransactionalIDs {
		b.Txns.DescribeTransaction(id, func(s kmsg.DescribeTransactionsResponseTransactionState) {
			mu.Lock()
			resp.TransactionStates[i] = s
			left--
			done := left == 0
			mu.Unlock()
			if done {
				ch <- wire.Response{Msg: resp}
			}
		})
	}
	return wire.Later(ch)
}
