package partition

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
)

// Core is the pure decision part of one partition replica, as etcd's raft
// library is built: no actors, no I/O, an injected clock. It owns the
// Replica state (role, offsets, ISR, followers), the Producers state and
// the acks=-1 produces waiting for the high watermark, and the ISR change
// in flight. Every input returns Effects — replies to send, an ISR to
// write, a view to publish — which the partition actor performs; the
// results of slow effects (the ISR write to ZooKeeper) come back as
// inputs (IsrWritten). The log append stays with the actor, which owns
// the log: CheckProduce decides whether to append, Appended takes the
// outcome.
type Core struct {
	rep  *Replica
	prod *Producers
	// pending are acks=-1 produces waiting for the high watermark to pass
	// their last offset.
	pending []pendingProduce
	// proposal is the ISR change being written (nil when none): one at a
	// time, as Kafka's AlterIsrManager allows one in-flight item per
	// partition.
	proposal *IsrProposal
	// retryAt is set (non-zero) when the pending proposal's write failed:
	// the same proposal is written again at the next IsrTick, or at a
	// follower fetch from then on. Its members stay in the maximal ISR
	// meanwhile — a failed write may still have landed (an answer lost
	// with the connection), and keeping them is the conservative side
	// either way: an expansion keeps waiting for the new member, a shrink
	// keeps counting the removed one.
	retryAt time.Time
	// canAlterIsr: an IsrWriter is configured (without one the ISR is what
	// LeaderAndIsr says and nothing is proposed); lag is
	// replica.lag.time.max.ms.
	canAlterIsr bool
	lag         time.Duration
	// nextSeq numbers proposals; shared by the incarnations of one
	// partition (Handle) so a late result is never taken for a newer
	// proposal's.
	nextSeq func() uint64
}

type pendingProduce struct {
	p      *Produce
	res    ProduceResult
	needHW int64 // complete once HighWatermark >= needHW
}

// CoreConfig is what NewCore needs besides the replica.
type CoreConfig struct {
	TP       TopicPartition
	BrokerID int32
	// Now is the clock (follower lag, replica.lag.time.max.ms); nil = time.Now.
	Now func() time.Time
	// AlterIsr: ISR changes are proposed (an IsrWriter exists).
	AlterIsr bool
	// Lag is replica.lag.time.max.ms (<= 0: never shrink).
	Lag time.Duration
	// NextSeq numbers proposals (nil: a counter of this core's own).
	NextSeq func() uint64
}

// NewCore is a replica that has not been told its role, with empty
// producer state.
func NewCore(cfg CoreConfig) *Core {
	rep := NewReplica(cfg.TP, cfg.BrokerID)
	rep.Now = cfg.Now
	c := &Core{rep: rep, prod: NewProducers(), canAlterIsr: cfg.AlterIsr, lag: cfg.Lag, nextSeq: cfg.NextSeq}
	if c.nextSeq == nil {
		var n uint64
		c.nextSeq = func() uint64 { n++; return n }
	}
	return c
}

// Replica is the core's replica state (read-only for callers).
func (c *Core) Replica() *Replica { return c.rep }

// Producers is the core's producer state.
func (c *Core) Producers() *Producers { return c.prod }

// Proposal is the ISR change in flight (nil when none).
func (c *Core) Proposal() *IsrProposal { return c.proposal }

// Waiting is the number of acks=-1 produces waiting for the high watermark.
func (c *Core) Waiting() int { return len(c.pending) }

// LastStableOffset is min(high watermark, first offset of the earliest
// transaction not yet decided or whose marker is not yet below the high
// watermark): where read_committed fetches stop (Kafka's
// UnifiedLog.lastStableOffset), and never below the log start offset
// (a transaction whose first batches were deleted is unstable from the
// log start on, as Kafka's maybeIncrementFirstUnstableOffset).
func (c *Core) LastStableOffset() int64 {
	return max(c.prod.LastStableOffset(c.rep.HighWatermark), min(c.rep.LogStartOffset, c.rep.HighWatermark))
}

