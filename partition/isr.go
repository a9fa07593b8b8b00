package partition

import (
	"slices"
	"time"
)

// FollowerState is the leader's view of one follower replica (Kafka's
// Replica/FollowerFetchState on the leader): its log end offset, learnt
// from the fetch offset of its last Fetch, and when it was last caught up.
type FollowerState struct {
	// LogEndOffset is the follower's log end offset (its last fetch
	// offset); -1 until its first fetch in this leader epoch.
	LogEndOffset int64
	// LastCaughtUp is the last time the follower was known to have every
	// record the leader had (replica.lag.time.max.ms is measured from it).
	LastCaughtUp time.Time
	// lastFetchLeaderLEO / lastFetchTime: the leader's log end offset and
	// the time at the follower's previous fetch. A fetch at or past that
	// offset proves the follower was caught up at that earlier time
	// (Kafka ReplicaState.updateFetchState).
	lastFetchLeaderLEO int64
	lastFetchTime      time.Time
}

func (r *Replica) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// resetFollowers starts the leader's follower tracking. On a new term
// every assigned follower starts with an unknown log end offset; ISR
// members count as caught up now (Kafka Partition.makeLeader), others as
// never. Within the same term (an ISR/replica update at the same epoch)
// known states are kept.
func (r *Replica) resetFollowers(newTerm bool) {
	if newTerm || r.followers == nil {
		r.followers = make(map[int32]*FollowerState)
	}
	now := r.now()
	for _, id := range r.Replicas {
		if id == r.BrokerID {
			continue
		}
		if _, ok := r.followers[id]; ok {
			continue
		}
		f := &FollowerState{LogEndOffset: -1, lastFetchLeaderLEO: -1}
		if slices.Contains(r.ISR, id) {
			f.LastCaughtUp = now
		}
		r.followers[id] = f
	}
	for id := range r.followers {
		if !slices.Contains(r.Replicas, id) {
			delete(r.followers, id)
		}
	}
}

// FollowerViews snapshots the leader's follower states in assignment
// order for the View (nil unless leader or with no follower).
func (r *Replica) FollowerViews() []FollowerView {
	if r.Role != RoleLeader || len(r.followers) == 0 {
		return nil
	}
	out := make([]FollowerView, 0, len(r.followers))
	for _, id := range r.Replicas {
		if f := r.followers[id]; f != nil {
			out = append(out, FollowerView{ID: id, LogEndOffset: f.LogEndOffset, LastCaughtUp: f.LastCaughtUp})
		}
	}
	return out
}

// Follower returns the leader's state for follower id (nil when this
// replica does not lead or id is not an assigned follower).
func (r *Replica) Follower(id int32) *FollowerState {
	if r.Role != RoleLeader {
		return nil
	}
	return r.followers[id]
}

// UpdateFollower records a follower's Fetch at fetchOffset (its log end
// offset) on the leader: it moves the follower's caught-up time, then the
// high watermark. It returns whether the high watermark advanced and, when
// the follower is outside the ISR but has reached the high watermark (and
// the leader epoch's own records, Kafka's isFollowerInSync), the ISR to
// propose with it added — never while another proposal is pending. ok is false when this replica does not lead or
// replica is not an assigned follower (NOT_LEADER_OR_FOLLOWER /
// UNKNOWN_TOPIC_OR_PARTITION in Kafka's terms).
func (r *Replica) UpdateFollower(replica int32, fetchOffset int64) (hwAdvanced bool, expand []int32, ok bool) {
	f := r.Follower(replica)
	if f == nil {
		return false, nil, false
	}
	now := r.now()
	switch {
	case fetchOffset >= r.LogEndOffset:
		f.LastCaughtUp = now
	case f.lastFetchLeaderLEO >= 0 && fetchOffset >= f.lastFetchLeaderLEO && f.lastFetchTime.After(f.LastCaughtUp):
		f.LastCaughtUp = f.lastFetchTime
	}
	f.lastFetchLeaderLEO, f.lastFetchTime = r.LogEndOffset, now
	f.LogEndOffset = fetchOffset
	before := r.HighWatermark
	r.maybeAdvanceHW()
	if r.PendingISR == nil && !slices.Contains(r.ISR, replica) && fetchOffset >= r.HighWatermark {
		// Appended, not sorted: Kafka's expandIsr adds the caught-up
		// follower at the end, so describe prints a rejoined broker last.
		expand = append(slices.Clone(r.ISR), replica)
	}
	return r.HighWatermark > before, expand, true
}

// LaggingISR returns the ISR without the followers that have not caught up
// within maxLag (Kafka Partition.getOutOfSyncReplicas), or nil when every
// member is in sync or a proposal is pending (one ISR change in flight at
// a time, as Kafka's isrState.isInflight). The leader itself always stays.
func (r *Replica) LaggingISR(maxLag time.Duration) (shrunk []int32) {
	if r.Role != RoleLeader || maxLag <= 0 || r.PendingISR != nil {
		return nil
	}
	now := r.now()
	keep := make([]int32, 0, len(r.ISR))
	for _, id := range r.ISR {
		if id != r.BrokerID {
			if f := r.followers[id]; f == nil || now.Sub(f.LastCaughtUp) > maxLag {
				continue
			}
		}
		keep = append(keep, id)
	}
	if len(keep) == len(r.ISR) {
		return nil
	}
	return keep
}

// ProposeISR records isr as the pending proposal (PendingISR) while it is
// written; the committed ISR is unchanged until SetISR.
func (r *Replica) ProposeISR(isr []int32) { r.PendingISR = slices.Clone(isr) }

// SetISR installs an ISR the IsrWriter persisted at zkVersion, clears the
// pending proposal and moves the high watermark (a shrink may let it
// advance).
func (r *Replica) SetISR(isr []int32, zkVersion int32) (hwAdvanced bool) {
	r.ISR = slices.Clone(isr)
	r.PendingISR = nil
	r.ZkVersion = zkVersion
	before := r.HighWatermark
	r.maybeAdvanceHW()
	return r.HighWatermark > before
}

// SetFollowerHW is the follower's side of the high watermark: the
// leader's high watermark from a fetch response, capped by this
// replica's log end offset (Kafka: follower HW = min(leader HW, LEO)). It
// never moves the high watermark down.
func (r *Replica) SetFollowerHW(leaderHW int64) (hwAdvanced bool) {
	if r.Role != RoleFollower {
		return false
	}
	hw := min(leaderHW, r.LogEndOffset)
	if hw > r.HighWatermark {
		r.HighWatermark = hw
		return true
	}
	return false
}

// InSyncCount is the committed ISR's size, which the acks=-1 /
// min.insync.replicas checks use (never a pending proposal's).
func (r *Replica) InSyncCount() int { return max(len(r.ISR), 1) }
