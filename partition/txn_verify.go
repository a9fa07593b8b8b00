package partition

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

// KIP-890 part 1 on the partition leader (Kafka 3.6+,
// transaction.partition.verification.enable): a client's transactional
// batch that would open the producer's transaction on this partition is
// appended only once the transaction coordinator confirmed the partition
// is in the transaction (AddPartitionsToTxn v4+ VerifyOnly).
//
// The exchange, with the partition actor never waiting:
//
//  1. The Produce handler sends the batch with TxnVerify set and no guard.
//     Core.CheckProduce finds no transaction ongoing for the producer,
//     starts a verification (StartVerification: a fresh guard, or the one
//     in progress) and answers at once with ProduceResult.VerifyGuard.
//  2. The handler asks the coordinator, off the actor and off the
//     connection's reader goroutine.
//  3. Verified, it sends the batch again with VerificationGuard. The
//     append goes ahead only if that guard is still the producer's: a
//     marker (ApplyMarker) or another transactional append (Update) in
//     between cleared it, and the batch is refused with INVALID_TXN_STATE
//     instead of opening a transaction the coordinator no longer knows
//     (a hanging transaction, holding the last stable offset back).
//
// A batch of a transaction already ongoing here at the batch's epoch
// passes without any of this (Kafka's hasOngoingTransaction(producerId,
// producerEpoch)); one at another epoch is verified like a first batch,
// and so is an unguarded one out of sequence (it overtook pipelined
// batches still being verified; the handler sends it again behind them).
// The lowest-sequence rule of a verification applies only while the
// transaction is not yet open here.
//
// Coordinator-origin batches (the group coordinator's TxnOffsetCommit
// records in __consumer_offsets, IsCoordinatorBatch) are verified before
// the group coordinator builds them, as Kafka's GroupCoordinator
// .handleTxnCommitOffsets does with ReplicaManager
// .maybeStartTransactionVerificationForPartition: the TxnOffsetCommit
// handler gets a guard from Handle.StartTxnVerification (0 when the
// producer's transaction is already ongoing here: nothing to verify), asks
// the coordinator, and the guard rides the group's append (Produce
// .VerificationGuard). There is no second round for them: a coordinator
// batch that needs verification and has no current guard is refused with
// INVALID_TXN_STATE.

// TxnVerification is what a leader append knows of KIP-890 verification.
type TxnVerification struct {
	// Required: transaction.partition.verification.enable (Kafka's
	// ProducerStateManagerConfig.transactionVerificationEnabled).
	Required bool
	// Guard is the verification guard the coordinator's answer was for
	// (from ProduceResult.VerifyGuard); 0 before any verification.
	Guard uint64
}

// verification is one producer's verification in progress (Kafka's
// VerificationStateEntry).
type verification struct {
	guard uint64
	// lowestSeq and epoch: the lowest sequence seen while verifying, in
	// the highest epoch seen; a higher sequence is refused until the
	// lower one is in the log, so a retried lower batch cannot be
	// overtaken (Kafka's maybeUpdateLowestSequenceAndEpoch).
	lowestSeq int32
	epoch     int16
	startedMs int64 // expires with producer.id.expiration.ms
}

// guards numbers verification guards process-wide, so a guard of a
// restarted actor's predecessor never matches a new one. 0 is no guard.
var guards atomic.Uint64

// StartVerification starts, or joins, the verification of producerID's
// next transaction on this partition for a batch starting at sequence seq
// with epoch (Kafka's maybeCreateVerificationStateEntry) and returns its
// guard (never 0). nowMs starts the entry's expiry.
func (p *Producers) StartVerification(producerID int64, seq int32, epoch int16, nowMs int64) uint64 {
	vs := p.verifying[producerID]
	if vs == nil {
		vs = &verification{guard: guards.Add(1), lowestSeq: seq, epoch: epoch, startedMs: nowMs}
		p.verifying[producerID] = vs
		return vs.guard
	}
	if epoch == vs.epoch && seq < vs.lowestSeq {
		vs.lowestSeq = seq
	}
	if epoch > vs.epoch {
		vs.epoch, vs.lowestSeq = epoch, seq
	}
	return vs.guard
}

// VerificationGuard is producerID's verification guard in progress, 0
// when none (tests and tracing).
func (p *Producers) VerificationGuard(producerID int64) uint64 {
	if vs := p.verifying[producerID]; vs != nil {
		return vs.guard
	}
	return 0
}

// startTxnVerification asks the partition actor for a TxnOffsetCommit's
// verification guard (Handle.StartTxnVerification).
type startTxnVerification struct {
	producerID int64
	epoch      int16
	done       chan TxnVerificationStart // one slot
}

// TxnVerificationStart is the actor's answer to StartTxnVerification.
type TxnVerificationStart struct {
	// Guard is the verification guard to verify with the coordinator and
	// then append with; 0 when the producer's transaction is already
	// ongoing on the partition (no verification: Kafka's
	// VerificationGuard.SENTINEL from maybeStartTransactionVerification).
	Guard uint64
	// Err is NOT_LEADER_OR_FOLLOWER when this replica does not lead the
	// partition (or no actor runs), KAFKA_STORAGE_ERROR when offline,
	// REQUEST_TIMED_OUT when the actor did not answer in time.
	Err *kerr.Error
}

// StartCoordinatorVerification is Kafka's
// UnifiedLog.maybeStartTransactionVerification for a coordinator-origin
// batch (no sequence): guard 0 when producerID has a transaction ongoing
// here at epoch, else a verification started or joined for epoch;
// NOT_LEADER_OR_FOLLOWER off the leader.
func (c *Core) StartCoordinatorVerification(producerID int64, epoch int16) (uint64, *kerr.Error) {
	if c.rep.Role != RoleLeader {
		return 0, kerr.NotLeaderForPartition
	}
	if c.prod.m[producerID].ongoingAt(epoch) {
		return 0, nil
	}
	return c.prod.StartVerification(producerID, record.NoSequence, epoch, c.rep.now().UnixMilli()), nil
}

// StartTxnVerification starts the KIP-890 verification of producerID's
// transaction on this partition for a coordinator-origin append (the
// group coordinator's TxnOffsetCommit records, Kafka 3.6+): see
// Core.StartCoordinatorVerification and TxnVerificationStart. It waits for
// the actor (which answers at once, without I/O): call it off the
// connection's reader goroutine. Bounded by ReplicationAskTimeout and ctx.
func (h *Handle) StartTxnVerification(ctx context.Context, producerID int64, epoch int16) TxnVerificationStart {
	if v := h.View(); v.Err != nil {
		return TxnVerificationStart{Err: v.Err}
	}
	pid := h.pid.Load()
	if pid == nil {
		return TxnVerificationStart{Err: kerr.NotLeaderForPartition}
	}
	m := &startTxnVerification{producerID: producerID, epoch: epoch, done: make(chan TxnVerificationStart, 1)}
	h.root.Send(pid, m)
	t := time.NewTimer(replicationAskTimeout)
	defer t.Stop()
	select {
	case r := <-m.done:
		return r
	case <-t.C:
	case <-ctx.Done():
	}
	return TxnVerificationStart{Err: kerr.RequestTimedOut}
}
