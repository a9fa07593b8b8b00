package coordinator

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var t0 = time.UnixMilli(1_700_000_000_000)

type memStore struct {
	recs    []Record
	batches []Batch
	fail    error
}

// Append keeps the records; a batch's offset is the number of records
// before it.
func (s *memStore) Append(b Batch) (int64, error) {
	if s.fail != nil {
		return -1, s.fail
	}
	off := int64(len(s.recs))
	s.recs = append(s.recs, b.Records...)
	s.batches = append(s.batches, b)
	return off, nil
}

// joinBox captures a deferred JoinGroup answer.
type joinBox struct{ r *kmsg.JoinGroupResponse }

func (b *joinBox) cb(r *kmsg.JoinGroupResponse) {
	if b.r != nil {
		panic("join answered twice")
	}
	b.r = r
}

type syncBox struct{ r *kmsg.SyncGroupResponse }

func (b *syncBox) cb(r *kmsg.SyncGroupResponse) {
	if b.r != nil {
		panic("sync answered twice")
	}
	b.r = r
}

func testCfg() Config {
	c := DefaultConfig()
	c.InitialRebalanceDelay = 0
	return c
}

func jreq(member string, protos ...string) JoinRequest {
	r := JoinRequest{Version: 9, MemberID: member, ClientID: "c", ClientHost: "/127.0.0.1", ProtocolType: "consumer",
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 30 * time.Second}
	if len(protos) == 0 {
		protos = []string{"range"}
	}
	for _, p := range protos {
		r.Protocols = append(r.Protocols, Protocol{Name: p, Metadata: []byte(p + "-md")})
	}
	return r
}

// joinNew runs the two-step KIP-394 join and returns the member id and the
// pending answer box.
func joinNew(t *testing.T, g *Group, now time.Time, protos ...string) (string, *joinBox) {
	t.Helper()
	var first joinBox
	g.Join(now, jreq("", protos...), first.cb)
	if first.r == nil || first.r.ErrorCode != kerr.MemberIDRequired.Code || first.r.MemberID == "" {
		t.Fatalf("first join: %+v, want MEMBER_ID_REQUIRED with an id", first.r)
	}
	var b joinBox
	g.Join(now, jreq(first.r.MemberID, protos...), b.cb)
	return first.r.MemberID, &b
}

func TestJoinSyncHeartbeatSingleMember(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	id, jb := joinNew(t, g, t0)
	if g.State() != PreparingRebalance {
		t.Fatalf("state %v, want PreparingRebalance", g.State())
	}
	if jb.r != nil {
		t.Fatal("join answered before the initial delay ended")
	}
	g.Tick(g.NextDeadline()) // initial delay (0) ends
	if jb.r == nil || jb.r.ErrorCode != 0 || jb.r.Generation != 1 || jb.r.LeaderID != id || len(jb.r.Members) != 1 || *jb.r.Protocol != "range" {
		t.Fatalf("join answer %+v", jb.r)
	}
	if string(jb.r.Members[0].ProtocolMetadata) != "range-md" {
		t.Fatalf("leader got metadata %q", jb.r.Members[0].ProtocolMetadata)
	}
	if g.State() != CompletingRebalance {
		t.Fatalf("state %v", g.State())
	}
	// Heartbeat between join and sync: NONE; commit: REBALANCE_IN_PROGRESS.
	if c := g.Heartbeat(t0, id, "", 1); c != 0 {
		t.Fatalf("heartbeat in CompletingRebalance = %d", c)
	}
	if c := g.Commit(t0, CommitRequest{MemberID: id, Generation: 1, Offsets: map[TopicPartition]OffsetAndMetadata{{"t", 0}: {Offset: 5}}}); c != kerr.RebalanceInProgress.Code {
		t.Fatalf("commit in CompletingRebalance = %d", c)
	}
	var sb syncBox
	g.Sync(t0, SyncRequest{MemberID: id, Generation: 1, Assignments: map[string][]byte{id: []byte("A")}}, sb.cb)
	if sb.r == nil || sb.r.ErrorCode != 0 || string(sb.r.MemberAssignment) != "A" {
		t.Fatalf("sync answer %+v", sb.r)
	}
	if g.State() != Stable || len(st.recs) != 1 {
		t.Fatalf("state %v, %d records", g.State(), len(st.recs))
	}
	k, _ := DecodeKey(st.recs[0].Key)
	v, _ := DecodeGroupValue(st.recs[0].Value)
	if k.Kind != KeyGroup || v.Generation != 1 || len(v.Members) != 1 || string(v.Members[0].Assignment) != "A" || *v.Leader != id {
		t.Fatalf("stored group %+v %+v", k, v)
	}
	cases := []struct {
		name   string
		member string
		gen    int32
		want   int16
	}{
		{"ok", id, 1, 0},
		{"stale generation", id, 0, kerr.IllegalGeneration.Code},
		{"unknown member", "nobody", 1, kerr.UnknownMemberID.Code},
	}
	for _, c := range cases {
		if got := g.Heartbeat(t0, c.member, "", c.gen); got != c.want {
			t.Errorf("heartbeat %s = %d, want %d", c.name, got, c.want)
		}
	}
	// Session timeout: no heartbeat for 10 s → removed → Empty (generation 2).
	g.Heartbeat(t0.Add(5*time.Second), id, "", 1)
	g.Tick(t0.Add(14 * time.Second))
	if g.State() != Stable {
		t.Fatalf("expired early: %v", g.State())
	}
	// The last member expiring completes the (empty) join phase at once.
	g.Tick(t0.Add(15 * time.Second))
	if g.State() != Empty || g.Generation() != 2 || len(g.Members()) != 0 {
		t.Fatalf("state %v gen %d members %d", g.State(), g.Generation(), len(g.Members()))
	}
}

