package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/storage"
	"gregor/storage/record"
)

// partitionActor owns one partition replica: it is the only writer of the
// partition's Log and the owner of its Replica and Producers state. All of
// that is rebuilt from disk in *actor.Started, so a restart after a panic
// loses nothing that was acknowledged.
type partitionActor struct {
	h        *Handle
	store    LogStore
	brokerID int32
	log      *zap.Logger
	// initialHW is the high watermark from replication-offset-checkpoint,
	// used by the first incarnation (-1 = none).
	initialHW int64

	lg       Log
	rep      *Replica
	prod     *Producers
	inflight *Produce
	// pending are acks=-1 produces waiting for the high watermark to pass
	// their last offset. With a sole ISR they complete at once and this
	// stays empty; replication (follower fetch progress moving the HW) is
	// the hook that will complete them for larger ISRs.
	pending []pendingProduce

	// isr persists ISR changes (nil: the ISR is what LeaderAndIsr says);
	// lag is replica.lag.time.max.ms; isrTimer re-arms the shrink check
	// while leading.
	isr      IsrWriter
	lag      time.Duration
	isrTimer *time.Timer
}

type pendingProduce struct {
	p      *Produce
	res    ProduceResult
	needHW int64 // complete once HighWatermark >= needHW
}

// Receive implements actor.Actor.
func (a *partitionActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start()
		a.h.pid.Store(ctx.Self())
		a.armIsrCheck(ctx)
	case *Produce:
		if !m.take() {
			return // the handler gave up on it; no reply expected
		}
		a.inflight = m
		if res, done := a.produce(m); done {
			m.Reply <- res
		}
		a.inflight = nil
	case *applyState:
		m.done <- a.apply(m.state)
		a.armIsrCheck(ctx)
	case *followerFetch:
		m.done <- a.followerFetch(m)
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
		a.isrTimer = nil
		a.checkIsr()
		a.armIsrCheck(ctx)
	case *setConfig:
		if a.lg != nil {
			a.lg.SetConfig(m.cfg)
		}
	case *setMinIsr:
		if a.rep != nil {
			a.rep.MinInsync = max(m.n, 1)
		}
	case *deleteRecords:
		m.done <- a.deleteRecords(m.offset)
	case *Crash:
		panic(fmt.Sprintf("partition %s: injected crash: %s", a.h.tp, m.Reason))
	case *actor.Restarting:
		a.stopIsrCheck()
		a.failWaiting(kerr.NotLeaderForPartition)
		a.h.setUnavailable(kerr.NotLeaderForPartition)
		a.lg = nil
	case *actor.Stopping:
		a.stopIsrCheck()
		a.failWaiting(kerr.NotLeaderForPartition)
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
	}
}

// start opens the log (first incarnation: GetOrCreate; later ones: Reopen,
// which recovers from the recovery point), rebuilds producer state from
// the log and re-applies the last LeaderAndIsr state. A failure panics so
// the supervisor retries with backoff and eventually marks it offline.
func (a *partitionActor) start() {
	state, n := a.h.nextStart()
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
	prod := NewProducers()
	if err := lg.ScanBatches(lg.LogStartOffset(), func(h record.Header) bool {
		prod.Update(&h, h.MaxTimestamp)
		return true
	}); err != nil {
		panic(fmt.Errorf("partition %s: rebuild producer state: %w", a.h.tp, err))
	}
	hw := a.initialHW
	if n > 1 {
		hw = a.h.View().HighWatermark
	}
	a.lg, a.prod = lg, prod
	a.rep = NewReplica(a.h.tp, a.brokerID)
	a.rep.SetLogOffsets(lg.LogStartOffset(), lg.LogEndOffset())
	_ = a.rep.Apply(state, hw)
	a.log.Info("partition started", zap.Stringer("partition", a.h.tp), zap.Int("incarnation", n),
		zap.Int64("logStartOffset", a.rep.LogStartOffset), zap.Int64("logEndOffset", a.rep.LogEndOffset),
		zap.Int64("highWatermark", a.rep.HighWatermark), zap.Int("producers", prod.Len()))
	a.publish()
}

// hwSetter is storage.Log.SetHighWatermark (retention keeps what is above it).
type hwSetter interface{ SetHighWatermark(int64) }

func (a *partitionActor) publish() {
	if s, ok := a.lg.(hwSetter); ok {
		s.SetHighWatermark(a.rep.HighWatermark)
	}
	a.h.publish(&View{
		Log:            a.lg,
		HighWatermark:  a.rep.HighWatermark,
		LogEndOffset:   a.rep.LogEndOffset,
		LogStartOffset: a.rep.LogStartOffset,
		LeaderEpoch:    a.rep.LeaderEpoch,
		Role:           a.rep.Role,
		ISR:            a.rep.ISR,
	})
}

func (a *partitionActor) apply(s LeaderAndIsr) *kerr.Error {
	if err := a.rep.Apply(s, -1); err != nil {
		return err
	}
	a.lg.SetConfig(s.Config)
	if a.rep.Role != RoleLeader {
		// A follower answers no produce: waiting acks=-1 produces fail
		// with a retriable error and the client retries on the new leader.
		a.failWaiting(kerr.NotLeaderForPartition)
	}
	a.publish()
	a.completePending()
	return nil
}

