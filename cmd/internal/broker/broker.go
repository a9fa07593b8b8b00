// Package broker assembles one Gregor broker process from its parts: the
// configuration, the storage log manager, the actor system with the replica
// manager and the log-manager actor, the metadata store and controller, the
// request handlers and the protocol server. It owns their start order and
// their stop order (the reverse), so that every goroutine, actor, file and
// socket started here is stopped here.
package broker

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/coordinator"
	"gregor/actors/txncoordinator"
	"gregor/cmd/internal/admin"
	"gregor/config"
	"gregor/config/dynamic"
	"gregor/logging"
	"gregor/partition"
	"gregor/quota/clientquota"
	"gregor/replication/controller"
	"gregor/replication/fetcher"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/throttle"
	"gregor/replication/usercreds"
	"gregor/replication/zkclient"
	"gregor/storage"
	"gregor/wire/handlers"
	"gregor/wire/security/sasl"
	"gregor/wire/server"
)

// Broker is a running broker. Create with Start; stop with Close.
type Broker struct {
	cfg           *config.Broker
	log           *zap.Logger
	logs          *storage.LogManager
	system        *actor.ActorSystem
	replicas      *partition.Manager
	maint         *partition.Maintenance
	store         metastore.Store
	injected      metastore.Store // WithStore: used instead of opening one (options.go)
	beforeServing func() error    // BeforeServing: run just before the listeners serve (options.go)
	ctrl          *controller.Controller
	groups        *coordinator.Coordinator
	txns          *txncoordinator.Coordinator
	server        *server.Server
	zk            *zkclient.Client      // the broker's own ZooKeeper reads and writes (ISR, producer ids, configs, epoch fence)
	admin         *admin.Server         // nil unless admin.listener is set
	creds         *sasl.CredentialCache // SCRAM credentials of /config/users (sasl.go)
	credWatcher   *usercreds.Watcher    // keeps creds current
	quotas        *throttle.Managers    // replication throttles (leader, follower, alter-log-dirs)
	dyn           *dynamic.Manager      // dynamic broker configs (/config/brokers; dynamic.go)
	dynWatcher    *dynamic.Watcher      // keeps dyn current
	fetchers      *fetcher.Manager      // replica fetchers; nil in single-node mode (resized by num.replica.fetchers)
	clientQuotas  *clientquota.Manager  // client quotas (quotas.go)
	quotaWatcher  *clientquota.Watcher  // keeps clientQuotas current
	levels        *logging.Levels       // run-time log levels (BROKER_LOGGER resources; loggers.go)
	closers       []func() error        // in start order; Close runs them in reverse
	started       bool                  // Start completed: Close first does a controlled shutdown (cluster mode)
}

