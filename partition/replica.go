package partition

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Role is a replica's role for its partition.
type Role int8

// Replica roles.
const (
	RoleNone     Role = iota // not yet told its role
	RoleLeader               // this broker leads the partition
	RoleFollower             // this broker follows Leader
	RoleOffline              // the log failed or the actor gave up (KAFKA_STORAGE_ERROR)
)

func (r Role) String() string {
	switch r {
	case RoleLeader:
		return "leader"
	case RoleFollower:
		return "follower"
	case RoleOffline:
		return "offline"
	}
	return "none"
}

// Replica is the pure offset/role state of one partition replica: no I/O,
// no actors. The partition actor owns it; tests drive it directly.
//
// Offsets follow Kafka's terms: LogStartOffset ≤ HighWatermark ≤
// LogEndOffset. The high watermark is the offset up to which every ISR
// member has the data (consumers read below it); with an ISR of one
// (this broker) it equals the log end offset after every append.
type Replica struct {
	TP             TopicPartition
	BrokerID       int32 // this broker (broker.id)
	Role           Role
	Leader         int32 // leader broker id, -1 = none
	LeaderEpoch    int32 // -1 = never had a leader
	ISR            []int32
	Replicas       []int32
	HighWatermark  int64
	LogEndOffset   int64
	LogStartOffset int64
	// ZkVersion is the version of the partition state znode this replica
	// last saw (from LeaderAndIsr or a successful AlterIsr).
	ZkVersion int32
	// MinInsync is min.insync.replicas for acks=-1 (>= 1).
	MinInsync int
	// PendingISR is the ISR an AlterIsr in flight proposes (nil when none;
	// Kafka's PendingExpandIsr/PendingShrinkIsr). ISR stays the committed
	// one: min.insync.replicas checks use it, while the high watermark
	// waits for the maximal ISR (ISR ∪ PendingISR), so neither a proposed
	// addition nor a proposed removal lets it pass a replica too early.
	PendingISR []int32
	// followers is the leader's view of each other assigned replica
	// (Kafka's Replica state on the leader); nil unless leader.
	followers map[int32]*FollowerState
	// Now is the clock for follower lag (nil = time.Now); tests set it.
	Now func() time.Time
}

// NewReplica is a replica that has not been told its role.
func NewReplica(tp TopicPartition, brokerID int32) *Replica {
	return &Replica{TP: tp, BrokerID: brokerID, Leader: -1, LeaderEpoch: -1}
}

// Apply takes a LeaderAndIsr state from the controller. A state with a
// leader epoch older than the current one is stale: it is refused with
// FENCED_LEADER_EPOCH and changes nothing (Kafka skips it too). An equal
// epoch is accepted (the embedded controller re-sends states at restart)
// and updates ISR and replicas — unless its ZkVersion is older than the
// one this replica holds (see OlderState): then it is refused the same
// way and changes nothing. A state identical in leader, leader epoch and
// ZkVersion (a controller failover re-sending what it read) keeps a
// pending proposal: the znode it is conditional on is still the one this
// state describes, so the write may still land, and until its result
// arrives its members must stay in the maximal ISR (Kafka's
// becomeLeaderOrFollower ignores a LeaderAndIsr whose epoch is not newer).
// checkpointHW is the high watermark read from replication-offset-checkpoint
// (-1 when unknown), used to seed the high watermark on becoming leader.
func (r *Replica) Apply(s LeaderAndIsr, checkpointHW int64) *kerr.Error {
	if s.LeaderEpoch < r.LeaderEpoch || OlderState(s, r.Leader, r.LeaderEpoch, r.ZkVersion) {
		return kerr.FencedLeaderEpoch
	}
	newTerm := s.LeaderEpoch != r.LeaderEpoch || s.Leader != r.Leader
	resent := !newTerm && s.ZkVersion == r.ZkVersion && s.Leader == r.BrokerID
	r.LeaderEpoch = s.LeaderEpoch
	r.Leader = s.Leader
	r.ISR = slices.Clone(s.ISR)
	r.Replicas = slices.Clone(s.Replicas)
	r.ZkVersion = s.ZkVersion
	r.MinInsync = max(s.MinInsyncReplicas, 1)
	if !resent {
		r.PendingISR = nil // the controller's newer state replaces any proposal
	}
	switch s.Leader {
	case r.BrokerID:
		r.Role = RoleLeader
		r.resetFollowers(newTerm)
	default:
		r.Role = RoleFollower
		r.followers = nil
	}
	if checkpointHW >= 0 && checkpointHW > r.HighWatermark {
		r.HighWatermark = checkpointHW
	}
	r.clampHW()
	r.maybeAdvanceHW()
	return nil
}