// IsrProposal is an ISR change to write with IsrWriter.AlterIsr: ISR for
// TP under LeaderEpoch, conditional on the partition state znode still
// being at ZkVersion. Seq identifies it when its result comes back.
type IsrProposal struct {
	Seq         uint64
	TP          TopicPartition
	LeaderEpoch int32
	ZkVersion   int32
	From, ISR   []int32 // the committed ISR it was proposed over, and the new one
	Why         string  // "shrink" or "expand"
}

// IsrResult is the outcome of writing an IsrProposal: the znode's new
// version, or the error AlterIsr returned.
type IsrResult struct {
	Proposal     IsrProposal
	NewZkVersion int32
	Err          error
}

// ProduceReply is one answer to send on a Produce's Reply channel.
type ProduceReply struct {
	P   *Produce
	Res ProduceResult
}

// Effects is what an input asks the actor to do, in this order: record
// an aborted transaction in the log's transaction index (Aborted non-nil:
// before the View that may let read_committed readers past it), publish
// a new View (offsets, role, ISR, high watermark changed), store the
// committed ISR (Committed non-nil: the Handle's state takes ISR and
// ZkVersion), send Replies, and start writing Propose.
type Effects struct {
	Aborted   *storage.AbortedTxn
	Publish   bool
	Committed *IsrProposal // the proposal that was written
	Replies   []ProduceReply
	Propose   *IsrProposal
}

func (e *Effects) reply(p *Produce, res ProduceResult) {
	e.Replies = append(e.Replies, ProduceReply{P: p, Res: res})
}

// Start installs the log's offsets and rebuilt producer state and applies
// the last LeaderAndIsr with the checkpointed high watermark (-1 = none):
// the first input of every incarnation.
func (c *Core) Start(logStart, logEnd int64, prod *Producers, state LeaderAndIsr, checkpointHW int64) {
	c.prod = prod
	c.rep.SetLogOffsets(logStart, logEnd)
	_ = c.rep.Apply(state, checkpointHW)
}

// Resume takes over p, the proposal a previous incarnation had pending
// when it stopped (the Handle keeps it), after Start: when it was made
// over the state this core holds (leader, same leader epoch, znode
// version and committed ISR) it is pending again — its write may be in
// flight or have landed, so its members stay in the maximal ISR — and it
// is written again at the next tick (or a fetch after the backoff) unless
// its result arrives first. It reports whether p was taken.
func (c *Core) Resume(p *IsrProposal) bool {
	r := c.rep
	if p == nil || !c.canAlterIsr || r.Role != RoleLeader || p.LeaderEpoch != r.LeaderEpoch || p.ZkVersion != r.ZkVersion || !slices.Equal(p.From, r.ISR) {
		return false
	}
	r.ProposeISR(p.ISR)
	c.proposal = p
	c.retryAt = r.now().Add(isrRetryBackoff)
	return true
}

// Apply takes a LeaderAndIsr from the controller. It replaces the state
// and any pending ISR proposal (its result will be dropped) — except when
// the state is the one this leader already holds (same leader epoch and
// znode version, see Replica.Apply): the proposal stays pending. A replica
// that no longer leads fails its waiting acks=-1 produces with
// NOT_LEADER_OR_FOLLOWER; the client retries on the new leader.
func (c *Core) Apply(s LeaderAndIsr) (*kerr.Error, Effects) {
	var eff Effects
	if err := c.rep.Apply(s, -1); err != nil {
		return err, eff
	}
	if c.rep.PendingISR == nil {
		c.proposal, c.retryAt = nil, time.Time{}
	}
	eff.Publish = true
	if c.rep.Role != RoleLeader {
		c.failPending(&eff, kerr.NotLeaderForPartition)
	}
	c.completePending(&eff)
	return nil, eff
}

func errResult(err *kerr.Error, msg string) ProduceResult {
	return ProduceResult{Err: err, ErrorMessage: msg, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1}
}

// ProduceVerdict is what CheckProduce decided for a Produce.
type ProduceVerdict int8

