// Package fetcher is the follower side of replication: Kafka's
// ReplicaFetcherManager and ReplicaFetcherThreads as actors. The manager
// actor ("fetcher-manager") keeps one fetcher actor per (source broker,
// fetcher index) — num.replica.fetchers of them per leader at most — and
// assigns every followed partition to the fetcher of its leader and index
// (Kafka: abs(31*hash(topic) + partition) % num.replica.fetchers). A
// fetcher first truncates its new partitions with OffsetForLeaderEpoch
// (KIP-101/279), then sends Fetch v12 with this broker's replica id and
// hands the batches to the follower partitions, which keep the leader's
// offsets (partition.Handle.AppendAsFollower).
//
// Wiring in a broker: the replica manager builds it while it is
// constructed (partition.ManagerConfig.NewFetchers), so it exists before
// the first LeaderAndIsr; stop it before the replica manager:
//
//	var fm *fetcher.Manager
//	rm, err := partition.NewManager(partition.ManagerConfig{...,
//		NewFetchers: func(r partition.ReplicaLookup) (partition.FetcherControl, error) {
//			fc := fetcher.ConfigFromBroker(cfg)
//			fc.System, fc.Replicas, fc.Endpoints, fc.Logger = system, r, endpoints, log.Named("fetcher")
//			var err error
//			if fm, err = fetcher.Start(fc); err != nil {
//				return nil, err
//			}
//			return fm, nil
//		}})
//	... on shutdown: fm.Close(), then rm.Close()
//
// where endpoints resolves leader ids from the broker's metadata cache
// (controller.NewEndpoints, which exists before the controller).
package fetcher

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/partition"
	"gregor/replication/throttle"
	"gregor/wire/security/clientsec"
)

// ManagerName is the fetcher manager actor's name; its fetchers are named
// "<ManagerName>/fetcher-<leader id>-<index>".
const ManagerName = "fetcher-manager"

// Replicas is what fetchers need from the replica manager: the
// partition.ReplicaLookup that partition.ManagerConfig.NewFetchers is
// given (*partition.Manager implements it).
type Replicas = partition.ReplicaLookup

// Config configures Start. Zero durations and sizes take Kafka's defaults,
// except in a Config made by ConfigFromBroker, which keeps the broker's
// values (a configured 0 included).
type Config struct {
	System    *actor.ActorSystem
	BrokerID  int32                    // broker.id: the Fetch ReplicaID
	Replicas  Replicas                 // the follower partitions
	Endpoints partition.EndpointLookup // leader id → host:port
	Logger    *zap.Logger              // nil = no logs
	// NumFetchers: num.replica.fetchers (default 1).
	NumFetchers int
	// MaxWait: replica.fetch.wait.max.ms (default 500ms), the Fetch's
	// MaxWaitMillis.
	MaxWait time.Duration
	// MinBytes: replica.fetch.min.bytes (default 1), the Fetch's MinBytes.
	MinBytes int32
	// MaxBytes: replica.fetch.response.max.bytes (default 10 MiB), the
	// Fetch's MaxBytes.
	MaxBytes int32
	// PartitionMaxBytes: replica.fetch.max.bytes (default 1 MiB), each
	// partition's PartitionMaxBytes.
	PartitionMaxBytes int32
	// Backoff: replica.fetch.backoff.ms (default 1s), after an error.
	Backoff time.Duration
	// SocketTimeout: replica.socket.timeout.ms (default 30s), the bound of
	// setting up a connection to the leader (TCP connect, TLS, SASL), for
	// the fetch connection and the kgo client alike.
	SocketTimeout time.Duration
	// SocketReceiveBufferBytes: replica.socket.receive.buffer.bytes
	// (default 64 KiB; -1 = the OS default), SO_RCVBUF of the fetch
	// connection.
	SocketReceiveBufferBytes int
	// Quota is the follower replication quota
	// (follower.replication.throttled.rate with the topic configs
	// follower.replication.throttled.replicas); nil = no throttling.
	Quota *throttle.Quota
	// Security is the inter-broker listener's client security (TLS, SASL)
	// for both the kgo client and the raw fetch connection. Zero = PLAINTEXT.
	Security clientsec.Client

	explicit bool // made by ConfigFromBroker: zeros are the broker's values
}