// Start brings a broker up: it opens (and, after an unclean shutdown,
// recovers) every log under log.dirs, starts the actors, binds the
// listeners, starts the controller (which registers the broker in
// /brokers/ids) and last serves the listeners (Kafka's order). On error
// everything started so far is stopped.
func Start(cfg *config.Broker, log *zap.Logger, opts ...Option) (_ *Broker, err error) {
	b := &Broker{cfg: cfg, log: log}
	for _, o := range opts {
		o(b)
	}
	log = b.wrapLogger() // loggers.go: every logger below goes through the level registry
	defer func() {
		if err != nil { // stop what was started; the caller gets only the error
			_ = b.Close()
		}
	}()
	began := time.Now()
	// Security first: a bad keystore fails the start before anything is opened.
	peers, err := newPeerSecurity(cfg) // security.go
	if err != nil {
		return nil, err
	}
	listenerSec, err := server.SecurityFromBroker(cfg)
	if err != nil {
		return nil, err
	}
	b.logs, err = storage.NewLogManager(storage.LogManagerConfig{
		Dirs:                  cfg.LogDirs,
		Defaults:              cfg.LogConfig(),
		RecoveryThreadsPerDir: cfg.NumRecoveryThreadsPerDataDir,
		SegmentFileCacheSize:  cfg.LogSegmentFDCacheSize,
		Logger:                log.Named("storage"),
	})
	if err != nil {
		return nil, fmt.Errorf("opening log dirs %v: %w", cfg.LogDirs, err)
	}
	b.closers = append(b.closers, b.logs.Close)
	for dir, derr := range b.logs.OfflineDirs() {
		log.Error("log dir offline", zap.String("dir", dir), zap.Error(derr))
	}
	onlineDir, err := b.firstOnlineDir()
	if err != nil {
		return nil, err
	}
	log.Info("logs loaded", zap.Int("partitions", len(b.logs.All())), zap.Duration("took", time.Since(began)))

	b.system = actors.NewSystem(log.Named("actors"))
	b.closers = append(b.closers, func() error { b.system.Shutdown(); return nil })

	store, err := b.openStore(onlineDir)
	if err != nil {
		return nil, err
	}
	b.store = store
	b.closers = append(b.closers, store.Close)
	if err := b.resolveBrokerID(store); err != nil { // broker_id.go: broker.id -1
		return nil, err
	}
	// The replica manager writes ISR changes and reserves producer ids
	// through the broker's ZooKeeper client; the controller shares it.
	b.zk = zkclient.New(store, cfg.BrokerID, log.Named("zk"))
	if err := b.startQuotas(); err != nil { // quotas.go
		return nil, err
	}
	if err := b.startCredentials(); err != nil { // sasl.go
		return nil, fmt.Errorf("loading SCRAM credentials: %w", err)
	}
	// Dynamic broker configs before the components that read them
	// (dynamic.go): eff is server.properties with /config/brokers on top.
	eff, err := b.startDynamicConfig()
	if err != nil {
		return nil, fmt.Errorf("loading dynamic broker configs: %w", err)
	}

	pids, err := partition.OpenProducerIDs(onlineDir)
	if err != nil {
		return nil, fmt.Errorf("producer id block in %s: %w", onlineDir, err)
	}
	if cfg.ZookeeperConnect != "" { // ids unique across the cluster (/latest_producer_id_block)
		pids = partition.NewBlockProducerIDs(func() (int64, int64, error) { return b.zk.ReserveProducerIDs(partition.ProducerIDBlockSize) })
	}

	// Built in an order without late-bound references: the group
	// coordinator (an actor) first, so that every leadership change of a
	// __consumer_offsets partition reaches it as a message; its
	// offsets-topic store becomes usable below, before the listeners open
	// and the controller starts, so before anything can call it
	// (offsets_topic.go).
	topic := newOffsetsTopic(cfg)
	b.groups, err = coordinator.New(b.system, coordinator.OptionsFromBroker(cfg, topic, log.Named("groups")))
	if err != nil {
		return nil, fmt.Errorf("group coordinator: %w", err)
	}
	// Stopped before the controller (the closer appended after it); this
	// one only covers a failed Start.
	stopGroups := sync.OnceFunc(b.groups.Stop)
	b.closers = append(b.closers, func() error { stopGroups(); return nil })

	// The metadata cache exists before the controller that fills it, so
	// the fetchers can resolve leaders from it, and the transaction
	// coordinator's marker sender.
	cache := &metadata.Cache{}
	// The finalized features (/feature) the controller's watch keeps and
	// ApiVersions answers with.
	features := &metadata.FeatureCache{}

	// The transaction coordinator, like the group coordinator, exists
	// before the replica manager whose __transaction_state leadership
	// changes it hears of (txn_topic.go); its topic store is completed
	// with the group one's below.
	txnTopic := newTxnTopic(cfg)
	markers := newMarkerSender(cfg, cache, b.zk, peers.inter, log.Named("txn-markers"))
	b.closers = append(b.closers, func() error { markers.Close(); return nil })
	b.txns, err = txncoordinator.New(b.system, txncoordinator.OptionsFromBroker(cfg, txnTopic, markers, producerIDs{pids}, log.Named("txns")))
	if err != nil {
		return nil, fmt.Errorf("transaction coordinator: %w", err)
	}
	stopTxns := sync.OnceFunc(b.txns.Stop)
	b.closers = append(b.closers, func() error { stopTxns(); return nil })
	// Replication throttles: rates from the effective config.Quotas (the
	// dynamic broker config layer changes them: registerDynamic),
	// throttled replicas from the topic configs the controller reads
	// (Options.OnTopicConfig).
	b.quotas = throttle.New(cfg.BrokerID, eff.Quotas)
	var fm *fetcher.Manager
	b.replicas, err = partition.NewManager(partition.ManagerConfig{
		System:            b.system,
		Store:             partition.StorageStore{M: b.logs},
		BrokerID:          cfg.BrokerID,
		Logger:            log.Named("replicas"),
		ProducerIDs:       pids,
		IsrWriter:         b.zk,
		ReplicaLagTimeMax: cfg.ReplicaLagTimeMax,
		// producer.id.expiration.ms and its check interval (KIP-854).
		ProducerIDExpiration:      cfg.ProducerIDExpiration,
		ProducerIDExpirationCheck: cfg.ProducerIDExpirationCheck,
		// __consumer_offsets leadership loads/unloads groups (offsets_topic.go).
		// and __transaction_state leadership loads/unloads transactions (txn_topic.go).
		OnLeadershipChange: internalLeadership(groupsLeadership(b.groups), b.txns),
		// replica.alter.log.dirs.io.max.bytes.per.second throttles the
		// AlterReplicaLogDirs copies.
		AlterLogDirsQuota: b.quotas.AlterLogDirs, AlterLogDirsThreads: cfg.NumReplicaAlterLogDirsThreads,
		NewFetchers: func(r partition.ReplicaLookup) (partition.FetcherControl, error) {
			if cfg.ZookeeperConnect == "" {
				return nil, nil // single node: no follower ever fetches
			}
			fc := fetcher.ConfigFromBroker(cfg)
			fc.NumFetchers = eff.NumReplicaFetchers // a dynamic num.replica.fetchers in force at start
			fc.System, fc.Replicas, fc.Endpoints, fc.Logger = b.system, r, controller.NewEndpoints(cfg, cache, b.zk), log.Named("fetcher")
			fc.Security = peers.inter
			fc.Quota = b.quotas.Follower
			var err error
			if fm, err = fetcher.Start(fc); err != nil {
				return nil, err
			}
			b.fetchers = fm
			return fm, nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("replica manager: %w", err)
	}
	b.closers = append(b.closers, func() error { b.replicas.Close(); return nil })
	topic.replicas = b.replicas
	txnTopic.replicas = b.replicas

	b.maint, err = partition.StartMaintenance(b.system, partition.StorageStore{M: b.logs}, b.replicas.HighWatermarks,
		partition.MaintenanceConfig{RetentionCheck: cfg.LogRetentionCheckInterval, CleanerBackoff: cfg.LogCleanerBackoff, CleanerDisabled: !cfg.LogCleanerEnable,
			Checkpoint:              config.Period(cfg.Checkpoints.HighWatermarkMs),
			RecoveryPointCheckpoint: config.Period(cfg.Checkpoints.RecoveryPointMs),
			LogStartCheckpoint:      config.Period(cfg.Checkpoints.LogStartOffsetMs),
			FlushCheck:              flushCheck(cfg.Checkpoints),
			Cleaner:                 cleanerConfig(cfg),
			AfterRetention:          b.replicas.RefreshLogStart}, log.Named("log-manager"))
	if err != nil {
		return nil, fmt.Errorf("log-manager actor: %w", err)
	}
	b.closers = append(b.closers, func() error { b.maint.Stop(); return nil })
	if fm != nil { // stopped first: no follower append after the final checkpoints
		b.closers = append(b.closers, func() error { fm.Close(); return nil })
	}

	b.ctrl = controller.New(store, b.replicas, cfg, controller.Options{Log: log.Named("controller"), System: b.system, ZK: b.zk, Cache: cache,
		Security: peers.inter, ControlPlaneSecurity: peers.control, OnUserConfigChange: b.credWatcher.Changed,
		OnTopicConfig: b.applyThrottledReplicas, OnBrokerConfigChange: b.dynWatcher.Changed, OnQuotaConfigChange: b.quotaWatcher.Changed, Features: features})
	b.ctrl.SetTopicDefaults(eff)
	topic.topics = b.ctrl
	txnTopic.topics = b.ctrl
	// Deleted topics' offsets leave the groups coordinated here.
	b.ctrl.OnMetadataChange(groupsMetadata(b.groups))

	// The listeners are bound before the controller registers this broker
	// in /brokers/ids and serve once the broker has started, as Kafka's
	// KafkaServer.startup binds its SocketServer before registerBroker
	// and starts processing requests last: the controller's first
	// connection to a broker it has just seen register is never refused
	// (it would wait a channel backoff); its requests wait in the backlog
	// until this broker can answer them. Close still stops the listeners
	// first: their closers run once, from the end of the list (below) or,
	// if Start fails before that, from here.
	// KIP-890 verification: closed after the handlers (closers run in
	// reverse), whose produces may be waiting for it.
	var verifier handlers.TxnVerifier
	if cfg.TransactionPartitionVerificationEnable {
		v := newTxnVerifier(cfg, cache, b.zk, b.txns, peers.inter, log.Named("txn-verify"))
		b.closers = append(b.closers, func() error { v.Close(); return nil })
		verifier = v
	}
	// KIP-590 forwarding to the controller: closed after the handlers,
	// whose requests may be forwarding.
	fwd := newForwarder(cfg, cache, b.zk, store, peers.inter)
	b.closers = append(b.closers, func() error { fwd.Close(); return nil })
	h := &handlers.Broker{Config: cfg, Forward: fwd, Log: log.Named("handlers"), Users: store, QuotaStore: store, ConsumerStore: store, Quotas: b.clientQuotas, Replicas: b.replicas, LogDirs: b.logs, Topics: b.ctrl, Groups: b.groups, Txns: b.txns, TxnVerifier: verifier, Cluster: b.ctrl,
		LeaderQuota: b.quotas.Leader, Dynamic: b.dyn, Loggers: b.levels, Features: features}
	if err := b.startAuthorizer(h, store); err != nil { // authorizer.class.name (authorizer.go)
		return nil, err
	}
	// After the server (closed first, its connections' contexts cancelled)
	// and before what the handlers' goroutines call into.
	closeHandlers := sync.OnceValue(func() error { h.Close(); return nil })
	b.closers = append(b.closers, closeHandlers)
	d, err := b.startAdmin(h) // admin.listener (admin.go)
	if err != nil {
		return nil, err
	}
	sc := server.ConfigFromBroker(cfg)
	sc.Limits = &eff.ConnectionLimits // the dynamic connection quotas in force
	sc.Security = listenerSec
	b.saslSecurity(&sc)
	b.server = server.New(sc, d, log.Named("server"))
	b.attachAdmin(b.server)
	b.observeAuth(b.server)
	if err := b.applyStartKeystores(eff); err != nil { // dynamic.go
		return nil, err
	}
	b.registerDynamic() // dynamic.go: the components that change at run time
	closeServer := sync.OnceValue(b.server.Close)
	b.closers = append(b.closers, closeServer)
	if err := b.server.Listen(); err != nil {
		return nil, fmt.Errorf("listeners: %w", err)
	}

	if err := b.ctrl.Start(); err != nil { // registers /brokers/ids/<broker.id>
		return nil, fmt.Errorf("controller: %w", err)
	}
	b.closers = append(b.closers, func() error { b.ctrl.Close(); return nil })
	b.closers = append(b.closers, func() error { stopGroups(); return nil })
	b.closers = append(b.closers, func() error { stopTxns(); return nil })

	if err := b.logs.EnsureMetaProperties(cfg.BrokerID, b.ctrl.ClusterID()); err != nil {
		return nil, err
	}
	b.closers = append(b.closers, closeHandlers, closeServer)
	if b.beforeServing != nil {
		if err := b.beforeServing(); err != nil {
			return nil, err
		}
	}
	if err := b.server.Start(); err != nil {
		return nil, fmt.Errorf("listeners: %w", err)
	}
	b.started = true
	log.Info("started", zap.Int32("broker.id", cfg.BrokerID), zap.String("cluster.id", b.ctrl.ClusterID()),
		zap.Strings("log.dirs", cfg.LogDirs), zap.Duration("took", time.Since(began)))
	return b, nil
}

// firstOnlineDir is where broker-wide files live (metadata snapshot,
// producer id block): the first of log.dirs that is online.
func (b *Broker) firstOnlineDir() (string, error) {
	offline := b.logs.OfflineDirs()
	for _, d := range b.cfg.LogDirs {
		if _, bad := offline[d]; !bad {
			return filepath.Clean(d), nil
		}
	}
	return "", errors.New("every log dir is offline; see the errors above")
}

// Addrs are the bound listener addresses.
func (b *Broker) Addrs() []net.Addr { return b.server.Addrs() }

// Close stops the broker in reverse start order, except that the
// listeners, bound before the controller started, still stop first (no
// new requests); then the group coordinator, the controller, the
// fetchers, the log-manager actor (final checkpoint), the partition
// actors, the actor system, and last the logs (flush, checkpoints,
// clean-shutdown marker). Idempotent.
func (b *Broker) Close() error {
	if b.started && b.cfg.ZookeeperConnect != "" && b.ctrl != nil {
		b.started = false
		b.controlledShutdown()
	}
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		if err := b.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	b.closers = nil
	return errors.Join(errs...)
}

// flushCheck is the flush pass period: log.flush.scheduler.interval.ms when
// server.properties sets it, else 0 (the log-manager's 1 s default, so
// flush.ms takes effect; Kafka's default Long.MaxValue never checks).
func flushCheck(c config.Checkpoints) time.Duration {
	if !c.FlushSchedulerSet {
		return 0
	}
	return config.Period(c.FlushSchedulerMs)
}
