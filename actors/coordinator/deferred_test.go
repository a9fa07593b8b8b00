package coordinator

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Tests of the pure Group with deferred writes: the test is the owner and
// completes each queued append itself, in order.

// testPos numbers the appends the tests complete by hand, standing in for
// their log offsets (which only ever grow).
var testPos atomic.Int64

// complete runs the done of every queued append with err and reports how
// many there were.
func complete(g *Group, err error) int {
	ws := g.takeWrites()
	for _, w := range ws {
		w.done(t0, testPos.Add(1), err)
	}
	return len(ws)
}

func TestDeferredStaticRejoinUndoneWhenAppendFails(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	g.deferWrites()
	r := jreq("")
	r.InstanceID, r.Version = "i-a", 9
	var first joinBox
	g.Join(t0, r, first.cb)
	g.Tick(t0)
	if first.r == nil || first.r.ErrorCode != 0 {
		t.Fatalf("join %+v", first.r)
	}
	old := first.r.MemberID
	var s syncBox
	g.Sync(t0, SyncRequest{MemberID: old, InstanceID: "i-a", Generation: 1, Assignments: map[string][]byte{old: []byte("A")}}, s.cb)
	if s.r != nil || g.State() != CompletingRebalance {
		t.Fatalf("sync answered %+v (state %v) before its append", s.r, g.State())
	}
	if n := complete(g, nil); n != 1 || s.r == nil || s.r.ErrorCode != 0 || g.State() != Stable {
		t.Fatalf("%d appends; sync %+v state %v", n, s.r, g.State())
	}

	// The static member restarts; its new member id must be durable
	// before it is answered. The append fails: the old id is the member
	// again and the rejoin gets the mapped error.
	var again joinBox
	g.Join(t0, r, again.cb)
	if again.r != nil {
		t.Fatalf("rejoin answered %+v before its append", again.r)
	}
	if n := complete(g, kerr.NotEnoughReplicas); n != 1 {
		t.Fatalf("%d appends", n)
	}
	if again.r == nil || again.r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed rejoin %+v, want COORDINATOR_NOT_AVAILABLE", again.r)
	}
	if _, ok := g.Member(old); !ok || g.static["i-a"] != old || g.State() != Stable {
		t.Fatalf("after the failed rejoin: member %q static %q state %v", old, g.static["i-a"], g.State())
	}
	if code := g.Heartbeat(t0, old, "i-a", 1); code != 0 {
		t.Fatalf("old member id's heartbeat %d", code)
	}

	// Again, and this time it lands: the new id replaces the old.
	var third joinBox
	g.Join(t0, r, third.cb)
	complete(g, nil)
	if third.r == nil || third.r.ErrorCode != 0 || third.r.MemberID == old || !third.r.SkipAssignment {
		t.Fatalf("rejoin %+v", third.r)
	}
	if code := g.Heartbeat(t0, old, "i-a", 1); code != kerr.FencedInstanceID.Code {
		t.Fatalf("old member id's heartbeat %d, want FENCED_INSTANCE_ID", code)
	}
}

// deferredLeader is a group deferring its writes, with one member a that
// joined generation 1 and leads it (CompletingRebalance: a must sync).
func deferredLeader(t *testing.T) (g *Group, a string) {
	t.Helper()
	g = NewGroup("g", testCfg(), &memStore{}, t0)
	g.deferWrites()
	a, ja := joinNew(t, g, t0)
	g.Tick(t0)
	if ja.r == nil || ja.r.ErrorCode != 0 {
		t.Fatalf("join %+v", ja.r)
	}
	return g, a
}

func TestDeferredSyncAppendIgnoredAfterARebalanceBegan(t *testing.T) {
	g, a := deferredLeader(t)
	var s syncBox
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1}, s.cb)
	// A new member joins while the leader's assignment is appended: the
	// rebalance answers the sync REBALANCE_IN_PROGRESS, and the append's
	// success later must not make the group Stable.
	b, _ := joinNew(t, g, t0)
	if s.r == nil || s.r.ErrorCode != kerr.RebalanceInProgress.Code || g.State() != PreparingRebalance {
		t.Fatalf("sync %+v state %v after a join during its append", s.r, g.State())
	}
	complete(g, nil)
	if g.State() != PreparingRebalance {
		t.Fatalf("state %v after the stale append landed", g.State())
	}
	if _, ok := g.Member(b); !ok {
		t.Fatal("new member lost")
	}
}

func TestDeferredCommitPendingUntilAppended(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	g.deferWrites()
	tp := TopicPartition{"t", 0}
	var got []commitResult
	cb := func(r commitResult) { got = append(got, r) }
	g.commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 1, LeaderEpoch: -1}}}, cb)
	complete(g, nil)
	g.commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 2, LeaderEpoch: -1}}}, cb)
	g.commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 3, LeaderEpoch: -1}}}, cb)
	if f := g.FetchOffsets([]TopicPartition{tp}); f[0].Offset != 1 {
		t.Fatalf("offset %d with two commits pending, want 1", f[0].Offset)
	}
	// Two appends in order: the first lands, the second fails. The
	// first's offset shows; the failed one never does, and nothing is
	// pending any more.
	ws := g.takeWrites()
	if len(ws) != 2 {
		t.Fatalf("%d appends queued", len(ws))
	}
	ws[0].done(t0, testPos.Add(1), nil)
	if f := g.FetchOffsets([]TopicPartition{tp}); f[0].Offset != 2 || len(g.pendingOffsets) != 1 {
		t.Fatalf("offset %d, %d pending after the first append", f[0].Offset, len(g.pendingOffsets))
	}
	ws[1].done(t0, -1, kerr.NotLeaderForPartition)
	if f := g.FetchOffsets([]TopicPartition{tp}); f[0].Offset != 2 || len(g.pendingOffsets) != 0 {
		t.Fatalf("offset %d, %d pending after the failed append", f[0].Offset, len(g.pendingOffsets))
	}
	want := []commitResult{{0, true}, {0, true}, {kerr.NotCoordinator.Code, true}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("answers %+v, want %+v", got, want)
	}
	// A pending commit keeps an Empty group from expiring to Dead.
	g.commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{{"u", 0}: {Offset: 9, LeaderEpoch: -1}}}, cb)
	g.ExpireOffsets(t0.Add(8 * 24 * time.Hour))
	if g.State() == Dead {
		t.Fatal("group with a pending commit expired to Dead")
	}
	complete(g, nil)
	if f := g.FetchOffsets([]TopicPartition{{"u", 0}}); f[0].Offset != 9 {
		t.Fatalf("pending commit after expiry: offset %d", f[0].Offset)
	}
}
