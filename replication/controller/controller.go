// Package controller is Gregor's controller in Kafka's ZooKeeper mode: it
// registers the broker, wins /controller, assigns replicas and leaders,
// writes the Kafka 2.x znode layout (replication/zkmeta) through a
// metastore.Store, tells the replica manager which partitions to lead
// (LeaderAndIsr) or stop (StopReplica) and publishes the metadata cache.
//
// Single-node mode now (the embedded store; live brokers = this one);
// the decisions are pure functions (AssignReplicas, NextLeadership,
// ValidateTopicName, CheckReplicaAssignment) so cluster mode reuses them.
//
// Concurrency: every operation runs under one mutex, so the controller's
// work is serialized like Kafka's single controller event thread. Reads
// of metadata go through Snapshot (an atomic pointer), never the mutex.
package controller

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"gregor/config"
	"gregor/partition"
	"gregor/replication/metadata"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/storage"
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

// Controller is the (single-node) controller. Create with New, then Start.
type Controller struct {
	store metastore.Store
	rm    ReplicaManager
	cfg   *config.Broker
	log   *zap.Logger
	now   func() time.Time

	cache metadata.Cache

	mu        sync.Mutex
	started   bool
	active    bool  // holds /controller
	epoch     int32 // controller epoch (/controller_epoch)
	clusterID string
	self      zkmeta.BrokerInfo
	topics    map[string]*topicState
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
}

// New builds a controller over store for the broker configured by cfg
// (broker.id, advertised.listeners, num.partitions,
// default.replication.factor, auto.create.topics.enable,
// delete.topic.enable, unclean.leader.election.enable, and cfg.Raw for
// topic config defaults). Nothing happens until Start.
func New(store metastore.Store, rm ReplicaManager, cfg *config.Broker, opts Options) *Controller {
	c := &Controller{store: store, rm: rm, cfg: cfg, log: opts.Log, now: opts.Now, topics: map[string]*topicState{}}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Snapshot returns the current metadata (lock-free).
func (c *Controller) Snapshot() *metadata.Snapshot { return c.cache.Load() }

// ClusterID is the cluster id from /cluster/id ("" before Start).
func (c *Controller) ClusterID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clusterID
}

// Epoch is the controller epoch this controller won (0 when not active).
func (c *Controller) Epoch() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// Start runs broker start-up and controller election (Kafka's
// KafkaServer.startup + KafkaController.onControllerFailover): create the
// persistent paths, create or read /cluster/id, register /brokers/ids/<id>
// (ephemeral), win /controller (ephemeral) and bump /controller_epoch, load
// every topic, finish pending deletions, elect leaders and send
// LeaderAndIsr for every partition, then publish the metadata.
func (c *Controller) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("controller: already started")
	}
	if err := zkmeta.EnsurePersistentPaths(c.store); err != nil {
		return fmt.Errorf("controller: create persistent paths: %w", err)
	}
	if err := c.loadClusterID(); err != nil {
		return err
	}
	if err := c.registerBroker(); err != nil {
		return err
	}
	c.started = true
	if err := c.elect(); err != nil {
		return err
	}
	if c.active {
		if err := c.loadTopics(); err != nil {
			return err
		}
		c.onlineAll()
	}
	c.publish()
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
		return fmt.Errorf("controller: broker.id %d is already registered at %s", c.cfg.BrokerID, zkmeta.BrokerPath(c.cfg.BrokerID))
	}
	if err != nil {
		return fmt.Errorf("controller: register broker: %w", err)
	}
	return nil
}

// elect tries to create /controller; on success it bumps /controller_epoch
// with a conditional write (the epoch fences a zombie controller).
func (c *Controller) elect() error {
	err := c.store.Create(zkmeta.ControllerPath, zkmeta.EncodeController(c.cfg.BrokerID, c.now()), true)
	if errors.Is(err, metastore.ErrNodeExists) {
		c.log.Info("another broker is the controller")
		return nil
	}
	if err != nil {
		return fmt.Errorf("controller: create %s: %w", zkmeta.ControllerPath, err)
	}
	data, version, err := c.store.Get(zkmeta.ControllerEpochPath)
	switch {
	case errors.Is(err, metastore.ErrNoNode):
		c.epoch = 1
		err = c.store.Create(zkmeta.ControllerEpochPath, zkmeta.EncodeControllerEpoch(1), false)
	case err == nil:
		var cur int32
		if cur, err = zkmeta.DecodeControllerEpoch(data); err == nil {
			c.epoch = cur + 1
			_, err = c.store.Set(zkmeta.ControllerEpochPath, zkmeta.EncodeControllerEpoch(c.epoch), version)
		}
	}
	if err != nil {
		c.store.Delete(zkmeta.ControllerPath, metastore.AnyVersion) // resign
		return fmt.Errorf("controller: bump %s: %w", zkmeta.ControllerEpochPath, err)
	}
	c.active = true
	c.log.Info("became controller", zap.Int32("controller.epoch", c.epoch))
	return nil
}

