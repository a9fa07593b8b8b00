package coordinator

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A simple-commit group's commit is being appended when the group is
// deleted; a new commit of the same partition starts the group again
// (forget, as groupActor.after does for a Dead group). The deleted
// group's append then lands: it must not install its offset in the new
// group, so when the new commit's append fails nothing is committed (the
// log holds the tombstone after the old commit).
func TestDeletedGroupsCommitDoesNotLandInNewGroup(t *testing.T) {
	g := NewGroup("g", testCfg(), &memStore{}, t0)
	g.deferWrites()
	tp := TopicPartition{Topic: "t", Partition: 0}
	c1 := commitResult{code: -1}
	g.commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 5, LeaderEpoch: -1}}}, func(r commitResult) { c1 = r })
	w1 := g.takeWrites() // the first commit, in flight
	var del int16 = -1
	g.delete(t0, func(c int16) { del = c })
	w2 := g.takeWrites() // tombstones
	g.forget(t0)         // the actor forgets the Dead group
	c3 := commitResult{code: -1}
	g.commit(t0, CommitRequest{Generation: -1, Offsets: map[TopicPartition]OffsetAndMetadata{tp: {Offset: 7, LeaderEpoch: -1}}}, func(r commitResult) { c3 = r })
	w3 := g.takeWrites()
	if len(w1) != 1 || len(w2) != 1 || len(w3) != 1 {
		t.Fatalf("writes %d %d %d", len(w1), len(w2), len(w3))
	}
	w1[0].done(t0, testPos.Add(1), nil)
	if c1.code != 0 || !c1.accepted {
		t.Fatalf("the deleted group's commit, appended, answered %+v, want accepted with code 0 (as Kafka: the append succeeded)", c1)
	}
	if got := g.FetchOffsets([]TopicPartition{tp}); got[0].Offset != -1 {
		t.Fatalf("the deleted group's commit shows offset %d in the new group, want -1", got[0].Offset)
	}
	w2[0].done(t0, testPos.Add(1), nil)
	w3[0].done(t0, -1, kerr.NotEnoughReplicas)
	if c3.code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("the failed recommit answered %v, want COORDINATOR_NOT_AVAILABLE (NOT_ENOUGH_REPLICAS mapped)", kerr.ErrorForCode(c3.code))
	}
	if got := g.FetchOffsets([]TopicPartition{tp}); got[0].Offset != -1 {
		t.Fatalf("after delete + failed recommit, OffsetFetch shows offset %d (from the deleted group's commit; the log has a tombstone after it), want -1", got[0].Offset)
	}
	if g.Exists() {
		t.Fatalf("the simple commit that recreated the group wrote nothing, yet the group exists (state %v)", g.State())
	}
	_ = del
}

// A leader's SyncGroup append is in flight; the members leave, the empty
// group is deleted and forgotten (groupActor.after), and a new group of
// the same id rebalances to generation 1, CompletingRebalance. The old
// append then lands, with the same state and generation as when it was
// asked for: it must not install the old generation's assignment in the
// new group, which stays CompletingRebalance until its own leader syncs.
func TestDeletedGroupsSyncDoesNotCompleteNewGroup(t *testing.T) {
	g, a := deferredLeader(t)
	var s syncBox
	g.Sync(t0, SyncRequest{MemberID: a, Generation: 1, Assignments: map[string][]byte{a: []byte("OLD")}}, s.cb)
	old := g.takeWrites() // the sync append, in flight
	g.Leave(t0, []LeaveMember{{MemberID: a}})
	g.Tick(t0)
	complete(g, nil) // the empty generation's record
	var del int16 = -1
	g.delete(t0, func(c int16) { del = c })
	complete(g, nil)
	if del != 0 || g.State() != Dead {
		t.Fatalf("setup: delete answered %d, state %v", del, g.State())
	}
	g.forget(t0)
	b, jb := joinNew(t, g, t0)
	g.Tick(t0.Add(10e9))
	if jb.r == nil || g.State() != CompletingRebalance || g.Generation() != 1 {
		t.Fatalf("setup: join %+v state %v gen %d", jb.r, g.State(), g.Generation())
	}
	if len(old) != 1 {
		t.Fatalf("setup: %d sync appends", len(old))
	}
	if s.r == nil {
		t.Fatal("the leader that left was never answered its SyncGroup")
	}
	old[0].done(t0, testPos.Add(1), nil)
	if g.State() != CompletingRebalance {
		m, _ := g.Member(b)
		t.Fatalf("the deleted group's sync append moved the new group to %v (new member's assignment %q) before its leader synced", g.State(), m.Assignment)
	}
	var sb syncBox
	g.Sync(t0, SyncRequest{MemberID: b, Generation: 1, Assignments: map[string][]byte{b: []byte("NEW")}}, sb.cb)
	complete(g, nil)
	if m, _ := g.Member(b); g.State() != Stable || string(m.Assignment) != "NEW" {
		t.Fatalf("after the new leader's sync: state %v, assignment %q, want Stable with NEW", g.State(), m.Assignment)
	}
}
