package partition

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/storage"
)

// ManagerName is the replica manager actor's name; the partition actors it
// spawns and watches are named "<ManagerName>/<topic>-<partition>".
const ManagerName = "replica-manager"

// askTimeout bounds the replica manager's waits on its actors (spawn,
// state changes, stop). They are local and fast; the bound only keeps a
// wedged actor from wedging the controller.
const askTimeout = 10 * time.Second

// ManagerConfig configures NewManager.
type ManagerConfig struct {
	System   *actor.ActorSystem
	Store    LogStore
	BrokerID int32       // broker.id
	Logger   *zap.Logger // nil = no logs
	// Backoff is the partition actors' supervision policy; zero fields take
	// BackoffStrategy's defaults (100ms → 10s, give up after 5 failures in
	// 60s). OnGiveUp is set by the manager (the partition goes offline).
	Backoff actors.BackoffStrategy
	// ProducerIDs allocates InitProducerId ids; nil = NextProducerID fails.
	ProducerIDs *ProducerIDs
	// IsrWriter persists ISR shrinks and expansions decided by leaders
	// hosted here (cluster mode). nil = the ISR never changes from what
	// LeaderAndIsr says (single node: the ISR is this broker).
	IsrWriter IsrWriter
	// ReplicaLagTimeMax is replica.lag.time.max.ms (default 30s): a leader
	// drops a follower from the ISR that has not caught up for this long.
	ReplicaLagTimeMax time.Duration
	// ProducerIDExpiration is producer.id.expiration.ms (KIP-854; 0 =
	// Kafka's default, 1 day; negative = never): a producer with no open
	// transaction that has written nothing for this long is forgotten by
	// each partition, checked every ProducerIDExpirationCheck
	// (producer.id.expiration.check.interval.ms; 0 = Kafka's default, 10
	// minutes).
	ProducerIDExpiration      time.Duration
	ProducerIDExpirationCheck time.Duration
	// NewFetchers, if set, builds the replica fetcher manager that starts
	// and stops follower fetching (replication/fetcher), given the
	// partitions it fetches for (the Manager being built). NewManager
	// calls it once, after the replica-manager actor exists and before it
	// returns, so the Manager owns its fetcher control from construction
	// on, as Kafka's ReplicaManager creates its ReplicaFetcherManager: the
	// fetchers need the partitions and the partitions need the fetchers,
	// and neither is handed over later. nil = followers do not fetch
	// (single node). Its error fails NewManager. The caller stops what it
	// built (before Close).
	NewFetchers func(replicas ReplicaLookup) (FetcherControl, error)
	// OnLeadershipChange, if set, is told every role change of a hosted
	// partition: leader=true with the partition's leader epoch after this
	// broker applied a LeaderAndIsr naming it leader; leader=false after
	// one naming another broker (with that epoch) or after StopReplica
	// (epoch -1: unknown). It is called on the goroutine applying the
	// change, after the partition actor applied it and never while the
	// manager's lock is held; it must not block (the group coordinator
	// uses it to load or resign __consumer_offsets partitions, Kafka's
	// GroupCoordinator.onElection/onResignation).
	OnLeadershipChange func(tp TopicPartition, leader bool, leaderEpoch int32)
	// AlterLogDirsQuota throttles the copies AlterReplicaLogDirs makes
	// (replica.alter.log.dirs.io.max.bytes.per.second; the broker passes
	// replication/throttle.Managers.AlterLogDirs). nil = unthrottled.
	AlterLogDirsQuota CopyThrottle
	// AlterLogDirsThreads bounds the AlterReplicaLogDirs copies running at
	// once (num.replica.alter.log.dirs.threads; the broker passes it
	// resolved, Kafka's default being the number of log.dirs): a move
	// beyond it has its future log created (the request is answered) and
	// waits for a running copy to end. 0 = unbounded.
	AlterLogDirsThreads int
}

