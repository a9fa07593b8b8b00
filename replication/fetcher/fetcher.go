package fetcher

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/partition"
)

type addPartition struct {
	tp    partition.TopicPartition
	epoch int32
}

type removePartition struct{ tp partition.TopicPartition }

type ping struct{ ack chan struct{} }

type retry struct{}

// opCheck fires when the oldest pending partition operation may have
// outlived partitionOpTimeout.
type opCheck struct{}

// requestGen numbers requests and partition operations across fetcher
// incarnations, so a result sent for a previous incarnation (or a
// partition since removed and re-added) is never taken for a current one.
var requestGen atomic.Uint64

// partitionOpTimeout bounds how long a fetcher waits for a partition
// actor's answer to an append or truncation: local work, normally
// microseconds. The partition actor answers every request it handles, but
// one that stops with the request still queued never does; after this the
// fetcher gives up on the answer and retries the partition after a backoff.
const partitionOpTimeout = 15 * time.Second

// partState is one followed partition.
type partState struct {
	epoch      int32 // the leader epoch we follow under
	truncating bool  // OffsetForLeaderEpoch still to do
	resetting  bool  // OFFSET_OUT_OF_RANGE: ListOffsets still to do
	offset     int64 // next fetch offset (the follower's log end offset)
	// retryAt delays this partition after a partition-level error
	// (replica.fetch.backoff.ms) without holding up the others.
	retryAt time.Time
	// op is the id of the append or truncation the partition actor is
	// doing for us (0: none); opAt is when it was asked.
	op   uint64
	opAt time.Time
	// leaderHW is the leader's high watermark in its last Fetch answer
	// (hwKnown once there was one): the replica is in sync for the
	// follower throttle when offset has reached it (Kafka's
	// PartitionFetchState.isReplicaInSync, lag <= 0).
	leaderHW int64
	hwKnown  bool
}

// caughtUp reports whether the replica has reached the leader's last
// known high watermark.
func (ps *partState) caughtUp() bool { return ps.hwKnown && ps.offset >= ps.leaderHW }

func (ps *partState) ready(now time.Time) bool { return !now.Before(ps.retryAt) && ps.op == 0 }

// fetcherActor replicates the partitions it was given from one leader.
// Nothing in Receive waits: one request to the leader is in flight at a
// time, on a goroutine the actor owns (cancelled and awaited in Stopping
// and Restarting), and the partition actors append and truncate on their
// own goroutines; both results come back as messages (*result, *opDone).
// So adding and removing partitions never waits for a long poll, a silent
// leader or a busy partition.
type fetcherActor struct {
	cfg   Config
	key   fetcherKey
	log   *zap.Logger
	parts map[partition.TopicPartition]*partState

	client   *kgo.Client
	fc       *fetchConn // Fetch requests (the others go through client)
	addr     string
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	inflight bool
	gen      uint64
	pending  int         // partition operations awaiting their answer
	timer    *time.Timer // retry after a backoff
	opTimer  *time.Timer // opCheck
	// self and root send results to this incarnation (set in Started).
	self *actor.PID
	root *actor.RootContext
}

// newFetcher builds a fetcher instance over parts, which the manager keeps
// across the actor's restarts.
func newFetcher(cfg Config, key fetcherKey, parts map[partition.TopicPartition]*partState) *fetcherActor {
	return &fetcherActor{cfg: cfg, key: key, log: cfg.Logger.With(zap.String("fetcher", key.name())), parts: parts}
}

func (f *fetcherActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		f.ctx, f.cancel = context.WithCancel(context.Background())
		f.self, f.root = ctx.Self(), ctx.ActorSystem().Root
		f.pending = 0
		for _, ps := range f.parts { // a restart: re-check every log first
			ps.truncating, ps.resetting, ps.op = true, false, 0
		}
		f.kick()
	case *addPartition:
		if old, ok := f.parts[m.tp]; ok {
			f.abandonOp(old) // its answer no longer matches
		}
		f.parts[m.tp] = &partState{epoch: m.epoch, truncating: true, offset: -1}
		f.kick()
	case *removePartition:
		if ps, ok := f.parts[m.tp]; ok {
			f.abandonOp(ps)
			delete(f.parts, m.tp)
		}
		f.kick() // it may have been the last pending operation
	case *ping:
		m.ack <- struct{}{}
	case *result:
		if m.gen != f.gen {
			return
		}
		f.inflight = false
		if !f.handle(m) {
			f.backoff()
			return
		}
		if m.fetch != nil && !f.opsPending() && f.fc != nil {
			// The next Fetch goes out now, while this one's trace event
			// (after Receive) may still read its batches.
			f.fc.detach()
		}
		f.kick()
	case *opDone:
		f.opDone(m)
		f.kick()
	case *opCheck:
		f.opTimer = nil
		f.expireOps(time.Now())
		f.kick()
	case *retry:
		f.timer = nil
		f.kick()
	case *actor.Restarting:
		f.shutdown()
	case *actor.Stopping:
		f.shutdown()
	}
}

