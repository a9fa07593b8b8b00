package partition

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/storage"
	"gregor/storage/record"
)

// partitionActor is the shell around one partition replica's Core: it is
// the only writer of the partition's Log, performs the core's effects
// (publish a View, send replies, write an ISR change) and feeds their
// results back. All of it is rebuilt from disk in *actor.Started, so a
// restart after a panic loses nothing that was acknowledged.
type partitionActor struct {
	h        *Handle
	store    LogStore
	brokerID int32
	log      *zap.Logger
	// initialHW is the high watermark from replication-offset-checkpoint,
	// used by the first incarnation (-1 = none).
	initialHW int64

	lg       Log
	core     *Core
	inflight *Produce

	// isr persists ISR changes (nil: the ISR is what LeaderAndIsr says),
	// each on a goroutine counted in writes (the replica manager's, which
	// Close waits for); lag is replica.lag.time.max.ms; isrTimer re-arms
	// the shrink check while leading.
	isr      IsrWriter
	writes   *sync.WaitGroup
	lag      time.Duration
	isrTimer *time.Timer
	isrArmed *isrCheck // the check isrTimer sends; any other is stale
	// saved is the core's proposal last stored in the Handle (do keeps
	// the Handle's copy current for the next incarnation).
	saved *IsrProposal
	// activeBase is the active segment's base at the last producer
	// snapshot check (snapshotOnRoll); snapshotAt the log end offset of
	// the last snapshot this incarnation wrote or loaded (-1 none).
	activeBase int64
	snapshotAt int64
	// expiry is producer.id.expiration.ms and its check interval;
	// expiryTimer sends the next check (expiryArmed), as isrTimer does.
	expiry      expirySettings
	expiryTimer *time.Timer
	expiryArmed *expireCheck

	// move is the log dir move under way (logdir_move.go), nil none; its
	// goroutines are counted in moves (the replica manager's, which Close
	// waits for). While swapping, the messages that touch the log wait in
	// held and are handled, in order, once the new log is in place.
	// quota is the alter-log-dirs throttle (nil none).
	move     *moveRun
	swapping bool
	held     []any
	moves    *sync.WaitGroup
	quota    CopyThrottle
	slots    chan struct{} // the manager's copy slots (num.replica.alter.log.dirs.threads)
}

// isrWritten is the result of an IsrWriter.AlterIsr run off the actor.
type isrWritten struct{ r IsrResult }

// Receive implements actor.Actor: lifecycle messages here, the rest in
// handle (held while a log dir swap runs).
func (a *partitionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start()
		a.h.pid.Store(ctx.Self())
		a.armIsrCheck(ctx)
		a.armExpiry(ctx)
		a.resumeMove(ctx)
	case *actor.Restarting:
		a.stopIsrCheck()
		a.stopExpiry()
		a.stopMove()
		a.failWaiting(kerr.NotLeaderForPartition)
		a.h.setUnavailable(kerr.NotLeaderForPartition)
		a.lg = nil
	case *actor.Stopping:
		a.stopIsrCheck()
		a.stopExpiry()
		a.stopMove()
		a.failWaiting(kerr.NotLeaderForPartition)
		if sl, ok := a.lg.(SnapshotLog); ok && a.core != nil && a.h.View().Err != kerr.KafkaStorageError {
			// A clean stop: the next start loads the state instead of
			// scanning (Kafka snapshots at shutdown too).
			a.writeSnapshot(sl)
		}
		if a.h.View().Err != kerr.KafkaStorageError {
			a.h.setUnavailable(kerr.NotLeaderForPartition)
		}
		a.lg = nil
	case *actor.Stopped:
		if a.h.pid.CompareAndSwap(ctx.Self(), nil) {
			if g := a.h.gone.Load(); g != nil {
				close(*g)
			}
		}
		a.h.failFetches(ctx.Self())
	case *futureSwapped:
		a.swapped(ctx, m)
	default:
		if a.swapping && heldDuringSwap(m) {
			a.held = append(a.held, m)
			return
		}
		a.handle(ctx, m)
	}
}

