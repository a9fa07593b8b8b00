// Package controller is Gregor's controller in Kafka's ZooKeeper mode: it
// registers the broker, wins /controller, assigns replicas and leaders,
// writes the Kafka 2.x znode layout (replication/zkmeta) through a
// metastore.Store, tells the replica manager which partitions to lead
// (LeaderAndIsr) or stop (StopReplica) and publishes the metadata cache.
//
// Every broker runs a Controller. One wins the ephemeral /controller and
// drives the cluster (cluster.go: broker death and return, topics created
// or deleted through ZooKeeper, ISR change notifications, controlled
// shutdown), sending LeaderAndIsr, UpdateMetadata and StopReplica to its
// own broker in-process through an ordered worker off the actor
// (local.go) and to the others through one channel actor per peer
// (channel.go). The others stand by, watching /controller, and apply
// the requests they receive (broker.go: fenced by controller epoch). The
// same code runs over the embedded store of single-node mode, where the
// only live broker is this one. The decisions are pure functions
// (AssignReplicas, NextLeadership, ValidateTopicName,
// CheckReplicaAssignment); an event plans its partition state writes and
// its LeaderAndIsr per broker with them (plan.go) and an executor applies
// the plan (execute.go): batched Multi transactions fenced on
// /controller_epoch, one request per broker. The broker's own ZooKeeper
// operations (ISR writes, producer ids, topic config reads, the
// controller-epoch fence of the requests it serves) are
// replication/zkclient's.
//
// Concurrency: the controller's work runs on one protoactor actor, kind
// "controller" (actor.go), with the ordering of Kafka's single controller
// event thread but without its blocking (turn.go): ZooKeeper watch
// events, retries and the requests of the exported methods (CreateTopics,
// DeleteTopics, …) are queued by the actor and run one at a time, each as
// straight-line code that holds the actor's turn only between effects.
// Every metastore call of an event (c.meta) and its wait for this
// broker's StopReplica is an effect: the event yields the turn, the call
// runs off the actor on a goroutine the controller owns, and its result
// comes back to the actor as a message tagged with the incarnation's
// round, which hands the turn back (a result of an older round is
// dropped and its event abandoned). So the actor answers (queues new
// events, EventQueueSize) while an event waits for ZooKeeper, and the
// next event starts only when the current one finished. The exported
// methods wait for their event's answer on the caller's goroutine. The
// actor is supervised with actors.BackoffStrategy: a panic restarts it,
// and a restarted actor re-reads ZooKeeper, re-arms its watches and
// resends LeaderAndIsr and UpdateMetadata to every live broker, as a
// newly elected controller does; the queue survives the restart. The
// controller's state is touched only by the event holding the turn (no
// mutex guards it); what other goroutines read is published in atomics:
// ClusterID, Epoch, ActiveEpoch and the metadata (Snapshot, an atomic
// pointer), so no reader waits for the actor's current event.
package controller

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/asynkron/protoactor-go/actor"

	"gregor/actors"
	"gregor/config"
	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/zkclient"
	"gregor/replication/zkmeta"
	"gregor/storage"
	"gregor/wire/security/clientsec"
)

// ReplicaManager is what the controller needs from the broker's replica
// manager (the LeaderAndIsr / StopReplica requests of Kafka's controller
// channel, delivered in-process).
type ReplicaManager interface {
	// ApplyLeaderAndIsr makes this broker lead or follow the partitions;
	// the map holds per-partition failures (nil map = all applied).
	ApplyLeaderAndIsr(states []partition.LeaderAndIsr) map[partition.TopicPartition]error
	// StopReplicas stops the partitions, deleting their logs when deleteLogs.
	StopReplicas(tps []partition.TopicPartition, deleteLogs bool) error
	// UpdateConfig applies a topic's new log config to its hosted partitions.
	UpdateConfig(topic string, cfg storage.LogConfig)
}

