package partition

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"gregor/storage"
	"gregor/storage/record"
)

// Replication messages handled by the partition actor. Each carries a
// reply channel with one free slot; the Handle methods below send them and
// wait (bounded by replicationAskTimeout).

// followerFetch: the leader records a follower's Fetch (its log end
// offset). Unlike the others it carries a callback, not a channel: done is
// called once (finish), on the actor after the View that follows from it
// was published — or with NOT_LEADER_OR_FOLLOWER when the actor it was
// sent to stopped without handling it (the Handle tracks it until then) —
// and the Fetch handler does not wait for it.
type followerFetch struct {
	replica     int32
	fetchOffset int64
	done        func(*kerr.Error)
	tr          fetchTrace // set by the actor, for the trace event
	// to is the actor incarnation it was sent to; answered makes done
	// run once whichever of the actor and its stop gets there first.
	to       *actor.PID
	h        *Handle
	answered atomic.Bool
}

// finish calls done with err unless it was already called.
func (m *followerFetch) finish(err *kerr.Error) {
	if !m.answered.CompareAndSwap(false, true) {
		return
	}
	m.h.fetchMu.Lock()
	delete(m.h.fetches, m)
	m.h.fetchMu.Unlock()
	m.done(err)
}

// failFetches answers NOT_LEADER_OR_FOLLOWER to every follower fetch sent
// to the stopped incarnation pid that it did not handle: protoactor drops
// what is left in a stopped actor's mailbox, and a Fetch handler waiting
// for the answer would otherwise wait out its whole timeout.
func (h *Handle) failFetches(pid *actor.PID) {
	h.fetchMu.Lock()
	var left []*followerFetch
	for m := range h.fetches {
		if m.to == pid {
			left = append(left, m)
		}
	}
	h.fetchMu.Unlock()
	for _, m := range left {
		m.finish(kerr.NotLeaderForPartition)
	}
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

// isrCheck is the leader's periodic ISR shrink check. Each armed timer
// sends its own *isrCheck; the actor acts only on the one it armed last
// (partitionActor.isrArmed), so a check queued by a previous incarnation
// or by a timer stopped too late does not start a second chain.
type isrCheck struct {
	armed time.Time // when the timer was armed (for traces; non-empty so each check is a distinct pointer)
}

// replicationAskTimeout bounds a fetch handler's or fetcher's wait on a
// partition actor: local work (an append, a truncation, at most one ISR
// write to the metadata store).
const replicationAskTimeout = 15 * time.Second

// ErrFenced is returned to a fetcher whose leader epoch is not the
// partition's current one, or when the replica is no longer a follower:
// the fetcher drops the result (a newer LeaderAndIsr is in charge).
var ErrFenced = errors.New("partition: fetch is for an old leader epoch or role")

// RecordFollowerFetch tells the leader's actor, without waiting, that
// follower replica fetched at fetchOffset (so its log end offset is
// fetchOffset): the high watermark may advance (completing acks=-1
// produces) and the follower may be proposed back into the ISR. done is
// called exactly once — on the actor after the resulting View is
// published (View().HighWatermark then includes this fetch), or at once
// on the caller's goroutine when no actor runs — with nil or
// NOT_LEADER_OR_FOLLOWER (this replica does not lead, no actor runs, or
// replica is not an assigned follower). done must not block (it runs on
// the actor). If the actor stops before handling the message, done is
// called with NOT_LEADER_OR_FOLLOWER once it has stopped; callers still
// bound their wait (ReplicationAskTimeout) for an actor that is stuck.
func (h *Handle) RecordFollowerFetch(replica int32, fetchOffset int64, done func(*kerr.Error)) {
	pid := h.pid.Load()
	if pid == nil {
		done(kerr.NotLeaderForPartition)
		return
	}
	m := &followerFetch{replica: replica, fetchOffset: fetchOffset, done: done, to: pid, h: h}
	h.fetchMu.Lock()
	h.fetches[m] = struct{}{}
	h.fetchMu.Unlock()
	h.root.Send(pid, m)
	if h.pid.Load() != pid {
		// The incarnation stopped meanwhile (its Stopped clears the PID
		// before failFetches): it may have missed m.
		m.finish(kerr.NotLeaderForPartition)
	}
}

// ReplicationAskTimeout bounds a wait for a partition actor's answer to a
// replication message (RecordFollowerFetch).
const ReplicationAskTimeout = replicationAskTimeout

// FollowerFetch is RecordFollowerFetch waiting for the answer (tests and
// tools; the Fetch handler does not wait on its reader goroutine).
// REQUEST_TIMED_OUT when the actor does not answer in
// ReplicationAskTimeout.
func (h *Handle) FollowerFetch(replica int32, fetchOffset int64) *kerr.Error {
	ch := make(chan *kerr.Error, 1)
	h.RecordFollowerFetch(replica, fetchOffset, func(err *kerr.Error) { ch <- err })
	t := time.NewTimer(replicationAskTimeout)
	defer t.Stop()
	select {
	case err := <-ch:
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

func (a *partitionActor) fencedFollower(epoch int32) bool {
	return a.core.rep.Role != RoleFollower || epoch != a.core.rep.LeaderEpoch
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
			a.core.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
			a.publish()
			return followerResult{logEndOffset: a.core.rep.LogEndOffset, err: err}
		}
		for rest := m.batches; len(rest) >= record.HeaderSize; {
			h, err := record.ParseHeader(rest)
			if err != nil || h.Size() > len(rest) {
				break
			}
			a.applyBatch(h, rest[:h.Size()])
			if m.tr.first < 0 {
				m.tr.first = h.BaseOffset
			}
			m.tr.last = h.LastOffset()
			rest = rest[h.Size():]
		}
	}
	a.snapshotOnRoll()
	leo := a.lg.LogEndOffset()
	if ls := min(m.leaderLogStart, leo); ls > a.lg.LogStartOffset() {
		if err := a.lg.DeleteRecordsBefore(ls); err != nil {
			a.log.Warn("follower log start offset not moved", zap.Stringer("partition", a.h.tp), zap.Int64("leaderLogStartOffset", m.leaderLogStart), zap.Error(err))
		}
	}
	a.core.rep.SetLogOffsets(a.lg.LogStartOffset(), leo)
	a.core.rep.SetFollowerHW(m.leaderHW)
	a.publish()
	m.tr.leo, m.tr.hw = leo, a.core.rep.HighWatermark
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
		prod, err := rebuildProducers(a.lg, a.core.rep.HighWatermark)
		if err != nil {
			return followerResult{logEndOffset: -1, err: err}
		}
		a.core.prod = prod
		a.snapshotAt = -1 // the truncation deleted the snapshots above the new end
		a.noteTruncated(a.lg.LogEndOffset())
		a.log.Info("follower truncated", zap.Stringer("partition", a.h.tp), zap.Int64("from", before), zap.Int64("to", after),
			zap.Bool("fully", m.fully), zap.Int32("leaderEpoch", a.core.rep.LeaderEpoch))
	}
	a.core.rep.SetLogOffsets(a.lg.LogStartOffset(), a.lg.LogEndOffset())
	a.publish()
	return followerResult{logEndOffset: a.core.rep.LogEndOffset}
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
