package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinRequest is a JoinGroup request (any version) as the group sees it.
type JoinRequest struct {
	Version          int16 // request version: v4+ requires a known member id (KIP-394), v9+ may skip assignment
	MemberID         string
	InstanceID       string // "" = dynamic member
	ClientID         string
	ClientHost       string
	ProtocolType     string
	Protocols        []Protocol
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration // v0 has none: the session timeout is used
}

// Join handles a JoinGroup (Kafka's GroupCoordinator.handleJoinGroup). cb is
// called exactly once with the answer — maybe now, maybe when the rebalance
// completes (from a later call on the group, often Tick). The answer's
// Version is left for the caller to set.
func (g *Group) Join(now time.Time, req JoinRequest, cb func(*kmsg.JoinGroupResponse)) {
	if req.RebalanceTimeout <= 0 {
		req.RebalanceTimeout = req.SessionTimeout
	}
	if req.SessionTimeout < g.cfg.MinSessionTimeout || req.SessionTimeout > g.cfg.MaxSessionTimeout {
		cb(joinError(req.MemberID, kerr.InvalidSessionTimeout.Code))
		return
	}
	unknown := req.MemberID == ""
	if !g.exists {
		if !unknown {
			// A known member id for a group we do not have.
			cb(joinError(req.MemberID, kerr.UnknownMemberID.Code))
			return
		}
		g.exists = true
		g.transition(Empty, now)
	}
	if !g.acceptJoiningMember(req.MemberID) {
		cb(joinError(req.MemberID, kerr.GroupMaxSizeReached.Code))
		return
	}
	if unknown {
		g.newMemberJoin(now, req, cb)
	} else {
		g.currentMemberJoin(now, req, cb)
	}
	if g.state == PreparingRebalance {
		g.maybeCompleteJoin(now)
	}
}

// acceptJoiningMember enforces group.max.size the way Kafka does: while
// preparing a rebalance the number of members that have joined counts
// (members that do not rejoin are dropped), otherwise the group size.
func (g *Group) acceptJoiningMember(memberID string) bool {
	switch g.state {
	case Empty, Dead:
		return true
	case PreparingRebalance:
		m, ok := g.members[memberID]
		return (ok && m.awaitingJoin()) || g.numAwaiting < g.cfg.MaxSize
	default:
		_, ok := g.members[memberID]
		return ok || len(g.members) < g.cfg.MaxSize
	}
}

func (g *Group) newMemberJoin(now time.Time, req JoinRequest, cb func(*kmsg.JoinGroupResponse)) {
	if g.state == Dead {
		cb(joinError("", kerr.CoordinatorNotAvailable.Code))
		return
	}
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		cb(joinError("", kerr.InconsistentGroupProtocol.Code))
		return
	}
	id := newMemberID(req.ClientID, req.InstanceID)
	if req.InstanceID != "" {
		if old, ok := g.static[req.InstanceID]; ok {
			g.updateStaticMemberAndRebalance(now, old, id, req, cb)
			return
		}
		g.addMemberAndRebalance(now, id, req, cb)
		return
	}
	if req.Version >= 4 {
		// KIP-394: hand out the id and make the member come back with it,
		// so a client that times out does not leave ghost members behind.
		g.pending[id] = now.Add(req.SessionTimeout)
		cb(joinError(id, kerr.MemberIDRequired.Code))
		return
	}
	g.addMemberAndRebalance(now, id, req, cb)
}

func (g *Group) currentMemberJoin(now time.Time, req JoinRequest, cb func(*kmsg.JoinGroupResponse)) {
	if g.state == Dead {
		cb(joinError(req.MemberID, kerr.CoordinatorNotAvailable.Code))
		return
	}
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		cb(joinError(req.MemberID, kerr.InconsistentGroupProtocol.Code))
		return
	}
	if _, ok := g.pending[req.MemberID]; ok {
		// The second JoinGroup of KIP-394. (A static member is never pending.)
		g.addMemberAndRebalance(now, req.MemberID, req, cb)
		return
	}
	if code := g.validateCurrentMember(req.MemberID, req.InstanceID); code != 0 {
		cb(joinError(req.MemberID, code))
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case PreparingRebalance:
		g.updateMemberAndRebalance(now, m, req, cb)
	case CompletingRebalance:
		if m.matches(req.Protocols) {
			// Same metadata (the member probably lost the JoinGroup
			// answer): resend this generation's answer.
			cb(g.joinResult(m.ID, m.ID == g.leader, g.leader, false))
			return
		}
		g.updateMemberAndRebalance(now, m, req, cb)
	case Stable:
		if m.ID == g.leader || !m.matches(req.Protocols) {
			// A leader's JoinGroup always rebalances: that is how it
			// reacts to topic metadata changes.
			g.updateMemberAndRebalance(now, m, req, cb)
			return
		}
		cb(g.joinResult(m.ID, false, g.leader, false))
	default: // Empty
		cb(joinError(req.MemberID, kerr.UnknownMemberID.Code))
	}
}

