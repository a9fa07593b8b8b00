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
	"gregor/wire/security/acl"
)

func init() { register(65, 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	resp.TransactionStates = make([]kmsg.DescribeTransactionsResponseTransactionState, len(req.TransactionalIDs))
	// Describe on each transactional id, and only the topics the client
	// may Describe in its state (Kafka's checks).
	describable := filterAuthorized(b, rc, acl.OpDescribe, acl.ResourceTransactionalID, req.TransactionalIDs, func(id string) string { return id })
	left := 0
	for i, id := range req.TransactionalIDs {
		s := kmsg.NewDescribeTransactionsResponseTransactionState()
		s.TransactionalID = id
		switch {
		case !allowed(describable, id):
			s.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		case b.Txns == nil:
			s.ErrorCode = kerr.CoordinatorNotAvailable.Code
		default:
			left++
		}
		resp.TransactionStates[i] = s
	}
	if left == 0 {
		return wire.Now(wire.Response{Msg: resp})
	}
	ch := make(chan wire.Response, 1)
	var mu sync.Mutex
	for i, id := range req.TransactionalIDs {
		if resp.TransactionStates[i].ErrorCode != 0 {
			continue
		}
		b.Txns.DescribeTransaction(id, func(s kmsg.DescribeTransactionsResponseTransactionState) {
			s = b.describableTopics(rc, s)
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

// describableTopics drops from s the topics the client may not Describe.
func (b *Broker) describableTopics(rc *wire.RequestContext, s kmsg.DescribeTransactionsResponseTransactionState) kmsg.DescribeTransactionsResponseTransactionState {
	if b.Authorizer == nil {
		return s
	}
	kept := s.Topics[:0]
	for _, t := range s.Topics {
		if b.authorize(rc, acl.OpDescribe, acl.ResourceTopic, t.Topic) {
			kept = append(kept, t)
		}
	}
	s.Topics = kept
	return s
}
