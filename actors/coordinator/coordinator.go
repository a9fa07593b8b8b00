package coordinator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/config"
	"gregor/storage/record"
)

// Options configure a Coordinator.
type Options struct {
	Config Config
	// Partitions is offsets.topic.num.partitions (default 50).
	Partitions int32
	Topic      OffsetsTopic
	Log        *zap.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// CleanupInterval is offsets.retention.check.interval.ms (default 10 min):
	// how often expired offsets are removed.
	CleanupInterval time.Duration
	// AppendTimeout bounds one write to __consumer_offsets and its
	// replication: offsets.commit.timeout.ms (Kafka default 5 s), after
	// which the commit is answered REQUEST_TIMED_OUT. It also bounds
	// FindCoordinator's creation of the topic. Default 30 s.
	AppendTimeout time.Duration
	// Compression is offsets.topic.compression.codec: the codec of the
	// batches written to __consumer_offsets (default none).
	Compression record.Codec
	// RequestTimeout is a safety bound: a request whose answer has not come
	// by then (its message was lost to an actor crash) is answered
	// COORDINATOR_NOT_AVAILABLE, which makes clients retry. Default 6 min
	// (above the 5 min a new member's JoinGroup may legitimately wait).
	RequestTimeout time.Duration
}

// OptionsFromBroker fills the group settings of Options from the broker
// config (offsets.*, group.* keys).
func OptionsFromBroker(b *config.Broker, topic OffsetsTopic, log *zap.Logger) Options {
	cfg := DefaultConfig()
	cfg.MinSessionTimeout = b.GroupMinSessionTimeout
	cfg.MaxSessionTimeout = b.GroupMaxSessionTimeout
	cfg.InitialRebalanceDelay = b.GroupInitialRebalanceDelay
	cfg.MaxSize = b.GroupMaxSize
	if b.OffsetsRetentionMinutes > 0 {
		cfg.OffsetsRetention = time.Duration(b.OffsetsRetentionMinutes) * time.Minute
	}
	cfg.MaxMetadataSize = int(b.OffsetMetadataMaxBytes)
	return Options{Config: cfg, Partitions: b.OffsetsTopicNumPartitions, Topic: topic, Log: log,
		CleanupInterval: b.OffsetsRetentionCheckInterval,
		AppendTimeout:   b.Coordinators.OffsetCommitTimeout,
		Compression:     record.Codec(b.Coordinators.OffsetsTopicCompressionCodec)}
}

// Coordinator is the group coordinator: a "group-coordinator" router actor
// with one actor per group. Its methods (api.go) are safe for concurrent
// use and never block: answers come through reply callbacks.
//
// The router spawns the group actors (named
// "group-coordinator/group-<n>-<group>") and watches them, but they are not
// its protoactor children: each is a root actor supervised by
// groupSupervision as its guardian. protoactor restarts an actor by
// stopping all its children first (no directive restarts a parent and
// keeps them), so as children a panic in the router would have stopped
// every group actor and dropped the requests queued in their mailboxes
// (answered only by RequestTimeout). This way a router restart restarts
// that actor only: the restarted router is the same router value (the
// producer returns it), so it keeps its registry of group actors, loaded
// partitions and leader epochs, and the group actors run on.
type Coordinator struct {
	opts   Options
	sys    *actor.ActorSystem
	router *actor.PID
	log    *zap.Logger
	live   *liveGroups // every group actor spawned and not yet seen terminated

	ctx    context.Context // cancelled by Stop; parent of loads and appends
	cancel context.CancelFunc
	wg     sync.WaitGroup // loads and FindCoordinator lookups in flight

	ensureMu     sync.Mutex
	ensured      bool
	ensureWarned atomic.Int64 // unix nanos of the last warnEnsure log
}

