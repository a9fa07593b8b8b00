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
// doCommitOffsets) and returns the code for every partition (0 = stored).
// The offsets are durable in __consumer_offsets before Commit returns 0.
//
// Codes: ILLEGAL_GENERATION (unknown group with generation >= 0, or a
// stale generation), UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID (not a
// current member; also a simple commit to a group with members),
// REBALANCE_IN_PROGRESS (CompletingRebalance: the member must sync first),
// COORDINATOR_NOT_AVAILABLE (Dead), or a store failure's code. Commits in
// PreparingRebalance are accepted: members learn of the rebalance from
// their heartbeat.
func (g *Group) Commit(now time.Time, req CommitRequest) int16 {
	code, _ := g.commit(now, req)
	return code
}

// commit is Commit that also reports whether the group's checks passed
// (accepted): code is then the outcome of writing the offsets, else the
// check's error.
func (g *Group) commit(now time.Time, req CommitRequest) (code int16, accepted bool) {
	created := false
	if !g.exists {
		if req.Generation >= 0 {
			return kerr.IllegalGeneration.Code, false
		}
		g.exists = true
		g.transition(Empty, now)
		created = true
	}
	if code := g.validateOffsetCommit(req); code != 0 {
		return code, false
	}
	switch g.state {
	case CompletingRebalance:
		return kerr.RebalanceInProgress.Code, false
	case Stable, PreparingRebalance:
		g.touch(g.members[req.MemberID], now)
	}
	if code := g.storeOffsets(req.Offsets); code != 0 {
		if created && len(g.offsets) == 0 {
			g.exists = false
		}
		return code, true
	}
	return 0, true
}

func (g *Group) validateOffsetCommit(req CommitRequest) int16 {
	switch {
	case g.state == Dead:
		return kerr.CoordinatorNotAvailable.Code
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

func (g *Group) storeOffsets(offs map[TopicPartition]OffsetAndMetadata) int16 {
	if len(offs) == 0 {
		return 0
	}
	if g.store != nil {
		recs := make([]Record, 0, len(offs))
		for tp, o := range offs {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp), Value: OffsetValue(o)})
		}
		if err := g.store.Append(recs); err != nil {
			return storeErrorCode(err, true)
		}
	}
	for tp, o := range offs {
		g.offsets[tp] = o
	}
	return 0
}

// FetchedOffset is one partition's answer to OffsetFetch: Offset -1 and
// empty metadata when nothing is committed.
type FetchedOffset struct {
	TopicPartition
	OffsetAndMetadata
}

// FetchOffsets returns the committed offsets of tps, or of every partition
// with a commit when tps is nil (sorted by topic and partition). Unknown or
// dead groups have no offsets.
func (g *Group) FetchOffsets(tps []TopicPartition) []FetchedOffset {
	live := g.exists && g.state != Dead
	if tps == nil {
		if !live {
			return nil
		}
		out := make([]FetchedOffset, 0, len(g.offsets))
		for tp, o := range g.offsets {
			out = append(out, FetchedOffset{tp, o})
		}
		sortFetched(out)
		return out
	}
	out := make([]FetchedOffset, len(tps))
	for i, tp := range tps {
		out[i] = FetchedOffset{TopicPartition: tp, OffsetAndMetadata: OffsetAndMetadata{Offset: -1, LeaderEpoch: -1}}
		if o, ok := g.offsets[tp]; ok && live {
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

// DeleteOffsets handles an OffsetDelete (KIP-496): the group-level code and
// one code per requested partition. Offsets of topics the members of a
// consumer group subscribe to are kept (GROUP_SUBSCRIBED_TO_TOPIC); a
// non-consumer group with members gets NON_EMPTY_GROUP.
func (g *Group) DeleteOffsets(now time.Time, tps []TopicPartition) (int16, []int16) {
	codes := make([]int16, len(tps))
	if !g.exists || g.state == Dead {
		return kerr.GroupIDNotFound.Code, nil
	}
	var subscribed map[string]bool
	if g.state != Empty {
		topics, ok := g.SubscribedTopics()
		if g.protocolType != "consumer" {
			return kerr.NonEmptyGroup.Code, nil
		}
		if ok {
			subscribed = topics
		}
	}
	var recs []Record
	var del []TopicPartition
	for i, tp := range tps {
		if subscribed[tp.Topic] {
			codes[i] = kerr.GroupSubscribedToTopic.Code
			continue
		}
		if _, ok := g.offsets[tp]; ok {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
			del = append(del, tp)
		}
	}
	if len(recs) > 0 && g.store != nil {
		if err := g.store.Append(recs); err != nil {
			return storeErrorCode(err, false), nil
		}
	}
	for _, tp := range del {
		delete(g.offsets, tp)
	}
	return 0, codes
}

// Delete handles DeleteGroups for this group: GROUP_ID_NOT_FOUND (unknown
// or dead), NON_EMPTY_GROUP (has members), or 0 once the group's metadata
// and offsets are tombstoned and the group is Dead.
func (g *Group) Delete(now time.Time) int16 {
	if !g.exists || g.state == Dead {
		return kerr.GroupIDNotFound.Code
	}
	if g.state != Empty {
		return kerr.NonEmptyGroup.Code
	}
	if g.store != nil {
		recs := make([]Record, 0, len(g.offsets)+1)
		for tp := range g.offsets {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
		}
		recs = append(recs, Record{Key: GroupKey(g.id)})
		if err := g.store.Append(recs); err != nil {
			return storeErrorCode(err, false)
		}
	}
	g.offsets = map[TopicPartition]OffsetAndMetadata{}
	g.transition(Dead, now)
	return 0
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
		if subscribed[tp.Topic] {
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
	dead := g.state == Empty && len(g.offsets) == len(expired)
	if dead {
		recs = append(recs, Record{Key: GroupKey(g.id)})
	}
	if len(recs) == 0 {
		return 0
	}
	if g.store != nil {
		if err := g.store.Append(recs); err != nil {
			return 0 // retried at the next cleanup
		}
	}
	for _, tp := range expired {
		delete(g.offsets, tp)
	}
	if dead {
		g.transition(Dead, now)
	}
	return len(expired)
}

// RemoveTopicOffsets drops the committed offsets of every partition of the
// given (deleted) topics, whatever the group's state and subscriptions, as
// Kafka's GroupMetadataManager.cleanupGroupMetadata does for
// handleDeletedPartitions: an Empty group left with no offsets becomes Dead.
// The offsets leave memory first — the topics are gone, so nothing may
// show them — then their tombstones (and the group's, if Dead) are written
// in one batch; a write failure is returned (the records may then come
// back when the partition is next loaded). It returns how many offsets
// were removed.
func (g *Group) RemoveTopicOffsets(now time.Time, topics map[string]bool) (int, error) {
	if !g.exists || g.state == Dead || len(topics) == 0 {
		return 0, nil
	}
	var recs []Record
	for tp := range g.offsets {
		if topics[tp.Topic] {
			recs = append(recs, Record{Key: OffsetKey(g.id, tp)})
			delete(g.offsets, tp)
		}
	}
	if len(recs) == 0 {
		return 0, nil
	}
	removed := len(recs)
	if g.state == Empty && len(g.offsets) == 0 {
		g.transition(Dead, now)
		recs = append(recs, Record{Key: GroupKey(g.id)})
	}
	if g.store != nil {
		if err := g.store.Append(recs); err != nil {
			return removed, err
		}
	}
	return removed, nil
}