// CheckProduce's verdicts.
const (
	// ProduceAnswer: answer the returned result now, without an append.
	ProduceAnswer ProduceVerdict = iota
	// ProduceAppend: append the batch, then call Appended.
	ProduceAppend
	// ProduceWaits: no append (a duplicate retry of a batch already in the
	// log), but the acks=-1 answer waits in the core for the high watermark
	// to pass the original batch; a later input's Effects send it.
	ProduceWaits
)

// CheckProduce decides whether p is appended. ProduceAnswer: answered
// without an append with res (not the leader, NOT_ENOUGH_REPLICAS with the
// committed ISR below min.insync.replicas, a producer-state error, or a
// duplicate retry answered with its original offset). ProduceWaits: a
// duplicate retry with acks=-1 whose original batch the high watermark has
// not passed yet: as in Kafka, whose delayed produce for a duplicate waits
// for the original's last offset, it is answered only once every member of
// the maximal ISR has the batch (a retry must not be acknowledged with
// fewer replicas than its first try would have been).
func (c *Core) CheckProduce(p *Produce) (res ProduceResult, v ProduceVerdict) {
	if c.rep.Role != RoleLeader {
		return errResult(kerr.NotLeaderForPartition, ""), ProduceAnswer
	}
	if p.Acks == -1 && c.rep.InSyncCount() < c.rep.MinInsync {
		// Kafka Partition.appendRecordsToLeader: refused before the
		// append, over the committed ISR (isrState.isr, not the maximal).
		return errResult(kerr.NotEnoughReplicas, fmt.Sprintf("ISR %v is smaller than min.insync.replicas=%d", c.rep.ISR, c.rep.MinInsync)), ProduceAnswer
	}
	if p.Header.IsControl() {
		if p.Marker == nil || !p.Header.HasProducerID() {
			return errResult(kerr.InvalidRecord, "a control batch must be a transaction marker with a producer id"), ProduceAnswer
		}
		if kerrv := c.prod.CheckMarker(p.Header.ProducerID, p.Header.ProducerEpoch, p.Marker.CoordinatorEpoch); kerrv != nil {
			return errResult(kerrv, ""), ProduceAnswer
		}
		return ProduceResult{}, ProduceAppend
	}
	dup, kerrv, verify := c.prod.CheckVerified(&p.Header, TxnVerification{Required: p.TxnVerify, Guard: p.VerificationGuard})
	if verify {
		// KIP-890: the handler verifies with the coordinator, then sends
		// the batch again with this guard (txn_verify.go).
		g := c.prod.StartVerification(p.Header.ProducerID, p.Header.BaseSequence, p.Header.ProducerEpoch, c.rep.now().UnixMilli())
		res = errResult(kerr.InvalidTxnState, "the partition's transaction is not verified yet")
		res.VerifyGuard = g
		p.tr = produceTrace{verify: true}
		return res, ProduceAnswer
	}
	if kerrv != nil {
		msg := ""
		if kerrv == kerr.InvalidTxnState && p.VerificationGuard != 0 {
			msg = "Record was not part of an ongoing transaction" // Kafka's message for a void guard
		}
		return errResult(kerrv, msg), ProduceAnswer
	}
	if dup != nil {
		// A retry of a batch already in the log: answer its original offset.
		res = ProduceResult{BaseOffset: dup.FirstOffset, LogAppendTime: -1, LogStartOffset: c.rep.LogStartOffset}
		if p.Acks == -1 && c.rep.HighWatermark <= dup.LastOffset {
			c.pending = append(c.pending, pendingProduce{p: p, res: res, needHW: dup.LastOffset + 1})
			p.tr = produceTrace{first: dup.FirstOffset, last: dup.LastOffset, hw: c.rep.HighWatermark, waits: true}
			return res, ProduceWaits
		}
		return res, ProduceAnswer
	}
	return ProduceResult{}, ProduceAppend
}