// New starts the coordinator's router actor under sys. Stop it with Stop.
func New(sys *actor.ActorSystem, opts Options) (*Coordinator, error) {
	if opts.Topic == nil {
		return nil, fmt.Errorf("coordinator: Options.Topic is required")
	}
	opts.Config = opts.Config.withDefaults()
	if opts.Partitions <= 0 {
		opts.Partitions = 50
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CleanupInterval <= 0 {
		opts.CleanupInterval = 10 * time.Minute
	}
	if opts.AppendTimeout <= 0 {
		opts.AppendTimeout = 30 * time.Second
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 6 * time.Minute
	}
	c := &Coordinator{opts: opts, sys: sys, log: opts.Log}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.live = &liveGroups{pids: map[*actor.PID]struct{}{}}
	r := newRouter(c)
	pid, err := sys.Root.SpawnNamed(actors.Props(c.log, func() actor.Actor { return r }, actor.WithGuardian(routerSupervision)), RouterName)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("coordinator: spawn: %w", err)
	}
	c.router = pid
	return c, nil
}

// Stop stops the router and every group actor, pending JoinGroup and
// SyncGroup requests get NOT_COORDINATOR, and in-flight loads are cancelled.
// It returns once they have all stopped (ActorSystem.Shutdown would not stop
// them).
func (c *Coordinator) Stop() {
	c.cancel()
	// The router first: it spawns no group actor and routes nothing once
	// stopped, and answers what it holds with NOT_COORDINATOR.
	_ = c.sys.Root.StopFuture(c.router).Wait()
	// The group actors are not the router's children (see Coordinator):
	// stop them all, then wait for each.
	c.live.mu.Lock()
	c.live.closed = true // no group actor is spawned from now on
	futures := make([]*actor.Future, 0, len(c.live.pids))
	for pid := range c.live.pids {
		// One already gone from the process registry has stopped: a Stop
		// would be a dead letter.
		if _, ok := c.sys.ProcessRegistry.GetLocal(pid.Id); ok {
			futures = append(futures, c.sys.Root.StopFuture(pid))
		}
	}
	clear(c.live.pids)
	c.live.mu.Unlock()
	for _, f := range futures {
		_ = f.Wait()
	}
	c.wg.Wait()
}

// RouterName is the router actor's name; the group actors it spawns and
// watches are named "<RouterName>/group-<n>-<group>".
const RouterName = "group-coordinator"

// routerSupervision restarts the router after a panic, always: its state
// outlives the restart (the producer returns the same router), and a
// stopped router would leave the broker unable to coordinate any group.
var routerSupervision = actors.ManagerStrategy

// groupSupervision is the group actors' guardian. Group actors rebuild
// their state from __consumer_offsets on restart, so restarting is always
// safe; back off a little so a poison request cannot spin a group, and
// stop a group actor failing more than 20 times a minute (the router
// watches it, forgets it, and spawns a fresh one on the next request).
var groupSupervision = &actors.BackoffStrategy{Initial: 10 * time.Millisecond, Max: time.Second, MaxRetries: 20, Window: time.Minute}

// liveGroups is every group actor spawned and not yet seen terminated,
// shared by the router and Stop (which stops them all).
type liveGroups struct {
	mu     sync.Mutex
	closed bool
	pids   map[*actor.PID]struct{}
}

func (l *liveGroups) remove(pid *actor.PID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.pids {
		if p.Equal(pid) {
			delete(l.pids, p)
		}
	}
}

// PartitionFor is the __consumer_offsets partition that holds group.
func (c *Coordinator) PartitionFor(group string) int32 {
	return PartitionFor(group, c.opts.Partitions)
}

// Elected tells the coordinator that this broker became leader of
// __consumer_offsets partition p at leaderEpoch (Kafka's
// GroupCoordinator.onElection): it starts loading the partition's groups
// and offsets in the background; requests for them wait for the load.
// An event older than the newest epoch already seen for p is ignored
// (a stale LeaderAndIsr applied late); leaderEpoch < 0 means unknown and is
// never considered stale. It never blocks.
func (c *Coordinator) Elected(partition, leaderEpoch int32) {
	c.tell(&electPartition{partition: partition, epoch: leaderEpoch})
}