// SetLogOffsets records the log's current start and end offsets (after
// open, append, truncation, retention) and advances the high watermark when
// this broker alone forms the ISR. It reports whether the high watermark moved.
func (r *Replica) SetLogOffsets(logStart, logEnd int64) (hwAdvanced bool) {
	before := r.HighWatermark
	r.LogStartOffset, r.LogEndOffset = logStart, logEnd
	r.clampHW()
	r.maybeAdvanceHW()
	return r.HighWatermark > before
}

// SoleISR reports whether this broker is the only in-sync replica, in which
// case acks=-1 is satisfied as soon as the leader has appended.
func (r *Replica) SoleISR() bool {
	return len(r.ISR) == 0 || (len(r.ISR) == 1 && r.ISR[0] == r.BrokerID)
}

func (r *Replica) clampHW() {
	if r.HighWatermark > r.LogEndOffset {
		r.HighWatermark = r.LogEndOffset
	}
	if r.HighWatermark < r.LogStartOffset {
		r.HighWatermark = r.LogStartOffset
	}
}

// maybeAdvanceHW: the high watermark is the smallest log end offset over
// the maximal ISR, the committed ISR plus a pending proposal's members
// (Kafka Partition.maybeIncrementLeaderHW over isrState.maximalIsr), the
// leader's own included; with only the leader it is the log end offset.
// A follower whose log end offset is not known yet (-1) holds the high
// watermark where it is.
func (r *Replica) maybeAdvanceHW() {
	if r.Role != RoleLeader {
		return
	}
	hw, ok := r.LogEndOffset, true
	for _, id := range r.ISR {
		hw, ok = r.minFollowerLEO(id, hw)
		if !ok {
			return
		}
	}
	for _, id := range r.PendingISR {
		if slices.Contains(r.ISR, id) {
			continue
		}
		hw, ok = r.minFollowerLEO(id, hw)
		if !ok {
			return
		}
	}
	if hw > r.HighWatermark {
		r.HighWatermark = hw
	}
}

// minFollowerLEO folds member id of the maximal ISR into hw; ok is false
// when id is a follower whose log end offset is unknown.
func (r *Replica) minFollowerLEO(id int32, hw int64) (int64, bool) {
	if id == r.BrokerID {
		return hw, true
	}
	f := r.followers[id]
	if f == nil || f.LogEndOffset < 0 {
		return hw, false
	}
	return min(hw, f.LogEndOffset), true
}

// CheckLeaderEpoch validates a request's current_leader_epoch (KIP-320):
// -1 skips the check; older than ours → FENCED_LEADER_EPOCH; newer →
// UNKNOWN_LEADER_EPOCH (the client knows of a leader change we have not seen).
func CheckLeaderEpoch(current, ours int32) *kerr.Error {
	switch {
	case current < 0:
		return nil
	case current < ours:
		return kerr.FencedLeaderEpoch
	case current > ours:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

// OlderState reports whether s is an older version of the state (leader,
// leaderEpoch, zkVersion) a replica holds: same leader and leader epoch,
// smaller partition state znode version. A leader's own ISR change
// (AlterIsr) moves the znode version without a new leader epoch, so a
// LeaderAndIsr the controller built from ZooKeeper before that change
// (re-sent after a controller restart, or delivered late by a backed-up
// controller channel) carries the same epoch and an older version;
// applying it would bring back the old ISR and zkVersion, and every later
// AlterIsr of the leader would fail on the version check while it
// believed the old ISR — the ISR in ZooKeeper would never change again.
// Kafka's Partition.makeLeader/makeFollower skip such a state ("the
// leader is already at a newer partition epoch").
func OlderState(s LeaderAndIsr, leader, leaderEpoch, zkVersion int32) bool {
	return s.LeaderEpoch == leaderEpoch && s.Leader == leader && s.ZkVersion < zkVersion
}
