package partition

// Moving a replica between log dirs (AlterReplicaLogDirs, API 34), as
// Kafka's ReplicaManager.alterReplicaLogDirs, Partition.maybeCreateFutureReplica
// and ReplicaAlterLogDirsThread do it: a future replica is created in the
// destination dir, a copier fills it from the current log (same offsets,
// leader epochs, log start offset; throttled by
// replica.alter.log.dirs.io.max.bytes.per.second), and once it has caught
// up the partition actor holds its log's writers while the swap runs
// (last batches copied, aborted transactions copied, the dirs renamed:
// storage.LogManager.ReplaceCurrentWithFuture), then carries on with the
// new log and the messages it held, in their order.
//
// The actor decides (decideAlter, shouldSwap: pure); creating the future
// log, copying and swapping run on the move's goroutine (logdir_copier.go)
// and come back as *futureCaughtUp / *futureSwapped / *futureFailed.

import (
	"errors"
	"math"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/storage"
)

// CopyThrottle is the alter-log-dirs replication quota
// (replication/throttle.Quota for replica.alter.log.dirs.io.max.bytes.per.second,
// measured over alter.log.dirs.replication.quota.window.*): the copier
// waits ThrottleTime while IsQuotaExceeded, and records every byte it
// copies. nil = unthrottled.
type CopyThrottle interface {
	IsQuotaExceeded(now time.Time) bool
	ThrottleTime(now time.Time) time.Duration
	Record(bytes int64, now time.Time)
	// Rate is the bound in bytes/s (math.MaxInt64: none).
	Rate() int64
}

// alterAction is what an AlterReplicaLogDirs asks of a hosted replica.
type alterAction int

const (
	// alterNothing: the log is in the destination and no move is under
	// way (NONE, nothing happens).
	alterNothing alterAction = iota
	// alterCancel: the destination is the current dir while a move to
	// another dir is under way: the move is cancelled (its future log
	// removed), NONE.
	alterCancel
	// alterKeep: the move under way already goes to the destination.
	alterKeep
	// alterStart: create the future log in the destination and copy.
	alterStart
	// alterRedirect: cancel the move under way (another dir) and start
	// one to the destination.
	alterRedirect
)

// decideAlter is Kafka's futureReplicaDirChanged + maybeCreateFutureReplica
// decision for a hosted partition whose log is in current, with a move
// under way to future when moving.
func decideAlter(current, future string, moving bool, dest string) alterAction {
	switch {
	case moving && future == dest:
		return alterKeep
	case dest == current && moving:
		return alterCancel
	case dest == current:
		return alterNothing
	case moving:
		return alterRedirect
	}
	return alterStart
}

// swapAfterReports: once the copier has reported reaching the current
// log's end this many times without the log standing still when the
// actor looked, the swap goes ahead anyway and copies the rest with the
// writers held (a partition produced to without pause would otherwise
// never be found caught up at the instant the actor checks).
const swapAfterReports = 3

// shouldSwap decides whether the future log takes over: it has reached
// the current log end (Kafka's condition, futureLog.logEndOffset ==
// log.logEndOffset), or the copier has caught up swapAfterReports times
// and the remainder is copied while the writers are held.
func shouldSwap(futureLEO, currentLEO int64, reports int) bool {
	return futureLEO >= currentLEO || reports >= swapAfterReports
}

// alterLogDir asks the partition actor to move its log to dir (a
// configured log.dirs entry, storage.LogManager.ResolveLogDir).
type alterLogDir struct {
	dir  string
	done chan *kerr.Error // buffered; one answer
}

// futureCaughtUp: the move's copier reached the current log's end.
type futureCaughtUp struct {
	run       *moveRun
	futureLEO int64
}

// futureSwapped: the swap ran; log is the new current log (err nil).
// replaced tells whether the current log was closed (then err means the
// partition must reopen: the actor restarts).
type futureSwapped struct {
	run      *moveRun
	log      *storage.Log
	replaced bool
	err      error
}

// futureFailed: the copier stopped on an error; the future log stays on
// disk and the next incarnation (or AlterReplicaLogDirs) resumes it.
type futureFailed struct {
	run *moveRun
	err error
}

// moveStore is the storage side of a move: the LogManager behind a
// StorageStore. Other LogStores (test fakes) cannot move logs.
func (a *partitionActor) moveStore() (*storage.LogManager, *storage.Log, bool) {
	ss, ok := a.store.(StorageStore)
	if !ok || ss.M == nil {
		return nil, nil, false
	}
	sl, ok := a.lg.(StorageLog)
	if !ok {
		return nil, nil, false
	}
	return ss.M, sl.Log, true
}

// heldDuringSwap reports whether msg touches the log (or the move) and so
// waits while the swap runs; the rest reads or updates only the core.
func heldDuringSwap(msg any) bool {
	switch msg.(type) {
	case *Produce, *applyState, *followerAppend, *truncate, *deleteRecords,
		*setConfig, *logStartMoved, *alterLogDir, *expireCheck:
		return true
	}
	return false
}

