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
	w1[0].done(t0, nil)
	if c1.code != 0 || !c1.accepted {
		t.Fatalf("the deleted group's commit, appended, answered %+v, want accepted with code 0 (as Kafka: the append succeeded)", c1)
	}
	if got := g.FetchOffsets([]TopicPartition{tp}); got[0].Offset != -1 {
		t.Fatalf("the deleted group's commit shows offset %d in the new group, want -1", got[0].Offset)
	}
	w2[0].done(t0, nil)
	w3[0].done(t0, kerr.NotEnoughReplicas)
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
