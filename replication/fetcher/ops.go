package fetcher

import (
	"errors"
	"time"

	"go.uber.org/zap"

	"gregor/partition"
	"gregor/storage"
)

// opKind says what a partition operation was for, and so what its answer
// changes.
type opKind int

const (
	opTruncate opKind = iota // after OffsetForLeaderEpoch (or to the HW): ends truncating
	opDiverge                // to a Fetch response's diverging epoch (KIP-320)
	opReset                  // after OFFSET_OUT_OF_RANGE and ListOffsets: ends resetting
	opAppend                 // a Fetch response's batches
)

// opDone is a partition actor's answer to an append or truncation, sent by
// the reply callback to the fetcher that asked.
type opDone struct {
	id   uint64
	tp   partition.TopicPartition
	kind opKind
	res  partition.FollowerResult
}

// ask starts a partition operation for tp: start hands the partition
// actor a callback that sends the answer to this fetcher as an *opDone.
// Until it comes (or partitionOpTimeout passes) no request goes out.
func (f *fetcherActor) ask(tp partition.TopicPartition, ps *partState, kind opKind, start func(reply func(partition.FollowerResult))) {
	id := requestGen.Add(1)
	ps.op, ps.opAt = id, time.Now()
	f.pending++
	f.armOpCheck(ps.opAt)
	self, root := f.self, f.root
	start(func(r partition.FollowerResult) { root.Send(self, &opDone{id: id, tp: tp, kind: kind, res: r}) })
}

func (f *fetcherActor) truncate(tp partition.TopicPartition, ps *partState, h *partition.Handle, kind opKind, offset int64, fully bool) {
	epoch := ps.epoch
	f.ask(tp, ps, kind, func(reply func(partition.FollowerResult)) { h.TruncateTo(epoch, offset, fully, reply) })
}

func (f *fetcherActor) append(tp partition.TopicPartition, ps *partState, h *partition.Handle, batches []byte, leaderHW, leaderLogStart int64) {
	epoch := ps.epoch
	f.ask(tp, ps, opAppend, func(reply func(partition.FollowerResult)) {
		h.AppendAsFollower(epoch, batches, leaderHW, leaderLogStart, reply)
	})
}

// opsPending reports whether a partition operation awaits its answer.
func (f *fetcherActor) opsPending() bool { return f.pending > 0 }

// clearOp forgets ps's pending operation.
func (f *fetcherActor) clearOp(ps *partState) {
	if ps.op != 0 {
		ps.op = 0
		f.pending--
	}
}

// abandonOp forgets ps's pending operation without its answer: the
// partition actor may still be reading the batches of an append, so the
// Fetch connection's buffer is left to it (fetchConn.detach).
func (f *fetcherActor) abandonOp(ps *partState) {
	if ps.op != 0 && f.fc != nil {
		f.fc.detach()
	}
	f.clearOp(ps)
}

// opDone applies a partition operation's answer.
func (f *fetcherActor) opDone(m *opDone) {
	ps, ok := f.parts[m.tp]
	if !ok || ps.op != m.id {
		return // the partition was removed, re-added or timed out meanwhile
	}
	f.clearOp(ps)
	r := m.res
	switch m.kind {
	case opTruncate, opDiverge, opReset:
		if r.Err != nil {
			f.log.Info("truncation failed; retrying", zap.Stringer("partition", m.tp), zap.Error(r.Err))
			f.delay(ps) // retried on the wake-up timer even when nothing else is fetched
			return
		}
		if m.kind == opReset {
			f.log.Info("follower reset after OFFSET_OUT_OF_RANGE", zap.Stringer("partition", m.tp), zap.Int64("logEndOffset", r.LogEndOffset))
		}
		ps.truncating = ps.truncating && m.kind != opTruncate
		ps.resetting = ps.resetting && m.kind != opReset
		ps.offset = r.LogEndOffset
	case opAppend:
		switch {
		case r.Err == nil:
			ps.offset = r.LogEndOffset
		case errors.Is(r.Err, partition.ErrFenced):
			// a newer LeaderAndIsr is being applied
		case errors.Is(r.Err, storage.ErrUnexpectedAppendOffset):
			ps.truncating = true // our log moved under us: start over
		default:
			f.log.Warn("follower append failed", zap.Stringer("partition", m.tp), zap.Error(r.Err))
			f.delay(ps)
		}
	}
}

// armOpCheck makes sure an opCheck fires by the time the operation asked
// at `at` times out.
func (f *fetcherActor) armOpCheck(at time.Time) {
	if f.opTimer != nil {
		return
	}
	self, root := f.self, f.root
	f.opTimer = time.AfterFunc(time.Until(at.Add(partitionOpTimeout)), func() { root.Send(self, &opCheck{}) })
}

// expireOps gives up on the answers older than partitionOpTimeout (their
// partition actor stopped with the request queued, or is stuck) and
// re-arms the check for the oldest one left.
func (f *fetcherActor) expireOps(now time.Time) {
	var oldest time.Time
	for tp, ps := range f.parts {
		if ps.op == 0 {
			continue
		}
		if now.Sub(ps.opAt) >= partitionOpTimeout {
			f.log.Warn("partition did not answer; retrying", zap.Stringer("partition", tp), zap.Duration("after", now.Sub(ps.opAt)))
			f.abandonOp(ps)
			ps.truncating = true // its log end offset is unknown
			f.delay(ps)
			continue
		}
		if oldest.IsZero() || ps.opAt.Before(oldest) {
			oldest = ps.opAt
		}
	}
	if !oldest.IsZero() {
		f.armOpCheck(oldest)
	}
}
