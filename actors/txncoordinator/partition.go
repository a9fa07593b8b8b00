package txncoordinator

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/coordinator"
	"gregor/storage/record"
)

// partActor owns the Core of one loaded __transaction_state partition. It
// never waits on I/O: the load, each append (the records asked for while
// one is in flight go out together as the next batch), each producer id
// allocation and each WriteTxnMarkers request run on goroutines it counts
// in the coordinator's wait group, and their outcomes come back as
// messages stamped with the incarnation that started them (a restart
// drops the outcomes of the one before: it reloads from the log).
type partActor struct {
	c         *Coordinator
	partition int32
	epoch     int32
	inc       uint64 // incarnation: set in Started

	core     *Core // nil while loading
	queued   []*Write
	writing  []*Write               // the batch in flight
	timers   map[uint64]*time.Timer // armed by later, by key
	timerSeq uint64
	abort    *time.Timer
	expire   *time.Timer
	// stopped is set when this incarnation ends: its goroutines and
	// timers then drop their outcome instead of sending it to an actor
	// that is gone (a dead letter).
	stopped *atomic.Bool
	// ictx ends with this incarnation: its appends still waiting to start
	// are abandoned (partition.ProduceWait).
	ictx    context.Context
	icancel context.CancelFunc
	// applying is the request being handled: on Restarting, the one that
	// panicked (answered COORDINATOR_NOT_AVAILABLE at once; its replies
	// are guarded, so one already given stays the only one).
	applying *txnRequest
	// markerStart and noLeader are the metrics' bookkeeping of the
	// markers being sent: when each completion began sending, and which
	// markers wait for their partition to have a leader.
	markerStart map[*completion]markerStart
	noLeader    map[markerKey]struct{}
	loadBegan   time.Time
}

// incarnations numbers every start of every partition actor.
var incarnations atomic.Uint64

type (
	loadedMsg struct {
		inc    uint64
		loader *Loader
		err    error
	}
	appendedMsg struct {
		inc     uint64
		code    int16
		records int // set by the actor (traces)
	}
	idMsg struct {
		inc uint64
		req *IDRequest
		id  int64
		err error
	}
	markersMsg struct {
		inc     uint64
		broker  int32
		entries []markerPart
		resp    *kmsg.WriteTxnMarkersResponse
		err     error
	}
	laterMsg struct {
		inc uint64
		key uint64
		fn  func(ctx actor.Context)
	}
	abortTick  struct{ inc uint64 }
	expireTick struct{ inc uint64 }
)

