package txncoordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/coordinator"
	"gregor/config"
)

// TopicName is Kafka's internal topic of transaction states.
const TopicName = "__transaction_state"

// StateTopic is what the coordinator needs from the broker for
// __transaction_state; the broker's internal-topic adapter implements it,
// tests fake it.
type StateTopic interface {
	// Ensure creates __transaction_state if it does not exist
	// (transaction.state.log.num.partitions partitions,
	// .replication.factor, min.insync.replicas=.min.isr,
	// segment.bytes=.segment.bytes, cleanup.policy=compact,
	// compression.type=uncompressed, unclean leader election off).
	// Idempotent; an error wrapping COORDINATOR_NOT_AVAILABLE while it
	// cannot (too few live brokers, no cluster metadata yet).
	Ensure(ctx context.Context) error
	// Append appends one batch to a partition and returns its base offset
	// once committed (acks=-1); errors are *kerr.Error where one applies.
	Append(ctx context.Context, partition int32, batch []byte) (offset int64, err error)
	// Load calls fn for every record of a partition from its log start to
	// its log end, in offset order (Value nil = tombstone; control records
	// included, which the loader skips). The group coordinator's
	// OffsetsTopic reads the same way (one adapter serves both topics).
	Load(ctx context.Context, partition int32, fn func(r *coordinator.LogRecord) error) error
	// Leader is the partition leader's advertised endpoint.
	Leader(partition int32) (brokerID int32, host string, port int32, ok bool)
}