// Manager is the replica manager: it hosts one partition actor per
// partition replica on this broker and hands out the partitions' Handles
// to the request handlers. Safe for concurrent use.
//
// The "replica-manager" actor spawns the partition actors (named
// "replica-manager/<topic>-<partition>") and watches them, but they are
// not its protoactor children: each is a root actor supervised by the
// manager's backoff strategy as its guardian. protoactor restarts an
// actor by stopping all its children first (there is no directive that
// restarts a parent and keeps them), so as children a panic in the
// replica-manager would have stopped every hosted partition. This way a
// replica-manager restart restarts that actor only: the partitions keep
// running, and the registry below (outside the actor) and the watches
// (held by the partition actors, for the manager's unchanging PID) are
// kept across it.
type Manager struct {
	sys      *actor.ActorSystem
	store    LogStore
	brokerID int32
	log      *zap.Logger
	sup      *actor.PID
	strategy *actors.BackoffStrategy // the partition actors' guardian
	initHW   map[TopicPartition]int64
	pids     *ProducerIDs
	isr      IsrWriter
	lag      time.Duration
	expiry   expirySettings
	fetchers FetcherControl              // set by NewManager (NewFetchers), then only read
	reporter atomic.Pointer[reporterBox] // offline replicas (offline.go)
	onRole   func(tp TopicPartition, leader bool, leaderEpoch int32)
	wg       sync.WaitGroup // offline reports (offline.go)
	// isrWrites counts the partition actors' AlterIsr goroutines; Close
	// waits for them after stopping the actors, at most closeWait.
	isrWrites sync.WaitGroup
	closeWait time.Duration
	// moves counts the log dir moves' goroutines (logdir_copier.go);
	// Close waits for them after stopping the actors, at most closeWait.
	moves     sync.WaitGroup
	moveQuota CopyThrottle
	moveSlots chan struct{} // AlterLogDirsThreads tokens; nil = unbounded

	mu    sync.Mutex
	parts map[TopicPartition]*Handle
	byID  map[string]*Handle // actor id → handle, for OnGiveUp
	// incarnations maps each running partition actor (by the PID pointer
	// SpawnNamed returned, which a same-named successor does not share)
	// to its handle; StopReplicas and Close remove an actor before
	// stopping it, so a Terminated still listed here is an outage.
	incarnations map[*actor.PID]*Handle
	closed       bool
}

// spawnChild asks the replica-manager actor to spawn (and watch) a
// partition actor.
type spawnChild struct {
	h     *Handle
	name  string
	props *actor.Props
	reply chan spawnResult
}

type spawnResult struct {
	pid *actor.PID
	err error
}

// NewManager spawns the replica manager actor. It does not open any log:
// partitions come with ApplyLeaderAndIsr.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	if cfg.System == nil || cfg.Store == nil {
		return nil, errors.New("partition: ManagerConfig needs System and Store")
	}
	lg := cfg.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	m := &Manager{
		sys: cfg.System, store: cfg.Store, brokerID: cfg.BrokerID, log: lg,
		initHW: cfg.Store.HighWatermarks(),
		pids:   cfg.ProducerIDs,
		isr:    cfg.IsrWriter,
		lag:    cfg.ReplicaLagTimeMax,
		expiry: producerExpiry(cfg.ProducerIDExpiration, cfg.ProducerIDExpirationCheck),
		onRole: cfg.OnLeadershipChange,
		parts:  make(map[TopicPartition]*Handle),
		byID:   make(map[string]*Handle),

		incarnations: make(map[*actor.PID]*Handle),
		closeWait:    isrWriteCloseWait,
		moveQuota:    cfg.AlterLogDirsQuota,
	}
	if cfg.AlterLogDirsThreads > 0 {
		m.moveSlots = make(chan struct{}, cfg.AlterLogDirsThreads)
	}
	strategy := cfg.Backoff
	strategy.OnGiveUp = m.onGiveUp
	userRestart := cfg.Backoff.OnRestart
	strategy.OnRestart = func(child *actor.PID, reason any, d time.Duration) {
		lg.Warn("partition actor failed; restarting", zap.String("actor", child.GetId()), zap.Any("reason", reason), zap.Duration("backoff", d))
		if userRestart != nil {
			userRestart(child, reason, d)
		}
	}
	m.strategy = &strategy
	// The actor keeps no state of its own (the registry is the Manager's),
	// so a fresh instance after a restart carries on where the old one was.
	props := actors.Props(lg, func() actor.Actor {
		return actor.ReceiveFunc(func(ctx actor.Context) {
			switch msg := ctx.Message().(type) {
			case *spawnChild:
				m.spawnWatched(ctx, msg)
			case *actor.Terminated:
				m.childTerminated(msg.Who) // a watched partition actor stopped for good
			}
		})
	}, actor.WithGuardian(managerSupervision))
	pid, err := cfg.System.Root.SpawnNamed(props, ManagerName)
	if err != nil {
		return nil, fmt.Errorf("partition: spawn %s: %w", ManagerName, err)
	}
	m.sup = pid
	if cfg.NewFetchers != nil {
		// Written before m is returned: every later reader (LeaderAndIsr,
		// StopReplica, offline reports) comes after that; the actor just
		// spawned never reads it.
		f, err := cfg.NewFetchers(m)
		if err != nil {
			_ = cfg.System.Root.StopFuture(pid).Wait()
			return nil, fmt.Errorf("partition: replica fetchers: %w", err)
		}
		m.fetchers = f
	}
	return m, nil
}