func TestThreeMembersRebalanceAndLeave(t *testing.T) {
	cfg := testCfg()
	cfg.InitialRebalanceDelay = 3 * time.Second
	g := NewGroup("g", cfg, nil, t0)
	a, ja := joinNew(t, g, t0)
	// Members arriving during the initial delay extend it once each.
	b, jb := joinNew(t, g, t0.Add(time.Second))
	c, jc := joinNew(t, g, t0.Add(2*time.Second))
	if d := g.NextDeadline(); !d.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("first deadline %v", d.Sub(t0))
	}
	g.Tick(t0.Add(3 * time.Second))
	if ja.r != nil || g.State() != PreparingRebalance {
		t.Fatal("initial delay not extended after new members")
	}
	g.Tick(g.NextDeadline())
	for i, jb := range []*joinBox{ja, jb, jc} {
		if jb.r == nil || jb.r.ErrorCode != 0 || jb.r.Generation != 1 || jb.r.LeaderID != a {
			t.Fatalf("member %d join %+v", i, jb.r)
		}
	}
	if len(ja.r.Members) != 3 || len(jb.r.Members) != 0 {
		t.Fatalf("leader got %d members, follower %d", len(ja.r.Members), len(jb.r.Members))
	}
	// Follower syncs first and waits for the leader.
	var sb, sc, sa syncBox
	g.Sync(t0, SyncRequest{MemberID: b, Generation: 1}, sb.cb)
	if sb.r != nil {
		t.Fatal("follower sync answered before the leader's")
	}
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1, Assignments: map[string][]byte{a: []byte("0,1"), b: []byte("2,3")}}, sa.cb)
	g.Sync(t0, SyncRequest{MemberID: c, Generation: 1}, sc.cb)
	if string(sa.r.MemberAssignment) != "0,1" || string(sb.r.MemberAssignment) != "2,3" || sc.r.ErrorCode != 0 || len(sc.r.MemberAssignment) != 0 {
		t.Fatalf("assignments %q %q %q(%d)", sa.r.MemberAssignment, sb.r.MemberAssignment, sc.r.MemberAssignment, sc.r.ErrorCode)
	}
	// b leaves: rebalance; a and c are told by heartbeat and rejoin.
	top, codes := g.Leave(t0, []LeaveMember{{MemberID: b}, {MemberID: "ghost"}})
	if top != 0 || codes[0] != 0 || codes[1] != kerr.UnknownMemberID.Code {
		t.Fatalf("leave %d %v", top, codes)
	}
	if g.State() != PreparingRebalance {
		t.Fatalf("state %v", g.State())
	}
	if h := g.Heartbeat(t0, c, "", 1); h != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat during rebalance %d", h)
	}
	// Commits are still accepted while preparing the rebalance.
	if code := g.Commit(t0, CommitRequest{MemberID: c, Generation: 1, Offsets: map[TopicPartition]OffsetAndMetadata{{"t", 4}: {Offset: 9}}}); code != 0 {
		t.Fatalf("commit during PreparingRebalance %d", code)
	}
	var ra, rc joinBox
	g.Join(t0, jreq(a), ra.cb)
	if ra.r != nil {
		t.Fatal("completed before c rejoined")
	}
	g.Join(t0, jreq(c), rc.cb)
	if ra.r == nil || ra.r.Generation != 2 || len(ra.r.Members) != 2 || rc.r.Generation != 2 {
		t.Fatalf("rejoin answers %+v %+v", ra.r, rc.r)
	}
	// Old generation sync is fenced.
	var old syncBox
	g.Sync(t0, SyncRequest{MemberID: c, Generation: 1}, old.cb)
	if old.r.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("stale sync %d", old.r.ErrorCode)
	}
}

