package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Heartbeat handles a Heartbeat and returns its error code (0 = NONE).
// During PreparingRebalance the answer is REBALANCE_IN_PROGRESS (the signal
// that makes members rejoin); in CompletingRebalance it is NONE, since a
// member may heartbeat between its JoinGroup and SyncGroup.
func (g *Group) Heartbeat(now time.Time, memberID, instanceID string, generation int32) int16 {
	if !g.exists {
		return kerr.UnknownMemberID.Code
	}
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateCurrentMember(memberID, instanceID); code != 0 {
		return code
	}
	if generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	m := g.members[memberID]
	switch g.state {
	case Empty:
		return kerr.UnknownMemberID.Code
	case PreparingRebalance:
		g.touch(m, now)
		return kerr.RebalanceInProgress.Code
	default:
		g.touch(m, now)
		return 0
	}
}

// LeaveMember names one member leaving (LeaveGroup v3+ batches them,
// KIP-345). MemberID "" with an InstanceID removes a static member by its
// instance id (administrative removal).
type LeaveMember struct {
	MemberID   string
	InstanceID string
}

// Leave handles a LeaveGroup: the top-level error code and one code per
// member, in order.
func (g *Group) Leave(now time.Time, members []LeaveMember) (int16, []int16) {
	codes := make([]int16, len(members))
	if !g.exists {
		for i := range codes {
			codes[i] = kerr.UnknownMemberID.Code
		}
		return 0, codes
	}
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	for i, lm := range members {
		switch {
		case lm.MemberID == "":
			id, ok := g.static[lm.InstanceID]
			if lm.InstanceID == "" || !ok {
				codes[i] = kerr.UnknownMemberID.Code
				continue
			}
			g.removeMemberAndUpdateGroup(now, g.members[id])
		default:
			if _, ok := g.pending[lm.MemberID]; ok {
				g.removePending(now, lm.MemberID)
				continue
			}
			if code := g.validateCurrentMember(lm.MemberID, lm.InstanceID); code != 0 {
				codes[i] = code
				continue
			}
			g.removeMemberAndUpdateGroup(now, g.members[lm.MemberID])
		}
	}
	return 0, codes
}

func (g *Group) removePending(now time.Time, id string) {
	delete(g.pending, id)
	g.maybeCompleteJoin(now)
}

// removeMemberAndUpdateGroup removes a member (leaving, expired, or fenced
// by a missed SyncGroup): its pending JoinGroup gets UNKNOWN_MEMBER_ID, and
// the group rebalances (or, mid-join, may complete the join phase).
func (g *Group) removeMemberAndUpdateGroup(now time.Time, m *Member) {
	g.invokeJoin(m, joinError("", kerr.UnknownMemberID.Code))
	g.invokeSync(m, syncError(kerr.UnknownMemberID.Code))
	g.remove(m.ID)
	switch g.state {
	case Stable, CompletingRebalance:
		g.maybePrepareRebalance(now)
	case PreparingRebalance:
		g.maybeCompleteJoin(now)
	}
}

// NextDeadline is the earliest time at which Tick has work (zero = none):
// a session expiry, a pending member's expiry, the end of a join phase or
// of the wait for SyncGroup.
func (g *Group) NextDeadline() time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, m := range g.members {
		consider(m.deadline)
	}
	for _, d := range g.pending {
		consider(d)
	}
	consider(g.joinDeadline)
	consider(g.syncDeadline)
	return next
}

// Tick fires every timeout due at now: expired pending members and members
// are removed (a member waiting for its JoinGroup or SyncGroup answer is not
// expired by its session timeout — only a new member, after
// NewMemberJoinTimeout), then a due join phase or sync wait ends.
func (g *Group) Tick(now time.Time) {
	// A timeout may schedule another that is already due (a zero initial
	// delay); bounded so a bug cannot spin the actor.
	for i := 0; i < 16; i++ {
		if d := g.NextDeadline(); d.IsZero() || d.After(now) {
			return
		}
		g.tickOnce(now)
	}
}

func (g *Group) tickOnce(now time.Time) {
	for id, d := range g.pending {
		if !d.After(now) {
			g.removePending(now, id)
		}
	}
	for _, id := range append([]string(nil), g.order...) {
		m, ok := g.members[id]
		if !ok || m.deadline.IsZero() || m.deadline.After(now) {
			continue
		}
		if !m.isNew && (m.awaitingJoin() || m.awaitingSync()) {
			m.deadline = time.Time{}
			continue
		}
		g.removeMemberAndUpdateGroup(now, m)
	}
	if !g.joinDeadline.IsZero() && !g.joinDeadline.After(now) && g.state == PreparingRebalance {
		g.joinDeadlineReached(now)
	}
	if !g.syncDeadline.IsZero() && !g.syncDeadline.After(now) {
		g.syncDeadlineReached(now)
	}
}

// Shutdown fails every pending JoinGroup and SyncGroup with code (used when
// the group actor stops or restarts, or the coordinator loses the partition).
func (g *Group) Shutdown(code int16) {
	for _, id := range g.order {
		m := g.members[id]
		g.invokeJoin(m, joinError(m.ID, code))
		g.invokeSync(m, syncError(code))
	}
}