// managerSupervision restarts the replica-manager actor after a panic,
// always: it is stateless (a restart loses nothing) and a stopped one
// would leave the broker unable to host a new partition. Its partition
// actors run on through its restarts (see Manager).
var managerSupervision = actors.ManagerStrategy

// spawnWatched runs on the replica-manager actor: it spawns the partition
// actor as a root actor under the manager's strategy, registers the
// incarnation and watches it, so childTerminated hears when it stops for
// good (a restart under its strategy is no Terminated).
func (m *Manager) spawnWatched(ctx actor.Context, msg *spawnChild) {
	replied := false
	defer func() {
		if r := recover(); r != nil {
			if !replied {
				msg.reply <- spawnResult{err: fmt.Errorf("partition: spawn %s: replica-manager panicked: %v", msg.name, r)}
			}
			panic(r) // the manager restarts; the spawner is not left waiting
		}
	}()
	pid, err := m.spawnRegistered(ctx, msg)
	if err == nil {
		// A watch on an actor that already stopped answers Terminated at
		// once (protoactor: the watched actor, or dead letters once it
		// is gone), so no end is missed.
		ctx.Watch(pid)
	}
	replied = true
	msg.reply <- spawnResult{pid, err}
}

// spawnRegistered spawns the partition actor and registers the
// incarnation, under mu with Close's closed flag: Close stops every
// incarnation it finds registered, so none may be spawned after it looked.
// Registered here, before any Terminated of it can be handled (they are
// handled on the manager actor too, after this message).
func (m *Manager) spawnRegistered(ctx actor.Context, msg *spawnChild) (*actor.PID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, storage.ErrLogClosed
	}
	pid, err := ctx.ActorSystem().Root.SpawnNamed(msg.props, ManagerName+"/"+msg.name)
	if err == nil {
		m.incarnations[pid] = msg.h
	}
	return pid, err
}

// ReplicaLookup is what the replica fetchers need from the replica
// manager: the Handle of a hosted partition (*Manager implements it).
type ReplicaLookup interface {
	Get(tp TopicPartition) (*Handle, bool)
}

var _ ReplicaLookup = (*Manager)(nil)

func (m *Manager) fetcherControl() FetcherControl { return m.fetchers }

// onGiveUp runs when a partition actor failed too often (in its guardian's
// strategy, on the failed actor's goroutine, before that actor handles the
// Stop the strategy just sent): the partition goes offline
// (KAFKA_STORAGE_ERROR) and the broker keeps serving the others. The
// actor's Terminated then reports the offline replica (offline.go).
func (m *Manager) onGiveUp(child *actor.PID, reason any) {
	m.mu.Lock()
	h := m.byID[child.GetId()]
	m.mu.Unlock()
	m.log.Error("partition actor failed too often; partition offline", zap.String("actor", child.GetId()), zap.Any("reason", reason))
	if h != nil {
		h.setUnavailable(kerr.KafkaStorageError)
	}
}

