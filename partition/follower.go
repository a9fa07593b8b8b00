package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/actors"
	"gregor/storage"
	"gregor/storage/record"
)

// Replication messages handled by the partition actor. Each carries a
// reply channel with one free slot; the Handle methods below send them and
// wait (bounded by replicationAskTimeout).

// followerFetch: the leader records a follower's Fetch (its log end offset).
type followerFetch struct {
	replica     int32
	fetchOffset int64
	done        chan *kerr.Error
	tr          fetchTrace // set by the actor, for the trace event
}

// followerAppend: the fetcher hands the leader's batches to the follower.
type followerAppend struct {
	leaderEpoch    int32
	batches        []byte
	leaderHW       int64
	leaderLogStart int64
	onDone         func(FollowerResult)
	tr             appendTrace // set by the actor, for the trace event
}

// truncate: the fetcher truncates the follower log (KIP-101/279).
type truncate struct {
	leaderEpoch int32
	offset      int64
	fully       bool
	onDone      func(FollowerResult)
	tr          followerResult // the outcome, for the trace event
}

type followerResult struct {
	logEndOffset int64
	err          error
}

// reply hands the actor's outcome to the fetcher's callback.
func (m *followerAppend) reply(r followerResult) { m.onDone(r.public()) }

// reply hands the actor's outcome to the fetcher's callback.
func (m *truncate) reply(r followerResult) { m.onDone(r.public()) }

func (r followerResult) public() FollowerResult {
	return FollowerResult{LogEndOffset: r.logEndOffset, Err: r.err}
}

// FollowerResult is the outcome of Handle.AppendAsFollower or
// Handle.TruncateTo: the follower's log end offset afterwards (-1 when
// unknown) and the error, if any (see those methods).
type FollowerResult struct {
	LogEndOffset int64
	Err          error
}

// isrCheck is the leader's periodic ISR shrink check.
type isrCheck struct{}

// replicationAskTimeout bounds a fetch handler's or fetcher's wait on a
// partition actor: local work (an append, a truncation, at most one ISR
// write to the metadata store).
const replicationAskTimeout = 15 * time.Second

// ErrFenced is returned to a fetcher whose leader epoch is not the
// partition's current one, or when the replica is no longer a follower:
// the fetcher drops the result (a newer LeaderAndIsr is in charge).
var ErrFenced = errors.New("partition: fetch is for an old leader epoch or role")

// FollowerFetch records, on the leader, that follower replica fetched at
// fetchOffset (so its log end offset is fetchOffset): the high watermark
// may advance (completing acks=-1 produces) and the follower may rejoin
// the ISR. Errors: NOT_LEADER_OR_FOLLOWER when this replica does not lead,
// no actor runs, or replica is not an assigned follower;
// REQUEST_TIMED_OUT when the actor does not answer in time.
func (h *Handle) FollowerFetch(replica int32, fetchOffset int64) *kerr.Error {
	pid := h.pid.Load()
	if pid == nil {
		return kerr.NotLeaderForPartition
	}
	done := make(chan *kerr.Error, 1)
	h.root.Send(pid, &followerFetch{replica: replica, fetchOffset: fetchOffset, done: done})
	t := time.NewTimer(replicationAskTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return kerr.RequestTimedOut
	}
}

// AppendAsFollower asks the partition actor to append batches fetched
// from the leader (whole batches carrying the leader's offsets and epochs;
// may be empty), then to set the follower's high watermark to
// min(leaderHW, log end offset) and move the log start offset up to
// leaderLogStart. It returns at once; the actor calls reply with the new
// log end offset. Errors in the result: ErrFenced (leaderEpoch is not
// current, not a follower, or no actor runs); storage.ErrUnexpectedAppendOffset
// (the batches do not continue the log: re-truncate); record corruption
// errors; storage I/O errors (the actor then restarts).
//
// reply runs on the partition actor's goroutine (on the caller's when no
// actor runs) and must not block: send the result to an actor. It is
// called at most once; not at all if the actor stops before it handles the
// request, so a caller bounds its wait (the fetcher's partitionOpTimeout).
func (h *Handle) AppendAsFollower(leaderEpoch int32, batches []byte, leaderHW, leaderLogStart int64, reply func(FollowerResult)) {
	h.askFollower(&followerAppend{leaderEpoch: leaderEpoch, batches: batches, leaderHW: leaderHW, leaderLogStart: leaderLogStart, onDone: reply}, reply)
}

