package controller

import (
	"testing"

	"gregor/actors"
)

// TestEmitElectionCountsLeaderChangesOnly: the metrics hook counts a move
// to an ISR member as a leader election, a move outside the ISR as an
// unclean one, and nothing for a first leader, an unchanged leader or an
// offline partition.
func TestEmitElectionCountsLeaderChangesOnly(t *testing.T) {
	sys := actors.NewSystem(nil)
	defer sys.Shutdown()
	var got []string
	actors.InstrumentsOf(sys).OnEvent(func(e actors.Event) { got = append(got, e.Name+":"+e.Kind) })

	cur := &PartitionLeadership{Leader: 1, LeaderEpoch: 3, ISR: []int32{1, 2}}
	emitElection(sys, "t", nil, PartitionLeadership{Leader: 1, ISR: []int32{1, 2, 3}})           // new partition
	emitElection(sys, "t", cur, PartitionLeadership{Leader: 1, LeaderEpoch: 4, ISR: []int32{1}}) // ISR shrink only
	emitElection(sys, "t", cur, PartitionLeadership{Leader: -1, LeaderEpoch: 4, ISR: cur.ISR})   // offline
	emitElection(sys, "t", cur, PartitionLeadership{Leader: 2, LeaderEpoch: 4, ISR: []int32{2}}) // clean
	emitElection(sys, "u", cur, PartitionLeadership{Leader: 3, LeaderEpoch: 4, ISR: []int32{3}}) // unclean

	want := []string{actors.EventLeaderElection + ":t", actors.EventUncleanElection + ":u"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("events %v, want %v", got, want)
	}
}