// ApplyLeaderAndIsr makes this broker host each partition in states with
// the given role (single node: the leader). New partitions get their log
// (LogStore.GetOrCreate with the state's Config) and a partition actor;
// running ones take the new state. It returns when every partition has
// applied its state; the map holds the partitions that failed (a storage
// error, a stale leader epoch → FENCED_LEADER_EPOCH).
func (m *Manager) ApplyLeaderAndIsr(states []LeaderAndIsr) map[TopicPartition]error {
	m.createLogs(states)
	errs := make(map[TopicPartition]error)
	for _, s := range states {
		if err := m.applyOne(s); err != nil {
			errs[s.TopicPartition] = err
		}
	}
	return errs
}

// createLogParallel bounds the logs createLogs creates at once: making a
// log is mostly the kernel creating and preallocating its files, so a
// few per core keep the cores busy while one waits on its dir's fsync.
var createLogParallel = 2 * runtime.GOMAXPROCS(0)

// createLogs creates, createLogParallel at a time, the logs of the
// partitions in states that have no partition actor yet (a LeaderAndIsr
// for a new topic of thousands of partitions), so that applyOne, which
// applies the states in order, finds them made. A failure here is left
// for applyOne's own GetOrCreate to report.
func (m *Manager) createLogs(states []LeaderAndIsr) {
	var todo []LeaderAndIsr
	m.mu.Lock()
	for _, s := range states {
		if h, ok := m.parts[s.TopicPartition]; !ok || h.PID() == nil {
			todo = append(todo, s)
		}
	}
	m.mu.Unlock()
	if len(todo) < 2 {
		return
	}
	sem := make(chan struct{}, createLogParallel)
	var wg sync.WaitGroup
	for _, s := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, _ = m.store.GetOrCreate(s.TopicPartition, s.Config)
		}()
	}
	wg.Wait()
}

func (m *Manager) applyOne(s LeaderAndIsr) error {
	tp := s.TopicPartition
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return storage.ErrLogClosed
	}
	h, ok := m.parts[tp]
	if !ok {
		h = newHandle(tp, m.sys.Root)
		m.parts[tp] = h
		m.byID[ManagerName+"/"+tp.String()] = h
	}
	m.mu.Unlock()

	if h.PID() != nil && h.View().Err == kerr.KafkaStorageError {
		// The strategy gave up on this partition and is stopping its
		// actor: wait until it is gone (its name free) before reviving it.
		if g := h.gone.Load(); g != nil {
			select {
			case <-*g:
			case <-time.After(askTimeout):
				return kerr.RequestTimedOut
			}
		}
	}
	if h.PID() == nil {
		// New, stopped or offline: (re)create the log and spawn the actor.
		if _, err := m.store.GetOrCreate(tp, s.Config); err != nil {
			h.setUnavailable(kerr.KafkaStorageError)
			return err
		}
		h.setState(s)
		if err := m.spawn(h); err != nil {
			return err
		}
	}
	done := make(chan *kerr.Error, 1)
	h.root.Send(h.PID(), &applyState{state: s, done: done})
	select {
	case kerrv := <-done:
		if kerrv != nil {
			return kerrv
		}
		// The actor saved s in the Handle before answering (apply).
		if f := m.fetcherControl(); f != nil {
			// Kafka ReplicaManager.makeLeaders/makeFollowers: a leader stops
			// fetching; a follower (re)starts from its leader under the new
			// epoch (the fetcher truncates first).
			if s.Leader == m.brokerID || s.Leader < 0 {
				f.Unfollow(tp)
			} else {
				f.Follow(tp, s.Leader, s.LeaderEpoch)
			}
		}
		if m.onRole != nil {
			m.onRole(tp, s.Leader == m.brokerID, s.LeaderEpoch)
		}
		return nil
	case <-time.After(askTimeout):
		return kerr.RequestTimedOut
	}
}