// Appended takes p's successful append (info, and the log's offsets
// afterwards). done is false when the reply waits for the high watermark
// (acks=-1 with followers in the maximal ISR); it is then sent by a later
// input's Effects. eff publishes the new log end offset and may release
// other waiting produces.
func (c *Core) Appended(p *Produce, info storage.AppendInfo, logStart, logEnd int64) (res ProduceResult, done bool, eff Effects) {
	h := p.Header
	h.BaseOffset = info.FirstOffset
	if p.Marker != nil {
		h.MaxTimestamp = info.MaxTimestamp
		if done, lso := c.prod.ApplyMarker(&h, *p.Marker); done != nil && done.Aborted {
			eff.Aborted = &storage.AbortedTxn{ProducerID: done.ProducerID, FirstOffset: done.FirstOffset, LastOffset: done.LastOffset, LastStableOffset: lso}
		}
	} else {
		c.prod.Update(&h, info.MaxTimestamp)
	}
	c.rep.SetLogOffsets(logStart, logEnd)
	eff.Publish = true
	res = ProduceResult{BaseOffset: info.FirstOffset, LogAppendTime: info.LogAppendTime, LogStartOffset: c.rep.LogStartOffset}
	p.tr = produceTrace{appended: true, first: info.FirstOffset, last: info.LastOffset, hw: c.rep.HighWatermark}
	if p.Acks == -1 && c.rep.HighWatermark <= info.LastOffset {
		c.pending = append(c.pending, pendingProduce{p: p, res: res, needHW: info.LastOffset + 1})
		p.tr.waits = true
		return res, false, eff
	}
	c.completePending(&eff)
	return res, true, eff
}

// LogChanged takes new log offsets after a change that is not an append
// (DeleteRecords, retention).
func (c *Core) LogChanged(logStart, logEnd int64) Effects {
	c.rep.SetLogOffsets(logStart, logEnd)
	eff := Effects{Publish: true}
	c.completePending(&eff)
	return eff
}

// SetMinInsync changes min.insync.replicas (values below 1 mean 1); it
// applies to the next acks=-1 produces and completions.
func (c *Core) SetMinInsync(n int) { c.rep.MinInsync = max(n, 1) }

// DeleteRecordsBefore decides a DeleteRecords to offset (-1: the high
// watermark, as Kafka): the offset to delete below and whether the log
// must change (del false: already at or past it), or the error —
// NOT_LEADER_OR_FOLLOWER when not leading, OFFSET_OUT_OF_RANGE below 0 or
// above the high watermark. The actor deletes, then calls LogChanged.
func (c *Core) DeleteRecordsBefore(offset int64) (before int64, del bool, err *kerr.Error) {
	if c.rep.Role != RoleLeader {
		return -1, false, kerr.NotLeaderForPartition
	}
	if offset == -1 {
		offset = c.rep.HighWatermark
	}
	if offset < 0 || offset > c.rep.HighWatermark {
		return -1, false, kerr.OffsetOutOfRange
	}
	return offset, offset > c.rep.LogStartOffset, nil
}

// FollowerFetch records, on the leader, follower replica's Fetch at
// fetchOffset (its log end offset): the high watermark may advance
// (releasing acks=-1 produces) and, with no change in flight, a follower
// that caught up is proposed back into the ISR. NOT_LEADER_OR_FOLLOWER
// when this replica does not lead or replica is not an assigned follower.
func (c *Core) FollowerFetch(replica int32, fetchOffset int64, tr *fetchTrace) (*kerr.Error, Effects) {
	var eff Effects
	tr.hwBefore = c.rep.HighWatermark
	tr.hw, tr.leo = tr.hwBefore, c.rep.LogEndOffset
	advanced, expand, ok := c.rep.UpdateFollower(replica, fetchOffset)
	if !ok {
		return kerr.NotLeaderForPartition, eff
	}
	if expand != nil && c.canAlterIsr {
		c.propose(&eff, expand, "expand")
	} else if !c.retryAt.IsZero() && !c.rep.now().Before(c.retryAt) {
		c.retry(&eff)
	}
	if advanced {
		eff.Publish = true
		tr.released = c.completePending(&eff)
	}
	tr.hw = c.rep.HighWatermark
	return nil, eff
}

// IsrTick is the periodic shrink check (every half
// replica.lag.time.max.ms, Kafka's isr-expiration task): with no change in
// flight, followers that have not caught up within the lag are proposed
// out of the ISR (Kafka Partition.maybeShrinkIsr).
func (c *Core) IsrTick() Effects {
	var eff Effects
	if !c.canAlterIsr {
		return eff
	}
	if !c.retryAt.IsZero() {
		c.retry(&eff)
		return eff
	}
	if shrunk := c.rep.LaggingISR(c.lag); shrunk != nil {
		c.propose(&eff, shrunk, "shrink")
	}
	return eff
}