func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	g := NewGroup("g", testCfg(), nil, t0)
	a, ja := joinNew(t, g, t0)
	b, jb := joinNew(t, g, t0)
	g.Tick(t0)
	_ = jb
	var sa syncBox
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1}, sa.cb)
	var sb syncBox
	g.Sync(t0, SyncRequest{MemberID: b, Generation: 1}, sb.cb)
	if g.State() != Stable || ja.r.LeaderID != a {
		t.Fatalf("state %v", g.State())
	}
	// a (leader) rejoins: rebalance; b never does.
	var ra joinBox
	g.Join(t0.Add(time.Second), jreq(a), ra.cb)
	g.Heartbeat(t0.Add(2*time.Second), b, "", 1)
	g.Tick(t0.Add(31 * time.Second)) // rebalance timeout 30 s
	if ra.r == nil || ra.r.Generation != 2 || len(ra.r.Members) != 1 {
		t.Fatalf("answer %+v", ra.r)
	}
	if _, ok := g.Member(b); ok {
		t.Fatal("b kept although it did not rejoin")
	}
}

func TestProtocolChecksAndLimits(t *testing.T) {
	cfg := testCfg()
	cfg.MaxSize = 1
	g := NewGroup("g", cfg, nil, t0)
	a, _ := joinNew(t, g, t0, "range")
	g.Tick(t0)
	var sa syncBox
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1}, sa.cb)

	var j joinBox
	g.Join(t0, jreq(""), j.cb)
	if j.r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("max size: %d", j.r.ErrorCode)
	}
	g.cfg.MaxSize = 10
	j = joinBox{}
	r := jreq("", "roundrobin")
	g.Join(t0, r, j.cb)
	if j.r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("inconsistent protocol: %d", j.r.ErrorCode)
	}
	j = joinBox{}
	r = jreq("")
	r.ProtocolType = "connect"
	g.Join(t0, r, j.cb)
	if j.r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("other protocol type: %d", j.r.ErrorCode)
	}
	for _, st := range []time.Duration{time.Second, time.Hour} {
		j = joinBox{}
		r = jreq("")
		r.SessionTimeout = st
		g.Join(t0, r, j.cb)
		if j.r.ErrorCode != kerr.InvalidSessionTimeout.Code {
			t.Fatalf("session %v: %d", st, j.r.ErrorCode)
		}
	}
	j = joinBox{}
	NewGroup("other", cfg, nil, t0).Join(t0, jreq("someone"), j.cb)
	if j.r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("known id for unknown group: %d", j.r.ErrorCode)
	}
	// A v3 client gets no MEMBER_ID_REQUIRED.
	g2 := NewGroup("g2", testCfg(), nil, t0)
	j = joinBox{}
	r = jreq("")
	r.Version = 3
	g2.Join(t0, r, j.cb)
	g2.Tick(t0)
	if j.r == nil || j.r.ErrorCode != 0 || j.r.MemberID == "" {
		t.Fatalf("v3 join %+v", j.r)
	}
}

