package coordinator

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Group is the pure state machine of one consumer group: Kafka's
// GroupMetadata plus the parts of GroupCoordinator that act on one group.
// It is not safe for concurrent use; its owner (the group actor) serialises
// every call, passes the current time, calls Tick(now) when NextDeadline()
// is reached, and delivers the callbacks' responses.
type Group struct {
	id    string
	cfg   Config
	store Store

	// exists is false for a Group object that stands for a group the
	// coordinator does not know (Kafka's getGroup returning None): requests
	// get Kafka's "no such group" answers and nothing is created, except by
	// a JoinGroup with an unknown member id or a simple (generation -1)
	// offset commit.
	exists bool

	state      State
	stateTime  time.Time
	generation int32
	// protocolType is the members' common protocol type ("consumer",
	// "connect"…); it is kept while the group is Empty.
	protocolType string
	protocol     string // protocol chosen for the current generation; "" = none
	leader       string

	members map[string]*Member
	order   []string // member ids in join order (deterministic leader choice and output)
	static  map[string]string
	// pending are members that got MEMBER_ID_REQUIRED (KIP-394) and must
	// rejoin with the id before the deadline (their session timeout).
	pending     map[string]time.Time
	pendingSync map[string]struct{}
	numAwaiting int
	// newMemberAdded lets the initial rebalance of a new group wait another
	// group.initial.rebalance.delay.ms while members keep arriving.
	newMemberAdded bool

	// joinDeadline ends the PreparingRebalance phase (zero = none).
	joinDeadline time.Time
	// initialDelay: the current join phase is the initial delayed join of
	// an empty group; initialRemaining is what is left of its budget.
	initialDelay     bool
	initialRemaining time.Duration
	// syncDeadline ends the wait for SyncGroup of all members after a join
	// phase (KAFKA-13213); zero = none.
	syncDeadline time.Time

	offsets map[TopicPartition]OffsetAndMetadata
	// pendingOffsets are commits whose append has not completed (Kafka's
	// pendingOffsetCommits): not visible to OffsetFetch, but they keep an
	// Empty group from expiring to Dead.
	pendingOffsets map[TopicPartition]OffsetAndMetadata
	// offsetPos is the log offset of the batch that wrote each committed
	// offset (Kafka's CommitRecordMetadataAndOffset.appendedBatchOffset;
	// absent when unknown). When a transaction commits, its offset of a
	// partition replaces the committed one only if it was written later
	// in the log, so the cache holds what a reload (or compaction, which
	// keeps the last record of a key) would.
	offsetPos map[TopicPartition]int64
	// pendingTxn are the transactional offsets (TxnOffsetCommit) of each
	// producer id whose transaction has not ended (Kafka's
	// pendingTransactionalOffsetCommits): not visible to OffsetFetch until
	// the COMMIT marker (CompleteTxn), dropped by the ABORT marker; a
	// require_stable OffsetFetch answers UNSTABLE_OFFSET_COMMIT for them.
	pendingTxn map[int64]map[TopicPartition]PendingOffset
	// memOffset numbers the appends of a Group without a Store (tests of
	// the pure machine), standing in for log offsets.
	memOffset int64

	// held are answers waiting for release while holding (publish.go).
	held    []func()
	holding bool
	// writes are the appends queued for the owner (publish.go); deferred
	// says the owner performs them (else write performs them at once).
	writes   []pendingWrite
	deferred bool
	// incarnation counts the groups of this id that this Group object has
	// stood for: forget starts a new one. A write's callback captures it,
	// so an append asked for by a deleted (forgotten) group changes nothing
	// in the group of the same id that replaced it (see current).
	incarnation uint64
}