// Controller is a broker's controller: active when it holds /controller,
// standing by otherwise. Create with New, then Start; Close stops it.
type Controller struct {
	store metastore.Store // for code off the actor (broker side, Start, Close)
	meta  metastore.Store // for events: every call an effect run off the actor (turn.go)
	rm    ReplicaManager
	cfg   *config.Broker
	log   *zap.Logger
	now   func() time.Time
	peers Peers
	// security: the inter-broker listener's (Options.Security);
	// controlPlane that of the controller channel (Options.ControlPlaneSecurity).
	security, controlPlane clientsec.Client
	sys                    *actor.ActorSystem // for actors.Emit (election counters); may be nil

	cache *metadata.Cache // this broker's metadata cache (Options.Cache)

	// Owned by the actor (and by Start before it is spawned, rejoin while
	// none runs, Close after it stopped).
	started        bool
	active         bool  // holds /controller; set only through setActive
	epoch          int32 // controller epoch (/controller_epoch) won; 0 when standing by
	epochZkVersion int32 // version of /controller_epoch after the bump (fences state writes)
	clusterID      string
	self           zkmeta.BrokerInfo
	topics         map[string]*topicState
	liveInfo       map[int32]zkmeta.BrokerInfo // registered brokers (/brokers/ids), active controller only
	shuttingDown   map[int32]bool              // brokers in controlled shutdown
	armed          map[string]uint64           // watched path → generation of its live watch
	gen            uint64

	// reassigning: partition reassignments under way (reassign.go), active controller only.
	reassigning map[partition.TopicPartition]*ongoing

	// cfgChanges: the /config/changes listener of every broker (config_changes.go).
	cfgChanges     configChangeState
	features       *metadata.FeatureCache          // Options.Features (features.go)
	onUserChange   func(string)                    // Options.OnUserConfigChange
	onTopicCfg     func(string, map[string]string) // Options.OnTopicConfig
	onBrokerConfig func(string)                    // Options.OnBrokerConfigChange
	onQuotaChange  func(string)                    // Options.OnQuotaConfigChange
	// topicDefaults is the broker config topic defaults come from when a
	// dynamic broker config replaced cfg (SetTopicDefaults); nil = cfg.
	topicDefaults atomic.Pointer[config.Broker]

	// offline: replicas reported offline (offline.go), active controller only.
	offline map[partition.TopicPartition]offlineMark

	stop          chan struct{}  // closed by Close
	wg            sync.WaitGroup // watch forwarders, retry timers, rejoin after give-up
	removeSession func()

	// The controller actor (actor.go). scope is closed and replaced when an
	// incarnation of the actor starts, ending the previous incarnation's
	// watch forwarders and retry timers; incarnation counts the starts.
	asys           *actor.ActorSystem // spawns the actor: Options.System or a private one
	ownSys         bool               // asys was made by Start (shut down by Close)
	supervision    *actors.BackoffStrategy
	scope          chan struct{}
	incarnation    int
	life           sync.Mutex // guards cur and closing
	cur            *runner    // the live actor; nil before Start, after Close and after a give-up
	closing        bool
	rejoinInterval time.Duration // RejoinInterval; shorter in tests

	// Published by the actor for readers on other goroutines (setActive,
	// loadClusterID): activeEpoch is the controller epoch while active (it
	// holds /controller and won that epoch), 0 otherwise; epochPub is
	// c.epoch; activePub is c.active; clusterIDPub is c.clusterID.
	activeEpoch  atomic.Int32
	epochPub     atomic.Int32
	activePub    atomic.Bool
	clusterIDPub atomic.Pointer[string]

	// zk is the broker side's ZooKeeper client (broker.go): the
	// controller-epoch fence, topic config and broker registration reads.
	zk *zkclient.Client

	// local carries the requests this broker's controller sends its own
	// replica manager (local.go), in order, off the actor.
	local *localQueue

	// The event queue (turn.go), owned by the actor; it survives restarts.
	// queue holds the events and calls behind the running one; running is
	// the item whose turn it is or whose effect is under way (nil: none);
	// round counts incarnations (a run of an older round is abandoned); co
	// is the run holding the turn right now (set by the actor, read by the
	// run's effects).
	queue   []queued
	running *eventRun
	round   uint64
	co      atomic.Pointer[eventRun]
}

// topicState is the controller's in-memory copy of a topic's znodes.
type topicState struct {
	name       string
	id         [16]byte
	assignment map[int32][]int32 // /brokers/topics/<t>
	state      map[int32]*partState
	overrides  map[string]string // /config/topics/<t>
}

type partState struct {
	PartitionLeadership
	zkVersion int32 // version of the state znode (conditional writes)
	failed    bool  // the replica manager refused the last LeaderAndIsr
}

// Options are optional dependencies of New.
type Options struct {
	Log *zap.Logger      // nil = no logging
	Now func() time.Time // nil = time.Now
	// Peers carries requests to the other brokers. nil = a ChannelManager
	// in System, or, when System is nil too, no peers (single node).
	Peers  Peers
	System *actor.ActorSystem
	// ZK is this broker's ZooKeeper client over the same store (the broker
	// builds it before the replica manager, which writes ISR changes
	// through it). nil = one of the controller's own.
	ZK *zkclient.Client
	// Cache is this broker's metadata cache, which the controller
	// publishes to (its own snapshots on the active controller, the
	// UpdateMetadata it receives otherwise). The broker builds it first so
	// that what reads it (the replica fetchers' Endpoints) can exist
	// before the controller. nil = one of the controller's own.
	Cache *metadata.Cache
	// Security is the inter-broker listener's client security
	// (inter.broker.listener.name): the controlled-shutdown request to the
	// controller goes through it. Zero = PLAINTEXT.
	Security clientsec.Client
	// ControlPlaneSecurity is the security of the controller channel's
	// connections when control.plane.listener.name is set (nil = Security).
	ControlPlaneSecurity *clientsec.Client
	// OnUserConfigChange is called, on the controller's goroutine, with
	// the sanitized user name of every "users/<u>" config change
	// notification (SCRAM credentials, replication/usercreds); it must not
	// block. nil = user changes are only logged.
	OnUserConfigChange func(sanitizedUser string)
	// OnTopicConfig is called with a topic's config overrides
	// (/config/topics/<t>) each time this broker applies them: the
	// LeaderAndIsr requests it gets (remote or in-process) for the topic's
	// partitions, and every topic config change notification. It runs on
	// the controller's or a request goroutine and must not block; the
	// map must not be kept or modified. The replication throttles use it
	// (replication/throttle Managers.ApplyTopicConfig). nil = none.
	OnTopicConfig func(topic string, overrides map[string]string)
	// OnBrokerConfigChange is called, on the controller's goroutine, with
	// the entity of every "brokers/<id>" or "brokers/<default>" config
	// change notification (dynamic broker configs, config/dynamic); it
	// must not block. nil = broker changes are only logged.
	OnBrokerConfigChange func(entity string)
	// OnQuotaConfigChange is called, on the controller's goroutine, with
	// the entity path of every client quota notification ("users/<u>",
	// "clients/<c>", "users/<u>/clients/<c>"; quota/clientquota.Watcher);
	// it must not block. nil = quota changes are only logged.
	OnQuotaConfigChange func(entityPath string)
	// Features is where this broker keeps the finalized features it reads
	// from /feature (features.go), which ApiVersions answers with. nil =
	// one of the controller's own (Controller.Features).
	Features *metadata.FeatureCache
}