func (g *Group) addMemberAndRebalance(now time.Time, id string, req JoinRequest, cb func(*kmsg.JoinGroupResponse)) {
	m := &Member{
		ID:               id,
		InstanceID:       req.InstanceID,
		ClientID:         req.ClientID,
		ClientHost:       req.ClientHost,
		RebalanceTimeout: req.RebalanceTimeout,
		SessionTimeout:   req.SessionTimeout,
		ProtocolType:     req.ProtocolType,
		Protocols:        req.Protocols,
		isNew:            true,
	}
	if g.state == PreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m, cb)
	// A new member cannot heartbeat before it has its answer; bound how
	// long its JoinGroup may sit in the rebalance instead.
	m.deadline = now.Add(g.cfg.NewMemberJoinTimeout)
	g.maybePrepareRebalance(now)
}

func (g *Group) updateMemberAndRebalance(now time.Time, m *Member, req JoinRequest, cb func(*kmsg.JoinGroupResponse)) {
	g.updateMember(m, req.Protocols, req.RebalanceTimeout, req.SessionTimeout, cb)
	g.maybePrepareRebalance(now)
}

// updateMember replaces a member's protocols and timeouts and registers cb
// as its pending JoinGroup. A JoinGroup still pending from the same member
// (a duplicate) is answered REBALANCE_IN_PROGRESS so it does not hang.
func (g *Group) updateMember(m *Member, protos []Protocol, rebalance, session time.Duration, cb func(*kmsg.JoinGroupResponse)) {
	m.Protocols = protos
	m.RebalanceTimeout = rebalance
	m.SessionTimeout = session
	if m.joinCB != nil {
		old := m.joinCB
		m.joinCB = nil
		g.numAwaiting--
		old(joinError(m.ID, kerr.RebalanceInProgress.Code))
	}
	if cb != nil {
		m.joinCB = cb
		g.numAwaiting++
	}
}

// updateStaticMemberAndRebalance lets a restarted static member take over
// its old member id (KIP-345): the old id is fenced; a Stable group whose
// chosen protocol would not change is not rebalanced — the member gets the
// current generation back (and, v9+, the leader is told to skip assigning).
func (g *Group) updateStaticMemberAndRebalance(now time.Time, oldID, newID string, req JoinRequest, cb func(*kmsg.JoinGroupResponse)) {
	prevLeader := g.leader
	m := g.replaceStaticMember(req.InstanceID, oldID, newID)
	g.touch(m, now)
	oldProtos, oldReb, oldSess := m.Protocols, m.RebalanceTimeout, m.SessionTimeout
	g.updateMember(m, req.Protocols, req.RebalanceTimeout, req.SessionTimeout, cb)
	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocol {
			g.maybePrepareRebalance(now)
			return
		}
		assignment := map[string][]byte{}
		for _, x := range g.members {
			assignment[x.ID] = x.Assignment
		}
		// The answer waits for the new member id to be durable; the
		// rejoin is undone if the append fails (Kafka's callback of
		// updateStaticMemberAndRebalance), unless a rebalance has moved
		// the member on meanwhile.
		answer := onceJoin(cb)
		m.joinCB = answer
		g.persistGroup(now, assignment, func(now time.Time, err error) {
			if cur, ok := g.members[newID]; !ok || cur != m || g.static[req.InstanceID] != newID {
				// It left or was fenced meanwhile, which answered it.
				answer(joinError(newID, kerr.UnknownMemberID.Code))
				return
			}
			if g.state != Stable || m.joinCB == nil {
				return // a rebalance took the rejoin over; it answers
			}
			if err != nil {
				if m.joinCB != nil {
					m.joinCB = nil
					g.numAwaiting--
				}
				g.updateMember(m, oldProtos, oldReb, oldSess, nil)
				old := g.replaceStaticMember(req.InstanceID, newID, oldID)
				g.touch(old, now)
				r := joinError("", storeErrorCode(err, false))
				r.Generation = g.generation
				r.LeaderID = prevLeader
				answer(r)
				return
			}
			if req.Version >= 9 {
				isLeader := g.leader == newID
				g.invokeJoin(m, g.joinResult(newID, isLeader, g.leader, isLeader))
			} else {
				// Older clients: answer with the previous leader id, so a
				// leader that restarted does not think it must assign (a
				// Stable group would not propagate that assignment).
				g.invokeJoin(m, g.joinResult(newID, false, prevLeader, false))
			}
		})
	case CompletingRebalance:
		// The leader may be assigning with the old member id: rebalance.
		g.prepareRebalance(now)
	case PreparingRebalance:
		// The member waits for the join phase like everyone else.
	}
}

