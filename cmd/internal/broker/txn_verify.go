package broker

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors/txncoordinator"
	"gregor/replication/metadata"
	"gregor/wire/handlers"
)

// txnVerifier is the broker's handlers.TxnVerifier (KIP-890 part 1, Kafka's
// AddPartitionsToTxnManager): the transactional id's coordinator is the
// leader of its __transaction_state partition in the metadata cache; when
// that is this broker the local coordinator answers, else an
// AddPartitionsToTxn v4 VerifyOnly request goes to the leader over the
// coordinator's inter-broker clients (markerSender), from a goroutine the
// verifier owns and Close waits for.
type txnVerifier struct {
	self  int32
	txns  *txncoordinator.Coordinator
	cache *metadata.Cache
	peers *markerSender
	log   *zap.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ handlers.TxnVerifier = (*txnVerifier)(nil)

// verifyTimeout bounds one remote verification (Kafka's
// AddPartitionsToTxnManager uses the inter-broker request timeout).
const verifyTimeout = 30 * time.Second

func newTxnVerifier(self int32, txns *txncoordinator.Coordinator, cache *metadata.Cache, peers *markerSender, log *zap.Logger) *txnVerifier {
	v := &txnVerifier{self: self, txns: txns, cache: cache, peers: peers, log: log}
	v.ctx, v.cancel = context.WithCancel(context.Background())
	return v
}

// VerifyTransaction implements handlers.TxnVerifier.
func (v *txnVerifier) VerifyTransaction(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(map[string]map[int32]int16, int16)) {
	leader := int32(-1)
	if snap := v.cache.Load(); snap != nil {
		if p, ok := snap.Partition(txncoordinator.TopicName, v.txns.PartitionFor(transactionalID)); ok {
			leader = p.Leader
		}
	}
	switch {
	case leader < 0:
		reply(nil, kerr.CoordinatorNotAvailable.Code)
		return
	case leader == v.self:
		v.txns.VerifyPartitions(transactionalID, producerID, producerEpoch, parts, func(codes map[string]map[int32]int16) { reply(codes, 0) })
		return
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = transactionalID, producerID, producerEpoch, true
	for topic, ps := range parts {
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = topic, ps
		tx.Topics = append(tx.Topics, tt)
	}
	req.Transactions = append(req.Transactions, tx)
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		rctx, cancel := context.WithTimeout(v.ctx, verifyTimeout)
		stop := context.AfterFunc(ctx, cancel) // the client's request ended (its connection closed)
		defer stop()
		defer cancel()
		kresp, err := v.peers.request(rctx, leader, req)
		resp, _ := kresp.(*kmsg.AddPartitionsToTxnResponse)
		if err != nil || resp == nil {
			v.log.Debug("transaction verification failed", zap.String("transactional.id", transactionalID), zap.Int32("coordinator", leader), zap.Error(err))
			reply(nil, kerr.NetworkException.Code)
			return
		}
		if resp.ErrorCode != 0 {
			code := resp.ErrorCode
			if code == kerr.ClusterAuthorizationFailed.Code {
				code = kerr.InvalidTxnState.Code // Kafka hides the inter-broker authorization from the client
			}
			reply(nil, code)
			return
		}
		codes := map[string]map[int32]int16{}
		for _, tr := range resp.Transactions {
			if tr.TransactionalID != transactionalID {
				continue
			}
			for _, tt := range tr.Topics {
				for _, p := range tt.Partitions {
					if codes[tt.Topic] == nil {
						codes[tt.Topic] = map[int32]int16{}
					}
					codes[tt.Topic][p.Partition] = p.ErrorCode
				}
			}
		}
		reply(codes, 0)
	}()
}

// Close ends the verifications in flight (they answer
// NETWORK_EXCEPTION) and waits for their goroutines.
func (v *txnVerifier) Close() {
	v.cancel()
	v.wg.Wait()
}
