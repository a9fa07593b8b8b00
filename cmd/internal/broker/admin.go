package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"gregor/actors/txncoordinator"
	"gregor/cmd/internal/admin"
	"gregor/replication/txnverify"
	"gregor/wire"
	"gregor/wire/handlers"
	"gregor/wire/server"
)

// startAdmin starts the HTTP admin listener when admin.listener is set
// (metrics, /actors, /faults, /trace, pprof; cmd/internal/admin) and
// returns the dispatcher the protocol server should use: h wrapped with
// request faults and trace events, or h itself when the listener is off.
// Call attachAdmin once the protocol server exists.
func (b *Broker) startAdmin(h *handlers.Broker) (wire.Dispatcher, error) {
	if b.cfg.AdminListener == "" {
		return h, nil
	}
	sec := b.cfg.AdminListenerSecurity
	var tlsCfg *tls.Config
	if sec.TLS != nil {
		c, err := sec.TLS.Server()
		if err != nil {
			return nil, fmt.Errorf("admin.listener.ssl.*: %w", err)
		}
		tlsCfg = c
	}
	a, err := admin.Start(admin.Options{Addr: b.cfg.AdminListener, BrokerID: b.cfg.BrokerID, System: b.system,
		TLS: tlsCfg, TokenFile: sec.TokenFile,
		Partitions: b.replicas, Metadata: b.ctrl.Snapshot, Log: b.log.Named("admin"),
		ActiveController: func() bool { return b.ctrl.ActiveEpoch() > 0 },
		ControllerEventQueue: func() (int, bool) {
			// A scrape waits at most a second for the controller actor.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			n, err := b.ctrl.EventQueueSize(ctx)
			return n, err == nil
		},
		Transactions: func() (txncoordinator.Stats, bool) {
			// As the controller's gauge: at most a second for the txn actors.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			st, err := b.txns.Stats(ctx)
			return st, err == nil
		}})
	if err != nil {
		return nil, err
	}
	b.admin = a
	b.closers = append(b.closers, a.Close)
	h.Metrics = a
	b.observeTxnVerification(h)
	a.ObserveReplicationQuotas(b.quotas.Leader, b.quotas.Follower)
	a.ObserveClientQuotas(b.clientQuotas)
	return a.Dispatcher(h), nil
}

// attachAdmin lets the admin listener observe every answered request.
func (b *Broker) attachAdmin(s *server.Server) {
	if b.admin != nil {
		s.Observer = b.admin
		b.admin.ObserveConnections(admin.ConnectionStats{Open: s.Stats.ConnectionsOpen.Load,
			Accepted: s.Stats.ConnectionsAccepted.Load, Refused: s.Stats.ConnectionsRefused.Load})
	}
}

// AdminAddr is the admin listener's bound address, "" when it is off.
func (b *Broker) AdminAddr() string {
	if b.admin == nil {
		return ""
	}
	return b.admin.Addr().String()
}

// observeTxnVerification registers Kafka's AddPartitionsToTxnManager
// metrics on the admin listener (always, as Kafka has them with
// verification off too) and makes the handlers' verifier, if any
// (transaction.partition.verification.enable), report to them.
func (b *Broker) observeTxnVerification(h *handlers.Broker) {
	m := b.admin.TxnVerificationMetrics()
	if v, ok := h.TxnVerifier.(*txnverify.Manager); ok {
		v.SetObserver(m)
	}
}