func (a *partActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.inc = incarnations.Add(1)
		a.stopped = &atomic.Bool{}
		a.ictx, a.icancel = context.WithCancel(a.c.ctx)
		a.timers = map[uint64]*time.Timer{}
		a.markerStart, a.noLeader = map[*completion]markerStart{}, map[markerKey]struct{}{}
		a.startLoad(ctx)
		a.armAbort(ctx)
		a.armExpire(ctx)
	case *actor.Restarting:
		if r := a.applying; r != nil {
			a.applying = nil
			a.c.log.Warn("transaction request panicked; answering COORDINATOR_NOT_AVAILABLE", zap.Int32("partition", a.partition), zap.String("api", r.api))
			r.fail(kerr.CoordinatorNotAvailable.Code)
		}
		a.shutdown(kerr.CoordinatorNotAvailable.Code)
	case *actor.Stopping:
		a.shutdown(codeNotCoordinator)
	case *txnRequest:
		if a.core == nil {
			m.fail(kerr.CoordinatorLoadInProgress.Code)
			return
		}
		a.applying = m
		m.apply(a.core, a.now())
		a.applying = nil
		m.tr = txnTrace{handled: true, epoch: a.epoch, writes: len(a.core.writes), markers: len(a.core.markers)}
		a.after(ctx)
	case *partList:
		if a.core == nil {
			m.reply(nil, true)
			return
		}
		m.reply(a.core.List(m.filter, a.now()), false)
	case *partStats:
		m.reply(a.stats())
	case *loadedMsg:
		if m.inc != a.inc {
			return
		}
		if m.err != nil {
			a.c.log.Warn("loading "+TopicName+" partition failed; retrying", zap.Int32("partition", a.partition), zap.Error(m.err))
			a.later(ctx, a.c.opts.RetryBackoff, func(ctx actor.Context) { a.startLoad(ctx) })
			return
		}
		a.core = NewCore(a.partition, a.epoch, m.loader.Txns, a.now())
		actors.EmitValue(a.c.sys, actors.EventTxnPartitionLoad, strconv.Itoa(int(a.partition)), time.Since(a.loadBegan).Seconds())
		a.c.log.Info("loaded "+TopicName+" partition", zap.Int32("partition", a.partition), zap.Int32("coordinator.epoch", a.epoch), zap.Int("transactional.ids", a.core.Len()))
		a.after(ctx)
	case *appendedMsg:
		if m.inc != a.inc {
			return
		}
		batch := a.writing
		a.writing = nil
		m.records = len(batch)
		if m.code != 0 {
			a.c.log.Warn("appending to "+TopicName+" failed", zap.Int32("partition", a.partition), zap.Int("records", len(batch)), zap.Error(kerr.ErrorForCode(m.code)))
		}
		for _, w := range batch {
			w.Done(m.code)
		}
		a.after(ctx)
	case *idMsg:
		if m.inc != a.inc {
			return
		}
		m.req.Done(a.now(), m.id, m.err)
		a.after(ctx)
	case *markersMsg:
		if m.inc != a.inc {
			return
		}
		a.markersAnswered(m)
		a.after(ctx)
	case *laterMsg:
		if m.inc != a.inc {
			return
		}
		delete(a.timers, m.key)
		m.fn(ctx)
		a.after(ctx)
	case *abortTick:
		if m.inc != a.inc {
			return
		}
		if a.core != nil {
			if n := a.core.AbortTimedOut(a.now(), func(id string, code int16) {
				if code != 0 {
					a.c.log.Info("abort of timed-out transaction not done", zap.String("transactional.id", id), zap.Error(kerr.ErrorForCode(code)))
				} else {
					a.c.log.Info("aborted timed-out transaction", zap.String("transactional.id", id))
					actors.Emit(a.c.sys, actors.EventTxnTimedOutAbort, id, "")
				}
			}); n > 0 {
				a.c.log.Info("aborting timed-out transactions", zap.Int32("partition", a.partition), zap.Int("count", n))
			}
			a.after(ctx)
		}
		if a.core != nil {
			a.forgetEndedMarkers()
		}
		a.armAbort(ctx)
	case *expireTick:
		if m.inc != a.inc {
			return
		}
		if a.core != nil {
			if n := a.core.ExpireTransactionalIDs(a.now(), a.c.opts.IDExpiration.Milliseconds()); n > 0 {
				a.c.log.Info("expiring idle transactional ids", zap.Int32("partition", a.partition), zap.Int("count", n))
			}
			a.after(ctx)
		}
		a.armExpire(ctx)
	}
}

func (a *partActor) armExpire(ctx actor.Context) {
	send, inc := a.sender(ctx), a.inc
	a.expire = time.AfterFunc(a.c.opts.ExpireInterval, func() { send(&expireTick{inc: inc}) })
}

// sender is how this incarnation's goroutines and timers report back.
func (a *partActor) sender(ctx actor.Context) func(msg any) {
	self, root, stopped := ctx.Self(), a.c.sys.Root, a.stopped
	return func(msg any) {
		if !stopped.Load() {
			root.Send(self, msg)
		}
	}
}

func (a *partActor) now() int64 { return a.c.opts.Now().UnixMilli() }

// shutdown ends this incarnation: timers stop, and the requests waiting on
// appends in flight or queued are answered with code (the coordinator
// gives up on them; a restart reloads what reached the log).
func (a *partActor) shutdown(code int16) {
	for _, t := range a.timers {
		t.Stop()
	}
	clear(a.timers)
	if a.abort != nil {
		a.abort.Stop()
	}
	if a.expire != nil {
		a.expire.Stop()
	}
	a.inc = 0 // outcomes still coming belong to no incarnation
	if a.stopped != nil {
		a.stopped.Store(true)
		a.icancel()
	}
	pending := append(a.writing, a.queued...)
	a.writing, a.queued = nil, nil
	if a.core == nil {
		return
	}
	// The answers map append codes: REQUEST_TIMED_OUT becomes
	// COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER NOT_COORDINATOR.
	appendCode := kerr.RequestTimedOut.Code
	if code == codeNotCoordinator {
		appendCode = kerr.NotLeaderForPartition.Code
	}
	for _, w := range pending {
		func() {
			defer func() { _ = recover() }() // the core is being discarded
			w.Done(appendCode)
		}()
	}
	a.core = nil
}