// shutdown cancels the in-flight request, waits for its goroutine (the
// cancellation ends it promptly) and closes the connection. Answers of
// partition operations still to come go to this incarnation's PID: a
// restarted fetcher's opDone ids no longer match, a stopped one's are dead
// letters.
func (f *fetcherActor) shutdown() {
	for _, t := range []**time.Timer{&f.timer, &f.opTimer} {
		if *t != nil {
			(*t).Stop()
			*t = nil
		}
	}
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	f.closeConns()
	f.inflight = false
}

func (f *fetcherActor) backoff() {
	if f.timer != nil {
		return
	}
	self, root := f.self, f.root
	f.timer = time.AfterFunc(f.cfg.Backoff, func() { root.Send(self, &retry{}) })
}

// delay holds tp back for replica.fetch.backoff.ms.
func (f *fetcherActor) delay(ps *partState) { ps.retryAt = time.Now().Add(f.cfg.Backoff) }

// wakeAt arms the retry timer for the earliest delayed partition, or
// within (when > 0) if that is sooner.
func (f *fetcherActor) wakeAt(now time.Time, within time.Duration) {
	if f.timer != nil {
		return
	}
	var next time.Time
	if within > 0 {
		next = now.Add(within)
	}
	for _, ps := range f.parts {
		if ps.retryAt.After(now) && (next.IsZero() || ps.retryAt.Before(next)) {
			next = ps.retryAt
		}
	}
	if next.IsZero() {
		return
	}
	self, root := f.self, f.root
	f.timer = time.AfterFunc(next.Sub(now), func() { root.Send(self, &retry{}) })
}

// closeConns closes both connections to the leader (the next request
// reconnects, maybe to a new endpoint). Only between requests.
func (f *fetcherActor) closeConns() {
	if f.client != nil {
		f.client.Close()
		f.client = nil
	}
	if f.fc != nil {
		f.fc.close()
		f.fc = nil
	}
}

// conn returns the client for the leader's current endpoint, and makes
// f.fc the Fetch connection to it. Neither dials here: the connections
// open on the request goroutine.
func (f *fetcherActor) conn() (*kgo.Client, error) {
	host, port, ok := f.cfg.Endpoints.BrokerEndpoint(f.key.leader)
	if !ok {
		return nil, fmt.Errorf("leader broker %d has no known endpoint", f.key.leader)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(port)))
	if f.client != nil && f.fc != nil && f.addr == addr {
		return f.client, nil
	}
	f.closeConns()
	id := fmt.Sprintf("broker-%d-fetcher-%d", f.cfg.BrokerID, f.key.index)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(id)}, f.cfg.Security.SetupOpts(f.cfg.SocketTimeout)...)...)
	if err != nil {
		return nil, err
	}
	f.client, f.fc, f.addr = cl, newFetchConn(addr, id, f.cfg.Security, f.cfg.SocketTimeout, f.cfg.SocketReceiveBufferBytes), addr
	return cl, nil
}

// kick sends the next request if none is in flight and no partition
// operation is pending (a fetch must carry every partition's log end
// offset after the last response was applied, as Kafka's fetcher thread
// appends a whole response before its next fetch): OffsetForLeaderEpoch
// for partitions still to truncate, else ListOffsets for partitions out of
// the leader's range, else Fetch for the others.
func (f *fetcherActor) kick() {
	if f.inflight || f.timer != nil || len(f.parts) == 0 || f.ctx == nil || f.opsPending() {
		return
	}
	now := time.Now()
	sent := map[partition.TopicPartition]int32{}
	var (
		do    func(context.Context, *kgo.Broker) *result
		fetch *kmsg.FetchRequest
	)
	if er := f.epochRequest(sent, now); er != nil {
		do = requestOnce(er)
	} else if f.opsPending() {
		return // epochRequest asked a partition to truncate to its high watermark
	} else if lo := f.offsetsRequests(sent, now); lo != nil {
		do = lo
	} else {
		var throttled int
		fetch, throttled = f.fetchRequest(sent, now)
		if throttled > 0 && len(sent) == 0 {
			// Every fetchable partition is throttled: ask again once the
			// follower quota frees (not in a loop, not sleeping here).
			f.wakeAt(now, f.throttleWait(now))
			return
		}
	}
	if len(sent) == 0 {
		f.wakeAt(now, 0) // every partition is backing off
		return
	}
	cl, err := f.conn()
	if err != nil {
		f.log.Warn("cannot reach leader", zap.Error(err))
		f.backoff()
		return
	}
	if fetch != nil {
		do = fetchOn(f.fc, fetch)
	}
	f.gen = requestGen.Add(1)
	gen, self, root, rctx, b := f.gen, f.self, f.root, f.ctx, cl.SeedBrokers()[0]
	f.inflight = true
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		r := do(rctx, b)
		r.gen, r.sent = gen, sent
		root.Send(self, r)
	}()
}