// Resign drops the groups of a partition this broker no longer leads:
// pending joins and syncs get NOT_COORDINATOR, and later requests for them
// too until the partition is led here again. The epoch is unknown (as
// after StopReplica): it is never stale. See ResignEpoch.
func (c *Coordinator) Resign(partition int32) { c.ResignEpoch(partition, -1) }

// ResignEpoch is Resign for a leadership change at leaderEpoch (Kafka's
// GroupCoordinator.onResignation): ignored when older than the newest
// epoch already seen for the partition, so a late event cannot unload
// groups the broker leads again. A load in progress is abandoned.
func (c *Coordinator) ResignEpoch(partition, leaderEpoch int32) {
	c.tell(&resignPartition{partition: partition, epoch: leaderEpoch})
}

// LeadershipChanged is Elected (leader) or ResignEpoch (not leader): the
// shape of partition.ManagerConfig.OnLeadershipChange for one
// __consumer_offsets partition.
func (c *Coordinator) LeadershipChanged(partition int32, leader bool, leaderEpoch int32) {
	if leader {
		c.Elected(partition, leaderEpoch)
	} else {
		c.ResignEpoch(partition, leaderEpoch)
	}
}

// DeleteTopicOffsets drops the committed offsets of every partition of
// topics (deleted topics) from every group loaded here, writing their
// tombstones to __consumer_offsets; a group left Empty with no offsets
// becomes Dead and its metadata is tombstoned too (Kafka's
// GroupCoordinator.handleDeletedPartitions, which every broker runs on
// UpdateMetadata). Groups of partitions being loaded are cleaned once
// loaded. It never blocks.
func (c *Coordinator) DeleteTopicOffsets(topics []string) {
	if len(topics) == 0 {
		return
	}
	set := make(map[string]bool, len(topics))
	for _, t := range topics {
		set[t] = true
	}
	c.tell(&deleteTopics{topics: set})
}

// tell sends a hook's event (leadership, deleted topics) to the router.
// The replica manager and the metadata cache outlive the coordinator
// (they are built after it and stopped after it): an event after Stop has
// nothing left to change and is dropped rather than dead-lettered.
func (c *Coordinator) tell(msg any) {
	if c.ctx.Err() != nil {
		return
	}
	c.sys.Root.Send(c.router, msg)
}

func (c *Coordinator) ensureTopic(ctx context.Context) error {
	c.ensureMu.Lock()
	defer c.ensureMu.Unlock()
	if c.ensured {
		return nil
	}
	if err := c.opts.Topic.Ensure(ctx); err != nil {
		return err
	}
	c.ensured = true
	return nil
}

func (c *Coordinator) storeFor(partition int32) Store {
	return &partitionStore{topic: c.opts.Topic, partition: partition, ctx: c.ctx, timeout: c.opts.AppendTimeout, now: c.opts.Now, codec: c.opts.Compression}
}

// GroupRequest is the message that carries one request for one group to
// the group's actor: Apply runs on the group actor with the group's state;
// Fail answers the request with a coordinator-level error instead
// (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE…).
type GroupRequest struct {
	Group string
	API   string // Kafka API name, for logs
	Apply func(g *Group, now time.Time)
	Fail  func(code int16)
	// txnProducer is the producer id of a TxnOffsetCommit: the router
	// records that the group may hold its pending offsets (txnGroups).
	txnProducer *int64
	// completion, when set, is not a group's request but a transaction's
	// end queued behind a partition's load (Group and Apply unused).
	completion *txnCompletion
}

func (c *Coordinator) send(r *GroupRequest) { c.sys.Root.Send(c.router, r) }

