package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Transactional offset commits (KIP-98, KIP-447): a transactional producer
// commits its consumer group's offsets inside its transaction with
// TxnOffsetCommit. The group coordinator appends them to __consumer_offsets
// as a transactional batch of that producer and stages them, per producer
// id, as pending; the transaction coordinator's COMMIT or ABORT marker in
// the same __consumer_offsets partition ends the transaction, and the
// partition's WriteTxnMarkers handler then calls
// Coordinator.CompleteTxnOffsets, which makes the group commit (CompleteTxn)
// or drop them. This is Kafka's GroupMetadata prepareTxnOffsetCommit /
// onTxnOffsetCommitAppend / failPendingTxnOffsetCommit /
// completePendingTxnOffsetCommit.

// PendingOffset is a transactional offset waiting for its transaction to
// end: the offset and the log offset of the batch that wrote it (-1 while
// the append is in flight).
type PendingOffset struct {
	OffsetAndMetadata
	Position int64
}

// TxnCommitRequest is a TxnOffsetCommit for one group. MemberID,
// InstanceID and Generation come with v3+ (KIP-447: the producer's
// consumer fences zombies by its group membership); older versions carry
// none (Generation -1, empty ids), and such a commit is accepted whatever
// the group's members, as Kafka does.
type TxnCommitRequest struct {
	Producer   TxnProducer
	MemberID   string
	InstanceID string
	Generation int32
	Offsets    map[TopicPartition]OffsetAndMetadata
	// VerificationGuard goes into the append's Batch (KIP-890: the
	// handler verified the transaction on the group's partition).
	VerificationGuard uint64
}

// TxnCommit handles a TxnOffsetCommit for an owner that does not defer
// the group's writes (see txnCommit): the code for every partition (0 =
// appended and pending in the producer's transaction).
func (g *Group) TxnCommit(now time.Time, req TxnCommitRequest) int16 {
	code := int16(-1)
	g.txnCommit(now, req, func(r commitResult) { code = r.code })
	return code
}

// txnCommit is Kafka's GroupCoordinator.doTxnCommitOffsets and
// GroupMetadataManager.storeOffsets for a transactional producer. An
// unknown group is created Empty first (whatever the generation, and it
// stays even if the checks fail, as Kafka's handleTxnCommitOffsets adds it
// before validating). The checks (validateTxnOffsetCommit) are those of
// an offset commit except that a commit without member id and generation
// is accepted by a group with members, and the group's state is not
// looked at (no REBALANCE_IN_PROGRESS; no member's session is touched).
// Accepted offsets are staged as the producer's pending offsets, then
// appended in one transactional batch of the producer; cb gets the
// append's outcome (accepted set). A failed append unstages them. With
// producer id -1 the offsets are a plain commit (storeOffsets).
func (g *Group) txnCommit(now time.Time, req TxnCommitRequest, cb func(commitResult)) {
	if !g.exists {
		g.exists = true
		g.transition(Empty, now)
	}
	if code := g.validateTxnOffsetCommit(req); code != 0 {
		cb(commitResult{code: code})
		return
	}
	offs := req.Offsets
	if req.Producer.ID < 0 {
		// No producer id (-1): Kafka's storeOffsets stores it as a plain
		// commit, visible once appended.
		g.storeOffsets(now, offs, false, cb)
		return
	}
	if len(offs) == 0 {
		cb(commitResult{accepted: true})
		return
	}
	pid := req.Producer.ID
	staged := g.pendingTxn[pid]
	if staged == nil {
		staged = map[TopicPartition]PendingOffset{}
		g.pendingTxn[pid] = staged
	}
	recs := make([]Record, 0, len(offs))
	for tp, o := range offs {
		recs = append(recs, Record{Key: OffsetKey(g.id, tp), Value: OffsetValue(o)})
		staged[tp] = PendingOffset{OffsetAndMetadata: o, Position: -1}
	}
	inc := g.incarnation
	prod := req.Producer
	g.writeBatch(now, Batch{Records: recs, Producer: &prod, VerificationGuard: req.VerificationGuard}, func(_ time.Time, pos int64, err error) {
		r := commitResult{accepted: true}
		if err != nil {
			r.code = storeErrorCode(err, true)
		}
		if !g.current(inc) || g.state == Dead {
			// Deleted (and maybe replaced by a new group of the same id)
			// meanwhile: the append only answers its request.
			cb(r)
			return
		}
		staged := g.pendingTxn[pid]
		for tp, o := range offs {
			p, ok := staged[tp]
			if !ok || p.OffsetAndMetadata != o || p.Position != -1 {
				continue // completed, removed or staged again meanwhile
			}
			if err != nil {
				delete(staged, tp)
			} else {
				p.Position = pos
				staged[tp] = p
			}
		}
		if staged != nil && len(staged) == 0 {
			delete(g.pendingTxn, pid)
		}
		cb(r)
	})
}