// handle is Receive for every message but the lifecycle ones.
func (a *partitionActor) handle(ctx actor.Context, msg any) {
	switch m := msg.(type) {
	case *alterLogDir:
		a.alterDir(ctx, m)
	case *futureCaughtUp:
		a.caughtUp(m)
	case *futureFailed:
		a.moveFailed(m)
	case *Produce:
		if !m.take() {
			return // the handler gave up on it; no reply expected
		}
		a.inflight = m
		a.produce(ctx, m)
		a.inflight = nil
	case *applyState:
		m.done <- a.apply(ctx, m.state)
		a.armIsrCheck(ctx)
	case *followerFetch:
		err, eff := a.core.FollowerFetch(m.replica, m.fetchOffset, &m.tr)
		a.do(ctx, eff)
		m.finish(err)
	case *followerAppend:
		r := a.followerAppend(m)
		m.reply(r)
		if isStorageFailure(r.err) {
			panic(fmt.Errorf("partition %s: follower append: %w", a.h.tp, r.err))
		}
	case *truncate:
		r := a.truncate(m)
		m.tr = r
		m.reply(r)
		if isStorageFailure(r.err) {
			panic(fmt.Errorf("partition %s: truncate: %w", a.h.tp, r.err))
		}
	case *isrCheck:
		if m != a.isrArmed {
			return // stale: armed by a previous incarnation or a stopped timer
		}
		a.isrTimer, a.isrArmed = nil, nil
		a.do(ctx, a.core.IsrTick())
		a.armIsrCheck(ctx)
	case *isrWritten:
		a.isrWritten(ctx, m.r)
	case *setConfig:
		if a.lg != nil {
			a.lg.SetConfig(m.cfg)
		}
	case *logStartMoved:
		// Retention deleted segments (Kafka updates the log start offset
		// as it deletes them): ListOffsets earliest and Fetch's
		// log_start_offset read the published View, not the log.
		if a.core != nil && a.lg != nil && a.lg.LogStartOffset() != a.core.rep.LogStartOffset {
			a.core.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
			a.publish()
		}
	case *setMinIsr:
		if a.core != nil {
			a.core.SetMinInsync(m.n)
		}
	case *deleteRecords:
		m.done <- a.deleteRecords(ctx, m.offset)
	case *describeProducers:
		a.describe(m)
	case *startTxnVerification:
		if a.core == nil {
			m.done <- TxnVerificationStart{Err: kerr.NotLeaderForPartition}
			break
		}
		g, err := a.core.StartCoordinatorVerification(m.producerID, m.epoch)
		m.done <- TxnVerificationStart{Guard: g, Err: err}
	case *expireCheck:
		a.expireProducers(ctx, m)
	case *Crash:
		panic(fmt.Sprintf("partition %s: injected crash: %s", a.h.tp, m.Reason))
	}
}

// start opens the log (first incarnation: GetOrCreate; later ones: Reopen,
// which recovers from the recovery point), rebuilds producer state from
// the log and re-applies the last LeaderAndIsr state. A failure panics so
// the supervisor retries with backoff and eventually marks it offline.
func (a *partitionActor) start() {
	state, pending, n := a.h.nextStart()
	var (
		lg  Log
		err error
	)
	if n == 1 {
		lg, err = a.store.GetOrCreate(a.h.tp, state.Config)
	} else {
		lg, err = a.store.Reopen(a.h.tp)
	}
	if err != nil {
		panic(fmt.Errorf("partition %s: open log: %w", a.h.tp, err))
	}
	if n > 1 {
		lg.SetConfig(state.Config)
	}
	hw := a.initialHW
	if n > 1 {
		hw = a.h.View().HighWatermark
	}
	prod, err := rebuildProducers(lg, hw)
	if err != nil {
		panic(fmt.Errorf("partition %s: rebuild producer state: %w", a.h.tp, err))
	}
	a.lg = lg
	a.snapshotAt = -1
	if sl, ok := lg.(SnapshotLog); ok {
		a.activeBase = sl.ActiveSegmentBase()
	}
	a.core = NewCore(CoreConfig{TP: a.h.tp, BrokerID: a.brokerID, AlterIsr: a.isr != nil, Lag: a.lag, NextSeq: func() uint64 { return a.h.isrSeq.Add(1) }})
	a.core.Start(lg.LogStartOffset(), lg.LogEndOffset(), prod, state, hw)
	if a.core.Resume(pending) {
		a.log.Info("ISR change of the previous incarnation still pending", zap.Stringer("partition", a.h.tp),
			zap.String("change", pending.Why), zap.Int32s("proposed", pending.ISR), zap.Int32("zkVersion", pending.ZkVersion))
	}
	a.saved = a.core.proposal
	a.h.saveProposal(a.saved)
	rep := a.core.rep
	a.log.Info("partition started", zap.Stringer("partition", a.h.tp), zap.Int("incarnation", n),
		zap.Int64("logStartOffset", rep.LogStartOffset), zap.Int64("logEndOffset", rep.LogEndOffset),
		zap.Int64("highWatermark", rep.HighWatermark), zap.Int("producers", prod.Len()))
	a.publish()
}