// messages between the router and group actors
type (
	groupTick     struct{}
	expireOffsets struct{}
	// groupDone tells the router that a group actor handled a message.
	// The group's ListGroups entry is not in it: the actor has already
	// published that in its listingSlot (publish.go).
	groupDone struct {
		group   string
		pid     *actor.PID
		counted bool // answers a GroupRequest (decrements in-flight)
		// removable: the group is unknown (or was Dead and forgotten), so
		// the actor may be stopped once nothing is in flight. Never set
		// for a request that panicked (its group's state is suspect).
		removable bool
	}
	partitionLoaded struct {
		partition int32
		ps        *partState // the load's state; stale if no longer r.parts[partition]
		loader    *Loader
		err       error
	}
	listGroupsReq struct {
		reply func([]Listing)
	}
	electPartition  struct{ partition, epoch int32 }
	resignPartition struct{ partition, epoch int32 }
	// deleteTopics goes to the router and from it to every group actor.
	deleteTopics struct{ topics map[string]bool }
	cleanupTick  struct{}
	// txnCompletion is CompleteTxnOffsets: producer's transaction ended
	// (commit or abort) in __consumer_offsets partition.
	txnCompletion struct {
		partition int32
		producer  int64
		epoch     int16
		commit    bool
	}
)

type child struct {
	pid       *actor.PID
	partition int32
	inflight  int
	listing   *listingSlot // written by the group actor
}

type partState struct {
	loaded, loading bool
	queue           []*GroupRequest
	// deleted are topics deleted while the partition was loading: their
	// offsets are dropped from its groups once loaded.
	deleted map[string]bool
}

// router is the group-coordinator actor: it owns which partitions are
// loaded and which group actors exist, and forwards each GroupRequest to
// its group's actor (spawning and watching it on demand). One router value
// serves every incarnation of the actor, so a restart keeps this state
// (only the requests and ListGroups it holds are answered, see Receive).
type router struct {
	c        *Coordinator
	children map[string]*child // ListGroups lists their listing slots
	parts    map[int32]*partState
	lists    []func([]Listing)
	cleanup  *time.Timer
	seq      uint64
	// epochs is the newest leader epoch seen per partition in Elected and
	// ResignEpoch (Kafka's GroupMetadataManager.epochForPartitionId).
	epochs map[int32]int32
	// txnGroups is, per loaded partition and producer id, the groups that
	// may hold pending transactional offsets of that producer (Kafka's
	// openGroupsForProducer): filled by loads and by routing
	// TxnOffsetCommit, emptied by the producer's CompleteTxnOffsets. A
	// group listed without pending offsets (its commit failed) only gets
	// a completion that changes nothing.
	txnGroups map[int32]map[int64]map[string]bool
}

func newRouter(c *Coordinator) *router {
	return &router{c: c, children: map[string]*child{}, parts: map[int32]*partState{}, epochs: map[int32]int32{},
		txnGroups: map[int32]map[int64]map[string]bool{}}
}

// addTxnGroup records that group (in partition p) may hold pending offsets
// of producer.
func (r *router) addTxnGroup(p int32, producer int64, group string) {
	byProducer := r.txnGroups[p]
	if byProducer == nil {
		byProducer = map[int64]map[string]bool{}
		r.txnGroups[p] = byProducer
	}
	if byProducer[producer] == nil {
		byProducer[producer] = map[string]bool{}
	}
	byProducer[producer][group] = true
}

// completeTxn handles a CompleteTxnOffsets for a partition whose load is
// done: every group that may hold pending offsets of the producer gets
// the transaction's end, in its mailbox order behind the requests routed
// before it. Groups without an actor (gone, or never loaded here) are
// skipped: the marker is in the log, and a later load applies it.
func (r *router) completeTxn(ctx actor.Context, m *txnCompletion) {
	groups := r.txnGroups[m.partition][m.producer]
	if len(groups) == 0 {
		return
	}
	delete(r.txnGroups[m.partition], m.producer)
	r.c.log.Debug("transaction ended for groups", zap.Int32("partition", m.partition), zap.Int64("producer.id", m.producer),
		zap.Int16("producer.epoch", m.epoch), zap.Bool("commit", m.commit), zap.Int("groups", len(groups)))
	for id := range groups {
		ch := r.children[id]
		if ch == nil || ch.partition != m.partition {
			continue
		}
		ch.inflight++
		pid, commit := m.producer, m.commit
		ctx.Send(ch.pid, &GroupRequest{Group: id, API: "CompleteTxnOffsets",
			Apply: func(g *Group, _ time.Time) { g.CompleteTxn(pid, commit) },
			Fail:  func(int16) {},
		})
	}
}