// endpoints turns advertised.listeners (or listeners) into broker endpoints.
func endpoints(cfg *config.Broker) []zkmeta.Endpoint {
	ls := cfg.AdvertisedListeners
	if len(ls) == 0 {
		ls = cfg.Listeners
	}
	protoMap := parseProtocolMap(cfg.Raw["listener.security.protocol.map"])
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

func parseProtocolMap(v string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(v, ",") {
		if k, p, ok := strings.Cut(strings.TrimSpace(kv), ":"); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(p)
		}
	}
	return m
}

// loadTopics reads every topic's assignment, config and partition states,
// and finishes deletions a crash interrupted.
func (c *Controller) loadTopics() error {
	pending, err := c.store.Children(zkmeta.DeleteTopicsPath)
	if err != nil {
		return fmt.Errorf("controller: list %s: %w", zkmeta.DeleteTopicsPath, err)
	}
	names, err := c.store.Children(zkmeta.TopicsPath)
	if err != nil {
		return fmt.Errorf("controller: list %s: %w", zkmeta.TopicsPath, err)
	}
	for _, name := range names {
		t, err := c.loadTopic(name)
		if err != nil {
			return err
		}
		c.topics[name] = t
	}
	for _, name := range pending {
		if t, ok := c.topics[name]; ok {
			c.log.Info("completing interrupted topic deletion", zap.String("topic", name))
			if err := c.deleteTopicLocked(t); err != nil {
				return err
			}
		} else if err := c.store.Delete(zkmeta.DeleteTopicPath(name), metastore.AnyVersion); err != nil && !errors.Is(err, metastore.ErrNoNode) {
			return fmt.Errorf("controller: delete marker %s: %w", name, err)
		}
	}
	return nil
}

func (c *Controller) loadTopic(name string) (*topicState, error) {
	data, version, err := c.store.Get(zkmeta.TopicPath(name))
	if err != nil {
		return nil, fmt.Errorf("controller: read topic %s: %w", name, err)
	}
	a, err := zkmeta.DecodeTopicAssignment(name, data)
	if err != nil {
		return nil, err
	}
	t := &topicState{name: name, id: a.TopicID, assignment: a.Partitions, state: map[int32]*partState{}}
	if t.id == ([16]byte{}) {
		// Written before topic ids (Kafka < 2.8): assign one, as Kafka's
		// controller does on failover.
		a.TopicID = zkmeta.RandomUUID()
		if _, err := c.store.Set(zkmeta.TopicPath(name), a.Encode(), version); err != nil {
			return nil, fmt.Errorf("controller: add topic id to %s: %w", name, err)
		}
		t.id = a.TopicID
	}
	cfgData, _, err := c.store.Get(zkmeta.TopicConfigPath(name))
	switch {
	case errors.Is(err, metastore.ErrNoNode):
		t.overrides = map[string]string{}
	case err != nil:
		return nil, fmt.Errorf("controller: read config of %s: %w", name, err)
	default:
		if t.overrides, err = zkmeta.DecodeConfig(cfgData); err != nil {
			return nil, err
		}
	}
	for p := range t.assignment {
		data, v, err := c.store.Get(zkmeta.PartitionStatePath(name, p))
		if errors.Is(err, metastore.ErrNoNode) {
			continue // never written (crash during create): onlineAll creates it
		}
		if err != nil {
			return nil, fmt.Errorf("controller: read state of %s-%d: %w", name, p, err)
		}
		s, err := zkmeta.DecodePartitionState(data)
		if err != nil {
			return nil, err
		}
		t.state[p] = &partState{PartitionLeadership: PartitionLeadership{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: s.ISR}, zkVersion: v}
	}
	return t, nil
}

// live reports whether a broker is live. Single-node mode: only this one.
func (c *Controller) live(id int32) bool { return id == c.cfg.BrokerID }

func (c *Controller) liveBrokers() []int32 { return []int32{c.cfg.BrokerID} }

// onlineAll elects leaders for every partition and sends LeaderAndIsr.
func (c *Controller) onlineAll() {
	names := make([]string, 0, len(c.topics))
	for n := range c.topics {
		names = append(names, n)
	}
	sort.Strings(names)
	var states []partition.LeaderAndIsr
	for _, n := range names {
		t := c.topics[n]
		ps, err := c.electPartitions(t, t.sortedPartitions())
		if err != nil {
			c.log.Error("partition state write failed", zap.String("topic", n), zap.Error(err))
		}
		states = append(states, ps...)
	}
	c.sendLeaderAndIsr(states)
}