// alterDir handles an AlterReplicaLogDirs for this replica.
func (a *partitionActor) alterDir(ctx actor.Context, m *alterLogDir) {
	lm, cur, ok := a.moveStore()
	if !ok || a.core == nil {
		m.done <- kerr.KafkaStorageError
		return
	}
	curDir, _ := lm.LogDir(a.h.tp)
	var futDir string
	if a.move != nil {
		futDir = a.move.dest
	}
	switch decideAlter(curDir, futDir, a.move != nil, m.dir) {
	case alterNothing, alterKeep:
		m.done <- nil
	case alterCancel:
		old := a.move
		a.move = nil
		old.cancel()
		a.log.Info("log dir move cancelled", zap.Stringer("partition", a.h.tp), zap.String("to", old.dest))
		a.moves.Add(1)
		go func() { // answered once the future log is gone
			defer a.moves.Done()
			<-old.done
			m.done <- nil
		}()
	case alterRedirect:
		old := a.move
		old.cancel()
		a.log.Info("log dir move redirected", zap.Stringer("partition", a.h.tp), zap.String("from", old.dest), zap.String("to", m.dir))
		a.startMove(ctx, lm, cur, m.dir, old.done, m.done)
	case alterStart:
		a.log.Info("log dir move started", zap.Stringer("partition", a.h.tp), zap.String("from", curDir), zap.String("to", m.dir))
		a.startMove(ctx, lm, cur, m.dir, nil, m.done)
	}
}

// resumeMove restarts the copy of a future log found in the store (left by
// an earlier incarnation or by the previous broker run).
func (a *partitionActor) resumeMove(ctx actor.Context) {
	lm, cur, ok := a.moveStore()
	if !ok {
		return
	}
	if _, dir, ok := lm.Future(a.h.tp); ok {
		a.log.Info("log dir move resumed", zap.Stringer("partition", a.h.tp), zap.String("to", dir))
		a.startMove(ctx, lm, cur, dir, nil, nil)
	}
}

// startMove starts a move's goroutine (counted in a.moves; stopped by
// moveRun.stopCopy / cancel). reply, when set, gets the creation's outcome.
func (a *partitionActor) startMove(ctx actor.Context, lm *storage.LogManager, cur *storage.Log, dest string, prev <-chan struct{}, reply chan *kerr.Error) {
	r := &moveRun{
		tp: a.h.tp, dest: dest, lm: lm, cur: cur, h: a.h, quota: a.quota, slots: a.slots, log: a.log,
		self: ctx.Self(), root: ctx.ActorSystem().Root, prev: prev, reply: reply,
		stop: make(chan struct{}), done: make(chan struct{}), nudge: make(chan struct{}, 1),
	}
	r.truncated.Store(math.MaxInt64)
	a.move = r
	a.moves.Add(1)
	go func() {
		defer a.moves.Done()
		r.run()
	}()
}

// caughtUp is the copier's report: swap when the core says so.
func (a *partitionActor) caughtUp(m *futureCaughtUp) {
	if m.run != a.move || a.swapping || a.lg == nil {
		return // stale: a cancelled move or an earlier incarnation's
	}
	m.run.reports++
	if !shouldSwap(m.futureLEO, a.lg.LogEndOffset(), m.run.reports) {
		return
	}
	a.swapping = true
	a.log.Info("future replica caught up: swapping", zap.Stringer("partition", a.h.tp), zap.String("to", m.run.dest),
		zap.Int64("futureLogEndOffset", m.futureLEO), zap.Int64("logEndOffset", a.lg.LogEndOffset()))
	m.run.swap(a.moves)
}

// swapped takes the new log after a swap and replays what was held.
func (a *partitionActor) swapped(ctx actor.Context, m *futureSwapped) {
	if m.run != a.move {
		return // an earlier incarnation's swap: Reopen found its result
	}
	a.move, a.swapping = nil, false
	held := a.held
	a.held = nil
	switch {
	case m.err != nil && m.replaced:
		a.failHeld(held, kerr.NotLeaderForPartition)
		panic(errors.Join(errors.New("partition "+a.h.tp.String()+": log dir swap"), m.err))
	case m.err != nil:
		// The current log is untouched: carry on with it and copy again.
		a.log.Warn("log dir swap failed; the move goes on", zap.Stringer("partition", a.h.tp), zap.Error(m.err))
		a.resumeMove(ctx)
	default:
		cfg := a.lg.Config()
		a.lg = StorageLog{m.log}
		a.lg.SetConfig(cfg)
		a.snapshotAt = -1
		a.activeBase = m.log.ActiveSegmentBase()
		a.writeSnapshot(StorageLog{m.log})
		a.core.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
		a.publish()
	}
	for _, msg := range held {
		a.handle(ctx, msg)
	}
}

// moveFailed logs a copier failure; the future log is kept for a retry.
func (a *partitionActor) moveFailed(m *futureFailed) {
	if m.run != a.move {
		return
	}
	a.move = nil
	a.log.Error("log dir move stopped", zap.Stringer("partition", a.h.tp), zap.String("to", m.run.dest), zap.Error(m.err))
}

// stopMove stops the copier (keeping its future log) when the actor stops
// or restarts, and fails the held messages.
func (a *partitionActor) stopMove() {
	if a.move != nil && !a.swapping {
		a.move.stopCopy()
	}
	a.move, a.swapping = nil, false
	a.failHeld(a.held, kerr.NotLeaderForPartition)
	a.held = nil
}

// failHeld answers every held message that expects an answer.
func (a *partitionActor) failHeld(held []any, err *kerr.Error) {
	for _, msg := range held {
		switch m := msg.(type) {
		case *Produce:
			if m.take() {
				m.Reply <- errResult(err, "")
				m.release()
			}
		case *applyState:
			m.done <- err
		case *followerAppend:
			m.reply(followerResult{logEndOffset: -1, err: storage.ErrLogClosed})
		case *truncate:
			m.reply(followerResult{logEndOffset: -1, err: storage.ErrLogClosed})
		case *deleteRecords:
			m.done <- DeleteRecordsResult{Err: err, LowWatermark: -1}
		case *alterLogDir:
			m.done <- err
		}
	}
}

// noteTruncated tells the move that the current log was truncated to
// offset (follower truncation): the future log is truncated likewise.
func (a *partitionActor) noteTruncated(offset int64) {
	if a.move != nil {
		a.move.noteTruncated(offset)
	}
}