// hwSetter is storage.Log.SetHighWatermark (retention keeps what is above it).
type hwSetter interface{ SetHighWatermark(int64) }

// lsoSetter is storage.Log.SetLastStableOffset (the cleaner keeps what is above it).
type lsoSetter interface{ SetLastStableOffset(int64) }

func (a *partitionActor) publish() {
	rep := a.core.rep
	if s, ok := a.lg.(hwSetter); ok {
		s.SetHighWatermark(rep.HighWatermark)
	}
	lso := a.core.LastStableOffset()
	if s, ok := a.lg.(lsoSetter); ok {
		s.SetLastStableOffset(lso)
	}
	a.h.publish(&View{
		Log:              a.lg,
		HighWatermark:    rep.HighWatermark,
		LogEndOffset:     rep.LogEndOffset,
		LogStartOffset:   rep.LogStartOffset,
		LastStableOffset: lso,
		LeaderEpoch:      rep.LeaderEpoch,
		Role:             rep.Role,
		ISR:              rep.ISR,
		Followers:        rep.FollowerViews(),
	})
}

// do performs a core's effects in their order: publish the View (before
// any reply, so a client that got its ack reads the high watermark that
// released it), store a committed ISR, send the replies, and start
// writing a proposed ISR.
func (a *partitionActor) do(ctx actor.Context, eff Effects) {
	if eff.Aborted != nil {
		a.recordAborted(*eff.Aborted)
	}
	if eff.Publish {
		a.publish()
	}
	if p := a.core.proposal; p != a.saved {
		a.saved = p
		a.h.saveProposal(p)
	}
	if c := eff.Committed; c != nil {
		rep := a.core.rep
		a.log.Info("ISR changed", zap.Stringer("partition", a.h.tp), zap.String("change", c.Why),
			zap.Int32s("from", c.From), zap.Int32s("to", rep.ISR), zap.Int32("leaderEpoch", rep.LeaderEpoch))
		actors.Emit(a.h.root.ActorSystem(), "isr_"+c.Why, a.h.tp.Topic, "") // actors.EventIsrShrink / EventIsrExpand
		a.h.stateMu.Lock()
		a.h.state.ISR, a.h.state.ZkVersion = slices.Clone(rep.ISR), rep.ZkVersion
		a.h.stateMu.Unlock()
	}
	for _, r := range eff.Replies {
		r.P.Reply <- r.Res
	}
	if p := eff.Propose; p != nil {
		a.writeIsr(ctx, *p)
	}
}

// writeIsr runs IsrWriter.AlterIsr on a goroutine (a ZooKeeper Get, Set
// and CreateSequential: never inside Receive) and sends the result back
// as *isrWritten. The goroutine is counted in a.writes and ends when
// AlterIsr returns (bounded by the store's timeouts); a result that
// reaches a later incarnation, or arrives after a LeaderAndIsr, is judged
// by Core.IsrWritten, and one sent after the actor stopped is a dead letter.
func (a *partitionActor) writeIsr(ctx actor.Context, p IsrProposal) {
	self, root, w := ctx.Self(), ctx.ActorSystem().Root, a.isr
	a.writes.Add(1)
	go func() {
		defer a.writes.Done()
		v, err := w.AlterIsr(p.TP, p.LeaderEpoch, p.ISR, p.ZkVersion)
		root.Send(self, &isrWritten{IsrResult{Proposal: p, NewZkVersion: v, Err: err}})
	}()
}

// isrWritten feeds an AlterIsr result to the core. A failure leaves the
// committed ISR in place and the proposal pending; the core writes it
// again at the next check (or a fetch after a backoff).
func (a *partitionActor) isrWritten(ctx actor.Context, r IsrResult) {
	if a.core == nil {
		return
	}
	committed, eff := a.core.IsrWritten(r)
	if r.Err != nil {
		a.log.Warn("ISR change not written", zap.Stringer("partition", a.h.tp), zap.String("change", r.Proposal.Why),
			zap.Int32s("isr", a.core.rep.ISR), zap.Int32s("proposed", r.Proposal.ISR), zap.Int32("zkVersion", r.Proposal.ZkVersion), zap.Error(r.Err))
	} else if !committed {
		a.log.Info("ISR change written for a superseded state, dropped", zap.Stringer("partition", a.h.tp), zap.String("change", r.Proposal.Why),
			zap.Int32s("proposed", r.Proposal.ISR), zap.Int32("leaderEpoch", r.Proposal.LeaderEpoch), zap.Int32("zkVersion", r.Proposal.ZkVersion))
	}
	a.do(ctx, eff)
}

