package partition

import (
	"slices"
	"testing"
)

// A LeaderAndIsr at the same leader epoch and znode version (a controller
// failover re-sending the state it read) arrives while the leader's
// expansion write is in flight: the proposal must stay pending, so the
// high watermark keeps waiting for follower 3 and an acks=-1 produce is
// not acknowledged before the write lands with 3 in the ISR.
func TestResentLeaderAndIsrKeepsPendingExpand(t *testing.T) {
	e, prop := proposedExpand(t)
	// Controller re-sends the state it holds (epoch 5, version 7).
	if err, _ := e.c.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}, ZkVersion: 7, MinInsyncReplicas: 1}); err != nil {
		t.Fatal(err)
	}
	if got := e.c.Proposal(); got == nil || got.Seq != prop.Seq {
		t.Fatalf("proposal after the re-sent state = %+v, want the in-flight one (seq %d)", got, prop.Seq)
	}
	if got := e.c.Replica().PendingISR; !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("PendingISR after the re-sent state = %v, want [1 2 3]", got)
	}
	p, _, done, _ := e.produce(-1) // 10..19
	if done {
		t.Fatal("answered before followers")
	}
	eff := e.fetch(2, 20) // only follower 2 has it; 3 is still at 10
	if _, acked := replied(eff, p); acked {
		t.Fatal("acks=-1 produce acknowledged with follower 3 (in the ISR being written) at offset 10")
	}
	if hw := e.hw(); hw != 10 {
		t.Fatalf("high watermark = %d, want 10 (follower 3 of the pending ISR is at 10)", hw)
	}
	committed, _ := e.c.IsrWritten(IsrResult{Proposal: prop, NewZkVersion: 8})
	if !committed || !slices.Equal(e.c.Replica().ISR, []int32{1, 2, 3}) {
		t.Fatalf("write result: committed=%v ISR=%v, want true [1 2 3]", committed, e.c.Replica().ISR)
	}
	eff = e.fetch(3, 20)
	if _, acked := replied(eff, p); !acked {
		t.Fatal("produce not acknowledged once every ISR member has it")
	}
}

// A LeaderAndIsr with a newer znode version replaces the proposal: the
// controller's state is based on ZooKeeper after (or instead of) the write.
func TestNewerLeaderAndIsrReplacesProposal(t *testing.T) {
	e, _ := proposedExpand(t)
	if err, _ := e.c.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}, ZkVersion: 9, MinInsyncReplicas: 1}); err != nil {
		t.Fatal(err)
	}
	if e.c.Proposal() != nil || e.c.Replica().PendingISR != nil {
		t.Fatalf("proposal %+v / PendingISR %v kept over a newer state", e.c.Proposal(), e.c.Replica().PendingISR)
	}
}

// A restart while an expansion is being written: the next incarnation's
// core resumes the proposal the Handle kept, so the high watermark keeps
// waiting for the new member until the write's result (here: success,
// delivered to the new incarnation) arrives.
func TestRestartedCoreResumesPendingProposal(t *testing.T) {
	e, prop := proposedExpand(t)
	// The next incarnation: same log, same saved state.
	n := newCoreEnv(t, []int32{1, 2}, 1)
	n.clk = e.clk
	if !n.c.Resume(&prop) {
		t.Fatal("proposal over the same state not resumed")
	}
	n.fetch(2, 10)
	n.fetch(3, 10)
	p, _, done, _ := n.produce(-1) // 10..19
	if done {
		t.Fatal("answered before followers")
	}
	eff := n.fetch(2, 20)
	if _, acked := replied(eff, p); acked || n.hw() != 10 {
		t.Fatalf("acked=%v hw=%d with follower 3 of the resumed proposal at 10, want false 10", acked, n.hw())
	}
	if committed, _ := n.c.IsrWritten(IsrResult{Proposal: prop, NewZkVersion: 8}); !committed || !slices.Equal(n.c.Replica().ISR, []int32{1, 2, 3}) {
		t.Fatalf("old incarnation's write result: committed=%v ISR=%v", committed, n.c.Replica().ISR)
	}
	// A proposal over another state (a newer znode version) is not resumed.
	o := newCoreEnv(t, []int32{1, 2}, 1)
	stale := prop
	stale.ZkVersion = 6
	if o.c.Resume(&stale) || o.c.Replica().PendingISR != nil {
		t.Fatal("proposal over an older znode version resumed")
	}
}
