package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CommitRequest is an OffsetCommit for one group.
type CommitRequest struct {
	MemberID   string
	InstanceID string
	// Generation -1 with an empty member id is a "simple" commit from a
	// consumer that assigns partitions itself (assign()); it is accepted
	// only while the group has no members.
	Generation int32
	Offsets    map[TopicPartition]OffsetAndMetadata
}

// Commit handles an OffsetCommit (Kafka's handleCommitOffsets /
// doCommitOffsets) for an owner that does not defer the group's writes
// (see write): it returns the code for every partition (0 = stored), the
// offsets being durable in __consumer_offsets before it returns 0. A
// deferring owner uses commit, whose answer comes once the append is done.
//
// Codes: ILLEGAL_GENERATION (unknown group with generation >= 0, or a
// stale generation), UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID (not a
// current member; also a simple commit to a group with members),
// REBALANCE_IN_PROGRESS (CompletingRebalance: the member must sync first),
// COORDINATOR_NOT_AVAILABLE (Dead), or a store failure's code
// (storeErrorCode). Commits in PreparingRebalance are accepted: members
// learn of the rebalance from their heartbeat.
func (g *Group) Commit(now time.Time, req CommitRequest) int16 {
	code := int16(-1)
	g.commit(now, req, func(r commitResult) { code = r.code })
	return code
}

// commit checks an OffsetCommit and, when the group accepts it, appends
// its offsets; cb gets the result once (accepted says the group's checks
// passed: code is then the append's outcome, else the check's error).
// While the append is in flight the offsets are pending (Kafka's
// prepareOffsetCommit): OffsetFetch does not see them. They become the
// committed offsets when it succeeds, unless the group died (or was
// deleted and forgotten, a new group of the same id perhaps living in g
// now: see forget) or the partition's topic was deleted meanwhile; a
// failed append drops them.
func (g *Group) commit(now time.Time, req CommitRequest, cb func(commitResult)) {
	created := false
	if !g.exists {
		if req.Generation >= 0 {
			cb(commitResult{code: kerr.IllegalGeneration.Code})
			return
		}
		g.exists = true
		g.transition(Empty, now)
		created = true
	}
	if code := g.validateOffsetCommit(req); code != 0 {
		cb(commitResult{code: code})
		return
	}
	switch g.state {
	case CompletingRebalance:
		cb(commitResult{code: kerr.RebalanceInProgress.Code})
		return
	case Stable, PreparingRebalance:
		g.touch(g.members[req.MemberID], now)
	}
	g.storeOffsets(now, req.Offsets, created, cb)
}

// storeOffsets is Kafka's GroupMetadataManager.storeOffsets for a commit
// without producer: offs are pending while appended, then committed (see
// commit). created says the commit created the group, which a failed
// append then undoes.
func (g *Group) storeOffsets(now time.Time, offs map[TopicPartition]OffsetAndMetadata, created bool, cb func(commitResult)) {
	if len(offs) == 0 {
		cb(commitResult{accepted: true})
		return
	}
	recs := make([]Record, 0, len(offs))
	for tp, o := range offs {
		recs = append(recs, Record{Key: OffsetKey(g.id, tp), Value: OffsetValue(o)})
		g.pendingOffsets[tp] = o
	}
	inc := g.incarnation
	g.writeBatch(now, Batch{Records: recs}, func(_ time.Time, pos int64, err error) {
		if !g.current(inc) {
			// The group was deleted and forgotten meanwhile; the pending
			// offsets and the existence are the new group's. The append's
			// outcome is still this request's answer (Kafka's commit
			// callback skips the group update when it is Dead).
			r := commitResult{accepted: true}
			if err != nil {
				r.code = storeErrorCode(err, true)
			}
			cb(r)
			return
		}
		for tp, o := range offs {
			p, ok := g.pendingOffsets[tp]
			if !ok || g.state == Dead {
				continue // removed meanwhile (topic deleted, group gone)
			}
			// Kafka's onOffsetCommitAppend: the cache keeps the offset
			// written last in the log (a transaction's, committed after
			// this append started, may be newer).
			if cur, ok := g.offsetPos[tp]; err == nil && (!ok || cur <= pos) {
				g.offsets[tp] = o
				g.offsetPos[tp] = pos
			}
			if p == o {
				delete(g.pendingOffsets, tp) // else a newer commit is pending
			}
		}
		if err != nil {
			if created && g.exists && g.state == Empty && len(g.members) == 0 && !g.hasOffsets() {
				g.exists = false // the simple commit that created it wrote nothing
			}
			cb(commitResult{code: storeErrorCode(err, true), accepted: true})
			return
		}
		cb(commitResult{accepted: true})
	})
}