// NewGroup returns a Group for id that does not exist yet (see exists).
// store may be nil (nothing is persisted; for tests of the pure machine).
func NewGroup(id string, cfg Config, store Store, now time.Time) *Group {
	return &Group{
		id:        id,
		cfg:       cfg.withDefaults(),
		store:     store,
		state:     Empty,
		stateTime: now,
		members:   map[string]*Member{},
		static:    map[string]string{},
		pending:   map[string]time.Time{},
		offsets:   map[TopicPartition]OffsetAndMetadata{},

		pendingOffsets: map[TopicPartition]OffsetAndMetadata{},
		offsetPos:      map[TopicPartition]int64{},
		pendingTxn:     map[int64]map[TopicPartition]PendingOffset{},
	}
}

// hasOffsets is Kafka's GroupMetadata.hasOffsets: committed offsets,
// commits still being appended, or transactional offsets of transactions
// not yet ended.
func (g *Group) hasOffsets() bool {
	return len(g.offsets) > 0 || len(g.pendingOffsets) > 0 || len(g.pendingTxn) > 0
}

// ID is the group id.
func (g *Group) ID() string { return g.id }

// State is the current state.
func (g *Group) State() State { return g.state }

// Generation is the current generation id.
func (g *Group) Generation() int32 { return g.generation }

// Leader is the leader's member id ("" when none).
func (g *Group) Leader() string { return g.leader }

// Protocol is the selected protocol of the current generation ("" if none).
func (g *Group) Protocol() string { return g.protocol }

// ProtocolType is the group's protocol type ("" for a group only used for commits).
func (g *Group) ProtocolType() string { return g.protocolType }

// Exists reports whether the coordinator knows this group (see Group.exists).
func (g *Group) Exists() bool { return g.exists }

// Removable reports whether the owner may drop this group object: it does
// not exist, or it is Dead.
func (g *Group) Removable() bool { return !g.exists || g.state == Dead }

// Members returns the members in join order. The pointers are the group's
// own; callers must not modify them.
func (g *Group) Members() []*Member {
	out := make([]*Member, 0, len(g.order))
	for _, id := range g.order {
		out = append(out, g.members[id])
	}
	return out
}

// Member returns a member by id.
func (g *Group) Member(id string) (*Member, bool) {
	m, ok := g.members[id]
	return m, ok
}

// Offsets returns a copy of the committed offsets.
func (g *Group) Offsets() map[TopicPartition]OffsetAndMetadata {
	out := make(map[TopicPartition]OffsetAndMetadata, len(g.offsets))
	for k, v := range g.offsets {
		out[k] = v
	}
	return out
}

func (g *Group) transition(s State, now time.Time) {
	g.state = s
	g.stateTime = now
}