func (m *Manager) spawn(h *Handle) error {
	initHW := int64(-1)
	if hw, ok := m.initHW[h.tp]; ok {
		initHW = hw
	}
	props := actors.Props(m.log, func() actor.Actor {
		return &partitionActor{h: h, store: m.store, brokerID: m.brokerID, log: m.log, initialHW: initHW, isr: m.isr, writes: &m.isrWrites, lag: m.lag, expiry: m.expiry,
			moves: &m.moves, quota: m.moveQuota, slots: m.moveSlots}
	}, actor.WithGuardian(m.strategy))
	reply := make(chan spawnResult, 1)
	m.sys.Root.Send(m.sup, &spawnChild{h: h, name: h.tp.String(), props: props, reply: reply})
	select {
	case r := <-reply:
		if r.err != nil {
			return fmt.Errorf("partition: spawn %s: %w", h.tp, r.err)
		}
		// Set before Started is handled (which also stores it) so that
		// messages sent right after this reach the new actor.
		gone := make(chan struct{})
		h.gone.Store(&gone)
		h.pid.Store(r.pid)
		return nil
	case <-time.After(askTimeout):
		return fmt.Errorf("partition: spawn %s: %w", h.tp, kerr.RequestTimedOut)
	}
}

// Get returns the handle of a hosted partition.
func (m *Manager) Get(tp TopicPartition) (*Handle, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.parts[tp]
	return h, ok
}

// Partitions lists the hosted partitions' handles (any order).
func (m *Manager) Partitions() []*Handle {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Handle, 0, len(m.parts))
	for _, h := range m.parts {
		out = append(out, h)
	}
	return out
}

// StopReplicas stops the partitions' actors (Kafka StopReplica) and, with
// deleteLogs, deletes their logs. Unknown partitions are skipped. It
// returns the first error (joined) after trying every partition.
func (m *Manager) StopReplicas(tps []TopicPartition, deleteLogs bool) error {
	var errs []error
	if f := m.fetcherControl(); f != nil {
		f.Unfollow(tps...)
	}
	for _, tp := range tps {
		m.mu.Lock()
		h, ok := m.parts[tp]
		delete(m.parts, tp)
		delete(m.byID, ManagerName+"/"+tp.String())
		if ok {
			delete(m.incarnations, h.PID()) // a stop asked for, not an outage
		}
		m.mu.Unlock()
		if ok {
			if pid := h.PID(); pid != nil {
				if err := m.sys.Root.StopFuture(pid).Wait(); err != nil {
					errs = append(errs, fmt.Errorf("stop %s: %w", tp, err))
				}
			}
			h.setUnavailable(kerr.NotLeaderForPartition)
			if m.onRole != nil {
				m.onRole(tp, false, -1)
			}
		}
		if deleteLogs {
			if err := m.store.Delete(tp); err != nil {
				errs = append(errs, fmt.Errorf("delete %s: %w", tp, err))
			}
		}
	}
	return errors.Join(errs...)
}

// HighWatermarks is every hosted partition's current high watermark (for
// replication-offset-checkpoint).
func (m *Manager) HighWatermarks() map[TopicPartition]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[TopicPartition]int64, len(m.parts))
	for tp, h := range m.parts {
		out[tp] = h.View().HighWatermark
	}
	return out
}

// RefreshLogStart tells every running partition actor to re-read its log
// start offset (after a retention pass deleted segments; the actors
// publish only a change). Non-blocking.
func (m *Manager) RefreshLogStart() {
	for _, h := range m.Partitions() {
		if pid := h.PID(); pid != nil {
			h.root.Send(pid, &logStartMoved{})
		}
	}
}

// HostedTopics are the topics this broker hosts a partition of, sorted.
func (m *Manager) HostedTopics() []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range m.Partitions() {
		if !seen[h.tp.Topic] {
			seen[h.tp.Topic] = true
			out = append(out, h.tp.Topic)
		}
	}
	sort.Strings(out)
	return out
}

// UpdateConfig applies a topic config change to the topic's partitions.
func (m *Manager) UpdateConfig(topic string, cfg storage.LogConfig) {
	for _, h := range m.Partitions() {
		if h.tp.Topic != topic {
			continue
		}
		h.stateMu.Lock()
		h.state.Config = cfg
		h.stateMu.Unlock()
		if pid := h.PID(); pid != nil {
			h.root.Send(pid, &setConfig{cfg: cfg})
		}
	}
}

