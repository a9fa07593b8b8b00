package handlers

// InitProducerId: v0-v4
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
//   - A transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED. Gregor
//     has no transaction coordinator yet; this is the code Kafka answers
//     when transactional writes are not permitted, and clients fail fast
//     with it, where COORDINATOR_NOT_AVAILABLE would make them retry until
//     their transaction timeout.
//   - Allocation failure (the block file cannot be written) →
//     COORDINATOR_NOT_AVAILABLE, which clients retry.
//
// Version notes:
//   - v1: same as v0. v2: flexible versions.
//   - v3: ProducerID and ProducerEpoch in the request (KIP-360).
//   - v4: same as v3 (PRODUCER_FENCED may be returned; not by us).

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
)

func init() { register(22, 0, 4, handleInitProducerID) }

func handleInitProducerID(b *Broker, _ *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
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