func TestStaticMemberRejoinWithoutRebalanceAndFencing(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	join := func(member, inst string, v int16) *joinBox {
		r := jreq(member)
		r.InstanceID = inst
		r.Version = v
		b := &joinBox{}
		g.Join(t0, r, b.cb)
		return b
	}
	ja := join("", "i-a", 5)
	jb := join("", "i-b", 5)
	if ja.r != nil || jb.r != nil {
		t.Fatal("static members must not get MEMBER_ID_REQUIRED")
	}
	g.Tick(t0)
	a, b := ja.r.MemberID, jb.r.MemberID
	var s1, s2 syncBox
	g.Sync(t0, SyncRequest{MemberID: a, InstanceID: "i-a", Generation: 1, Assignments: map[string][]byte{a: []byte("A"), b: []byte("B")}}, s1.cb)
	g.Sync(t0, SyncRequest{MemberID: b, InstanceID: "i-b", Generation: 1}, s2.cb)
	if g.State() != Stable {
		t.Fatal(g.State())
	}
	// b restarts: new member id, same generation, no rebalance.
	nb := join("", "i-b", 5)
	if nb.r == nil || nb.r.ErrorCode != 0 || nb.r.Generation != 1 || nb.r.MemberID == b || g.State() != Stable {
		t.Fatalf("static rejoin %+v state %v", nb.r, g.State())
	}
	// The old incarnation is fenced everywhere.
	if c := g.Heartbeat(t0, b, "i-b", 1); c != kerr.FencedInstanceID.Code {
		t.Fatalf("old incarnation heartbeat %d", c)
	}
	if c := g.Commit(t0, CommitRequest{MemberID: b, InstanceID: "i-b", Generation: 1, Offsets: map[TopicPartition]OffsetAndMetadata{{"t", 0}: {}}}); c != kerr.FencedInstanceID.Code {
		t.Fatalf("old incarnation commit %d", c)
	}
	var sNew syncBox
	g.Sync(t0, SyncRequest{MemberID: nb.r.MemberID, InstanceID: "i-b", Generation: 1}, sNew.cb)
	if string(sNew.r.MemberAssignment) != "B" {
		t.Fatalf("new incarnation kept assignment %q", sNew.r.MemberAssignment)
	}
	// Leader restarts with v9: told it leads but must skip assignment.
	na := join("", "i-a", 9)
	if !na.r.SkipAssignment || na.r.LeaderID != na.r.MemberID || len(na.r.Members) != 2 {
		t.Fatalf("v9 static leader rejoin %+v", na.r)
	}
	// Administrative removal by instance id.
	top, codes := g.Leave(t0, []LeaveMember{{InstanceID: "i-b"}, {InstanceID: "i-zzz"}})
	if top != 0 || codes[0] != 0 || codes[1] != kerr.UnknownMemberID.Code || g.State() != PreparingRebalance {
		t.Fatalf("leave by instance: %d %v %v", top, codes, g.State())
	}
}

func TestSimpleCommitFetchDeleteAndExpire(t *testing.T) {
	st := &memStore{}
	cfg := testCfg()
	cfg.OffsetsRetention = time.Hour
	g := NewGroup("g", cfg, st, t0)
	tp := TopicPartition{"t", 1}
	if c := g.Commit(t0, CommitRequest{Generation: 3, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 1}}}); c != kerr.IllegalGeneration.Code {
		t.Fatalf("gen>=0 to unknown group %d", c)
	}
	if g.Exists() {
		t.Fatal("created by a rejected commit")
	}
	st.fail = kerr.NotEnoughReplicas
	if c := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 1}}}); c != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("store failure %d", c)
	}
	if g.Exists() || len(g.FetchOffsets(nil)) != 0 {
		t.Fatal("failed commit left state behind")
	}
	st.fail = nil
	if c := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 42, LeaderEpoch: 7, Metadata: "m", CommitTime: t0}}}); c != 0 {
		t.Fatalf("simple commit %d", c)
	}
	got := g.FetchOffsets([]TopicPartition{tp, {"t", 2}})
	if got[0].Offset != 42 || got[0].Metadata != "m" || got[0].LeaderEpoch != 7 || got[1].Offset != -1 {
		t.Fatalf("fetch %+v", got)
	}
	// A consumer joins; simple commits are then refused.
	id, _ := joinNew(t, g, t0)
	g.Tick(t0)
	if c := g.Commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 1}}}); c != kerr.UnknownMemberID.Code {
		t.Fatalf("simple commit to group with members %d", c)
	}
	if c := g.Delete(t0); c != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete non-empty %d", c)
	}
	g.Leave(t0, []LeaveMember{{MemberID: id}})
	g.Tick(t0)
	if g.State() != Empty {
		t.Fatal(g.State())
	}
	emptyAt := t0
	if n := g.ExpireOffsets(emptyAt.Add(59 * time.Minute)); n != 0 {
		t.Fatalf("expired %d early", n)
	}
	if n := g.ExpireOffsets(emptyAt.Add(time.Hour)); n != 1 || g.State() != Dead {
		t.Fatalf("expired %d, state %v", n, g.State())
	}
	last := st.recs[len(st.recs)-2:]
	if last[0].Value != nil || last[1].Value != nil {
		t.Fatal("expiry must write tombstones")
	}
	if k, _ := DecodeKey(last[1].Key); k.Kind != KeyGroup {
		t.Fatal("group tombstone missing")
	}
}