// propose starts an ISR change. The high watermark does not move: an
// expansion's maximal ISR only adds a member that has reached it, and a
// shrink keeps the lagging member in it until the commit.
func (c *Core) propose(eff *Effects, isr []int32, why string) {
	c.rep.ProposeISR(isr)
	c.proposal = &IsrProposal{Seq: c.nextSeq(), TP: c.rep.TP, LeaderEpoch: c.rep.LeaderEpoch, ZkVersion: c.rep.ZkVersion,
		From: slices.Clone(c.rep.ISR), ISR: c.rep.PendingISR, Why: why}
	eff.Propose = c.proposal
}

// isrRetryBackoff is the least time between a failed ISR write and its
// retry from a follower fetch (IsrTick retries regardless), so a write
// that fails at once is not repeated at every fetch.
const isrRetryBackoff = 500 * time.Millisecond

// retry writes the pending proposal again, unchanged (same base
// zkVersion: a write that landed is recognised by the writer).
func (c *Core) retry(eff *Effects) {
	c.retryAt = time.Time{}
	p := *c.proposal
	eff.Propose = &p
}

// IsrWritten takes the result of writing a proposal. A success is
// committed when the state it was proposed over is still the one held
// (same leader epoch and znode version, still leader) — also after an
// actor restart lost the proposal, since the conditional write proves the
// znode now holds it; anything else (a LeaderAndIsr or another commit
// came between) is dropped, as is a failure of a proposal that is no
// longer the pending one. A failure of the pending one keeps it pending
// (PendingISR stays in the maximal ISR) and schedules its retry (see
// retryAt) until it succeeds or a newer LeaderAndIsr replaces it.
// committed reports whether the new ISR was installed.
func (c *Core) IsrWritten(r IsrResult) (committed bool, eff Effects) {
	pending := c.proposal != nil && c.proposal.Seq == r.Proposal.Seq
	if r.Err == nil && c.rep.Role == RoleLeader && r.Proposal.LeaderEpoch == c.rep.LeaderEpoch && r.Proposal.ZkVersion == c.rep.ZkVersion {
		c.proposal, c.retryAt = nil, time.Time{}
		c.rep.SetISR(r.Proposal.ISR, r.NewZkVersion)
		eff.Publish = true
		p := r.Proposal
		eff.Committed = &p
		c.completePending(&eff)
		return true, eff
	}
	if !pending || c.rep.Role != RoleLeader {
		return false, eff
	}
	c.retryAt = c.rep.now().Add(isrRetryBackoff)
	return false, eff
}

// completePending answers the acks=-1 produces the high watermark now
// covers; it returns how many it answered.
func (c *Core) completePending(eff *Effects) (answered int) {
	n := 0
	for _, w := range c.pending {
		if c.rep.HighWatermark >= w.needHW {
			if c.rep.InSyncCount() < c.rep.MinInsync {
				// Kafka DelayedProduce: replicated to the whole ISR, but the
				// committed ISR shrank below min.insync.replicas meanwhile.
				eff.reply(w.p, errResult(kerr.NotEnoughReplicasAfterAppend, ""))
			} else {
				eff.reply(w.p, w.res)
			}
			answered++
			continue
		}
		c.pending[n] = w
		n++
	}
	clear(c.pending[n:])
	c.pending = c.pending[:n]
	return answered
}

// FailWaiting fails every waiting acks=-1 produce with err (the actor
// restarts or stops, or the replica stopped leading).
func (c *Core) FailWaiting(err *kerr.Error) Effects {
	var eff Effects
	c.failPending(&eff, err)
	return eff
}

func (c *Core) failPending(eff *Effects, err *kerr.Error) {
	for _, w := range c.pending {
		eff.reply(w.p, errResult(err, ""))
	}
	clear(c.pending)
	c.pending = c.pending[:0]
}