// validateTxnOffsetCommit is Kafka's GroupCoordinator.validateOffsetCommit
// with isTransactional: COORDINATOR_NOT_AVAILABLE for a Dead group; a
// commit with generation < 0 to an Empty group passes; one with a
// generation, member id or instance id must come from a current member
// (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) of the current generation
// (ILLEGAL_GENERATION); anything else passes.
func (g *Group) validateTxnOffsetCommit(req TxnCommitRequest) int16 {
	switch {
	case g.state == Dead:
		return kerr.CoordinatorNotAvailable.Code
	case req.Generation < 0 && g.state == Empty:
		return 0
	case req.Generation >= 0 || req.MemberID != "" || req.InstanceID != "":
		if code := g.validateCurrentMember(req.MemberID, req.InstanceID); code != 0 {
			return code
		}
		if req.Generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	}
	return 0
}

// CompleteTxn ends producerID's transaction for this group (Kafka's
// completePendingTxnOffsetCommit): on commit each of its pending offsets
// becomes the partition's committed offset unless the committed one was
// written later in the log (a plain OffsetCommit after the transactional
// one wins, as it would after a reload); on abort they are dropped. An
// offset whose append had not completed is dropped either way (Kafka
// fails on it: the marker cannot precede the record in the log). A Dead
// group, or one without pending offsets of producerID, is unchanged. It
// reports whether the group had pending offsets of producerID.
func (g *Group) CompleteTxn(producerID int64, commit bool) bool {
	staged, ok := g.pendingTxn[producerID]
	if !ok || g.state == Dead {
		return false
	}
	delete(g.pendingTxn, producerID)
	if !commit {
		return true
	}
	for tp, p := range staged {
		if p.Position < 0 {
			continue
		}
		if cur, ok := g.offsetPos[tp]; ok && cur > p.Position {
			continue
		}
		g.offsets[tp] = p.OffsetAndMetadata
		g.offsetPos[tp] = p.Position
	}
	return true
}

// PendingTxnProducers lists the producer ids with pending transactional
// offsets in this group.
func (g *Group) PendingTxnProducers() []int64 {
	out := make([]int64, 0, len(g.pendingTxn))
	for pid := range g.pendingTxn {
		out = append(out, pid)
	}
	return out
}

// hasPendingCommit is Kafka's hasPendingOffsetCommitsForTopicPartition: a
// plain commit being appended or a transactional one not yet ended.
func (g *Group) hasPendingCommit(tp TopicPartition) bool {
	if _, ok := g.pendingOffsets[tp]; ok {
		return true
	}
	for _, staged := range g.pendingTxn {
		if _, ok := staged[tp]; ok {
			return true
		}
	}
	return false
}

// dropPendingTxn forgets every producer's pending transactional offset of
// tp (Kafka's removeOffsets): a deleted offset must not come back when the
// transaction commits. The records stay in the log without tombstones, as
// in Kafka, so a committed transaction's offset reappears on a reload.
func (g *Group) dropPendingTxn(tp TopicPartition) {
	for pid, staged := range g.pendingTxn {
		delete(staged, tp)
		if len(staged) == 0 {
			delete(g.pendingTxn, pid)
		}
	}
}