// New builds a controller over store for the broker configured by cfg
// (broker.id, advertised.listeners, num.partitions,
// default.replication.factor, auto.create.topics.enable,
// delete.topic.enable, unclean.leader.election.enable, and cfg.Raw for
// topic config defaults). Nothing happens until Start.
func New(store metastore.Store, rm ReplicaManager, cfg *config.Broker, opts Options) *Controller {
	c := &Controller{store: store, rm: rm, cfg: cfg, log: opts.Log, now: opts.Now, peers: opts.Peers,
		topics: map[string]*topicState{}, liveInfo: map[int32]zkmeta.BrokerInfo{}, shuttingDown: map[int32]bool{},
		armed: map[string]uint64{}, stop: make(chan struct{}), scope: make(chan struct{}), local: newLocalQueue(), sys: opts.System, asys: opts.System, rejoinInterval: RejoinInterval,
		onUserChange: opts.OnUserConfigChange, onTopicCfg: opts.OnTopicConfig, onBrokerConfig: opts.OnBrokerConfigChange, onQuotaChange: opts.OnQuotaConfigChange}
	c.meta = eventStore{c: c, s: store}
	c.security, c.controlPlane = opts.Security, opts.Security
	if opts.ControlPlaneSecurity != nil {
		c.controlPlane = *opts.ControlPlaneSecurity
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.cache = opts.Cache; c.cache == nil {
		c.cache = &metadata.Cache{}
	}
	if c.features = opts.Features; c.features == nil {
		c.features = &metadata.FeatureCache{}
	}
	if c.zk = opts.ZK; c.zk == nil {
		c.zk = zkclient.New(store, cfg.BrokerID, c.log.Named("zk"))
	}
	if c.peers == nil {
		if opts.System != nil {
			cm := NewChannelManager(opts.System, cfg.BrokerID, c.log.Named("channel"))
			cm.SetSecurity(c.controlPlane)
			cm.SetTimeout(cfg.ControllerSocketTimeout)
			c.peers = cm
		} else {
			c.peers = noPeers{}
		}
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.installOfflineReporter()
	return c
}

// Snapshot returns the current metadata (lock-free).
func (c *Controller) Snapshot() *metadata.Snapshot { return c.cache.Load() }

// ClusterID is the cluster id from /cluster/id ("" before Start).
func (c *Controller) ClusterID() string {
	if id := c.clusterIDPub.Load(); id != nil {
		return *id
	}
	return ""
}

// ActiveEpoch is the controller epoch while this broker is the active
// controller (it holds /controller and won that epoch), 0 otherwise. It
// changes as the controller actor wins or resigns (session expiry, a lost
// /controller, a failed takeover, Close), so a deposed controller reports
// 0 as soon as it knows, and never blocks (Kafka's ActiveControllerCount).
func (c *Controller) ActiveEpoch() int32 { return c.activeEpoch.Load() }

// setActive records whether this broker is the active controller
// (c.active and ActiveEpoch) and publishes it with c.epoch for the
// readers on other goroutines. Every change of c.epoch ends here.
func (c *Controller) setActive(active bool) {
	c.active = active
	c.activePub.Store(active)
	c.epochPub.Store(c.epoch)
	if active && c.epoch > 0 {
		c.activeEpoch.Store(c.epoch)
	} else {
		c.activeEpoch.Store(0)
	}
}

// Epoch is the controller epoch this controller won (0 when not active).
func (c *Controller) Epoch() int32 { return c.epochPub.Load() }

// Start runs broker start-up and controller election (Kafka's
// KafkaServer.startup + KafkaController.onControllerFailover): create the
// persistent paths, create or read /cluster/id, register /brokers/ids/<id>
// (ephemeral), win /controller (ephemeral) and bump /controller_epoch, load
// every topic, finish pending deletions, elect leaders and send
// LeaderAndIsr for every partition, then publish the metadata.
//
// The election runs on the controller actor (spawned here, named
// "controller"); Start returns once its first attempt is done. A failed
// election is not fatal: the actor retries it. Start fails (and leaves
// nothing running) when the store cannot be set up, this broker.id is
// already registered or the actor cannot be spawned.
func (c *Controller) Start() error {
	c.life.Lock()
	claimed := !c.started && !c.closing
	c.started = claimed // claimed now: a concurrent Start fails; released below on failure
	c.life.Unlock()
	if !claimed {
		return errors.New("controller: already started or closed")
	}
	release := func() {
		c.life.Lock()
		c.started = false
		c.life.Unlock()
	}
	err := zkmeta.EnsurePersistentPaths(c.store)
	if err != nil {
		err = fmt.Errorf("controller: create persistent paths: %w", err)
	}
	if err == nil {
		err = c.loadClusterID()
	}
	if err == nil {
		id := c.clusterID
		c.clusterIDPub.Store(&id)
	}
	if err == nil {
		err = c.registerBroker()
	}
	if err != nil {
		release()
		return err
	}
	if c.asys == nil {
		c.asys, c.ownSys = actors.NewSystem(c.log.Named("actors")), true
	}
	c.supervision = c.newSupervision()
	c.local.start()
	if err := c.spawn(); err != nil {
		c.local.close()
		c.local = newLocalQueue() // a later Start starts this one
		release()
		c.store.Delete(zkmeta.BrokerPath(c.cfg.BrokerID), metastore.AnyVersion)
		if c.ownSys {
			c.asys.Shutdown()
		}
		return fmt.Errorf("controller: spawn the controller actor: %w", err)
	}
	c.removeSession = c.store.OnSession(c.onSession)
	// The actor's *Started ran the election; this call returns after it,
	// then Start waits until this broker applied the LeaderAndIsr it sent
	// itself (the broker serves its partitions once Start returns).
	var seq uint64
	if err := c.call(func() { seq = c.local.last() }); err != nil {
		c.log.Warn("controller actor did not answer after start", zap.Error(err))
	} else {
		c.settleLocal(seq)
	}
	return nil
}

func (c *Controller) loadClusterID() error {
	data, _, err := c.store.Get(zkmeta.ClusterIDPath)
	if errors.Is(err, metastore.ErrNoNode) {
		id := zkmeta.UUIDString(zkmeta.RandomUUID())
		err = metastore.CreateAll(c.store, zkmeta.ClusterIDPath, zkmeta.EncodeClusterID(id), false)
		if err == nil {
			c.clusterID = id
			c.log.Info("created cluster id", zap.String("cluster.id", id))
			return nil
		}
		if !errors.Is(err, metastore.ErrNodeExists) { // another broker won the race: read its id
			return fmt.Errorf("controller: create %s: %w", zkmeta.ClusterIDPath, err)
		}
		data, _, err = c.store.Get(zkmeta.ClusterIDPath)
	}
	if err != nil {
		return fmt.Errorf("controller: read %s: %w", zkmeta.ClusterIDPath, err)
	}
	if c.clusterID, err = zkmeta.DecodeClusterID(data); err != nil {
		return err
	}
	return nil
}

// registerBroker creates the ephemeral /brokers/ids/<id>. An existing node
// means another live broker uses this broker.id: start-up fails, as in Kafka.
func (c *Controller) registerBroker() error {
	c.self = zkmeta.BrokerInfo{ID: c.cfg.BrokerID, JmxPort: -1, Timestamp: c.now().UnixMilli(),
		Endpoints: endpoints(c.cfg), Rack: strings.TrimSpace(c.cfg.Raw["broker.rack"])}
	err := c.store.Create(zkmeta.BrokerPath(c.cfg.BrokerID), c.self.Encode(), true)
	if errors.Is(err, metastore.ErrNodeExists) {
		// Kafka: "Error while creating ephemeral at /brokers/ids/<id>, node
		// already exists". The holder is either another live broker with
		// this id or this broker's own previous process, whose ZooKeeper
		// session has not expired yet (after a kill -9).
		return fmt.Errorf("broker.id %d is already registered at %s (Error while creating ephemeral at %s, node already exists): another live broker uses this broker.id, or this broker's previous session has not expired yet (wait zookeeper.session.timeout.ms and start again)", c.cfg.BrokerID, zkmeta.BrokerPath(c.cfg.BrokerID), zkmeta.BrokerPath(c.cfg.BrokerID))
	}
	if err != nil {
		return fmt.Errorf("controller: register broker: %w", err)
	}
	return nil
}

// elect tries to win the controller election. As Kafka's
// registerControllerAndIncrementControllerEpoch does, it reads
// /controller_epoch and then, in one Multi, creates the ephemeral
// /controller and writes the next epoch conditionally on the version it
// read: nobody ever sees the new controller with the old epoch, and a
// concurrent winner makes the whole write fail. The new epoch fences every
// later state write.
func (c *Controller) elect() error {
	data, version, err := c.meta.Get(zkmeta.ControllerEpochPath)
	next := int32(1)
	var epochOp metastore.Op = &metastore.CreateOp{Path: zkmeta.ControllerEpochPath, Data: zkmeta.EncodeControllerEpoch(1)}
	switch {
	case errors.Is(err, metastore.ErrNoNode):
	case err != nil:
		return fmt.Errorf("controller: read %s: %w", zkmeta.ControllerEpochPath, err)
	default:
		cur, derr := zkmeta.DecodeControllerEpoch(data)
		if derr != nil {
			return derr
		}
		next = cur + 1
		epochOp = &metastore.SetOp{Path: zkmeta.ControllerEpochPath, Data: zkmeta.EncodeControllerEpoch(next), Version: version}
	}
	res, err := c.meta.Multi(
		&metastore.CreateOp{Path: zkmeta.ControllerPath, Data: zkmeta.EncodeController(c.cfg.BrokerID, c.now()), Ephemeral: true},
		epochOp)
	var me *metastore.MultiError
	if errors.As(err, &me) && me.Index == 0 && errors.Is(err, metastore.ErrNodeExists) {
		c.log.Info("another broker is the controller")
		return nil
	}
	if err != nil {
		return fmt.Errorf("controller: create %s and bump %s: %w", zkmeta.ControllerPath, zkmeta.ControllerEpochPath, err)
	}
	c.epoch, c.epochZkVersion = next, res[1].Version
	c.setActive(true)
	c.log.Info("became controller", zap.Int32("controller.epoch", c.epoch))
	return nil
}

// bumpEpoch increments /controller_epoch (created at 1) with a
// conditional write and records the new epoch and the znode's version,
// which fences every later state write. On failure c.epoch is 0.
func (c *Controller) bumpEpoch() error {
	data, version, err := c.meta.Get(zkmeta.ControllerEpochPath)
	switch {
	case errors.Is(err, metastore.ErrNoNode):
		c.epoch, c.epochZkVersion = 1, 0
		err = c.meta.Create(zkmeta.ControllerEpochPath, zkmeta.EncodeControllerEpoch(1), false)
	case err == nil:
		var cur int32
		if cur, err = zkmeta.DecodeControllerEpoch(data); err == nil {
			c.epoch = cur + 1
			c.epochZkVersion, err = c.meta.Set(zkmeta.ControllerEpochPath, zkmeta.EncodeControllerEpoch(c.epoch), version)
		}
	}
	if err != nil {
		c.epoch = 0
		c.setActive(c.active) // a failed re-election after an actor restart reports 0
		return fmt.Errorf("controller: bump %s: %w", zkmeta.ControllerEpochPath, err)
	}
	c.setActive(c.active) // re-elected after an actor restart (recoverLocked): the new epoch
	return nil
}

// endpoints turns advertised.listeners (or listeners) into broker endpoints.
func endpoints(cfg *config.Broker) []zkmeta.Endpoint {
	ls := cfg.AdvertisedListeners
	if len(ls) == 0 {
		ls = cfg.Listeners
	}
	protoMap := protocolNames(cfg)
	var out []zkmeta.Endpoint
	for _, l := range ls {
		host := l.Host
		if host == "" {
			host, _ = os.Hostname()
			if host == "" {
				host = "localhost"
			}
		}
		proto := l.Name
		if p, ok := protoMap[l.Name]; ok {
			proto = p
		}
		out = append(out, zkmeta.Endpoint{ListenerName: l.Name, SecurityProtocol: proto, Host: host, Port: int32(l.Port)})
	}
	return out
}

// protocolNames is listener.security.protocol.map as names.
func protocolNames(cfg *config.Broker) map[string]string {
	m := make(map[string]string, len(cfg.Security.Protocols))
	for name, p := range cfg.Security.Protocols {
		m[name] = string(p)
	}
	return m
}

// loadTopics reads every topic's assignment, config and partition states,
// and finishes deletions a crash interrupted.
func (c *Controller) loadTopics() error {
	pending, err := c.meta.Children(zkmeta.DeleteTopicsPath)
	if err != nil {
		return fmt.Errorf("controller: list %s: %w", zkmeta.DeleteTopicsPath, err)
	}
	names, err := c.meta.Children(zkmeta.TopicsPath)
	if err != nil {
		return fmt.Errorf("controller: list %s: %w", zkmeta.TopicsPath, err)
	}
	var loaded []*topicState
	c.offActor(func() { loaded, err = readTopics(c.store, names) })
	if err != nil {
		return err
	}
	for i, name := range names {
		c.topics[name] = loaded[i]
	}
	for _, name := range pending {
		if t, ok := c.topics[name]; ok {
			c.log.Info("completing interrupted topic deletion", zap.String("topic", name))
			if err := c.deleteTopicLocked(t); err != nil {
				return err
			}
		} else if err := c.meta.Delete(zkmeta.DeleteTopicPath(name), metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
			return fmt.Errorf("controller: delete marker %s: %w", name, err)
		}
	}
	return nil
}

// live reports whether a broker is registered in /brokers/ids (as the
// active controller last read it).
func (c *Controller) live(id int32) bool {
	_, ok := c.liveInfo[id]
	return ok
}

// liveBrokers lists the registered brokers, sorted.
func (c *Controller) liveBrokers() []int32 {
	out := make([]int32, 0, len(c.liveInfo))
	for id := range c.liveInfo {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// liveRacks lists the registered brokers with their broker.rack, sorted
// by id (AssignReplicasWithRacks' input).
func (c *Controller) liveRacks() []BrokerRack {
	out := make([]BrokerRack, 0, len(c.liveInfo))
	for _, id := range c.liveBrokers() {
		out = append(out, BrokerRack{ID: id, Rack: c.liveInfo[id].Rack})
	}
	return out
}

// onlineAll elects leaders for every partition and sends LeaderAndIsr
// (Kafka's onControllerFailover: every partition's state goes to every
// live replica), the writes batched across topics.
func (c *Controller) onlineAll() {
	states, _, err := c.electBatch(c.allPartitions())
	if err != nil {
		c.log.Error("partition state write failed", zap.Error(err))
	}
	c.sendLeaderAndIsr(states, nil)
}

func (c *Controller) sortedTopics() []string {
	names := make([]string, 0, len(c.topics))
	for n := range c.topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// electPartitions runs NextLeadership for the given partitions of t,
// writes changed states (create, or conditional set by zkVersion, both
// fenced by the controller epoch) and returns the LeaderAndIsr of every
// given partition (changed or not).
func (c *Controller) electPartitions(t *topicState, parts []int32) ([]partition.LeaderAndIsr, error) {
	tps := make([]partition.TopicPartition, len(parts))
	for i, p := range parts {
		tps[i] = partition.TopicPartition{Topic: t.name, Partition: p}
	}
	states, _, err := c.electBatch(tps)
	return states, err
}

// electBatch plans the elections of tps (planElections over the
// controller's copy), writes them in batched, fenced transactions
// (writeStates) and decides again, one at a time, the partitions whose
// state changed under it (electOne re-reads them). It returns the
// LeaderAndIsr of every given partition that has a state, in the order
// of tps, and which of them were written; err is the first failure
// (the partitions it left unwritten keep their old state).
func (c *Controller) electBatch(tps []partition.TopicPartition) ([]partition.LeaderAndIsr, map[partition.TopicPartition]bool, error) {
	return c.electBatchWith(tps, false)
}

// writtenOnly keeps the states of the partitions electBatch wrote.
func writtenOnly(states []partition.LeaderAndIsr, wrote map[partition.TopicPartition]bool) []partition.LeaderAndIsr {
	var out []partition.LeaderAndIsr
	for _, st := range states {
		if wrote[st.TopicPartition] {
			out = append(out, st)
		}
	}
	return out
}

// electBatchWith is electBatch; forceUnclean allows an out-of-sync
// leader whatever the topics' unclean.leader.election.enable says.
func (c *Controller) electBatchWith(tps []partition.TopicPartition, forceUnclean bool) ([]partition.LeaderAndIsr, map[partition.TopicPartition]bool, error) {
	unclean := map[string]bool{}
	views := make([]partitionView, 0, len(tps))
	for _, tp := range tps {
		t := c.topics[tp.Topic]
		u, ok := unclean[tp.Topic]
		if !ok {
			policy, _ := c.defaults().TopicPolicy(t.overrides) // invalid overrides: broker defaults (logged by logConfig)
			u = policy.UncleanLeaderElection || forceUnclean
			unclean[tp.Topic] = u
		}
		v := partitionView{tp: tp, replicas: t.assignment[tp.Partition], online: c.replicaOnline(t.name, tp.Partition), unclean: u}
		if st := t.state[tp.Partition]; st != nil {
			cur := st.PartitionLeadership
			v.cur, v.version = &cur, st.zkVersion
		}
		views = append(views, v)
	}
	written, conflicts, firstErr := c.writeStates(planElections(views))
	changed := make(map[partition.TopicPartition]bool, len(written))
	for _, w := range written {
		emitElection(c.sys, w.tp.Topic, w.prev, w.next)
		changed[w.tp] = true
	}
	for _, w := range conflicts {
		t := c.topics[w.tp.Topic]
		before := t.state[w.tp.Partition]
		if err := c.electOne(t, w.tp.Partition, unclean[w.tp.Topic]); err != nil && firstErr == nil {
			firstErr = err
		}
		if t.state[w.tp.Partition] != before {
			changed[w.tp] = true
		}
	}
	out := make([]partition.LeaderAndIsr, 0, len(tps))
	for _, tp := range tps {
		if t := c.topics[tp.Topic]; t.state[tp.Partition] != nil {
			out = append(out, c.stateOf(t, tp.Partition))
		}
	}
	return out, changed, firstErr
}

// electOne moves partition p of t to NextLeadership's state. A version
// conflict (a leader changed the ISR since the controller read it) re-reads
// the state znode and decides again, as Kafka's controller retries.
func (c *Controller) electOne(t *topicState, p int32, unclean bool) error {
	for attempt := 0; ; attempt++ {
		cur := t.state[p]
		var curL *PartitionLeadership
		if cur != nil {
			curL = &cur.PartitionLeadership
		}
		next, changed := NextLeadership(curL, t.assignment[p], c.replicaOnline(t.name, p), unclean)
		if !changed {
			return nil
		}
		err := c.writeState(t, p, next)
		if err == nil {
			emitElection(c.sys, t.name, curL, next)
			return nil
		}
		if !errors.Is(err, metastore.ErrBadVersion) && !errors.Is(err, metastore.ErrNodeExists) || attempt >= 3 {
			return fmt.Errorf("controller: write state of %s-%d: %w", t.name, p, err)
		}
		if rerr := c.reloadState(t, p); rerr != nil {
			return rerr
		}
	}
}

// emitElection counts a written leadership change that moved the leader to
// a live replica (Kafka's ControllerStats LeaderElectionRateAndTimeMs), and
// separately one whose new leader was not in the old ISR
// (UncleanLeaderElectionsPerSec). A new partition's first leader is not an
// election.
func emitElection(sys *actor.ActorSystem, topic string, cur *PartitionLeadership, next PartitionLeadership) {
	if cur == nil || next.Leader < 0 || next.Leader == cur.Leader {
		return
	}
	if contains(cur.ISR, next.Leader) {
		actors.Emit(sys, actors.EventLeaderElection, topic, "")
	} else {
		actors.Emit(sys, actors.EventUncleanElection, topic, "")
	}
}

// writeState writes partition p's state znode alone (create when the
// controller has none, else conditional on its zkVersion) through the
// executor's fenced transaction (execute.go), so a deposed controller
// cannot write (Kafka's controller-epoch fencing, KAFKA-6082). Events that
// change many partitions use writeStates.
func (c *Controller) writeState(t *topicState, p int32, next PartitionLeadership) error {
	w := stateWrite{tp: partition.TopicPartition{Topic: t.name, Partition: p}, create: t.state[p] == nil, next: next}
	if !w.create {
		w.version = t.state[p].zkVersion
	}
	ops, err := c.stateOps([]stateWrite{w})
	if err != nil {
		return err
	}
	_, err = c.multiStates(ops)
	return err
}

// reloadState re-reads partition p's state znode into the controller's copy.
func (c *Controller) reloadState(t *topicState, p int32) error {
	data, v, err := c.meta.Get(zkmeta.PartitionStatePath(t.name, p))
	if errors.Is(err, metastore.ErrNoNode) {
		delete(t.state, p)
		return nil
	}
	if err != nil {
		return fmt.Errorf("controller: read state of %s-%d: %w", t.name, p, err)
	}
	s, err := zkmeta.DecodePartitionState(data)
	if err != nil {
		return err
	}
	failed := t.state[p] != nil && t.state[p].failed
	t.state[p] = &partState{PartitionLeadership: PartitionLeadership{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: s.ISR}, zkVersion: v, failed: failed}
	return nil
}

// stateOf is the LeaderAndIsr of partition p of t as the controller holds it.
func (c *Controller) stateOf(t *topicState, p int32) partition.LeaderAndIsr {
	cur := t.state[p]
	policy, _ := c.defaults().TopicPolicy(t.overrides)
	return partition.LeaderAndIsr{
		TopicPartition:    partition.TopicPartition{Topic: t.name, Partition: p},
		TopicID:           t.id,
		ControllerEpoch:   c.epoch,
		Leader:            cur.Leader,
		LeaderEpoch:       cur.LeaderEpoch,
		ISR:               append([]int32(nil), cur.ISR...),
		Replicas:          append([]int32(nil), t.assignment[p]...),
		ZkVersion:         cur.zkVersion,
		Config:            c.logConfig(t.name, t.overrides),
		MinInsyncReplicas: policy.MinInsyncReplicas,
	}
}

// sendLeaderAndIsr sends each state to its live replicas (only to the
// brokers in only, when only is non-nil): one request per broker, to this
// broker in-process, to the others through their channels.
func (c *Controller) sendLeaderAndIsr(states []partition.LeaderAndIsr, only map[int32]bool) {
	c.sendLeaderAndIsrPlan(planLeaderAndIsr(states, c.deliverTo(only)))
}

// deliverTo is whether broker r gets a partition's LeaderAndIsr: it is
// live, its replica is not offline and (only non-nil) it is in only.
func (c *Controller) deliverTo(only map[int32]bool) func(partition.TopicPartition, int32) bool {
	return func(tp partition.TopicPartition, r int32) bool {
		return c.live(r) && !c.isOffline(tp, r) && (only == nil || only[r])
	}
}

// sendLeaderAndIsrPlan sends each broker its planned states in one
// LeaderAndIsr, this broker's in-process.
func (c *Controller) sendLeaderAndIsrPlan(per map[int32][]partition.LeaderAndIsr) {
	for id, ss := range per {
		if len(ss) == 0 {
			continue
		}
		if id == c.cfg.BrokerID {
			c.applyLocalLeaderAndIsr(ss)
			continue
		}
		c.peers.Send(id, c.leaderAndIsrRequest(ss), c.logFailure(id, "LeaderAndIsr"))
	}
}

// noteTopicConfig hands a topic's overrides to Options.OnTopicConfig.
func (c *Controller) noteTopicConfig(topic string, overrides map[string]string) {
	if c.onTopicCfg != nil {
		c.onTopicCfg(topic, overrides)
	}
}

// logConfig is a topic's effective log config (overrides over
// server.properties). Overrides were validated when written; one that no
// longer validates (hand-edited znode) is logged and the broker defaults used.
// SetTopicDefaults installs the broker config whose log.*, message.max.bytes,
// min.insync.replicas, unclean.leader.election.enable… are the defaults of
// topics without their own override from now on (dynamic broker configs:
// the effective config after a change of /config/brokers/<id> or
// <default>). Safe from any goroutine; partitions already hosted are
// updated by the caller (DefaultsChanged).
func (c *Controller) SetTopicDefaults(cfg *config.Broker) { c.topicDefaults.Store(cfg) }

// defaults is the broker config topic defaults come from.
func (c *Controller) defaults() *config.Broker {
	if d := c.topicDefaults.Load(); d != nil {
		return d
	}
	return c.cfg
}

func (c *Controller) logConfig(topic string, overrides map[string]string) storage.LogConfig {
	lc, err := config.TopicLogConfig(c.defaults().LogConfig(), overrides)
	if err != nil {
		c.log.Error("invalid topic config, using broker defaults", zap.String("topic", topic), zap.Error(err))
	}
	return lc
}

func (t *topicState) sortedPartitions() []int32 {
	ps := make([]int32, 0, len(t.assignment))
	for p := range t.assignment {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// publish rebuilds the metadata snapshot from the controller's state,
// installs it in this broker's cache and, on the active controller, sends
// it as UpdateMetadata to every other live broker.
func (c *Controller) publish() {
	s := c.buildSnapshot()
	c.cache.Publish(s)
	if !c.active {
		return
	}
	for _, id := range c.liveBrokers() {
		if id != c.cfg.BrokerID {
			c.sendUpdateMetadata(id, s)
		}
	}
}

// sendUpdateMetadata sends snapshot s to broker id.
func (c *Controller) sendUpdateMetadata(id int32, s *metadata.Snapshot) {
	req := metadata.ToUpdateMetadata(s, c.cfg.BrokerID, c.epoch, protocolNames(c.cfg))
	c.peers.Send(id, req, c.logFailure(id, "UpdateMetadata"))
}

func (c *Controller) buildSnapshot() *metadata.Snapshot {
	s := &metadata.Snapshot{ClusterID: c.clusterID, ControllerID: -1,
		Topics: make(map[string]*metadata.Topic, len(c.topics)), TopicsByID: make(map[[16]byte]*metadata.Topic, len(c.topics))}
	if c.active {
		s.ControllerID = c.cfg.BrokerID
	} else if data, _, err := c.meta.Get(zkmeta.ControllerPath); err == nil {
		if id, err := zkmeta.DecodeController(data); err == nil {
			s.ControllerID = id
		}
	}
	for _, id := range c.liveBrokers() {
		s.Brokers = append(s.Brokers, brokerOf(c.liveInfo[id]))
	}
	if len(s.Brokers) == 0 {
		s.Brokers = []metadata.Broker{brokerOf(c.self)}
	}
	for name, t := range c.topics {
		mt := &metadata.Topic{Name: name, ID: t.id, Internal: isInternal(name)}
		for _, p := range t.sortedPartitions() {
			mp := metadata.Partition{Partition: p, Leader: -1, Replicas: append([]int32(nil), t.assignment[p]...)}
			if st := t.state[p]; st != nil {
				mp.Leader, mp.LeaderEpoch, mp.ISR = st.Leader, st.LeaderEpoch, append([]int32(nil), st.ISR...)
				if st.failed && st.Leader == c.cfg.BrokerID {
					mp.Leader = -1
				}
			}
			for _, r := range mp.Replicas {
				if !c.replicaOnline(name, p)(r) || (r == c.cfg.BrokerID && t.state[p] != nil && t.state[p].failed) {
					mp.OfflineReplicas = append(mp.OfflineReplicas, r)
				}
			}
			mt.Partitions = append(mt.Partitions, mp)
		}
		s.Topics[name] = mt
		s.TopicsByID[t.id] = mt
	}
	return s
}

// brokerOf is a registered broker as the metadata cache shows it.
func brokerOf(info zkmeta.BrokerInfo) metadata.Broker {
	b := metadata.Broker{ID: info.ID, Listeners: map[string]metadata.HostPort{}}
	for i, e := range info.Endpoints {
		if i == 0 {
			b.Host, b.Port = e.Host, e.Port
		}
		b.Listeners[e.ListenerName] = metadata.HostPort{Host: e.Host, Port: e.Port}
	}
	if info.Rack != "" {
		r := info.Rack
		b.Rack = &r
	}
	return b
}

// isInternal reports Kafka's internal topics (metadata.IsInternal).
func isInternal(name string) bool { return metadata.IsInternal(name) }

// Close stops the controller actor, then resigns: it deletes /controller
// (when held) and /brokers/ids/<id>, closes the peer channels and waits
// for the controller's goroutines. Requests waiting for the actor get
// NOT_CONTROLLER. It does not close the store (its owner does).
// Idempotent.
func (c *Controller) Close() {
	c.life.Lock()
	if c.closing {
		c.life.Unlock()
		return
	}
	c.closing = true
	r := c.cur
	c.cur = nil
	wasStarted := c.started
	c.life.Unlock()
	close(c.stop) // waiting callers, retry timers, watch forwarders and rejoin end
	if r != nil {
		_ = c.asys.Root.StopFuture(r.pid).Wait()
		r.markStopped()
	}
	// After the actor: nothing queues local requests any more.
	c.local.close()
	if !wasStarted {
		return
	}
	// No actor runs any more and no rejoin: the state is Close's alone.
	c.wg.Wait()
	if c.active {
		c.store.Delete(zkmeta.ControllerPath, metastore.AnyVersion)
		c.setActive(false)
	}
	c.store.Delete(zkmeta.BrokerPath(c.cfg.BrokerID), metastore.AnyVersion)
	c.started = false
	if c.removeSession != nil {
		c.removeSession()
	}
	c.peers.Close()
	if c.ownSys {
		c.asys.Shutdown()
	}
}

func itoa(i int32) string { return strconv.FormatInt(int64(i), 10) }