func (c *Config) defaults() {
	if c.NumFetchers <= 0 {
		c.NumFetchers = 1
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.explicit {
		return
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 500 * time.Millisecond
	}
	if c.MinBytes <= 0 {
		c.MinBytes = 1
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 10 << 20
	}
	if c.PartitionMaxBytes <= 0 {
		c.PartitionMaxBytes = 1 << 20
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.SocketTimeout <= 0 {
		c.SocketTimeout = 30 * time.Second
	}
	if c.SocketReceiveBufferBytes == 0 {
		c.SocketReceiveBufferBytes = 64 << 10
	}
}

// Manager is the running fetcher manager; it implements
// partition.FetcherControl. Safe for concurrent use.
type Manager struct {
	sys   *actor.ActorSystem
	pid   *actor.PID
	live  *liveFetchers
	close sync.Once
}

// liveFetchers is every fetcher actor spawned and not yet known to have
// stopped, for Close: the fetchers are not the manager actor's protoactor
// children (see Start), so stopping the manager does not stop them.
type liveFetchers struct {
	mu     sync.Mutex
	closed bool
	pids   map[*actor.PID]struct{}
}

var _ partition.FetcherControl = (*Manager)(nil)

// Start spawns the fetcher manager actor.
//
// A panic in the manager actor restarts that actor only. protoactor
// restarts an actor by stopping all its children first (no directive
// restarts a parent and keeps them), so the fetchers are not its children:
// each is a root actor under fetcherSupervision as its guardian, named
// "fetcher-manager/…" and watched by the manager. And the restarted
// manager is the same managerActor value (the producer returns it), so it
// keeps the partition → fetcher assignment: the fetchers fetch on, and
// later Follow/Unfollow calls find them.
func Start(cfg Config) (*Manager, error) {
	if cfg.System == nil || cfg.Replicas == nil || cfg.Endpoints == nil {
		return nil, errors.New("fetcher: Config needs System, Replicas and Endpoints")
	}
	cfg.defaults()
	live := &liveFetchers{pids: map[*actor.PID]struct{}{}}
	a := &managerActor{cfg: cfg, live: live, assigned: map[partition.TopicPartition]fetcherKey{}, epochs: map[partition.TopicPartition]int32{},
		fetchers: map[fetcherKey]*actor.PID{}, load: map[fetcherKey]int{}}
	props := actors.Props(cfg.Logger, func() actor.Actor { return a }, actor.WithGuardian(managerSupervision))
	pid, err := cfg.System.Root.SpawnNamed(props, ManagerName)
	if err != nil {
		return nil, fmt.Errorf("fetcher: spawn %s: %w", ManagerName, err)
	}
	return &Manager{sys: cfg.System, pid: pid, live: live}, nil
}

// Follow implements partition.FetcherControl (non-blocking).
func (m *Manager) Follow(tp partition.TopicPartition, leader, leaderEpoch int32) {
	m.sys.Root.Send(m.pid, &follow{tp: tp, leader: leader, epoch: leaderEpoch})
}

// Unfollow implements partition.FetcherControl. It returns once the
// running fetchers have dropped the partitions (bounded by 10s); an
// in-flight fetch result for them is discarded. An append or truncation
// already handed to a partition actor still runs there; the partition
// actors fence those under an old leader epoch or role anyway. Fetchers
// never wait inside their actor, so the 10s bound is for a stuck actor
// system, not for a slow leader.
func (m *Manager) Unfollow(tps ...partition.TopicPartition) {
	if len(tps) == 0 {
		return
	}
	done := make(chan struct{})
	m.sys.Root.Send(m.pid, &unfollow{tps: tps, done: done})
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// Close stops every fetcher (cancelling in-flight requests, closing their
// connections) and the manager, and waits for them. Later calls wait for
// the first one and do nothing more (no stop of an actor already gone,
// which would be a dead letter).
func (m *Manager) Close() { m.close.Do(m.stop) }

func (m *Manager) stop() {
	m.live.mu.Lock()
	m.live.closed = true // no fetcher is spawned from now on
	futures := make([]*actor.Future, 0, len(m.live.pids))
	for pid := range m.live.pids {
		// One already gone from the registry has stopped (its Terminated
		// is on the way to the manager): a Stop would be a dead letter.
		if _, ok := m.sys.ProcessRegistry.GetLocal(pid.Id); ok {
			futures = append(futures, m.sys.Root.StopFuture(pid))
		}
	}
	m.live.mu.Unlock()
	for _, f := range futures {
		_ = f.Wait()
	}
	_ = m.sys.Root.StopFuture(m.pid).Wait()
}

// Resize changes the number of fetchers per leader (num.replica.fetchers
// at run time, a dynamic broker config): partitions are re-hashed to the
// fetchers of the new count and keep replicating. n < 1 is ignored (the
// dynamic config layer refuses it first). Non-blocking.
func (m *Manager) Resize(n int) {
	m.sys.Root.Send(m.pid, &resizeFetchers{n: n})
}

// Assigned reports which fetcher ("fetcher-<leader>-<index>") replicates
// tp, "" when none (for tests and diagnostics).
func (m *Manager) Assigned(tp partition.TopicPartition) string {
	reply := make(chan string, 1)
	m.sys.Root.Send(m.pid, &whoFetches{tp: tp, reply: reply})
	select {
	case s := <-reply:
		return s
	case <-time.After(10 * time.Second):
		return ""
	}
}

type fetcherKey struct {
	leader int32
	index  int
}

func (k fetcherKey) name() string { return fmt.Sprintf("fetcher-%d-%d", k.leader, k.index) }

type follow struct {
	tp            partition.TopicPartition
	leader, epoch int32
}

type unfollow struct {
	tps  []partition.TopicPartition
	done chan struct{}
}

type resizeFetchers struct{ n int }

type whoFetches struct {
	tp    partition.TopicPartition
	reply chan string
}

// fetcherSupervision is the manager's strategy for its fetchers: restart
// with backoff (100 ms doubling to 5 s, jittered) and never give up — a
// stopped fetcher would leave its partitions' followers silently behind,
// falling out of the ISR for good.
var fetcherSupervision = &actors.BackoffStrategy{Initial: 100 * time.Millisecond, Max: 5 * time.Second, MaxRetries: actors.NeverGiveUp, Window: time.Minute}

// managerSupervision restarts the fetcher-manager actor after a panic,
// always: its fetchers and assignment outlive the restart (see Start), and
// a stopped manager would leave every follower that a later LeaderAndIsr
// names without a fetcher.
var managerSupervision = actors.ManagerStrategy

// managerActor owns the partition → fetcher assignment. Fetchers restart
// under fetcherSupervision on a panic; their partition set lives in
// a fetchState that outlives the actor instance, so a restarted fetcher
// resumes every partition (truncating first, as after a leader change).
// The manager's own restarts reuse this value, maps and all (Start).
type managerActor struct {
	cfg      Config
	live     *liveFetchers
	assigned map[partition.TopicPartition]fetcherKey
	epochs   map[partition.TopicPartition]int32
	fetchers map[fetcherKey]*actor.PID
	load     map[fetcherKey]int
}

// fetcherIndex is Kafka's AbstractFetcherManager.getFetcherId.
func fetcherIndex(tp partition.TopicPartition, n int) int {
	h := int32(0)
	for _, c := range []byte(tp.Topic) { // Java String.hashCode over the UTF-16 units; ASCII names match
		h = 31*h + int32(c)
	}
	v := 31*h + tp.Partition
	if v < 0 {
		v = -v
		if v < 0 {
			v = 0
		}
	}
	return int(v) % n
}

func (a *managerActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *follow:
		a.follow(ctx, m.tp, m.leader, m.epoch)
	case *unfollow:
		for _, tp := range m.tps {
			a.remove(ctx, tp, nil)
		}
		// The fetchers handle their removals in order before this marker.
		a.barrier(ctx, m.done)
	case *resizeFetchers:
		a.resize(ctx, m.n)
	case *whoFetches:
		if k, ok := a.assigned[m.tp]; ok {
			m.reply <- k.name()
		} else {
			m.reply <- ""
		}
	case *actor.Terminated:
		// A watched fetcher stopped. Identity, not pid.Equal: a fetcher
		// stopped by remove frees its name in the registry before its
		// Terminated reaches us, so a follow handled in between may have
		// spawned the key's next fetcher under the same name (an equal
		// PID). Dropping that one here orphaned its partitions: nobody
		// fetched them again and the follower left the ISR for good. The
		// PID of a local actor is the pointer the spawn returned, and
		// Terminated carries it (a watch of one already gone: the PID
		// watched).
		a.live.mu.Lock()
		delete(a.live.pids, m.Who)
		a.live.mu.Unlock()
		for k, pid := range a.fetchers {
			if pid == m.Who {
				delete(a.fetchers, k)
				delete(a.load, k)
			}
		}
	}
}

// follow assigns tp (led by leader in epoch) to the fetcher of its
// leader and index, spawning that fetcher when it does not run.
func (a *managerActor) follow(ctx actor.Context, tp partition.TopicPartition, leader, epoch int32) {
	key := fetcherKey{leader: leader, index: fetcherIndex(tp, a.cfg.NumFetchers)}
	if old, ok := a.assigned[tp]; ok {
		if old == key && a.epochs[tp] == epoch {
			return // already following this leader in this epoch
		}
		a.remove(ctx, tp, nil)
	}
	pid := a.fetchers[key]
	if pid == nil {
		var err error
		if pid, err = a.spawn(ctx, key); err != nil {
			a.cfg.Logger.Error("spawn fetcher", zap.String("fetcher", key.name()), zap.Error(err))
			return
		}
		a.fetchers[key] = pid
	}
	a.assigned[tp], a.epochs[tp] = key, epoch
	a.load[key]++
	ctx.Send(pid, &addPartition{tp: tp, epoch: epoch})
}

// resize is num.replica.fetchers changed at run time (Kafka's
// AbstractFetcherManager.resizeThreadPool): every partition whose
// fetcher index changes with the new count moves to the fetcher of its
// new index (removed from the old one, which stops when left empty, and
// added to the new one, which truncates it first as after any
// reassignment); the others stay where they are, fetching on. Kafka
// re-adds every partition; the outcome (each partition on the fetcher its
// hash picks among n) is the same.
func (a *managerActor) resize(ctx actor.Context, n int) {
	if n <= 0 || n == a.cfg.NumFetchers {
		return
	}
	a.cfg.Logger.Info("resizing the replica fetchers", zap.Int("from", a.cfg.NumFetchers), zap.Int("to", n))
	a.cfg.NumFetchers = n
	var moves []partition.TopicPartition
	for tp, key := range a.assigned {
		if fetcherIndex(tp, n) != key.index {
			moves = append(moves, tp)
		}
	}
	sort.Slice(moves, func(i, j int) bool {
		if moves[i].Topic != moves[j].Topic {
			return moves[i].Topic < moves[j].Topic
		}
		return moves[i].Partition < moves[j].Partition
	})
	for _, tp := range moves {
		leader, epoch := a.assigned[tp].leader, a.epochs[tp]
		a.remove(ctx, tp, nil)
		a.follow(ctx, tp, leader, epoch)
	}
}

// spawn starts the fetcher for key as a root actor under
// fetcherSupervision (not a child: see Start) and watches it.
func (a *managerActor) spawn(ctx actor.Context, key fetcherKey) (*actor.PID, error) {
	parts := map[partition.TopicPartition]*partState{}
	props := actors.Props(a.cfg.Logger, func() actor.Actor { return newFetcher(a.cfg, key, parts) }, actor.WithGuardian(fetcherSupervision))
	root := ctx.ActorSystem().Root
	name := ManagerName + "/" + key.name()
	a.live.mu.Lock()
	if a.live.closed {
		a.live.mu.Unlock()
		return nil, errors.New("fetcher manager closed")
	}
	pid, err := root.SpawnNamed(props, name)
	if errors.Is(err, actor.ErrNameExists) {
		// The key's previous fetcher is still stopping (Stop is
		// asynchronous): spawn under a unique suffixed name.
		pid, err = root.SpawnPrefix(props, name+"-"), nil
	}
	if err == nil {
		a.live.pids[pid] = struct{}{}
	}
	a.live.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// A watch of an actor already stopped answers Terminated at once.
	ctx.Watch(pid)
	return pid, nil
}

// remove takes tp off its fetcher; a fetcher left without partitions is
// stopped (Kafka shutdownIdleFetcherThreads).
func (a *managerActor) remove(ctx actor.Context, tp partition.TopicPartition, _ chan struct{}) {
	key, ok := a.assigned[tp]
	if !ok {
		return
	}
	delete(a.assigned, tp)
	delete(a.epochs, tp)
	pid := a.fetchers[key]
	if pid == nil {
		return
	}
	ctx.Send(pid, &removePartition{tp: tp})
	if a.load[key]--; a.load[key] <= 0 {
		delete(a.load, key)
		delete(a.fetchers, key)
		ctx.Stop(pid)
	}
}

// barrier closes done once every running fetcher has processed the
// messages sent to it so far.
func (a *managerActor) barrier(ctx actor.Context, done chan struct{}) {
	if len(a.fetchers) == 0 {
		close(done)
		return
	}
	acks := make(chan struct{}, len(a.fetchers))
	n := len(a.fetchers)
	for _, pid := range a.fetchers {
		ctx.Send(pid, &ping{ack: acks})
	}
	go func() {
		t := time.NewTimer(10 * time.Second)
		defer t.Stop()
		for i := 0; i < n; i++ {
			select {
			case <-acks:
			case <-t.C:
				close(done)
				return
			}
		}
		close(done)
	}()
}