// current records epoch as partition p's newest and reports whether an
// event at epoch is current (not older than the newest seen). Negative
// epochs are unknown: current, and not recorded.
func (r *router) current(p, epoch int32) bool {
	if epoch < 0 {
		return true
	}
	if cur, ok := r.epochs[p]; ok && epoch < cur {
		r.c.log.Info("ignoring stale __consumer_offsets leadership event", zap.Int32("partition", p), zap.Int32("leader.epoch", epoch), zap.Int32("current.epoch", cur))
		return false
	}
	r.epochs[p] = epoch
	return true
}

func (r *router) part(p int32) *partState {
	ps := r.parts[p]
	if ps == nil {
		ps = &partState{}
		r.parts[p] = ps
	}
	return ps
}

// failQueue answers the requests waiting for the partition's load with
// code. Transaction completions stay queued: no client retries them, and
// the load they wait for goes on (after a router restart); a resigned
// partition drops its whole state.
func (ps *partState) failQueue(code int16) {
	var keep []*GroupRequest
	for _, q := range ps.queue {
		if q.completion != nil {
			keep = append(keep, q)
			continue
		}
		q.Fail(code)
	}
	ps.queue = keep
}

// abandon is the router's last word before it restarts or stops: its
// cleanup timer stops, the requests waiting for a partition load are
// answered with code, and pending ListGroups with what is listed.
func (r *router) abandon(code int16) {
	if r.cleanup != nil {
		r.cleanup.Stop()
	}
	for _, ps := range r.parts {
		ps.failQueue(code)
	}
	r.answerLists(true)
}

func (r *router) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.armCleanup(ctx)
	case *actor.Restarting:
		// After a panic: the restarted actor is this same router (its
		// registry is kept, and the group actors, not its children, run
		// on with the requests queued in their mailboxes) and re-arms the
		// cleanup timer on Started. What it holds is answered now with a
		// retriable error, not left to the RequestTimeout safety net:
		// requests waiting for a partition load (the client finds the
		// coordinator again and retries; the load itself carries on), and
		// pending ListGroups with what is listed.
		r.abandon(kerr.CoordinatorNotAvailable.Code)
	case *actor.Stopping:
		r.abandon(kerr.NotCoordinator.Code)
		// Coordinator.Stop stops the group actors after the router: their
		// Terminated would reach a router that is gone (a dead letter).
		for _, ch := range r.children {
			ctx.Unwatch(ch.pid)
		}
	case *GroupRequest:
		r.handle(ctx, m)
	case *partitionLoaded:
		r.loaded(ctx, m)
	case *groupDone:
		ch := r.children[m.group]
		if ch == nil || !ch.pid.Equal(m.pid) {
			return
		}
		if m.counted {
			ch.inflight--
		}
		if m.removable && ch.inflight <= 0 {
			ctx.Stop(ch.pid)
			delete(r.children, m.group)
		}
	case *actor.Terminated:
		// A watched group actor stopped: asked to (resign, removable), or
		// its guardian gave up on it; the next request spawns a fresh one.
		r.c.live.remove(m.Who)
		for id, ch := range r.children {
			if ch.pid.Equal(m.Who) {
				delete(r.children, id)
			}
		}
	case *listGroupsReq:
		r.lists = append(r.lists, m.reply)
		r.loadAllLocal(ctx)
		r.answerLists(false)
	case *electPartition:
		if r.current(m.partition, m.epoch) {
			r.startLoad(ctx, m.partition, r.part(m.partition))
		}
	case *resignPartition:
		if r.current(m.partition, m.epoch) {
			r.resign(ctx, m.partition)
		}
	case *deleteTopics:
		r.deleteTopics(ctx, m)
	case *cleanupTick:
		for _, ch := range r.children {
			ctx.Send(ch.pid, expireOffsets{})
		}
		r.armCleanup(ctx)
	case *txnCompletion:
		if !r.c.opts.Topic.IsLocalLeader(m.partition) {
			return // the partition's new leader loads the marker from the log
		}
		ps := r.parts[m.partition]
		switch {
		case ps != nil && ps.loaded:
			r.completeTxn(ctx, m)
		case ps != nil && ps.loading:
			// The load may have read the log before the marker: apply it
			// once loaded, in order with the requests queued meanwhile.
			ps.queue = append(ps.queue, &GroupRequest{API: "CompleteTxnOffsets", Fail: func(int16) {}, completion: m})
		}
		// Not loaded nor loading: the load that will come reads the
		// marker from the log.
	}
}