func (g *Group) validateOffsetCommit(req CommitRequest) int16 {
	switch {
	case g.state == Dead:
		return kerr.CoordinatorNotAvailable.Code
	case req.Generation < 0 && g.state == Empty:
		// Kafka's validateOffsetCommit: an admin client or a consumer
		// not using group management may commit to an Empty group,
		// whatever member id it sends.
		return 0
	case req.Generation >= 0 || req.MemberID != "" || req.InstanceID != "":
		if code := g.validateCurrentMember(req.MemberID, req.InstanceID); code != 0 {
			return code
		}
		if req.Generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	case g.state != Empty:
		// Only members may commit to a group that has members.
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// FetchedOffset is one partition's answer to OffsetFetch: Offset -1 and
// empty metadata when nothing is committed. ErrorCode is the partition's
// error (0, or UNSTABLE_OFFSET_COMMIT: see fetchOffsets).
type FetchedOffset struct {
	TopicPartition
	OffsetAndMetadata
	ErrorCode int16
}

// FetchOffsets returns the committed offsets of tps, or of every partition
// with a commit when tps is nil (sorted by topic and partition). Unknown or
// dead groups have no offsets. Commits whose append is in flight are not
// shown (the previous committed offset is).
func (g *Group) FetchOffsets(tps []TopicPartition) []FetchedOffset {
	return g.fetchOffsets(tps, false)
}

// fetchOffsets is FetchOffsets; with requireStable (OffsetFetch v7+,
// KIP-447) a partition with a commit still being appended, or with a
// transactional offset whose transaction has not ended, is answered
// UNSTABLE_OFFSET_COMMIT and offset -1 instead, as Kafka's getOffsets does
// for pending commits, so the client retries rather than reading an
// offset about to change.
func (g *Group) fetchOffsets(tps []TopicPartition, requireStable bool) []FetchedOffset {
	live := g.exists && g.state != Dead
	if tps == nil {
		if !live {
			return nil
		}
		tps = make([]TopicPartition, 0, len(g.offsets))
		for tp := range g.offsets {
			tps = append(tps, tp)
		}
		out := g.fetchOffsets(tps, requireStable)
		sortFetched(out)
		return out
	}
	out := make([]FetchedOffset, len(tps))
	for i, tp := range tps {
		out[i] = FetchedOffset{TopicPartition: tp, OffsetAndMetadata: OffsetAndMetadata{Offset: -1, LeaderEpoch: -1}}
		if !live {
			continue
		}
		if requireStable && g.hasPendingCommit(tp) {
			out[i].ErrorCode = kerr.UnstableOffsetCommit.Code
			continue
		}
		if o, ok := g.offsets[tp]; ok {
			out[i].OffsetAndMetadata = o
		}
	}
	return out
}

func sortFetched(xs []FetchedOffset) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && lessTP(xs[j].TopicPartition, xs[j-1].TopicPartition); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// SubscribedTopics is the union of the members' subscriptions for a
// "consumer" group (decoded from ConsumerMemberMetadata); ok is false when
// not known (other protocol types, undecodable metadata, no protocol).
func (g *Group) SubscribedTopics() (topics map[string]bool, ok bool) {
	if g.protocolType != "consumer" || g.protocol == "" {
		return nil, false
	}
	topics = map[string]bool{}
	for _, m := range g.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, false
		}
		for _, t := range md.Topics {
			topics[t] = true
		}
	}
	return topics, true
}

// DeleteOffsets handles an OffsetDelete (KIP-496) for an owner that does
// not defer the group's writes: the group-level code and one code per
// requested partition (see deleteOffsets).
func (g *Group) DeleteOffsets(now time.Time, tps []TopicPartition) (int16, []int16) {
	var top int16
	var codes []int16
	g.deleteOffsets(now, tps, func(t int16, c []int16) { top, codes = t, c })
	return top, codes
}

