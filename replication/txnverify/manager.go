// Package txnverify asks transaction coordinators whether partitions are
// in a producer's ongoing transaction, for the partition leader's KIP-890
// part 1 verification (transaction.partition.verification.enable): Kafka's
// AddPartitionsToTxnManager. A transactional id whose coordinator (the
// leader of its __transaction_state partition in the metadata cache) is
// this broker is asked in-process; any other goes into that broker's next
// AddPartitionsToTxn v4+ request with VerifyOnly, which batches every
// transactional id waiting for it, one request in flight per broker.
package txnverify

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// Codes are per topic, per partition: 0 verified, else a Kafka error code.
type Codes = map[string]map[int32]int16

// Local is this broker's transaction coordinator
// (*txncoordinator.Coordinator).
type Local interface {
	// VerifyPartitions answers AddPartitionsToTxn VerifyOnly for one
	// transactional id; it never blocks and replies exactly once.
	VerifyPartitions(transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(Codes))
	// PartitionFor is the transactional id's __transaction_state partition.
	PartitionFor(transactionalID string) int32
}

// Transport sends one AddPartitionsToTxn request to a broker. KgoTransport
// is the real one.
type Transport interface {
	// Send returns the broker's response, ErrUnsupported when the broker
	// does not serve AddPartitionsToTxn v4 (verification is then skipped,
	// as Kafka does), or another error when no answer came (the request
	// may or may not have been handled).
	Send(ctx context.Context, broker int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error)
	// Close closes every connection.
	Close()
}

// ErrUnsupported is Transport.Send's error for a broker without
// AddPartitionsToTxn v4+.
var ErrUnsupported = errors.New("broker does not support AddPartitionsToTxn v4 (verification)")

// Config is what New needs.
type Config struct {
	BrokerID int32
	Local    Local
	// Leader is the __transaction_state partition's leader from the
	// metadata cache (ok false, or -1: none).
	Leader    func(partition int32) (int32, bool)
	Transport Transport
	// RequestTimeout bounds one request to another broker (Kafka's
	// request.timeout.ms for its inter-broker send thread); <= 0: 30 s.
	RequestTimeout time.Duration
	Log            *zap.Logger
}

// Manager is Kafka's AddPartitionsToTxnManager. Safe for concurrent use.
// It owns one goroutine per broker with a request in flight (Close stops
// them) and the Transport's connections.
type Manager struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	nodes  map[int32]*node

	observer atomic.Pointer[observerBox] // SetObserver; nil: none
}

// node is one coordinator broker: the transactions waiting for its next
// request (at most one per transactional id) and whether one is in flight.
type node struct {
	waiting  map[string]*waiter
	inflight bool
}

type waiter struct {
	txn   kmsg.AddPartitionsToTxnRequestTransaction
	parts map[string][]int32
	reply func(Codes)
}

// New returns a Manager; Close it.
func New(cfg Config) *Manager {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, ctx: ctx, cancel: cancel, nodes: map[int32]*node{}}
}

// Verify implements handlers.TxnVerifier: reply gets a code for every
// partition of parts (Kafka's AddPartitionsToTxnManager.verifyTransaction
// and its response mapping): COORDINATOR_NOT_AVAILABLE without a
// coordinator, PRODUCER_FENCED as INVALID_PRODUCER_EPOCH, a lost or
// timed-out request (or Close) as NETWORK_EXCEPTION, a request-level
// error for every partition (CLUSTER_AUTHORIZATION_FAILED as
// INVALID_TXN_STATE), a replaced request of the same transactional id
// NETWORK_EXCEPTION (same epoch) or INVALID_PRODUCER_EPOCH (older epoch).
func (m *Manager) Verify(transactionalID string, producerID int64, producerEpoch int16, parts map[string][]int32, reply func(Codes)) {
	leader, ok := m.cfg.Leader(m.cfg.Local.PartitionFor(transactionalID))
	if !ok || leader < 0 {
		// Answered before any verification starts: not observed, as in
		// Kafka's verifyTransaction.
		reply(fill(parts, kerr.CoordinatorNotAvailable.Code))
		return
	}
	reply = m.observed(reply)
	if leader == m.cfg.BrokerID {
		// Kafka sends this one over the network to itself too; in-process
		// the coordinator's actor answers without a connection.
		m.cfg.Local.VerifyPartitions(transactionalID, producerID, producerEpoch, parts, func(r Codes) { reply(mapCodes(parts, r)) })
		return
	}
	t := kmsg.NewAddPartitionsToTxnRequestTransaction()
	t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly = transactionalID, producerID, producerEpoch, true
	for topic, ps := range parts {
		rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		rt.Topic, rt.Partitions = topic, ps
		t.Topics = append(t.Topics, rt)
	}
	m.enqueue(leader, &waiter{txn: t, parts: parts, reply: reply})
}