func TestOffsetDeleteSubscribedTopic(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	md := kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{"sub"}}
	r := jreq("")
	r.Protocols = []Protocol{{Name: "range", Metadata: md.AppendTo(nil)}}
	var j joinBox
	g.Join(t0, r, j.cb)
	r.MemberID = j.r.MemberID
	j = joinBox{}
	g.Join(t0, r, j.cb)
	g.Tick(t0)
	var s syncBox
	g.Sync(t0, SyncRequest{MemberID: r.MemberID, Generation: 1}, s.cb)
	g.Commit(t0, CommitRequest{MemberID: r.MemberID, Generation: 1, Offsets: map[TopicPartition]OffsetAndMetadata{{"sub", 0}: {Offset: 1}, {"other", 0}: {Offset: 2}}})
	top, codes := g.DeleteOffsets(t0, []TopicPartition{{"sub", 0}, {"other", 0}})
	if top != 0 || codes[0] != kerr.GroupSubscribedToTopic.Code || codes[1] != 0 {
		t.Fatalf("offset delete %d %v", top, codes)
	}
	if offs := g.Offsets(); len(offs) != 1 || offs[TopicPartition{"sub", 0}].Offset != 1 {
		t.Fatalf("offsets %v", offs)
	}
	if top, _ := NewGroup("x", testCfg(), nil, t0).DeleteOffsets(t0, nil); top != kerr.GroupIDNotFound.Code {
		t.Fatalf("unknown group %d", top)
	}
}

func TestSyncStoreFailurePropagates(t *testing.T) {
	st := &memStore{}
	g := NewGroup("g", testCfg(), st, t0)
	a, _ := joinNew(t, g, t0)
	g.Tick(t0)
	st.fail = errors.New("disk on fire")
	var s syncBox
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1}, s.cb)
	if s.r.ErrorCode != kerr.CoordinatorNotAvailable.Code || g.State() != PreparingRebalance {
		t.Fatalf("sync with failing store %d, state %v", s.r.ErrorCode, g.State())
	}
}

func TestPendingMemberExpiresAndMissingSyncRebalances(t *testing.T) {
	g := NewGroup("g", testCfg(), nil, t0)
	var j joinBox
	g.Join(t0, jreq(""), j.cb) // never comes back
	if len(g.pending) != 1 {
		t.Fatal("no pending member")
	}
	g.Tick(t0.Add(10 * time.Second))
	if len(g.pending) != 0 || g.Exists() != true {
		t.Fatal("pending member not expired")
	}
	a, _ := joinNew(t, g, t0)
	b, _ := joinNew(t, g, t0)
	g.Tick(t0)
	var sa syncBox
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1}, sa.cb)
	if g.State() != Stable {
		t.Fatal(g.State())
	}
	// b never syncs: after the rebalance timeout it is removed.
	for _, at := range []time.Duration{9, 18, 27} {
		g.Heartbeat(t0.Add(at*time.Second), b, "", 1)
		g.Heartbeat(t0.Add(at*time.Second), a, "", 1)
	}
	g.Tick(t0.Add(29 * time.Second))
	if g.State() != Stable {
		t.Fatalf("state %v before the sync deadline", g.State())
	}
	g.Tick(t0.Add(30 * time.Second))
	if _, ok := g.Member(b); ok || g.State() != PreparingRebalance {
		t.Fatalf("b still there or state %v", g.State())
	}
}

func TestStateNames(t *testing.T) {
	for s := Empty; s <= Dead; s++ {
		p, ok := ParseState(s.String())
		if !ok || p != s {
			t.Errorf("round trip %v", s)
		}
	}
	if p, ok := ParseState("stable"); !ok || p != Stable {
		t.Error("case-insensitive parse")
	}
}