// TruncateTo asks the partition actor to drop the follower's records at or
// above offset (fully: empty the log and restart it at offset, for a
// follower outside the leader's log range). It returns at once; reply gets
// the new log end offset, as for AppendAsFollower. Errors in the result:
// ErrFenced; storage errors.
func (h *Handle) TruncateTo(leaderEpoch int32, offset int64, fully bool, reply func(FollowerResult)) {
	h.askFollower(&truncate{leaderEpoch: leaderEpoch, offset: offset, fully: fully, onDone: reply}, reply)
}

// askFollower sends msg to the partition actor, or answers ErrFenced at
// once when none runs (offline or between incarnations).
func (h *Handle) askFollower(msg any, reply func(FollowerResult)) {
	pid := h.pid.Load()
	if pid == nil {
		reply(FollowerResult{LogEndOffset: -1, Err: ErrFenced})
		return
	}
	h.root.Send(pid, msg)
}

// LatestEpoch is the newest leader epoch in the replica's log (-1 when
// unknown), sent as LastFetchedEpoch and used for OffsetForLeaderEpoch.
func (h *Handle) LatestEpoch() int32 {
	v := h.View()
	if v.Log == nil {
		return -1
	}
	if fl, ok := v.Log.(FollowerLog); ok {
		if e, ok := fl.LatestEpoch(); ok {
			return e
		}
	}
	return -1
}

// --- actor side ---

func (a *partitionActor) followerFetch(m *followerFetch) *kerr.Error {
	m.tr.hwBefore = a.rep.HighWatermark
	m.tr.hw, m.tr.leo = m.tr.hwBefore, a.rep.LogEndOffset
	advanced, expand, ok := a.rep.UpdateFollower(m.replica, m.fetchOffset)
	if !ok {
		return kerr.NotLeaderForPartition
	}
	if expand != nil && a.isr != nil {
		a.alterIsr(expand, "expand")
		advanced = true
	}
	if advanced {
		a.publish()
		m.tr.released = a.completePending()
	}
	m.tr.hw = a.rep.HighWatermark
	return nil
}

// alterIsr persists newIsr through the IsrWriter and installs it on
// success; on failure the old ISR stays (retried on the next check or
// fetch; a newer LeaderAndIsr replaces the state).
func (a *partitionActor) alterIsr(newIsr []int32, why string) {
	v, err := a.isr.AlterIsr(a.h.tp, a.rep.LeaderEpoch, newIsr, a.rep.ZkVersion)
	if err != nil {
		a.log.Warn("ISR change not written", zap.Stringer("partition", a.h.tp), zap.String("change", why),
			zap.Int32s("isr", a.rep.ISR), zap.Int32s("proposed", newIsr), zap.Int32("zkVersion", a.rep.ZkVersion), zap.Error(err))
		return
	}
	a.log.Info("ISR changed", zap.Stringer("partition", a.h.tp), zap.String("change", why),
		zap.Int32s("from", a.rep.ISR), zap.Int32s("to", newIsr), zap.Int32("leaderEpoch", a.rep.LeaderEpoch))
	actors.Emit(a.h.root.ActorSystem(), "isr_"+why, a.h.tp.Topic, "") // actors.EventIsrShrink / EventIsrExpand
	a.rep.SetISR(newIsr, v)
	a.h.stateMu.Lock()
	a.h.state.ISR, a.h.state.ZkVersion = append([]int32(nil), newIsr...), v
	a.h.stateMu.Unlock()
}

// checkIsr drops followers that have not caught up within
// replica.lag.time.max.ms (Kafka Partition.maybeShrinkIsr).
func (a *partitionActor) checkIsr() {
	if a.isr == nil {
		return
	}
	if shrunk := a.rep.LaggingISR(a.lag); shrunk != nil {
		a.alterIsr(shrunk, "shrink")
		a.publish()
		a.completePending()
	}
}