func (a *partActor) startLoad(ctx actor.Context) {
	a.loadBegan = time.Now()
	send, c, inc, p := a.sender(ctx), a.c, a.inc, a.partition
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// An append of an earlier incarnation (before a restart, or before
		// the partition was unloaded and loaded again) may still land:
		// read the log once none is in flight, so the state loaded is the
		// log's (Kafka holds its state lock across an append for this).
		if err := c.appends(p).wait(c.ctx); err != nil {
			return
		}
		l := NewLoader()
		err := c.opts.Topic.Load(c.ctx, p, func(r *coordinator.LogRecord) error {
			if r.Control { // the coordinator writes none; not a transaction record
				return nil
			}
			if aerr := l.Apply(r.Key, r.Value); aerr != nil {
				c.log.Warn("skipping bad "+TopicName+" record", zap.Int32("partition", p), zap.Int64("offset", r.Offset), zap.Error(aerr))
			}
			return nil
		})
		if c.ctx.Err() != nil {
			return
		}
		send(&loadedMsg{inc: inc, loader: l, err: err})
	}()
}

func (a *partActor) armAbort(ctx actor.Context) {
	send, inc := a.sender(ctx), a.inc
	a.abort = time.AfterFunc(a.c.opts.AbortInterval, func() { send(&abortTick{inc: inc}) })
}

// later runs fn on the actor after d.
func (a *partActor) later(ctx actor.Context, d time.Duration, fn func(ctx actor.Context)) {
	send, inc := a.sender(ctx), a.inc
	a.timerSeq++
	key := a.timerSeq
	a.timers[key] = time.AfterFunc(d, func() { send(&laterMsg{inc: inc, key: key, fn: fn}) })
}

// after performs the effects the core asked for while handling a message.
func (a *partActor) after(ctx actor.Context) {
	if a.core == nil {
		return
	}
	for {
		w, ms, ids, ds := a.core.TakeWrites(), a.core.TakeMarkers(), a.core.TakeIDRequests(), a.core.TakeDelayed()
		a.markersDone(a.core.TakeMarkersDone())
		if len(w)+len(ms)+len(ids)+len(ds) == 0 {
			break
		}
		a.markersStarted(ms)
		a.queued = append(a.queued, w...)
		for _, r := range ids {
			a.allocate(ctx, r)
		}
		for _, f := range ds {
			f := f
			a.later(ctx, a.c.opts.RetryBackoff, func(actor.Context) { f(a.now()) })
		}
		var now []*MarkerSend
		for _, s := range ms {
			if s.Retry {
				s := s
				s.Retry = false
				a.later(ctx, a.c.opts.RetryBackoff, func(ctx actor.Context) { a.dispatch(ctx, s) })
				continue
			}
			now = append(now, s)
		}
		a.dispatch(ctx, now...) // may report gone partitions to the core at once
	}
	a.startAppend(ctx)
}

// startAppend writes the queued records as one batch when none is in flight.
func (a *partActor) startAppend(ctx actor.Context) {
	if a.writing != nil || len(a.queued) == 0 {
		return
	}
	batch := a.queued
	a.queued = nil
	a.writing = batch
	now := a.now()
	recs := make([]record.BatchRecord, len(batch))
	for i, w := range batch {
		recs[i] = record.BatchRecord{Key: Key(w.TransactionalID)}
		if !w.Tombstone {
			recs[i].Value = Value(w.Transit)
		}
	}
	send, c, inc, p, ictx := a.sender(ctx), a.c, a.inc, a.partition, a.ictx
	inflight := c.appends(p)
	inflight.add()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer inflight.done()
		code := int16(0)
		b, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: now}, recs)
		if err != nil {
			code = kerr.UnknownServerError.Code
		} else {
			actx, cancel := context.WithTimeout(ictx, c.opts.AppendTimeout)
			_, err = c.opts.Topic.Append(actx, p, b)
			cancel()
			code = codeOf(err)
			if err != nil && ictx.Err() != nil {
				return // this incarnation ended: the actor is gone or going
			}
		}
		send(&appendedMsg{inc: inc, code: code})
	}()
}

func (a *partActor) allocate(ctx actor.Context, r *IDRequest) {
	send, c, inc := a.sender(ctx), a.c, a.inc
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		id, err := c.opts.IDs.NextProducerID()
		if err != nil {
			c.log.Error("allocate producer id", zap.Error(err))
		}
		send(&idMsg{inc: inc, req: r, id: id, err: err})
	}()
}

// markerPart is one transaction's markers in a WriteTxnMarkers request.
type markerPart struct {
	send  *MarkerSend
	parts []TopicPartition
}

