package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors/txncoordinator"
	"gregor/config"
	"gregor/partition"
	"gregor/replication/controller"
	"gregor/replication/metadata"
	"gregor/replication/txnverify"
	"gregor/replication/zkclient"
	"gregor/wire/security/clientsec"
)

// newTxnTopic is __transaction_state as Kafka creates it
// (TransactionStateManager.transactionTopicConfigs):
// transaction.state.log.num.partitions partitions,
// transaction.state.log.replication.factor replicas,
// min.insync.replicas=transaction.state.log.min.isr,
// segment.bytes=transaction.state.log.segment.bytes, compacted,
// uncompressed, unclean leader election off.
func newTxnTopic(cfg *config.Broker) *internalTopic {
	return &internalTopic{cfg: cfg, spec: topicSpec{
		name:       txncoordinator.TopicName,
		partitions: cfg.TransactionStateLogNumPartitions,
		rf:         cfg.TransactionStateLogReplicationFactor,
		rfKey:      "transaction.state.log.replication.factor",
		minIsr:     cfg.TransactionStateLogMinIsr,
		configs: map[string]string{
			"cleanup.policy":                 "compact",
			"segment.bytes":                  strconv.FormatInt(cfg.TransactionStateLogSegmentBytes, 10),
			"compression.type":               "uncompressed",
			"unclean.leader.election.enable": "false",
		},
		loadBuffer: cfg.Coordinators.TransactionLoadBufferSize,
	}}
}

// producerIDs is the broker's producer id allocator as the transaction
// coordinator sees it: the one the idempotent InitProducerId uses
// (Manager.NextProducerID), so no id is handed out twice.
type producerIDs struct{ p *partition.ProducerIDs }

func (p producerIDs) NextProducerID() (int64, error) { return p.p.Next() }

// internalLeadership is the replica manager's OnLeadershipChange: a
// __consumer_offsets partition led here loads its groups, a
// __transaction_state partition its transactions; one no longer led here
// unloads them (Kafka's onLeadershipChange callback of
// handleLeaderAndIsrRequest and StopReplica). Both coordinators exist
// before the replica manager, so no change is lost; each one is a message
// to an actor (it never blocks).
func internalLeadership(groups func(partition.TopicPartition, bool, int32), txns *txncoordinator.Coordinator) func(tp partition.TopicPartition, leader bool, leaderEpoch int32) {
	return func(tp partition.TopicPartition, leader bool, leaderEpoch int32) {
		if tp.Topic == txncoordinator.TopicName {
			txns.LeadershipChanged(tp.Partition, leader, leaderEpoch)
			return
		}
		groups(tp, leader, leaderEpoch)
	}
}

// markerSender sends the transaction coordinator's WriteTxnMarkers to
// partition leaders over the inter-broker listener (this broker's own
// included, as Kafka's TransactionMarkerChannelManager does), one client
// per leader kept until Close; kgo negotiates the request version.
type markerSender struct {
	self      int32
	cache     *metadata.Cache
	endpoints controller.Endpoints
	log       *zap.Logger

	mu      sync.Mutex
	closed  bool
	clients map[int32]*markerClient
	// security is the inter-broker listener's client security.
	security clientsec.Client
}

type markerClient struct {
	addr string
	cl   *kgo.Client
}

var _ txncoordinator.MarkerSender = (*markerSender)(nil)

func newMarkerSender(cfg *config.Broker, cache *metadata.Cache, zk *zkclient.Client, sec clientsec.Client, log *zap.Logger) *markerSender {
	return &markerSender{self: cfg.BrokerID, cache: cache, endpoints: controller.NewEndpoints(cfg, cache, zk), security: sec, log: log, clients: map[int32]*markerClient{}}
}

// Leader is tp's leader in the metadata cache.
func (s *markerSender) Leader(tp txncoordinator.TopicPartition) (int32, bool) {
	p, ok := s.cache.Load().Partition(tp.Topic, tp.Partition)
	if !ok {
		return -1, false
	}
	return p.Leader, true
}

// Send sends req to broker, reconnecting when its endpoint changed.
func (s *markerSender) Send(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	kresp, err := s.request(ctx, broker, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kresp.(*kmsg.WriteTxnMarkersResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected response %T to WriteTxnMarkers", kresp)
	}
	return resp, nil
}

// request sends req to broker over the coordinator's client for it (the
// same connections carry markers and, from txn_verify.go, KIP-890
// verifications), reconnecting when the broker's endpoint changed.
func (s *markerSender) request(ctx context.Context, broker int32, req kmsg.Request) (kmsg.Response, error) {
	host, port, ok := s.endpoints.BrokerEndpoint(broker)
	if !ok {
		return nil, fmt.Errorf("no endpoint known for broker %d", broker)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	cl, err := s.client(broker, addr)
	if err != nil {
		return nil, err
	}
	return cl.SeedBrokers()[0].Request(ctx, req)
}

func (s *markerSender) client(broker int32, addr string) (*kgo.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("marker sender closed")
	}
	if c := s.clients[broker]; c != nil {
		if c.addr == addr {
			return c.cl, nil
		}
		c.cl.Close()
		delete(s.clients, broker)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(fmt.Sprintf("gregor-txn-markers-%d", s.self))},
		s.security.SetupOpts(0)...)...)
	if err != nil {
		return nil, err
	}
	s.clients[broker] = &markerClient{addr: addr, cl: cl}
	return cl, nil
}

// Close closes every client; later sends fail.
func (s *markerSender) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, c := range s.clients {
		c.cl.Close()
		delete(s.clients, id)
	}
}

// newTxnVerifier is the partition leaders' KIP-890 verifier
// (transaction.partition.verification.enable): a transactional id
// coordinated here is asked of txns in-process, any other of the leader
// of its __transaction_state partition in the metadata cache over the
// inter-broker listener.
func newTxnVerifier(cfg *config.Broker, cache *metadata.Cache, zk *zkclient.Client, txns *txncoordinator.Coordinator, sec clientsec.Client, log *zap.Logger) *txnverify.Manager {
	endpoints := controller.NewEndpoints(cfg, cache, zk)
	transport := txnverify.NewKgoTransport(func(broker int32) (string, bool) {
		host, port, ok := endpoints.BrokerEndpoint(broker)
		return net.JoinHostPort(host, strconv.Itoa(int(port))), ok
	}, fmt.Sprintf("gregor-txn-verify-%d", cfg.BrokerID))
	transport.Security = sec
	return txnverify.New(txnverify.Config{
		BrokerID: cfg.BrokerID,
		Local:    txns,
		// The leader, if it is a live broker (Kafka's
		// getTransactionCoordinator: else COORDINATOR_NOT_AVAILABLE).
		Leader: func(p int32) (int32, bool) {
			snap := cache.Load()
			pt, ok := snap.Partition(txncoordinator.TopicName, p)
			if !ok || pt.Leader < 0 {
				return -1, false
			}
			if _, alive := snap.Broker(pt.Leader); !alive {
				return -1, false
			}
			return pt.Leader, true
		},
		Transport: transport,
		Log:       log,
	})
}