// apply takes a LeaderAndIsr and saves it in the Handle before the
// answer is sent, under stateMu as the ISR commits in do: only the actor
// writes the saved state while it runs, so a later write can never bring
// back an older one, and an incarnation started right after the answer
// begins from this state.
func (a *partitionActor) apply(ctx actor.Context, s LeaderAndIsr) *kerr.Error {
	err, eff := a.core.Apply(s)
	if err != nil {
		return err
	}
	a.h.setState(s)
	a.lg.SetConfig(s.Config)
	a.do(ctx, eff)
	return nil
}

// produce appends p as leader when the core accepts it; the reply waits
// in the core when acks=-1 needs the high watermark to pass it.
func (a *partitionActor) produce(ctx actor.Context, p *Produce) {
	defer p.release()
	res, v := a.core.CheckProduce(p)
	switch v {
	case ProduceAnswer:
		p.Reply <- res
		return
	case ProduceWaits:
		return // answered by the Effects that move the high watermark past it
	}
	info, err := a.lg.Append(p.Batch, AppendOptions{LeaderEpoch: a.core.rep.LeaderEpoch, LogAppendTime: p.appendTime(), PreValidated: true})
	if err != nil {
		kerrv, msg := AppendError(err)
		p.Reply <- errResult(kerrv, msg)
		if kerrv == kerr.KafkaStorageError {
			// An I/O failure: answer, then crash so the restart reopens and
			// recovers the log (Kafka takes the log dir offline instead).
			a.inflight = nil
			panic(fmt.Errorf("partition %s: append: %w", a.h.tp, err))
		}
		return
	}
	res, done, eff := a.core.Appended(p, info, a.lg.LogStartOffset(), a.lg.LogEndOffset())
	a.do(ctx, eff)
	a.snapshotOnRoll()
	if done {
		p.Reply <- res
	}
}

// failWaiting fails the produce being handled (when it panicked) and every
// waiting one with a retriable error, so callers do not hang.
func (a *partitionActor) failWaiting(err *kerr.Error) {
	if a.inflight != nil {
		a.inflight.Reply <- errResult(err, "")
		a.inflight.release()
		a.inflight = nil
	}
	if a.core != nil {
		for _, r := range a.core.FailWaiting(err).Replies {
			r.P.Reply <- r.Res
		}
	}
}

func (a *partitionActor) deleteRecords(ctx actor.Context, offset int64) DeleteRecordsResult {
	before, del, kerrv := a.core.DeleteRecordsBefore(offset)
	if kerrv != nil {
		return DeleteRecordsResult{Err: kerrv, LowWatermark: -1}
	}
	if del {
		if err := a.lg.DeleteRecordsBefore(before); err != nil {
			k, _ := AppendError(err)
			return DeleteRecordsResult{Err: k, LowWatermark: -1}
		}
		a.do(ctx, a.core.LogChanged(a.lg.LogStartOffset(), a.lg.LogEndOffset()))
	}
	return DeleteRecordsResult{LowWatermark: a.core.rep.LogStartOffset}
}

// AppendError maps a storage append error to its Kafka error code and a
// message for ProduceResponse.ErrorMessage (v8+).
func AppendError(err error) (*kerr.Error, string) {
	var ce *record.CorruptError
	var ie *record.InvalidError
	switch {
	case err == nil:
		return nil, ""
	case errors.As(err, &ce):
		return kerr.CorruptMessage, ce.Error()
	case errors.As(err, &ie):
		return kerr.InvalidRecord, ie.Error()
	case errors.Is(err, storage.ErrRecordTooLarge):
		return kerr.MessageTooLarge, err.Error()
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange, err.Error()
	case errors.Is(err, storage.ErrLogClosed):
		return kerr.NotLeaderForPartition, err.Error()
	}
	return kerr.KafkaStorageError, err.Error()
}

// armIsrCheck keeps a shrink check scheduled every half
// replica.lag.time.max.ms while this replica leads with an ISR writer
// (Kafka's isr-expiration task runs at the same period).
func (a *partitionActor) armIsrCheck(ctx actor.Context) {
	if a.isr == nil || a.lag <= 0 || a.core == nil || a.core.rep.Role != RoleLeader {
		a.stopIsrCheck()
		return
	}
	if a.isrTimer != nil {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	m := &isrCheck{armed: time.Now()}
	a.isrArmed = m
	a.isrTimer = time.AfterFunc(a.lag/2, func() { root.Send(self, m) })
}

func (a *partitionActor) stopIsrCheck() {
	if a.isrTimer != nil {
		a.isrTimer.Stop()
		a.isrTimer, a.isrArmed = nil, nil
	}
}