// electPartitions runs NextLeadership for the given partitions of t,
// writes changed states (create, or conditional set by zkVersion) and
// returns the LeaderAndIsr of those this broker hosts.
func (c *Controller) electPartitions(t *topicState, parts []int32) ([]partition.LeaderAndIsr, error) {
	policy, _ := c.cfg.TopicPolicy(t.overrides) // invalid overrides: broker defaults (logged by logConfig)
	unclean := policy.UncleanLeaderElection
	logCfg := c.logConfig(t.name, t.overrides)
	var out []partition.LeaderAndIsr
	var firstErr error
	for _, p := range parts {
		replicas := t.assignment[p]
		cur := t.state[p]
		var curL *PartitionLeadership
		if cur != nil {
			curL = &cur.PartitionLeadership
		}
		next, changed := NextLeadership(curL, replicas, c.live, unclean)
		if changed {
			zs := zkmeta.PartitionState{ControllerEpoch: c.epoch, Leader: next.Leader, LeaderEpoch: next.LeaderEpoch, ISR: next.ISR}
			var v int32
			var err error
			if cur == nil {
				err = metastore.CreateAll(c.store, zkmeta.PartitionStatePath(t.name, p), zs.Encode(), false)
			} else {
				v, err = c.store.Set(zkmeta.PartitionStatePath(t.name, p), zs.Encode(), cur.zkVersion)
			}
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("controller: write state of %s-%d: %w", t.name, p, err)
				}
				continue
			}
			cur = &partState{PartitionLeadership: next, zkVersion: v}
			t.state[p] = cur
		}
		if contains(replicas, c.cfg.BrokerID) {
			out = append(out, partition.LeaderAndIsr{
				TopicPartition:  partition.TopicPartition{Topic: t.name, Partition: p},
				TopicID:         t.id,
				ControllerEpoch: c.epoch,
				Leader:          cur.Leader,
				LeaderEpoch:     cur.LeaderEpoch,
				ISR:             append([]int32(nil), cur.ISR...),
				Replicas:        append([]int32(nil), replicas...),
				ZkVersion:       cur.zkVersion,
				Config:          logCfg,
			})
		}
	}
	return out, firstErr
}

func (c *Controller) sendLeaderAndIsr(states []partition.LeaderAndIsr) {
	if len(states) == 0 {
		return
	}
	errs := c.rm.ApplyLeaderAndIsr(states)
	for _, s := range states {
		t := c.topics[s.Topic]
		if t == nil || t.state[s.Partition] == nil {
			continue
		}
		err := errs[s.TopicPartition]
		t.state[s.Partition].failed = err != nil
		if err != nil {
			c.log.Error("LeaderAndIsr failed", zap.Stringer("partition", s.TopicPartition), zap.Error(err))
		}
	}
}

// logConfig is a topic's effective log config (overrides over
// server.properties). Overrides were validated when written; one that no
// longer validates (hand-edited znode) is logged and the broker defaults used.
func (c *Controller) logConfig(topic string, overrides map[string]string) storage.LogConfig {
	lc, err := config.TopicLogConfig(c.cfg.LogConfig(), overrides)
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

// publish rebuilds the metadata snapshot from the controller's state.
func (c *Controller) publish() {
	s := &metadata.Snapshot{ClusterID: c.clusterID, ControllerID: -1,
		Topics: make(map[string]*metadata.Topic, len(c.topics)), TopicsByID: make(map[[16]byte]*metadata.Topic, len(c.topics))}
	if c.active {
		s.ControllerID = c.cfg.BrokerID
	} else if data, _, err := c.store.Get(zkmeta.ControllerPath); err == nil {
		if id, err := zkmeta.DecodeController(data); err == nil {
			s.ControllerID = id
		}
	}
	b := metadata.Broker{ID: c.self.ID, Listeners: map[string]metadata.HostPort{}}
	for i, e := range c.self.Endpoints {
		if i == 0 {
			b.Host, b.Port = e.Host, e.Port
		}
		b.Listeners[e.ListenerName] = metadata.HostPort{Host: e.Host, Port: e.Port}
	}
	if c.self.Rack != "" {
		r := c.self.Rack
		b.Rack = &r
	}
	s.Brokers = []metadata.Broker{b}
	for name, t := range c.topics {
		mt := &metadata.Topic{Name: name, ID: t.id, Internal: isInternal(name)}
		for _, p := range t.sortedPartitions() {
			mp := metadata.Partition{Partition: p, Leader: -1, Replicas: append([]int32(nil), t.assignment[p]...)}
			if st := t.state[p]; st != nil {
				mp.Leader, mp.LeaderEpoch, mp.ISR = st.Leader, st.LeaderEpoch, append([]int32(nil), st.ISR...)
				if st.failed {
					mp.Leader = -1
				}
			}
			for _, r := range mp.Replicas {
				if !c.live(r) || (r == c.cfg.BrokerID && t.state[p] != nil && t.state[p].failed) {
					mp.OfflineReplicas = append(mp.OfflineReplicas, r)
				}
			}
			mt.Partitions = append(mt.Partitions, mp)
		}
		s.Topics[name] = mt
		s.TopicsByID[t.id] = mt
	}
	c.cache.Publish(s)
}

// isInternal reports Kafka's internal topics.
func isInternal(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

// Close resigns: the ephemeral znodes go when the store closes; Close
// stops answering admin requests. It does not close the store (its owner does).
func (c *Controller) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active {
		c.store.Delete(zkmeta.ControllerPath, metastore.AnyVersion)
		c.active = false
	}
	if c.started {
		c.store.Delete(zkmeta.BrokerPath(c.cfg.BrokerID), metastore.AnyVersion)
	}
	c.started = false
}

func itoa(i int32) string { return strconv.FormatInt(int64(i), 10) }