func errResult(err *kerr.Error, msg string) ProduceResult {
	return ProduceResult{Err: err, ErrorMessage: msg, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1}
}

// produce appends as leader. done is false when the reply waits for the
// high watermark (acks=-1 with a larger ISR).
func (a *partitionActor) produce(p *Produce) (res ProduceResult, done bool) {
	defer p.release()
	if a.rep.Role != RoleLeader {
		return errResult(kerr.NotLeaderForPartition, ""), true
	}
	if p.Acks == -1 && a.rep.InSyncCount() < a.rep.MinInsync {
		// Kafka Partition.appendRecordsToLeader: refused before the append.
		return errResult(kerr.NotEnoughReplicas, fmt.Sprintf("ISR %v is smaller than min.insync.replicas=%d", a.rep.ISR, a.rep.MinInsync)), true
	}
	dup, kerrv := a.prod.Check(&p.Header)
	if kerrv != nil {
		return errResult(kerrv, ""), true
	}
	if dup != nil {
		// A retry of a batch already in the log: answer its original offset.
		return ProduceResult{BaseOffset: dup.FirstOffset, LogAppendTime: -1, LogStartOffset: a.rep.LogStartOffset}, true
	}
	info, err := a.lg.Append(p.Batch, AppendOptions{LeaderEpoch: a.rep.LeaderEpoch, LogAppendTime: p.appendTime(), PreValidated: true})
	if err != nil {
		kerrv, msg := AppendError(err)
		if kerrv == kerr.KafkaStorageError {
			// An I/O failure: answer, then crash so the restart reopens and
			// recovers the log (Kafka takes the log dir offline instead).
			p.Reply <- errResult(kerrv, msg)
			a.inflight = nil
			panic(fmt.Errorf("partition %s: append: %w", a.h.tp, err))
		}
		return errResult(kerrv, msg), true
	}
	h := p.Header
	h.BaseOffset = info.FirstOffset
	a.prod.Update(&h, info.MaxTimestamp)
	a.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
	a.publish()
	res = ProduceResult{BaseOffset: info.FirstOffset, LogAppendTime: info.LogAppendTime, LogStartOffset: a.rep.LogStartOffset}
	p.tr = produceTrace{appended: true, first: info.FirstOffset, last: info.LastOffset, hw: a.rep.HighWatermark}
	if p.Acks == -1 && a.rep.HighWatermark <= info.LastOffset {
		a.pending = append(a.pending, pendingProduce{p: p, res: res, needHW: info.LastOffset + 1})
		p.tr.waits = true
		return res, false
	}
	a.completePending()
	return res, true
}

// completePending replies to acks=-1 produces the high watermark now
// covers; it returns how many it answered.
func (a *partitionActor) completePending() (answered int) {
	n := 0
	for _, w := range a.pending {
		if a.rep.HighWatermark >= w.needHW {
			if a.rep.InSyncCount() < a.rep.MinInsync {
				// Kafka DelayedProduce: replicated to the whole ISR, but the
				// ISR shrank below min.insync.replicas meanwhile.
				w.p.Reply <- errResult(kerr.NotEnoughReplicasAfterAppend, "")
				answered++
				continue
			}
			w.p.Reply <- w.res
			answered++
			continue
		}
		a.pending[n] = w
		n++
	}
	clear(a.pending[n:])
	a.pending = a.pending[:n]
	return answered
}

// failWaiting fails the produce being handled (when it panicked) and every
// pending one with a retriable error, so callers do not hang.
func (a *partitionActor) failWaiting(err *kerr.Error) {
	if a.inflight != nil {
		a.inflight.Reply <- errResult(err, "")
		a.inflight.release()
		a.inflight = nil
	}
	for _, w := range a.pending {
		w.p.Reply <- errResult(err, "")
	}
	a.pending = nil
}

func (a *partitionActor) deleteRecords(offset int64) DeleteRecordsResult {
	if a.rep.Role != RoleLeader {
		return DeleteRecordsResult{Err: kerr.NotLeaderForPartition, LowWatermark: -1}
	}
	if offset == -1 { // Kafka: -1 means "up to the high watermark"
		offset = a.rep.HighWatermark
	}
	if offset < 0 || offset > a.rep.HighWatermark {
		return DeleteRecordsResult{Err: kerr.OffsetOutOfRange, LowWatermark: -1}
	}
	if offset > a.rep.LogStartOffset {
		if err := a.lg.DeleteRecordsBefore(offset); err != nil {
			k, _ := AppendError(err)
			return DeleteRecordsResult{Err: k, LowWatermark: -1}
		}
		a.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
		a.publish()
	}
	return DeleteRecordsResult{LowWatermark: a.rep.LogStartOffset}
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
	if a.isr == nil || a.lag <= 0 || a.rep == nil || a.rep.Role != RoleLeader {
		a.stopIsrCheck()
		return
	}
	if a.isrTimer != nil {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.isrTimer = time.AfterFunc(a.lag/2, func() { root.Send(self, &isrCheck{}) })
}

func (a *partitionActor) stopIsrCheck() {
	if a.isrTimer != nil {
		a.isrTimer.Stop()
		a.isrTimer = nil
	}
}
