package partition

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// An expansion whose write reports an error (it may have landed: the
// answer was lost with the connection) stays pending: the high watermark
// keeps waiting for the new member, and the same proposal (same base
// zkVersion) is written again — at a fetch once the backoff passed, or
// at the tick — until it succeeds.
func TestFailedIsrWriteStaysPendingAndIsRetried(t *testing.T) {
	e, prop := proposedExpand(t)
	if committed, _ := e.c.IsrWritten(IsrResult{Proposal: prop, Err: errors.New("zk: connection closed")}); committed {
		t.Fatal("a failed write committed")
	}
	if got := e.c.Replica().PendingISR; !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("PendingISR after a failed write = %v, want [1 2 3]", got)
	}
	p, _, done, _ := e.produce(-1) // 10..19
	if done {
		t.Fatal("answered before followers")
	}
	eff := e.fetch(2, 20) // before the backoff: no retry yet
	if _, acked := replied(eff, p); acked || e.hw() != 10 {
		t.Fatalf("acked=%v hw=%d with follower 3 of the pending ISR at 10, want false 10", acked, e.hw())
	}
	if eff.Propose != nil {
		t.Fatalf("retry %+v before the backoff", eff.Propose)
	}
	e.clk.add(isrRetryBackoff)
	eff = e.fetch(2, 20)
	if eff.Propose == nil || eff.Propose.Seq != prop.Seq || eff.Propose.ZkVersion != prop.ZkVersion || !slices.Equal(eff.Propose.ISR, prop.ISR) {
		t.Fatalf("retry after the backoff = %+v, want %+v", eff.Propose, prop)
	}
	if again := e.fetch(2, 20); again.Propose != nil {
		t.Fatalf("second write %+v while the retry is in flight", again.Propose)
	}
	// The writer recognises the landed write and answers the znode's version.
	committed, _ := e.c.IsrWritten(IsrResult{Proposal: *eff.Propose, NewZkVersion: 8})
	if !committed || !slices.Equal(e.c.Replica().ISR, []int32{1, 2, 3}) || e.c.Replica().ZkVersion != 8 {
		t.Fatalf("retry result: committed=%v ISR=%v version=%d, want true [1 2 3] 8", committed, e.c.Replica().ISR, e.c.Replica().ZkVersion)
	}
	if eff = e.fetch(3, 20); !func() bool { _, ok := replied(eff, p); return ok }() {
		t.Fatal("produce not acknowledged once every ISR member has it")
	}
}

// A shrink whose write failed keeps counting the removed member: the high
// watermark does not pass it; the tick retries the same shrink.
func TestFailedShrinkKeepsCountingTheRemovedMember(t *testing.T) {
	e := newCoreEnv(t, []int32{1, 2, 3}, 1)
	e.fetch(2, 10)
	e.fetch(3, 10)
	e.clk.add(coreLag + time.Second)
	e.fetch(2, 10)
	eff := e.c.IsrTick()
	if eff.Propose == nil || !slices.Equal(eff.Propose.ISR, []int32{1, 2}) {
		t.Fatalf("shrink proposal %+v, want [1 2]", eff.Propose)
	}
	prop := *eff.Propose
	e.c.IsrWritten(IsrResult{Proposal: prop, Err: errors.New("bad version")})
	p, _, _, _ := e.produce(-1) // 10..19
	if eff = e.fetch(2, 20); e.hw() != 10 {
		t.Fatalf("high watermark %d passed follower 3 (at 10) of a shrink that was not written", e.hw())
	}
	if _, acked := replied(eff, p); acked {
		t.Fatal("acks=-1 acknowledged without follower 3 while the shrink is unwritten")
	}
	if tick := e.c.IsrTick(); tick.Propose == nil || tick.Propose.Seq != prop.Seq {
		t.Fatalf("tick after the failure proposed %+v, want the shrink again", tick.Propose)
	}
}