// replaceStaticMember moves a static member from oldID to newID, fencing
// requests still pending under the old id.
func (g *Group) replaceStaticMember(instanceID, oldID, newID string) *Member {
	m := g.members[oldID]
	g.invokeJoin(m, joinError(oldID, kerr.FencedInstanceID.Code))
	g.invokeSync(m, syncError(kerr.FencedInstanceID.Code))
	m.ID = newID
	delete(g.members, oldID)
	g.members[newID] = m
	for i, x := range g.order {
		if x == oldID {
			g.order[i] = newID
		}
	}
	if g.leader == oldID {
		g.leader = newID
	}
	g.static[instanceID] = newID
	if _, ok := g.pendingSync[oldID]; ok {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = struct{}{}
	}
	return m
}

func (g *Group) canRebalance() bool {
	return g.state == Stable || g.state == CompletingRebalance || g.state == Empty
}

func (g *Group) maybePrepareRebalance(now time.Time) {
	if g.canRebalance() {
		g.prepareRebalance(now)
	}
}

// prepareRebalance starts a join phase. Members waiting on SyncGroup are
// told REBALANCE_IN_PROGRESS. The phase ends when everyone has rejoined or
// the rebalance timeout passes; the first rebalance of an empty group
// instead waits group.initial.rebalance.delay.ms, extended while new
// members keep arriving, within the rebalance timeout.
func (g *Group) prepareRebalance(now time.Time) {
	if g.state == CompletingRebalance {
		g.resetAndPropagateAssignmentError(now, kerr.RebalanceInProgress.Code)
	}
	g.syncDeadline = time.Time{}
	g.pendingSync = nil
	if g.state == Empty {
		g.initialDelay = true
		g.newMemberAdded = false
		rt := g.rebalanceTimeout()
		g.initialRemaining = rt - g.cfg.InitialRebalanceDelay
		if g.initialRemaining < 0 {
			g.initialRemaining = 0
		}
		g.joinDeadline = now.Add(g.cfg.InitialRebalanceDelay)
	} else {
		g.initialDelay = false
		g.joinDeadline = now.Add(g.rebalanceTimeout())
	}
	g.transition(PreparingRebalance, now)
	// Like Kafka's tryCompleteElseWatch: complete at once if nobody is
	// missing (e.g. the last member just left).
	g.maybeCompleteJoin(now)
}

// maybeCompleteJoin ends the join phase early once everyone has joined
// (never during the initial delay, which always runs its course).
func (g *Group) maybeCompleteJoin(now time.Time) {
	if g.state == PreparingRebalance && !g.initialDelay && g.allJoined() {
		g.completeJoin(now)
	}
}

// joinDeadlineReached handles the end of a join phase's timer.
func (g *Group) joinDeadlineReached(now time.Time) {
	if g.initialDelay && g.newMemberAdded && g.initialRemaining > 0 {
		g.newMemberAdded = false
		d := g.cfg.InitialRebalanceDelay
		if d > g.initialRemaining {
			d = g.initialRemaining
		}
		g.initialRemaining -= d
		g.joinDeadline = now.Add(d)
		return
	}
	g.completeJoin(now)
}

// completeJoin is Kafka's onCompleteJoin: drop dynamic members that did not
// rejoin, elect a leader among those that did, start the next generation
// and answer every pending JoinGroup (the leader gets the member list).
func (g *Group) completeJoin(now time.Time) {
	g.joinDeadline = time.Time{}
	g.initialDelay = false
	for _, id := range append([]string(nil), g.order...) {
		m := g.members[id]
		if !m.awaitingJoin() && m.InstanceID == "" {
			g.remove(id)
		}
	}
	if g.state == Dead {
		return
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		// Nobody rejoined (only static members remain): wait another
		// rebalance timeout; session timeouts will clear them.
		g.joinDeadline = now.Add(g.rebalanceTimeout())
		return
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol = ""
		g.transition(Empty, now)
		// Best effort, as Kafka: the empty generation is recorded; if the
		// write fails the previous generation reloads with no live members.
		g.persistGroup(now, nil, func(time.Time, error) {})
		return
	}
	g.protocol = g.selectProtocol()
	g.transition(CompletingRebalance, now)
	g.pendingSync = map[string]struct{}{}
	for _, id := range g.order {
		m := g.members[id]
		g.invokeJoin(m, g.joinResult(id, id == g.leader, g.leader, false))
		g.touch(m, now)
		m.isNew = false
		g.pendingSync[id] = struct{}{}
	}
	g.syncDeadline = now.Add(g.rebalanceTimeout())
}

// electJoinedLeader keeps the leader if it rejoined, else picks the first
// member that did; false when no member rejoined.
func (g *Group) electJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if g.members[g.leader].awaitingJoin() {
		return true
	}
	for _, id := range g.order {
		if g.members[id].awaitingJoin() {
			g.leader = id
			return true
		}
	}
	return false
}

// onceJoin makes a JoinGroup answer callable once: the first answer wins
// (a rejoin whose append is in flight may be answered by a rebalance
// first).
func onceJoin(cb func(*kmsg.JoinGroupResponse)) func(*kmsg.JoinGroupResponse) {
	done := false
	return func(r *kmsg.JoinGroupResponse) {
		if !done {
			done = true
			cb(r)
		}
	}
}