// dispatch sends the markers of sends to the current leaders of their
// partitions: one WriteTxnMarkers per leader carrying a marker per
// transaction (as Kafka's TransactionMarkerChannelManager drains its
// per-broker queue into one request), each from its own goroutine.
// Partitions that no longer exist are dropped from their transaction,
// those without a leader now retried after the backoff.
func (a *partActor) dispatch(ctx actor.Context, sends ...*MarkerSend) {
	byLeader := map[int32][]markerPart{}
	var brokers []int32
	for _, s := range sends {
		if _, ok := s.current(); !ok {
			continue // a retry of markers since stopped or completed
		}
		parts := map[int32][]TopicPartition{}
		var gone, noLeader []TopicPartition
		for _, tp := range s.Partitions {
			leader, exists := a.c.opts.Markers.Leader(tp)
			k := markerKey{id: s.TransactionalID, pc: s.pc, tp: tp}
			switch {
			case !exists:
				delete(a.noLeader, k)
				gone = append(gone, tp)
			case leader < 0:
				a.noLeader[k] = struct{}{}
				noLeader = append(noLeader, tp)
			default:
				delete(a.noLeader, k)
				parts[leader] = append(parts[leader], tp)
			}
		}
		if len(gone) > 0 {
			a.c.log.Info("skipping transaction markers of partitions that no longer exist", zap.String("transactional.id", s.TransactionalID), zap.Any("partitions", gone))
			s.Gone(gone)
		}
		if len(noLeader) > 0 {
			s.Failed(noLeader)
		}
		for broker, ps := range parts {
			if _, seen := byLeader[broker]; !seen {
				brokers = append(brokers, broker)
			}
			byLeader[broker] = append(byLeader[broker], markerPart{send: s, parts: ps})
		}
	}
	send, c, inc := a.sender(ctx), a.c, a.inc
	for _, broker := range brokers {
		entries := byLeader[broker]
		req := markerRequest(entries)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			sctx, cancel := context.WithTimeout(c.ctx, c.opts.AppendTimeout)
			resp, err := c.opts.Markers.Send(sctx, broker, req)
			cancel()
			if c.ctx.Err() != nil {
				return
			}
			send(&markersMsg{inc: inc, broker: broker, entries: entries, resp: resp, err: err})
		}()
	}
}

// markerRequest is the WriteTxnMarkers request of entries, a marker each.
func markerRequest(entries []markerPart) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, e := range entries {
		s := e.send
		mk := kmsg.NewWriteTxnMarkersRequestMarker()
		mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = s.ProducerID, s.ProducerEpoch, s.Commit, s.CoordinatorEpoch
		for _, tp := range e.parts {
			if n := len(mk.Topics); n > 0 && mk.Topics[n-1].Topic == tp.Topic {
				mk.Topics[n-1].Partitions = append(mk.Topics[n-1].Partitions, tp.Partition)
				continue
			}
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic, t.Partitions = tp.Topic, []int32{tp.Partition}
			mk.Topics = append(mk.Topics, t)
		}
		req.Markers = append(req.Markers, mk)
	}
	return req
}

// markersAnswered feeds a WriteTxnMarkers outcome to the core, each
// transaction's from the response's marker of its producer id: no
// response retries every partition; a partition missing from the
// response is retried too.
func (a *partActor) markersAnswered(m *markersMsg) {
	for _, e := range m.entries {
		if m.err != nil || m.resp == nil {
			a.c.log.Debug("sending transaction markers failed; retrying", zap.String("transactional.id", e.send.TransactionalID), zap.Error(m.err))
			e.send.Failed(e.parts)
			continue
		}
		codes := make(map[TopicPartition]int16, len(e.parts))
		for _, tp := range e.parts {
			codes[tp] = kerr.UnknownServerError.Code
		}
		for _, mk := range m.resp.Markers {
			if mk.ProducerID != e.send.ProducerID {
				continue
			}
			for _, t := range mk.Topics {
				for _, p := range t.Partitions {
					tp := TopicPartition{Topic: t.Topic, Partition: p.Partition}
					if _, ok := codes[tp]; ok {
						codes[tp] = p.ErrorCode
					}
				}
			}
		}
		for tp, code := range codes {
			if code != 0 {
				a.c.log.Info("transaction marker not written", zap.String("transactional.id", e.send.TransactionalID), zap.String("topic", tp.Topic), zap.Int32("partition", tp.Partition), zap.Error(kerr.ErrorForCode(code)))
			}
		}
		e.send.Done(codes)
	}
}