// deleteOffsets handles an OffsetDelete (KIP-496); cb gets the group-level
// code and one code per requested partition. Offsets of topics the
// members of a consumer group subscribe to are kept
// (GROUP_SUBSCRIBED_TO_TOPIC); a non-consumer group with members gets
// NON_EMPTY_GROUP. As Kafka's handleDeleteOffsets and cleanupGroupMetadata,
// the offsets leave the cache at once and the answer (0 for each removed
// partition) is given then: the deletion has happened, whatever becomes of
// its tombstones, which are appended best-effort (a failure is the owner's
// to log; the offsets may then come back when the partition is next
// loaded, as in Kafka, whose tombstones are appended with acks=0).
func (g *Group) deleteOffsets(now time.Time, tps []TopicPartition, cb func(int16, []int16)) {
	codes := make([]int16, len(tps))
	if !g.exists || g.state == Dead {
		cb(kerr.GroupIDNotFound.Code, nil)
		return
	}
	var subscribed map[string]bool
	if g.state != Empty {
		topics, ok := g.SubscribedTopics()
		if g.protocolType != "consumer" {
			cb(kerr.NonEmptyGroup.Code, nil)
			return
		}
		if ok {
			subscribed = topics
		}
	}
	var recs []Record
	for i, tp := range tps {
		if subscribed[tp.Topic] {
			codes[i] = kerr.GroupSubscribedToTopic.Code
			continue
		}
		_, ok := g.offsets[tp]
		_, pending := g.pendingOffsets[tp]
		if ok || pending {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
			delete(g.offsets, tp)
			delete(g.offsetPos, tp)
			delete(g.pendingOffsets, tp)
		}
		g.dropPendingTxn(tp)
	}
	cb(0, codes)
	if len(recs) > 0 {
		g.write(now, recs, func(time.Time, error) {})
	}
}

// Delete handles DeleteGroups for this group for an owner that does not
// defer the group's writes (see delete).
func (g *Group) Delete(now time.Time) int16 {
	var code int16
	g.delete(now, func(c int16) { code = c })
	return code
}

// delete handles DeleteGroups for this group: cb gets GROUP_ID_NOT_FOUND
// (unknown or dead), NON_EMPTY_GROUP (has members), or 0: the group is
// Dead at once, its offsets gone, and, as Kafka's handleDeleteGroups, the
// answer says so whatever becomes of the tombstones of its metadata and
// offsets, appended best-effort (cleanupGroupMetadata appends them with
// acks=0; a failure is the owner's to log, and the group may then come
// back when the partition is next loaded).
func (g *Group) delete(now time.Time, cb func(int16)) {
	if !g.exists || g.state == Dead {
		cb(kerr.GroupIDNotFound.Code)
		return
	}
	if g.state != Empty {
		cb(kerr.NonEmptyGroup.Code)
		return
	}
	recs := make([]Record, 0, len(g.offsets)+len(g.pendingOffsets)+1)
	for tp := range g.offsets {
		recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
	}
	for tp := range g.pendingOffsets {
		if _, ok := g.offsets[tp]; !ok {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
		}
	}
	recs = append(recs, Record{Key: GroupKey(g.id)})
	g.offsets = map[TopicPartition]OffsetAndMetadata{}
	g.offsetPos = map[TopicPartition]int64{}
	g.pendingOffsets = map[TopicPartition]OffsetAndMetadata{}
	// Open transactions' offsets go with the group, untombstoned (their
	// records are the transactions'), as Kafka's removed GroupMetadata.
	g.pendingTxn = map[int64]map[TopicPartition]PendingOffset{}
	g.transition(Dead, now)
	cb(0)
	g.write(now, recs, func(time.Time, error) {})
}

