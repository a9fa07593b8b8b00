package handlers

// InitProducerId: v0-v5
//
// Behaviour:
//   - Idempotent producers (TransactionalID null): a producer id never
//     handed out before by this broker (partition.ProducerIDs reserves
//     blocks of 1000 in a file in the first log dir, so ids are not reused
//     across restarts) with epoch 0.
//   - v3+ with ProducerID/ProducerEpoch set (KIP-360 epoch bump after an
//     error): the same id with epoch+1; at the epoch's limit (32766) a new
//     id with epoch 0. (Kafka ignores the pair for non-transactional
//     producers and always issues a new id; a bumped epoch is equally
//     valid for clients — the partition accepts a new epoch at sequence 0
//     — and keeps the producer id space small.)
//   - A transactional id goes to the transaction coordinator (Txns,
//     actors/txncoordinator): Kafka's handleInitProducerId — INVALID_REQUEST
//     for an empty id or for v3+ with only one of ProducerID/ProducerEpoch
//     set, INVALID_TRANSACTION_TIMEOUT above transaction.max.timeout.ms,
//     NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
//     CONCURRENT_TRANSACTIONS (a transition pending, or an ongoing
//     transaction being fenced and aborted), PRODUCER_FENCED (answered as
//     INVALID_PRODUCER_EPOCH below v4). Without a coordinator:
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the code Kafka answers when
//     transactional writes are not permitted, which clients fail fast on.
//   - Allocation failure (the block file cannot be written) →
//     COORDINATOR_NOT_AVAILABLE, which clients retry.
//
// Version notes:
//   - v1: same as v0. v2: flexible versions.
//   - v3: ProducerID and ProducerEpoch in the request (KIP-360).
//   - v4: PRODUCER_FENCED may be returned (older versions get
//     INVALID_PRODUCER_EPOCH instead).
//   - v5: TRANSACTION_ABORTABLE may be returned (KIP-890; not by us).

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(22, 0, 5, handleInitProducerID) }

func handleInitProducerID(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	// Authorization (Kafka's checks): Write on the transactional id; an
	// idempotent producer needs IdempotentWrite on the cluster or Write
	// on some topic (KIP-679).
	if b.Authorizer != nil {
		switch {
		case req.TransactionalID != nil && !b.authorize(rc, acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionalID):
			resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			return wire.Now(wire.Response{Msg: resp})
		case req.TransactionalID == nil && !b.authorizeQuiet(rc, acl.OpIdempotentWrite, acl.ResourceCluster, acl.ClusterName) &&
			!b.Authorizer.AuthorizeByResourceType(requester(rc), acl.OpWrite, acl.ResourceTopic):
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return wire.Now(wire.Response{Msg: resp})
		}
	}
	if req.TransactionalID != nil {
		return initTransactionalProducerID(b, req, resp)
	}
	if req.Version >= 3 && req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < math.MaxInt16-1 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		return wire.Now(wire.Response{Msg: resp})
	}
	id, err := b.Replicas.NextProducerID()
	if err != nil {
		if b.Log != nil {
			b.Log.Error("allocate producer id", zap.Error(err))
		}
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return wire.Now(wire.Response{Msg: resp})
}

// initTransactionalProducerID is InitProducerId with a transactional id.
func initTransactionalProducerID(b *Broker, req *kmsg.InitProducerIDRequest, resp *kmsg.InitProducerIDResponse) wire.Reply {
	if b.Txns == nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	pid, epoch := int64(-1), int16(-1)
	if req.Version >= 3 {
		pid, epoch = req.ProducerID, req.ProducerEpoch
		if (pid == -1) != (epoch == -1) {
			resp.ErrorCode = kerr.InvalidRequest.Code
			return wire.Now(wire.Response{Msg: resp})
		}
	}
	ch := make(chan wire.Response, 1)
	b.Txns.InitProducerID(*req.TransactionalID, req.TransactionTimeoutMillis, pid, epoch, func(id int64, e int16, code int16) {
		if req.Version < 4 && code == kerr.ProducerFenced.Code {
			code = kerr.InvalidProducerEpoch.Code
		}
		resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = id, e, code
		ch <- wire.Response{Msg: resp}
	})
	return wire.Later(ch)
}