// UpdateMinInsyncReplicas applies a topic's new min.insync.replicas
// (topic config over broker default; 0 means 1) to its hosted partitions.
func (m *Manager) UpdateMinInsyncReplicas(topic string, n int) {
	for _, h := range m.Partitions() {
		if h.tp.Topic != topic {
			continue
		}
		h.stateMu.Lock()
		h.state.MinInsyncReplicas = n
		h.stateMu.Unlock()
		if pid := h.PID(); pid != nil {
			h.root.Send(pid, &setMinIsr{n: n})
		}
	}
}

// DeleteRecords advances a partition's log start offset to offset (-1 =
// the high watermark), as the DeleteRecords API asks; it waits for the
// actor at most timeout.
func (m *Manager) DeleteRecords(tp TopicPartition, offset int64, timeout time.Duration) DeleteRecordsResult {
	h, ok := m.Get(tp)
	if !ok {
		return DeleteRecordsResult{Err: kerr.UnknownTopicOrPartition, LowWatermark: -1}
	}
	pid := h.PID()
	if pid == nil {
		return DeleteRecordsResult{Err: kerr.NotLeaderForPartition, LowWatermark: -1}
	}
	done := make(chan DeleteRecordsResult, 1)
	h.root.Send(pid, &deleteRecords{offset: offset, done: done})
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r
	case <-t.C:
		return DeleteRecordsResult{Err: kerr.RequestTimedOut, LowWatermark: -1}
	}
}

// Close stops every partition actor and the replica-manager actor, and
// returns once they have stopped (ActorSystem.Shutdown would not stop
// them). Logs stay open: the LogManager owns and closes them.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true // from now on no partition actor is spawned (spawnWatched)
	running := make([]*actor.PID, 0, len(m.incarnations))
	for pid := range m.incarnations {
		// One already gone from the registry has stopped (its Terminated
		// is on the way to the manager actor): a Stop would be a dead letter.
		if _, ok := m.sys.ProcessRegistry.GetLocal(pid.Id); ok {
			running = append(running, pid)
		}
	}
	clear(m.incarnations) // stops asked for, not outages
	m.mu.Unlock()
	// The partition actors are not the manager actor's children (see
	// Manager): stop them all, then wait for each.
	futures := make([]*actor.Future, 0, len(running))
	for _, pid := range running {
		futures = append(futures, m.sys.Root.StopFuture(pid))
	}
	for _, f := range futures {
		_ = f.Wait()
	}
	_ = m.sys.Root.StopFuture(m.sup).Wait()
	m.wg.Wait() // offline reports under way
	m.awaitGoroutines(&m.isrWrites, "ISR writes")
	m.awaitGoroutines(&m.moves, "log dir moves")
	for _, h := range m.Partitions() {
		if h.View().Err == nil {
			h.setUnavailable(kerr.NotLeaderForPartition)
		}
	}
}

// isrWriteCloseWait bounds Close's wait for AlterIsr calls under way.
// The metadata store is closed after the replica manager (the broker
// closes in reverse order of opening) and a ZooKeeper Get/Set has no
// timeout of its own, so during an outage a write could otherwise hold
// the shutdown for as long as the outage lasts.
const isrWriteCloseWait = 5 * time.Second

// awaitGoroutines waits for wg, at most m.closeWait, and warns when it
// gives up. Used at Close for the AlterIsr writes (one still running then
// ends when the store fails it, closing the store does; its result goes
// to a stopped actor, a dead letter: the write is conditional, and the
// next leader's LeaderAndIsr carries whatever ZooKeeper holds) and for
// the log dir moves (a copier stops at its next chunk; a swap under way
// completes).
func (m *Manager) awaitGoroutines(wg *sync.WaitGroup, what string) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(m.closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		m.log.Warn(what+" still under way at shutdown; not waiting for them", zap.Duration("waited", m.closeWait))
	}
}

// NextProducerID allocates a producer id for InitProducerId.
func (m *Manager) NextProducerID() (int64, error) {
	if m.pids == nil {
		return -1, errors.New("partition: no producer id allocator configured")
	}
	return m.pids.Next()
}
