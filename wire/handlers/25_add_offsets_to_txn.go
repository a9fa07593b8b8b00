package handlers

// AddOffsetsToTxn: v0-v4
//
// Behaviour (Kafka's KafkaApis.handleAddOffsetsToTxnRequest): adds the
// group's __consumer_offsets partition
// (abs(javaStringHashCode(group)) % offsets.topic.num.partitions) to the
// producer's transaction, with AddPartitionsToTxn's codes: INVALID_REQUEST
// (empty transactional id), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH
// below v2), CONCURRENT_TRANSACTIONS. Without a transaction coordinator:
// COORDINATOR_NOT_AVAILABLE.
//
// Version notes: v1 same as v0; v2 PRODUCER_FENCED; v3 flexible; v4
// TRANSACTION_ABORTABLE (KIP-890).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(25, 0, 4, handleAddOffsetsToTxn) }

func handleAddOffsetsToTxn(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	// Write on the transactional id, then Read on the group (Kafka's checks).
	if !b.authorize(rc, acl.OpWrite, acl.ResourceTransactionalID, req.TransactionalID) {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	if !b.authorize(rc, acl.OpRead, acl.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	if b.Txns == nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	ch := make(chan wire.Response, 1)
	parts := map[string][]int32{offsetsTopicName: {b.Txns.GroupPartition(req.Group)}}
	b.Txns.AddPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, parts, func(code int16) {
		if req.Version < 2 && code == kerr.ProducerFenced.Code {
			code = kerr.InvalidProducerEpoch.Code
		}
		resp.ErrorCode = code
		ch <- wire.Response{Msg: resp}
	})
	return wire.Later(ch)
}