func (r *router) armCleanup(ctx actor.Context) {
	self, root := ctx.Self(), r.c.sys.Root
	r.cleanup = time.AfterFunc(r.c.opts.CleanupInterval, func() { root.Send(self, &cleanupTick{}) })
}

func (r *router) handle(ctx actor.Context, req *GroupRequest) {
	p := r.c.PartitionFor(req.Group)
	if !r.c.opts.Topic.IsLocalLeader(p) {
		if ps := r.parts[p]; ps != nil && ps.loaded {
			r.resign(ctx, p)
		}
		req.Fail(kerr.NotCoordinator.Code)
		return
	}
	ps := r.part(p)
	if !ps.loaded {
		ps.queue = append(ps.queue, req)
		r.startLoad(ctx, p, ps)
		return
	}
	r.route(ctx, p, req)
}

func (r *router) route(ctx actor.Context, p int32, req *GroupRequest) {
	if req.completion != nil {
		r.completeTxn(ctx, req.completion)
		return
	}
	if req.txnProducer != nil {
		r.addTxnGroup(p, *req.txnProducer, req.Group)
	}
	ch := r.children[req.Group]
	if ch == nil {
		ch = r.spawn(ctx, req.Group, p, nil)
		if ch == nil {
			req.Fail(kerr.CoordinatorNotAvailable.Code)
			return
		}
	}
	ch.inflight++
	ctx.Send(ch.pid, req)
}

func (r *router) spawn(ctx actor.Context, group string, p int32, l *Loaded) *child {
	s := &seed{loaded: l}
	// A loaded group is listed from the start, before its actor has run.
	slot := &listingSlot{}
	if l != nil {
		g := RestoreGroup(group, r.c.opts.Config, nil, l, r.c.opts.Now())
		slot.set(g.Listing(), !g.Removable())
	}
	self := ctx.Self()
	props := actors.Props(r.c.log, func() actor.Actor {
		return &groupActor{c: r.c, router: self, id: group, partition: p, seed: s, listing: slot}
	}, actor.WithGuardian(groupSupervision))
	// The sequence number keeps names unique: a stopped actor may still
	// be registered when its group is recreated.
	r.seq++
	pid, err := r.spawnLive(ctx, props, fmt.Sprintf("%s/group-%d-%s", RouterName, r.seq, group))
	if err != nil {
		r.c.log.Error("spawn group actor", zap.String("group", group), zap.Error(err))
		return nil
	}
	// A watch of an actor already stopped answers Terminated at once.
	ctx.Watch(pid)
	ch := &child{pid: pid, partition: p, listing: slot}
	r.children[group] = ch
	return ch
}

// spawnLive spawns a group actor as a root actor (not the router's child:
// see Coordinator) and records it in c.live, under its lock with Stop's
// closed flag: Stop stops every group actor it finds there, so none may be
// spawned after it looked.
func (r *router) spawnLive(ctx actor.Context, props *actor.Props, name string) (*actor.PID, error) {
	live := r.c.live
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.closed {
		return nil, fmt.Errorf("coordinator stopped")
	}
	pid, err := ctx.ActorSystem().Root.SpawnNamed(props, name)
	if err == nil {
		live.pids[pid] = struct{}{}
	}
	return pid, err
}