// ExpireOffsets deletes the offsets whose retention has passed (Kafka's
// cleanupGroupMetadata; offsets.retention.minutes, KIP-211): in an Empty
// group retention counts from when the group became empty; in a Stable
// consumer group, offsets of topics nobody subscribes to expire from their
// commit time; in a group used only for commits (no protocol type), from
// their commit time. Offsets committed with an explicit expire time (v2–v4)
// expire at it. An Empty group left with no offsets becomes Dead and its
// metadata is tombstoned. It returns the number of offsets removed.
func (g *Group) ExpireOffsets(now time.Time) int {
	if !g.exists || g.state == Dead {
		return 0
	}
	retention := g.cfg.OffsetsRetention
	var base func(o OffsetAndMetadata) time.Time
	var subscribed map[string]bool
	switch {
	case g.protocolType == "":
		base = func(o OffsetAndMetadata) time.Time { return o.CommitTime }
	case g.state == Empty:
		st := g.stateTime
		base = func(OffsetAndMetadata) time.Time { return st }
	case g.state == Stable && g.protocolType == "consumer":
		topics, ok := g.SubscribedTopics()
		if !ok {
			return 0
		}
		subscribed = topics
		base = func(o OffsetAndMetadata) time.Time { return o.CommitTime }
	default:
		return 0
	}
	var expired []TopicPartition
	for tp, o := range g.offsets {
		if _, pending := g.pendingOffsets[tp]; subscribed[tp.Topic] || pending {
			continue
		}
		if !o.ExpireTime.IsZero() {
			if !now.Before(o.ExpireTime) {
				expired = append(expired, tp)
			}
			continue
		}
		if now.Sub(base(o)) >= retention {
			expired = append(expired, tp)
		}
	}
	recs := make([]Record, 0, len(expired)+1)
	for _, tp := range expired {
		recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
	}
	// An Empty group keeps living while it has commits in flight or open
	// transactions' offsets (hasOffsets).
	dead := g.state == Empty && len(g.offsets) == len(expired) && len(g.pendingOffsets) == 0 && len(g.pendingTxn) == 0
	if dead {
		recs = append(recs, Record{Key: GroupKey(g.id)})
	}
	if len(recs) == 0 {
		return 0
	}
	// As Kafka's cleanupGroupMetadata: out of the cache first, then the
	// tombstones (a failed append is the owner's to report; the offsets
	// may then come back when the partition is next loaded).
	for _, tp := range expired {
		delete(g.offsets, tp)
		delete(g.offsetPos, tp)
	}
	if dead {
		g.transition(Dead, now)
	}
	g.write(now, recs, func(time.Time, error) {})
	return len(expired)
}

// RemoveTopicOffsets drops the committed offsets of every partition of the
// given (deleted) topics, whatever the group's state and subscriptions, as
// Kafka's GroupMetadataManager.cleanupGroupMetadata does for
// handleDeletedPartitions: an Empty group left with no offsets becomes Dead.
// The offsets leave memory first — the topics are gone, so nothing may
// show them — then their tombstones (and the group's, if Dead) are written
// in one batch. A write failure is returned when the group performs its
// writes at once; a deferring owner learns it from the write's outcome
// (the records may then come back when the partition is next loaded). It
// returns how many committed offsets were removed.
func (g *Group) RemoveTopicOffsets(now time.Time, topics map[string]bool) (int, error) {
	if !g.exists || g.state == Dead || len(topics) == 0 {
		return 0, nil
	}
	var recs []Record
	for tp := range g.offsets {
		if topics[tp.Topic] {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
			delete(g.offsets, tp)
			delete(g.offsetPos, tp)
		}
	}
	removed := len(recs)
	for tp := range g.pendingOffsets {
		if topics[tp.Topic] {
			// Kafka's removeOffsets drops pending commits too: their
			// append's success must not bring them back.
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
			delete(g.pendingOffsets, tp)
		}
	}
	txnDropped := false
	for pid, staged := range g.pendingTxn {
		for tp := range staged {
			if topics[tp.Topic] {
				// Not tombstoned: the records are the transaction's.
				delete(staged, tp)
				txnDropped = true
			}
		}
		if len(staged) == 0 {
			delete(g.pendingTxn, pid)
		}
	}
	if len(recs) == 0 && !txnDropped {
		return 0, nil
	}
	if g.state == Empty && !g.hasOffsets() {
		g.transition(Dead, now)
		recs = append(recs, Record{Key: GroupKey(g.id)})
	}
	var werr error
	if len(recs) > 0 {
		g.write(now, recs, func(_ time.Time, err error) { werr = err })
	}
	return removed, werr
}
