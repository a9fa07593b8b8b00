package handlers

// AddPartitionsToTxn: v0-v5
//
// Behaviour (Kafka's KafkaApis.handleAddPartitionsToTxnRequest and
// TransactionCoordinator.handleAddPartitionsToTransaction):
//   - Each partition must exist in the metadata cache; if any does not,
//     nothing is added to that transaction: UNKNOWN_TOPIC_OR_PARTITION
//     for the missing ones, OPERATION_NOT_ATTEMPTED for the others.
//   - Otherwise the coordinator answers one code for every partition of
//     the transaction: INVALID_REQUEST (empty transactional id),
//     NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
//     INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
//     below v2), CONCURRENT_TRANSACTIONS, or the append's error.
//   - v4+ (broker-sent, KIP-890 part 1): a batch of transactions, each
//     answered in ResultsByTransaction; VerifyOnly checks without adding
//     (TRANSACTION_ABORTABLE for a partition not in the transaction).
//   - Without a transaction coordinator: COORDINATOR_NOT_AVAILABLE.
//
// Version notes:
//   - v1 same as v0; v2 PRODUCER_FENCED; v3 flexible; v4 batched
//     transactions and VerifyOnly (KIP-890); v5 TRANSACTION_ABORTABLE.

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(24, 0, 5, handleAddPartitionsToTxn) }

// txnTransaction is one transaction of an AddPartitionsToTxn request in the
// version-independent shape.
type txnTransaction struct {
	id         string
	producerID int64
	epoch      int16
	verifyOnly bool
	parts      map[string][]int32
	order      []string // topics in request order
}

func handleAddPartitionsToTxn(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	// Authorization (Kafka's checks): v4+ comes from brokers and needs
	// ClusterAction; a client's (v0-3) needs Write on the transactional
	// id, then Write on each topic (internal topics never pass).
	var txnDenied bool
	var topicDenied map[string]bool
	if req.Version >= 4 {
		if !b.authorizeCluster(rc, acl.OpClusterAction) {
			resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return wire.Now(wire.Response{Msg: resp})
		}
	} else if b.Authorizer != nil {
		txnDenied = !b.authorize(rc, acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID)
		if !txnDenied {
			writable := filterAuthorized(b, rc, acl.OpWrite, acl.ResourceTopic, req.Topics, func(t kmsg.AddPartitionsToTxnRequestTopic) string { return t.Topic })
			for _, t := range req.Topics {
				if !writable[t.Topic] || metadata.IsInternal(t.Topic) {
					if topicDenied == nil {
						topicDenied = map[string]bool{}
					}
					topicDenied[t.Topic] = true
				}
			}
		}
	}
	var txns []txnTransaction
	if req.Version < 4 {
		t := txnTransaction{id: req.TransactionalID, producerID: req.ProducerID, epoch: req.ProducerEpoch, parts: map[string][]int32{}}
		for _, tp := range req.Topics {
			t.add(tp.Topic, tp.Partitions)
		}
		txns = append(txns, t)
	} else {
		for _, rt := range req.Transactions {
			t := txnTransaction{id: rt.TransactionalID, producerID: rt.ProducerID, epoch: rt.ProducerEpoch, verifyOnly: rt.VerifyOnly, parts: map[string][]int32{}}
			for _, tp := range rt.Topics {
				t.add(tp.Topic, tp.Partitions)
			}
			txns = append(txns, t)
		}
	}
	results := make([]map[string]map[int32]int16, len(txns))
	ch := make(chan wire.Response, 1)
	var mu sync.Mutex
	left := len(txns)
	finish := func(i int, r map[string]map[int32]int16) {
		mu.Lock()
		results[i] = r
		left--
		done := left == 0
		mu.Unlock()
		if done {
			ch <- wire.Response{Msg: addPartitionsResponse(req, txns, results)}
		}
	}
	if left == 0 {
		ch <- wire.Response{Msg: addPartitionsResponse(req, txns, results)}
		return wire.Later(ch)
	}
	snap := b.Topics.Snapshot()
	for i, t := range txns {
		missing := false
		for topic, ps := range t.parts {
			for _, p := range ps {
				if _, ok := snap.Partition(topic, p); !ok {
					missing = true
				}
			}
		}
		switch {
		case txnDenied:
			finish(i, t.each(func(string, int32) int16 { return kerr.TransactionalIDAuthorizationFailed.Code }))
		case topicDenied != nil:
			finish(i, t.each(func(topic string, p int32) int16 {
				if topicDenied[topic] {
					return kerr.TopicAuthorizationFailed.Code
				}
				if _, ok := snap.Partition(topic, p); !ok {
					return kerr.UnknownTopicOrPartition.Code
				}
				return kerr.OperationNotAttempted.Code
			}))
		case missing:
			r := t.each(func(topic string, p int32) int16 {
				if _, ok := snap.Partition(topic, p); !ok {
					return kerr.UnknownTopicOrPartition.Code
				}
				return kerr.OperationNotAttempted.Code
			})
			finish(i, r)
		case b.Txns == nil:
			finish(i, t.each(func(string, int32) int16 { return kerr.CoordinatorNotAvailable.Code }))
		case t.verifyOnly:
			b.Txns.VerifyPartitions(t.id, t.producerID, t.epoch, t.parts, func(r map[string]map[int32]int16) { finish(i, r) })
		default:
			b.Txns.AddPartitions(t.id, t.producerID, t.epoch, t.parts, func(code int16) {
				if req.Version < 2 && code == kerr.ProducerFenced.Code {
					code = kerr.InvalidProducerEpoch.Code
				}
				finish(i, t.each(func(string, int32) int16 { return code }))
			})
		}
	}
	return wire.Later(ch)
}

func (t *txnTransaction) add(topic string, ps []int32) {
	if _, ok := t.parts[topic]; !ok {
		t.order = append(t.order, topic)
	}
	t.parts[topic] = append(t.parts[topic], ps...)
}

// each gives every partition of t the code f returns.
func (t *txnTransaction) each(f func(topic string, p int32) int16) map[string]map[int32]int16 {
	out := make(map[string]map[int32]int16, len(t.parts))
	for topic, ps := range t.parts {
		m := make(map[int32]int16, len(ps))
		for _, p := range ps {
			m[p] = f(topic, p)
		}
		out[topic] = m
	}
	return out
}

// addPartitionsResponse lays the per-partition codes out at the request's
// version: v0–v3 the one transaction's topics, v4+ one result per
// transaction.
func addPartitionsResponse(req *kmsg.AddPartitionsToTxnRequest, txns []txnTransaction, results []map[string]map[int32]int16) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	topicResults := func(t txnTransaction, r map[string]map[int32]int16) []kmsg.AddPartitionsToTxnResponseTransactionTopic {
		var out []kmsg.AddPartitionsToTxnResponseTransactionTopic
		for _, topic := range t.order {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = topic
			seen := map[int32]bool{}
			for _, p := range t.parts[topic] {
				if seen[p] {
					continue
				}
				seen[p] = true
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = p, r[topic][p]
				rt.Partitions = append(rt.Partitions, rp)
			}
			out = append(out, rt)
		}
		return out
	}
	if req.Version < 4 {
		for _, rt := range topicResults(txns[0], results[0]) {
			t := kmsg.NewAddPartitionsToTxnResponseTopic()
			t.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				p.Partition, p.ErrorCode = rp.Partition, rp.ErrorCode
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp
	}
	for i, t := range txns {
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = t.id
		rt.Topics = topicResults(t, results[i])
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp
}