func (a *partitionActor) fencedFollower(epoch int32) bool {
	return a.rep.Role != RoleFollower || epoch != a.rep.LeaderEpoch
}

func (a *partitionActor) followerLog() (FollowerLog, error) {
	fl, ok := a.lg.(FollowerLog)
	if !ok {
		return nil, fmt.Errorf("partition %s: log %T cannot follow: %w", a.h.tp, a.lg, kerr.KafkaStorageError)
	}
	return fl, nil
}

func (a *partitionActor) followerAppend(m *followerAppend) followerResult {
	m.tr = appendTrace{first: -1, last: -1, leo: -1, hw: -1}
	if a.fencedFollower(m.leaderEpoch) {
		return followerResult{logEndOffset: -1, err: ErrFenced}
	}
	fl, err := a.followerLog()
	if err != nil {
		return followerResult{logEndOffset: -1, err: err}
	}
	if len(m.batches) > 0 {
		if _, err := fl.AppendAsFollower(m.batches); err != nil {
			a.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
			a.publish()
			return followerResult{logEndOffset: a.rep.LogEndOffset, err: err}
		}
		for rest := m.batches; len(rest) >= record.HeaderSize; {
			h, err := record.ParseHeader(rest)
			if err != nil || h.Size() > len(rest) {
				break
			}
			a.prod.Update(&h, h.MaxTimestamp)
			if m.tr.first < 0 {
				m.tr.first = h.BaseOffset
			}
			m.tr.last = h.LastOffset()
			rest = rest[h.Size():]
		}
	}
	leo := a.lg.LogEndOffset()
	if ls := min(m.leaderLogStart, leo); ls > a.lg.LogStartOffset() {
		if err := a.lg.DeleteRecordsBefore(ls); err != nil {
			a.log.Warn("follower log start offset not moved", zap.Stringer("partition", a.h.tp), zap.Int64("leaderLogStartOffset", m.leaderLogStart), zap.Error(err))
		}
	}
	a.rep.SetLogOffsets(a.lg.LogStartOffset(), leo)
	a.rep.SetFollowerHW(m.leaderHW)
	a.publish()
	m.tr.leo, m.tr.hw = leo, a.rep.HighWatermark
	return followerResult{logEndOffset: leo}
}

func (a *partitionActor) truncate(m *truncate) followerResult {
	if a.fencedFollower(m.leaderEpoch) {
		return followerResult{logEndOffset: -1, err: ErrFenced}
	}
	fl, err := a.followerLog()
	if err != nil {
		return followerResult{logEndOffset: -1, err: err}
	}
	before := a.lg.LogEndOffset()
	if m.fully {
		err = fl.TruncateFullyAndStartAt(m.offset)
	} else {
		err = fl.TruncateTo(m.offset)
	}
	if err != nil {
		return followerResult{logEndOffset: -1, err: err}
	}
	if after := a.lg.LogEndOffset(); after < before || m.fully {
		// Producer state may name truncated batches: rebuild it.
		prod := NewProducers()
		if err := a.lg.ScanBatches(a.lg.LogStartOffset(), func(h record.Header) bool {
			prod.Update(&h, h.MaxTimestamp)
			return true
		}); err != nil {
			return followerResult{logEndOffset: -1, err: err}
		}
		a.prod = prod
		a.log.Info("follower truncated", zap.Stringer("partition", a.h.tp), zap.Int64("from", before), zap.Int64("to", after),
			zap.Bool("fully", m.fully), zap.Int32("leaderEpoch", a.rep.LeaderEpoch))
	}
	a.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
	a.publish()
	return followerResult{logEndOffset: a.rep.LogEndOffset}
}

// isStorageFailure reports whether a follower operation failed on I/O (the
// actor restarts to reopen and recover its log).
func isStorageFailure(err error) bool {
	if err == nil || errors.Is(err, ErrFenced) || errors.Is(err, storage.ErrUnexpectedAppendOffset) {
		return false
	}
	k, _ := AppendError(err)
	return k == kerr.KafkaStorageError
}