// MarkerSender delivers WriteTxnMarkers (API 27) to partition leaders, the
// inter-broker request of Kafka's TransactionMarkerChannelManager. The
// broker's implementation sends it over the network to the leader (this
// broker included); tests use an in-process fake.
type MarkerSender interface {
	// Leader is the broker leading tp in the broker's metadata cache:
	// exists is false when the cache has no such partition (deleted: its
	// markers are skipped); leader < 0 when it has none right now
	// (retried).
	Leader(tp TopicPartition) (leader int32, exists bool)
	// Send sends req to broker and returns its response; an error means
	// no response (the markers are sent again after the backoff). It must
	// return when ctx ends.
	Send(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
}

// ProducerIDs allocates producer ids: the broker's allocator that the
// idempotent InitProducerId uses too (partition.ProducerIDs, blocks in
// ZooKeeper in a cluster). It may block; it is called off the actors.
type ProducerIDs interface {
	NextProducerID() (int64, error)
}

// Options configure a Coordinator.
type Options struct {
	// Partitions is transaction.state.log.num.partitions (default 50).
	Partitions int32
	// MaxTimeout is transaction.max.timeout.ms (default 15 min): a larger
	// producer transaction.timeout.ms gets INVALID_TRANSACTION_TIMEOUT.
	MaxTimeout time.Duration
	// AbortInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (default
	// 10 s): how often transactions older than their timeout are aborted.
	AbortInterval time.Duration
	// IDExpiration is transactional.id.expiration.ms (default 7 days): a
	// transactional id idle that long (no transaction open) is removed
	// with a tombstone.
	IDExpiration time.Duration
	// ExpireInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms (default
	// 1 h): how often idle transactional ids are looked for.
	ExpireInterval time.Duration
	// GroupPartitions is offsets.topic.num.partitions (default 50), for
	// the __consumer_offsets partition AddOffsetsToTxn adds.
	GroupPartitions int32
	Topic           StateTopic
	Markers         MarkerSender
	IDs             ProducerIDs
	Log             *zap.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// AppendTimeout bounds one append to __transaction_state
	// (request.timeout.ms; default 30 s).
	AppendTimeout time.Duration
	// RetryBackoff is the wait before a marker or completion is retried
	// and before a failed load is tried again (default 100 ms).
	RetryBackoff time.Duration
	// RequestTimeout answers COORDINATOR_NOT_AVAILABLE to a request whose
	// answer was lost (its actor crashed or was stopped) (default 2 min).
	RequestTimeout time.Duration
}

// OptionsFromBroker fills Options from the broker config (transaction.*
// keys, offsets.topic.num.partitions).
func OptionsFromBroker(b *config.Broker, topic StateTopic, markers MarkerSender, ids ProducerIDs, log *zap.Logger) Options {
	return Options{Partitions: b.TransactionStateLogNumPartitions, MaxTimeout: b.TransactionMaxTimeout,
		AbortInterval: b.TransactionAbortTimedOutCleanupInterval, GroupPartitions: b.OffsetsTopicNumPartitions,
		IDExpiration: b.TransactionalIDExpiration, ExpireInterval: b.TransactionRemoveExpiredCleanupInterval,
		// request.timeout.ms bounds the appends, as Kafka's
		// TransactionStateManager (0: every append times out at once).
		AppendTimeout: max(b.Coordinators.RequestTimeout, time.Nanosecond),
		Topic:         topic, Markers: markers, IDs: ids, Log: log}
}

// Coordinator is the transaction coordinator: a "txn-coordinator" manager
// actor and one actor per loaded __transaction_state partition, named
// "txn-coordinator/txn-<partition>-<n>" (kind "txn" in /actors and
// /faults). Its methods are safe for concurrent use and never block:
// answers come through reply callbacks.
//
// As the group coordinator's, the partition actors are root actors with
// their own guardian (txnSupervision) that the manager spawns and watches,
// so a manager restart stops none of them. A partition actor loads its
// partition when it starts (requests meanwhile get
// COORDINATOR_LOAD_IN_PROGRESS) and a restarted one reloads it.
type Coordinator struct {
	opts    Options
	sys     *actor.ActorSystem
	manager *actor.PID
	log     *zap.Logger
	live    *liveActors

	ctx    context.Context // cancelled by Stop: ends loads, appends, marker sends
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines of the actors and lookups

	ensureMu     sync.Mutex
	ensured      bool
	ensureWarned atomic.Int64

	inflightMu sync.Mutex
	inflight   map[int32]*inflight // appends in flight per partition, any incarnation
}

// inflight counts the appends in flight to one __transaction_state
// partition; a load waits until there are none.
type inflight struct {
	mu      sync.Mutex
	n       int
	waiters []chan struct{}
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	var ws []chan struct{}
	if f.n == 0 {
		ws, f.waiters = f.waiters, nil
	}
	f.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}

// count is the number in flight (tests).
func (f *inflight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// wait returns once no append is in flight, or ctx's error.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Coordinator) appends(p int32) *inflight {
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	f := c.inflight[p]
	if f == nil {
		f = &inflight{}
		c.inflight[p] = f
	}
	return f
}

// ManagerName is the manager actor's name; partition actors are named
// "<ManagerName>/txn-<partition>-<n>".
const ManagerName = "txn-coordinator"

// txnSupervision restarts a partition actor after a panic (it reloads its
// partition: a panic is a broken invariant, the log is the truth); more
// than 20 failures a minute stop it, and the manager spawns a fresh one.
var txnSupervision = &actors.BackoffStrategy{Initial: 10 * time.Millisecond, Max: time.Second, MaxRetries: 20, Window: time.Minute}

// New starts the coordinator's manager actor under sys. Stop it with Stop.
func New(sys *actor.ActorSystem, opts Options) (*Coordinator, error) {
	if opts.Topic == nil || opts.Markers == nil || opts.IDs == nil {
		return nil, fmt.Errorf("txncoordinator: Options.Topic, Markers and IDs are required")
	}
	if opts.Partitions <= 0 {
		opts.Partitions = 50
	}
	if opts.GroupPartitions <= 0 {
		opts.GroupPartitions = 50
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = 15 * time.Minute
	}
	if opts.AbortInterval <= 0 {
		opts.AbortInterval = 10 * time.Second
	}
	if opts.IDExpiration <= 0 {
		opts.IDExpiration = 7 * 24 * time.Hour
	}
	if opts.ExpireInterval <= 0 {
		opts.ExpireInterval = time.Hour
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AppendTimeout <= 0 {
		opts.AppendTimeout = 30 * time.Second
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = 100 * time.Millisecond
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 2 * time.Minute
	}
	c := &Coordinator{opts: opts, sys: sys, log: opts.Log, live: &liveActors{pids: map[string]*actor.PID{}}, inflight: map[int32]*inflight{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	m := &manager{c: c, parts: map[int32]*loadedPart{}, epochs: map[int32]int32{}}
	pid, err := sys.Root.SpawnNamed(actors.Props(c.log, func() actor.Actor { return m }, actor.WithGuardian(actors.ManagerStrategy)), ManagerName)
	if err != nil {
		c.cancel()
		return nil, fmt.Errorf("txncoordinator: spawn: %w", err)
	}
	c.manager = pid
	return c, nil
}

// Stop stops every partition actor (requests they hold get
// NOT_COORDINATOR), then the manager, and waits for their goroutines. The
// manager outlives its actors so that their Terminated reaches it (no dead
// letter); with the context cancelled it spawns none again.
func (c *Coordinator) Stop() {
	c.cancel()
	c.live.mu.Lock()
	c.live.closed = true // no partition actor is spawned from now on
	futures := make([]*actor.Future, 0, len(c.live.pids))
	for _, pid := range c.live.pids {
		if _, ok := c.sys.ProcessRegistry.GetLocal(pid.Id); ok {
			futures = append(futures, c.sys.Root.StopFuture(pid))
		}
	}
	c.live.mu.Unlock()
	for _, f := range futures {
		_ = f.Wait()
	}
	_ = c.sys.Root.StopFuture(c.manager).Wait()
	c.live.mu.Lock()
	clear(c.live.pids)
	c.live.mu.Unlock()
	c.wg.Wait()
}

// liveActors is every partition actor spawned and not seen terminated,
// shared by the manager and Stop.
type liveActors struct {
	mu     sync.Mutex
	closed bool
	pids   map[string]*actor.PID
}

// PartitionFor is the __transaction_state partition of a transactional
// id: abs(javaHash(id)) % transaction.state.log.num.partitions, as
// Kafka's TransactionStateManager.partitionFor.
func (c *Coordinator) PartitionFor(transactionalID string) int32 {
	return coordinator.PartitionFor(transactionalID, c.opts.Partitions)
}

// LeadershipChanged is the replica manager's OnLeadershipChange for one
// __transaction_state partition: leading loads it at coordinator epoch
// leaderEpoch (Kafka's TransactionCoordinator.onElection), not leading
// unloads it (onResignation). An event older than the newest epoch seen
// for the partition is ignored; leaderEpoch < 0 is unknown and never
// stale. It never blocks.
func (c *Coordinator) LeadershipChanged(partition int32, leader bool, leaderEpoch int32) {
	c.tell(&leadership{partition: partition, leader: leader, epoch: leaderEpoch})
}

func (c *Coordinator) tell(msg any) {
	if c.ctx.Err() != nil {
		return
	}
	c.sys.Root.Send(c.manager, msg)
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

// warnEnsure logs, at most every 10 s, why __transaction_state cannot be
// created (clients retry FindCoordinator often).
func (c *Coordinator) warnEnsure(err error) {
	now := time.Now().UnixNano()
	last := c.ensureWarned.Load()
	if now-last < int64(10*time.Second) || !c.ensureWarned.CompareAndSwap(last, now) {
		return
	}
	c.log.Warn("cannot create "+TopicName+"; answering COORDINATOR_NOT_AVAILABLE", zap.Error(err))
}

// messages of the manager
type (
	leadership struct {
		partition, epoch int32
		leader           bool
	}
	// txnRequest carries one request for one transactional id: apply runs
	// on its partition's actor with the loaded core; fail answers it with
	// a coordinator-level code instead (NOT_COORDINATOR,
	// COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE).
	txnRequest struct {
		partition int32
		id        string // the transactional id (traces)
		api       string
		apply     func(c *Core, now int64)
		fail      func(code int16)
		tr        txnTrace
	}
)

type loadedPart struct {
	pid   *actor.PID
	epoch int32
}

// manager is the txn-coordinator actor: which partitions are loaded here
// (one partition actor each) and the newest leader epoch seen per
// partition. One value serves every incarnation, so a restart keeps them.
type manager struct {
	c      *Coordinator
	parts  map[int32]*loadedPart
	epochs map[int32]int32
	seq    uint64
}

func (m *manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *leadership:
		if !m.current(msg.partition, msg.epoch) {
			return
		}
		cur := m.parts[msg.partition]
		if msg.leader {
			if cur != nil && cur.epoch == msg.epoch && msg.epoch >= 0 {
				return // the same election applied again
			}
			m.unload(ctx, msg.partition)
			m.load(ctx, msg.partition, msg.epoch)
		} else {
			m.unload(ctx, msg.partition)
		}
	case *listRequest:
		m.list(func(lp *loadedPart, pl *partList) { ctx.Send(lp.pid, pl) }, msg)
	case *statsRequest:
		m.stats(func(lp *loadedPart, ps *partStats) { ctx.Send(lp.pid, ps) }, msg)
	case *txnRequest:
		lp := m.parts[msg.partition]
		if lp == nil {
			msg.fail(codeNotCoordinator)
			return
		}
		ctx.Send(lp.pid, msg)
	case *actor.Terminated:
		m.c.live.mu.Lock()
		delete(m.c.live.pids, msg.Who.Id)
		m.c.live.mu.Unlock()
		for p, lp := range m.parts {
			if lp.pid.Equal(msg.Who) && m.c.ctx.Err() == nil {
				// Stopped while still loaded here (its guardian gave up, or
				// a /faults stop): a fresh actor reloads the partition.
				m.c.log.Warn("transaction coordinator partition actor stopped; loading the partition again", zap.Int32("partition", p))
				delete(m.parts, p)
				m.load(ctx, p, lp.epoch)
			}
		}
	}
}

// current records epoch as p's newest and reports whether an event at
// epoch is not stale.
func (m *manager) current(p, epoch int32) bool {
	if epoch < 0 {
		return true
	}
	if cur, ok := m.epochs[p]; ok && epoch < cur {
		m.c.log.Info("ignoring stale "+TopicName+" leadership event", zap.Int32("partition", p), zap.Int32("leader.epoch", epoch), zap.Int32("current.epoch", cur))
		return false
	}
	m.epochs[p] = epoch
	return true
}

func (m *manager) load(ctx actor.Context, p, epoch int32) {
	if m.c.ctx.Err() != nil {
		return
	}
	m.seq++
	name := fmt.Sprintf("%s/txn-%d-%d", ManagerName, p, m.seq)
	c := m.c
	props := actors.Props(c.log, func() actor.Actor {
		return &partActor{c: c, partition: p, epoch: epoch}
	}, actor.WithGuardian(txnSupervision))
	c.live.mu.Lock()
	if c.live.closed {
		c.live.mu.Unlock()
		return
	}
	pid, err := ctx.ActorSystem().Root.SpawnNamed(props, name)
	if err == nil {
		c.live.pids[pid.Id] = pid
	}
	c.live.mu.Unlock()
	if err != nil {
		c.log.Error("spawn transaction coordinator partition actor", zap.Int32("partition", p), zap.Error(err))
		return
	}
	ctx.Watch(pid)
	m.parts[p] = &loadedPart{pid: pid, epoch: epoch}
}

// unload stops p's actor: Poison is queued behind the requests already
// sent to it, so they are answered first.
func (m *manager) unload(ctx actor.Context, p int32) {
	lp := m.parts[p]
	if lp == nil {
		return
	}
	delete(m.parts, p)
	ctx.Poison(lp.pid) // still watched: its Terminated clears c.live
}

func (c *Coordinator) send(r *txnRequest) {
	if c.ctx.Err() != nil {
		r.fail(codeNotCoordinator)
		return
	}
	c.sys.Root.Send(c.manager, r)
}

// codeOf is the Kafka error code of an append or send error.
func codeOf(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut.Code
	}
	return kerr.UnknownServerError.Code
}