// newMemberID builds a member id the way Kafka does: the group.instance.id
// (static) or the client id, a dash and a random UUID.
func newMemberID(clientID, instanceID string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	prefix := clientID
	if instanceID != "" {
		prefix = instanceID
	}
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// add adds m (awaiting join with cb) — Kafka's GroupMetadata.add.
func (g *Group) add(m *Member, cb func(*kmsg.JoinGroupResponse)) {
	if len(g.members) == 0 {
		g.protocolType = m.ProtocolType
	}
	g.members[m.ID] = m
	g.order = append(g.order, m.ID)
	if m.InstanceID != "" {
		g.static[m.InstanceID] = m.ID
	}
	if g.leader == "" {
		g.leader = m.ID
	}
	delete(g.pending, m.ID)
	if cb != nil {
		m.joinCB = cb
		g.numAwaiting++
	}
}

// remove drops a member; the leader moves to the first remaining member.
func (g *Group) remove(id string) {
	m, ok := g.members[id]
	if !ok {
		return
	}
	if m.awaitingJoin() {
		g.numAwaiting--
	}
	delete(g.members, id)
	delete(g.pendingSync, id)
	for i, x := range g.order {
		if x == id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	if m.InstanceID != "" && g.static[m.InstanceID] == id {
		delete(g.static, m.InstanceID)
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// invokeJoin answers a member's pending JoinGroup, if any.
func (g *Group) invokeJoin(m *Member, r *kmsg.JoinGroupResponse) bool {
	if m.joinCB == nil {
		return false
	}
	cb := m.joinCB
	m.joinCB = nil
	g.numAwaiting--
	cb(r)
	return true
}

// invokeSync answers a member's pending SyncGroup, if any.
func (g *Group) invokeSync(m *Member, r *kmsg.SyncGroupResponse) bool {
	if m.syncCB == nil {
		return false
	}
	cb := m.syncCB
	m.syncCB = nil
	cb(r)
	return true
}

// joinError is a JoinGroup answer carrying only an error.
func joinError(memberID string, code int16) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.ErrorCode = code
	r.MemberID = memberID
	r.Generation = -1
	return r
}

func syncError(code int16) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	r.ErrorCode = code
	return r
}

// supportsProtocols is Kafka's GroupMetadata.supportsProtocols: an empty
// group accepts any non-empty type and protocol list; otherwise the type
// must match and one of the protocols must be supported by every member.
func (g *Group) supportsProtocols(ptype string, protos []Protocol) bool {
	if g.state == Empty || len(g.members) == 0 {
		return ptype != "" && len(protos) > 0
	}
	if ptype != g.protocolType {
		return false
	}
	for _, p := range protos {
		if g.supportCount(p.Name) == len(g.members) {
			return true
		}
	}
	return false
}

func (g *Group) supportCount(name string) int {
	n := 0
	for _, m := range g.members {
		for _, p := range m.Protocols {
			if p.Name == name {
				n++
				break
			}
		}
	}
	return n
}

// selectProtocol picks the protocol for the next generation: among the
// protocols every member supports, each member votes for its most preferred
// one and the most voted wins (ties go to the leader's preference order).
func (g *Group) selectProtocol() string {
	var candidates []string
	var ref *Member
	if m, ok := g.members[g.leader]; ok {
		ref = m
	} else if len(g.order) > 0 {
		ref = g.members[g.order[0]]
	}
	if ref == nil {
		return ""
	}
	for _, p := range ref.Protocols {
		if g.supportCount(p.Name) == len(g.members) {
			candidates = append(candidates, p.Name)
		}
	}
	if len(candidates) == 0 {
		return ""
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.Protocols {
			if contains(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := candidates[0]
	for _, c := range candidates[1:] {
		if votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// rebalanceTimeout is the largest rebalance timeout of the members.
func (g *Group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		if m.RebalanceTimeout > d {
			d = m.RebalanceTimeout
		}
	}
	return d
}

// allJoined: every member and no pending member has (re)joined.
func (g *Group) allJoined() bool {
	return g.numAwaiting == len(g.members) && len(g.pending) == 0
}

// touch (re)schedules a member's session expiry.
func (g *Group) touch(m *Member, now time.Time) {
	m.deadline = now.Add(m.SessionTimeout)
}

// validateCurrentMember is Kafka's check that memberID (and, for a static
// member, instanceID) names a current member: FENCED_INSTANCE_ID when the
// instance id is mapped to another member id, UNKNOWN_MEMBER_ID otherwise.
func (g *Group) validateCurrentMember(memberID, instanceID string) int16 {
	if instanceID != "" {
		cur, ok := g.static[instanceID]
		if cur == memberID && ok {
			return 0
		}
		if ok {
			return kerr.FencedInstanceID.Code
		}
		return kerr.UnknownMemberID.Code
	}
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// currentMemberMetadata is the member list sent to the leader in its
// JoinGroup answer: every member with its metadata for the chosen protocol.
func (g *Group) currentMemberMetadata() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.ID
		if m.InstanceID != "" {
			s := m.InstanceID
			jm.InstanceID = &s
		}
		jm.ProtocolMetadata = m.metadataFor(g.protocol)
		out = append(out, jm)
	}
	return out
}

// joinResult builds the successful JoinGroup answer for member id.
func (g *Group) joinResult(id string, withMembers bool, leader string, skip bool) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.MemberID = id
	r.Generation = g.generation
	pt, p := g.protocolType, g.protocol
	r.ProtocolType = &pt
	r.Protocol = &p
	r.LeaderID = leader
	r.SkipAssignment = skip
	if withMembers {
		r.Members = g.currentMemberMetadata()
	}
	return r
}