// enqueue adds w to broker's next request (Kafka's addTxnData) and starts
// the broker's sender if none is in flight.
func (m *Manager) enqueue(broker int32, w *waiter) {
	var replaced *waiter
	var replacedCode int16
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		w.reply(fill(w.parts, kerr.NetworkException.Code))
		return
	}
	n := m.nodes[broker]
	if n == nil {
		n = &node{waiting: map[string]*waiter{}}
		m.nodes[broker] = n
	}
	if old := n.waiting[w.txn.TransactionalID]; old != nil {
		if old.txn.ProducerEpoch > w.txn.ProducerEpoch {
			// The newcomer is fenced by the one already waiting.
			m.mu.Unlock()
			w.reply(fill(w.parts, kerr.InvalidProducerEpoch.Code))
			return
		}
		// The waiting one gives way: fenced by a newer epoch, or a retry
		// of the same producer (answered retriably).
		replaced, replacedCode = old, kerr.NetworkException.Code
		if old.txn.ProducerEpoch < w.txn.ProducerEpoch {
			replacedCode = kerr.InvalidProducerEpoch.Code
		}
	}
	n.waiting[w.txn.TransactionalID] = w
	start := !n.inflight
	if start {
		n.inflight = true
		m.wg.Add(1)
	}
	m.mu.Unlock()
	if replaced != nil {
		replaced.reply(fill(replaced.parts, replacedCode))
	}
	if start {
		go m.send(broker, n)
	}
}

// send is broker's sender: it sends what waits, answers it, and goes on
// until nothing waits (one request in flight per broker).
func (m *Manager) send(broker int32, n *node) {
	defer m.wg.Done()
	for {
		m.mu.Lock()
		batch := n.waiting
		if len(batch) == 0 {
			n.inflight = false
			m.mu.Unlock()
			return
		}
		n.waiting = map[string]*waiter{}
		if m.closed {
			n.inflight = false
			m.mu.Unlock()
			for _, w := range batch {
				w.reply(fill(w.parts, kerr.NetworkException.Code))
			}
			return
		}
		m.mu.Unlock()

		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		for _, w := range batch {
			req.Transactions = append(req.Transactions, w.txn)
		}
		ctx, cancel := context.WithTimeout(m.ctx, m.cfg.RequestTimeout)
		resp, err := m.cfg.Transport.Send(ctx, broker, req)
		cancel()
		m.answer(broker, batch, resp, err)
	}
}

// answer maps one response (Kafka's AddPartitionsToTxnHandler.onComplete).
func (m *Manager) answer(broker int32, batch map[string]*waiter, resp *kmsg.AddPartitionsToTxnResponse, err error) {
	all := func(code int16) {
		for _, w := range batch {
			w.reply(fill(w.parts, code))
		}
	}
	switch {
	case errors.Is(err, ErrUnsupported):
		m.cfg.Log.Warn("coordinator broker cannot verify transactions: produce goes on unverified", zap.Int32("broker", broker))
		all(0)
		return
	case err != nil:
		m.cfg.Log.Warn("AddPartitionsToTxn (verify) failed", zap.Int32("broker", broker), zap.Error(err))
		all(kerr.NetworkException.Code)
		return
	case resp.ErrorCode != 0:
		code := resp.ErrorCode
		if code == kerr.ClusterAuthorizationFailed.Code {
			code = kerr.InvalidTxnState.Code
		}
		all(code)
		return
	}
	byID := make(map[string]Codes, len(resp.Transactions))
	for _, rt := range resp.Transactions {
		c := Codes{}
		for _, t := range rt.Topics {
			ps := map[int32]int16{}
			for _, p := range t.Partitions {
				ps[p.Partition] = p.ErrorCode
			}
			c[t.Topic] = ps
		}
		byID[rt.TransactionalID] = c
	}
	for id, w := range batch {
		r, ok := byID[id]
		if !ok {
			// Kafka's broker answers every transaction it was sent; one
			// missing is not taken as verified.
			w.reply(fill(w.parts, kerr.NetworkException.Code))
			continue
		}
		w.reply(mapCodes(w.parts, r))
	}
}

// Close answers whatever waits with NETWORK_EXCEPTION, cancels the
// requests in flight, waits for the senders and closes the transport.
// Verify afterwards answers NETWORK_EXCEPTION. Idempotent.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	if m.cfg.Transport != nil {
		m.cfg.Transport.Close()
	}
}

// mapCodes gives every partition of parts its code in r (missing:
// verified, as Kafka's manager reports only the partitions in error),
// PRODUCER_FENCED as INVALID_PRODUCER_EPOCH (what producers expect here).
func mapCodes(parts map[string][]int32, r Codes) Codes {
	out := make(Codes, len(parts))
	for topic, ps := range parts {
		m := make(map[int32]int16, len(ps))
		for _, p := range ps {
			code := r[topic][p]
			if code == kerr.ProducerFenced.Code {
				code = kerr.InvalidProducerEpoch.Code
			}
			m[p] = code
		}
		out[topic] = m
	}
	return out
}

// fill gives every partition of parts code.
func fill(parts map[string][]int32, code int16) Codes {
	out := make(Codes, len(parts))
	for topic, ps := range parts {
		m := make(map[int32]int16, len(ps))
		for _, p := range ps {
			m[p] = code
		}
		out[topic] = m
	}
	return out
}
