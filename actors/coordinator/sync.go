package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncRequest is a SyncGroup request as the group sees it.
type SyncRequest struct {
	MemberID     string
	InstanceID   string
	Generation   int32
	ProtocolType *string // v5+; nil = not checked
	Protocol     *string // v5+; nil = not checked
	// Assignments is the leader's assignment by member id (ignored from
	// followers).
	Assignments map[string][]byte
}

// Sync handles a SyncGroup (Kafka's doSyncGroup). cb gets the answer now, or
// when the leader's assignment is stored (the append's error, mapped by
// storeErrorCode, if it failed: the group then rebalances), or
// REBALANCE_IN_PROGRESS when a new rebalance starts first.
func (g *Group) Sync(now time.Time, req SyncRequest, cb func(*kmsg.SyncGroupResponse)) {
	switch {
	case !g.exists:
		cb(syncError(kerr.UnknownMemberID.Code))
		return
	case g.state == Dead:
		cb(syncError(kerr.CoordinatorNotAvailable.Code))
		return
	}
	if req.InstanceID != "" {
		if cur, ok := g.static[req.InstanceID]; ok && cur != req.MemberID {
			cb(syncError(kerr.FencedInstanceID.Code))
			return
		}
	}
	m, ok := g.members[req.MemberID]
	switch {
	case !ok:
		cb(syncError(kerr.UnknownMemberID.Code))
		return
	case req.Generation != g.generation:
		cb(syncError(kerr.IllegalGeneration.Code))
		return
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		cb(syncError(kerr.InconsistentGroupProtocol.Code))
		return
	}
	switch g.state {
	case Empty:
		cb(syncError(kerr.UnknownMemberID.Code))
	case PreparingRebalance:
		cb(syncError(kerr.RebalanceInProgress.Code))
	case CompletingRebalance:
		if m.syncCB != nil {
			// A duplicate SyncGroup: the newer request waits instead.
			g.invokeSync(m, syncError(kerr.RebalanceInProgress.Code))
		}
		m.syncCB = cb
		g.removePendingSync(now, m.ID)
		if m.ID != g.leader {
			return
		}
		assignment := make(map[string][]byte, len(g.members))
		for _, id := range g.order {
			assignment[id] = req.Assignments[id] // missing members get an empty assignment
			if assignment[id] == nil {
				assignment[id] = []byte{}
			}
		}
		// The group stays CompletingRebalance until the assignment is
		// durable (heartbeats are answered meanwhile); as Kafka's
		// doSyncGroup callback, the outcome only counts if no rebalance
		// began while it was appended.
		// A forgotten group's generation restarts at 0, so a new group
		// of the same id may be back in this state and generation when
		// the append lands: the incarnation tells them apart.
		gen, inc := g.generation, g.incarnation
		g.persistGroup(now, assignment, func(now time.Time, err error) {
			if !g.current(inc) || g.state != CompletingRebalance || g.generation != gen {
				return
			}
			if err != nil {
				g.resetAndPropagateAssignmentError(now, storeErrorCode(err, false))
				g.maybePrepareRebalance(now)
				return
			}
			g.setAndPropagateAssignment(now, assignment)
			g.transition(Stable, now)
		})
	case Stable:
		g.removePendingSync(now, m.ID)
		cb(g.syncResult(m.Assignment))
		g.touch(m, now)
	}
}

func (g *Group) syncResult(assignment []byte) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	pt, p := g.protocolType, g.protocol
	r.ProtocolType = &pt
	r.Protocol = &p
	r.MemberAssignment = assignment
	return r
}

// removePendingSync records that a member synced; once all have, the sync
// deadline is dropped.
func (g *Group) removePendingSync(now time.Time, id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		g.syncDeadline = time.Time{}
	}
}

func (g *Group) setAndPropagateAssignment(now time.Time, assignment map[string][]byte) {
	for _, id := range g.order {
		m := g.members[id]
		m.Assignment = assignment[id]
		if g.invokeSync(m, g.syncResult(m.Assignment)) {
			g.touch(m, now)
		}
	}
}

func (g *Group) resetAndPropagateAssignmentError(now time.Time, code int16) {
	for _, id := range g.order {
		m := g.members[id]
		m.Assignment = nil
		if g.invokeSync(m, syncError(code)) {
			g.touch(m, now)
		}
	}
}

// syncDeadlineReached drops the members that never sent SyncGroup in time
// after a join phase, which starts a new rebalance (KAFKA-13213).
func (g *Group) syncDeadlineReached(now time.Time) {
	g.syncDeadline = time.Time{}
	if g.state != CompletingRebalance && g.state != Stable {
		return
	}
	for _, id := range append([]string(nil), g.order...) {
		if _, ok := g.pendingSync[id]; ok {
			g.removeMemberAndUpdateGroup(now, g.members[id])
		}
	}
	g.pendingSync = nil
}