// startLoad reads a partition in the background; requests for its groups
// queue until partitionLoaded arrives.
func (r *router) startLoad(ctx actor.Context, p int32, ps *partState) {
	if ps.loading || ps.loaded {
		return
	}
	ps.loading = true
	self, root, c := ctx.Self(), r.c.sys.Root, r.c
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		l := NewLoader()
		err := c.ensureTopic(c.ctx)
		if err == nil {
			err = c.opts.Topic.Load(c.ctx, p, func(rec *LogRecord) error {
				if aerr := l.ApplyRecord(rec); aerr != nil {
					c.log.Warn("skipping bad __consumer_offsets record", zap.Int32("partition", p), zap.Int64("offset", rec.Offset), zap.Error(aerr))
				}
				return nil
			})
		}
		root.Send(self, &partitionLoaded{partition: p, ps: ps, loader: l, err: err})
	}()
}

func (r *router) loaded(ctx actor.Context, m *partitionLoaded) {
	ps := r.parts[m.partition]
	if ps != m.ps {
		// Resigned while loading (its queue was answered then), maybe led
		// again since by a newer load: this result is stale.
		return
	}
	ps.loading = false
	queue := ps.queue
	ps.queue = nil
	if m.err != nil {
		r.c.log.Warn("loading __consumer_offsets partition failed", zap.Int32("partition", m.partition), zap.Error(m.err))
		for _, q := range queue {
			q.Fail(kerr.CoordinatorNotAvailable.Code)
		}
		r.answerLists(false)
		return
	}
	ps.loaded = true
	for pid, groups := range m.loader.OpenProducers() {
		for _, id := range groups {
			r.addTxnGroup(m.partition, pid, id)
		}
	}
	for id, l := range m.loader.Groups {
		if r.children[id] != nil {
			continue
		}
		r.spawn(ctx, id, m.partition, l)
	}
	r.c.log.Info("loaded __consumer_offsets partition", zap.Int32("partition", m.partition), zap.Int("groups", len(m.loader.Groups)))
	if len(ps.deleted) > 0 {
		// Topics deleted during the load: queued ahead of the requests.
		msg := &deleteTopics{topics: ps.deleted}
		ps.deleted = nil
		for _, ch := range r.children {
			if ch.partition == m.partition {
				ctx.Send(ch.pid, msg)
			}
		}
	}
	for _, q := range queue {
		r.route(ctx, m.partition, q)
	}
	r.answerLists(false)
}

func (r *router) loadAllLocal(ctx actor.Context) {
	for p := int32(0); p < r.c.opts.Partitions; p++ {
		if r.c.opts.Topic.IsLocalLeader(p) {
			r.startLoad(ctx, p, r.part(p))
		}
	}
}

// answerLists answers pending ListGroups once no partition is loading.
func (r *router) answerLists(force bool) {
	if len(r.lists) == 0 {
		return
	}
	if !force {
		for _, ps := range r.parts {
			if ps.loading {
				return
			}
		}
	}
	out := make([]Listing, 0, len(r.children))
	for _, ch := range r.children {
		if l, ok := ch.listing.get(); ok {
			out = append(out, l)
		}
	}
	for _, f := range r.lists {
		f(out)
	}
	r.lists = nil
}

func (r *router) resign(ctx actor.Context, p int32) {
	for id, ch := range r.children {
		if ch.partition == p {
			// Poison is queued behind requests already sent, so they are
			// answered (their writes fail: no longer leader) before it stops.
			ctx.Poison(ch.pid)
			delete(r.children, id)
		}
	}
	if ps := r.parts[p]; ps != nil {
		ps.failQueue(kerr.NotCoordinator.Code)
	}
	delete(r.parts, p)
	delete(r.txnGroups, p)
	r.answerLists(false) // a ListGroups may have waited for this partition's load
}

// deleteTopics forwards a topic deletion to every group actor and
// remembers it for partitions still loading.
func (r *router) deleteTopics(ctx actor.Context, m *deleteTopics) {
	for _, ch := range r.children {
		ctx.Send(ch.pid, m)
	}
	for _, ps := range r.parts {
		if !ps.loading {
			continue
		}
		if ps.deleted == nil {
			ps.deleted = map[string]bool{}
		}
		for t := range m.topics {
			ps.deleted[t] = true
		}
	}
}
