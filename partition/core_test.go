package partition

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
	"gregor/storage/record"
)

// coreEnv drives a Core as the actor would, with a fake clock and a fake
// log (offsets only): broker 1 leads, replicas 1, 2, 3.
type coreEnv struct {
	t   *testing.T
	c   *Core
	clk *fakeClock
	leo int64
}

const coreLag = 10 * time.Second

func newCoreEnv(t *testing.T, isr []int32, minIsr int) *coreEnv {
	t.Helper()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c := NewCore(CoreConfig{TP: TopicPartition{Topic: "t"}, BrokerID: 1, Now: clk.now, AlterIsr: true, Lag: coreLag})
	e := &coreEnv{t: t, c: c, clk: clk, leo: 10}
	c.Start(0, e.leo, NewProducers(), LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: isr, Replicas: []int32{1, 2, 3},
		ZkVersion: 7, MinInsyncReplicas: minIsr}, 10)
	return e
}

// fetch is a follower's fetch at offset; it must be accepted.
func (e *coreEnv) fetch(replica int32, offset int64) Effects {
	e.t.Helper()
	var tr fetchTrace
	err, eff := e.c.FollowerFetch(replica, offset, &tr)
	if err != nil {
		e.t.Fatalf("follower %d fetch at %d: %v", replica, offset, err)
	}
	return eff
}

// produce appends a 10-record batch with acks; it returns the Produce, the
// effects, and whether the reply was sent (done) or refused.
func (e *coreEnv) produce(acks int16) (p *Produce, res ProduceResult, done bool, eff Effects) {
	p = &Produce{Acks: acks, Header: record.Header{ProducerID: -1, BaseSequence: -1, LastOffsetDelta: 9, RecordCount: 10}}
	res, v := e.c.CheckProduce(p)
	switch v {
	case ProduceAnswer:
		return p, res, true, eff
	case ProduceWaits:
		return p, res, false, eff
	}
	info := storage.AppendInfo{FirstOffset: e.leo, LastOffset: e.leo + 9, LogAppendTime: -1, RecordCount: 10}
	e.leo += 10
	res, done, eff = e.c.Appended(p, info, 0, e.leo)
	return p, res, done, eff
}

func (e *coreEnv) hw() int64 { return e.c.Replica().HighWatermark }

func replied(eff Effects, p *Produce) (ProduceResult, bool) {
	for _, r := range eff.Replies {
		if r.P == p {
			return r.Res, true
		}
	}
	return ProduceResult{}, false
}

func TestCorePendingExpand(t *testing.T) {
	e := newCoreEnv(t, []int32{1, 2}, 1)
	e.fetch(2, 10)
	// Follower 3 reaches the high watermark: proposed back, not yet in.
	eff := e.fetch(3, 10)
	if eff.Propose == nil || !slices.Equal(eff.Propose.ISR, []int32{1, 2, 3}) || eff.Propose.ZkVersion != 7 || eff.Propose.LeaderEpoch != 5 {
		t.Fatalf("proposal %+v, want ISR [1 2 3] over epoch 5, version 7", eff.Propose)
	}
	prop := *eff.Propose
	if r := e.c.Replica(); !slices.Equal(r.ISR, []int32{1, 2}) || r.InSyncCount() != 2 {
		t.Fatalf("committed ISR %v while the expansion is pending, want [1 2]", r.ISR)
	}
	// One change in flight: neither a fetch nor the shrink check proposes.
	if eff := e.fetch(3, 10); eff.Propose != nil {
		t.Fatalf("second proposal %v while one is pending", eff.Propose.ISR)
	}
	e.clk.add(2 * coreLag)
	if eff := e.c.IsrTick(); eff.Propose != nil {
		t.Fatalf("shrink %v proposed while the expansion is pending", eff.Propose.ISR)
	}
	// The high watermark waits for the maximal ISR, 3 included.
	e.produce(1)
	e.fetch(2, 20)
	if e.hw() != 10 {
		t.Fatalf("high watermark %d with follower 3 (proposed) at 10, want 10", e.hw())
	}
	e.fetch(3, 20)
	if e.hw() != 20 {
		t.Fatalf("high watermark %d with the maximal ISR at 20, want 20", e.hw())
	}
	committed, eff := e.c.IsrWritten(IsrResult{Proposal: prop, NewZkVersion: 8})
	if !committed || eff.Committed == nil || !eff.Publish {
		t.Fatalf("write result not committed: %v %+v", committed, eff)
	}
	if r := e.c.Replica(); !slices.Equal(r.ISR, []int32{1, 2, 3}) || r.ZkVersion != 8 || r.PendingISR != nil || e.c.Proposal() != nil {
		t.Fatalf("after commit: ISR %v version %d pending %v", r.ISR, r.ZkVersion, r.PendingISR)
	}
}

func TestCorePendingShrinkHoldsHW(t *testing.T) {
	e := newCoreEnv(t, []int32{1, 2, 3}, 1)
	e.fetch(2, 10)
	e.fetch(3, 10)
	p, _, done, _ := e.produce(-1) // offsets 10..19
	if done {
		t.Fatal("acks=-1 produce answered before any follower had it")
	}
	e.fetch(2, 20)
	e.clk.add(coreLag + time.Second) // follower 3 silent past replica.lag.time.max.ms
	e.fetch(2, 20)
	eff := e.c.IsrTick()
	if eff.Propose == nil || !slices.Equal(eff.Propose.ISR, []int32{1, 2}) || eff.Propose.Why != "shrink" {
		t.Fatalf("shrink proposal %+v, want [1 2]", eff.Propose)
	}
	if len(eff.Replies) != 0 || e.hw() != 10 {
		t.Fatalf("proposing the shrink moved the high watermark to %d / released %d produces; it must wait for the commit", e.hw(), len(eff.Replies))
	}
	// Still pending: another fetch of 2 does not release the produce.
	if eff := e.fetch(2, 20); len(eff.Replies) != 0 || e.hw() != 10 {
		t.Fatalf("high watermark %d passed the lagging replica before the shrink was committed", e.hw())
	}
	committed, eff := e.c.IsrWritten(IsrResult{Proposal: *e.c.Proposal(), NewZkVersion: 8})
	if !committed || e.hw() != 20 {
		t.Fatalf("after the shrink commit: committed %v, high watermark %d, want 20", committed, e.hw())
	}
	if res, ok := replied(eff, p); !ok || res.Err != nil || res.BaseOffset != 10 {
		t.Fatalf("acks=-1 produce after the commit: replied %v %+v, want offset 10", ok, res)
	}
}

func TestCoreAcksAllWithProposedISR(t *testing.T) {
	cases := []struct {
		name     string
		minIsr   int
		wantErr  *kerr.Error
		wantWait bool
	}{
		// min.insync.replicas 2 counts the committed ISR [1] only: a replica
		// that is only proposed does not make the produce acceptable.
		{"min.insync 2 refuses over committed ISR", 2, kerr.NotEnoughReplicas, false},
		// Accepted, but the reply waits for the proposed member too.
		{"min.insync 1 waits for maximal ISR", 1, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newCoreEnv(t, []int32{1}, tc.minIsr)
			if eff := e.fetch(2, 10); eff.Propose == nil || !slices.Equal(eff.Propose.ISR, []int32{1, 2}) {
				t.Fatalf("expansion not proposed: %+v", eff.Propose)
			}
			p, res, done, _ := e.produce(-1)
			if tc.wantErr != nil {
				if !done || res.Err != tc.wantErr {
					t.Fatalf("acks=-1 with committed ISR [1], min.insync %d: %v, want %v", tc.minIsr, res.Err, tc.wantErr)
				}
				return
			}
			if done {
				t.Fatalf("acks=-1 acknowledged at high watermark %d with proposed follower 2 at 10", e.hw())
			}
			eff := e.fetch(2, 20)
			if res, ok := replied(eff, p); !ok || res.Err != nil {
				t.Fatalf("acks=-1 once the proposed member has it: replied %v %+v", ok, res)
			}
		})
	}
}

func TestCoreIsrResults(t *testing.T) {
	cases := []struct {
		name string
		// before runs between the proposal and its result.
		before func(e *coreEnv)
		result func(prop IsrProposal) IsrResult
		want   bool    // committed
		isr    []int32 // committed ISR afterwards
		again  bool    // a new proposal is possible afterwards
	}{
		{"success", nil, func(p IsrProposal) IsrResult { return IsrResult{Proposal: p, NewZkVersion: 8} }, true, []int32{1, 2}, false},
		{"failure keeps the proposal and retries it", nil, func(p IsrProposal) IsrResult { return IsrResult{Proposal: p, Err: errors.New("bad version")} },
			false, []int32{1, 2, 3}, true},
		{"older epoch dropped", func(e *coreEnv) {
			if err, _ := e.c.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 6, ISR: []int32{1, 2, 3}, Replicas: []int32{1, 2, 3}, ZkVersion: 9, MinInsyncReplicas: 1}); err != nil {
				t.Fatal(err)
			}
		}, func(p IsrProposal) IsrResult { return IsrResult{Proposal: p, NewZkVersion: 8} }, false, []int32{1, 2, 3}, true},
		{"LeaderAndIsr at same epoch replaces proposal", func(e *coreEnv) {
			if err, _ := e.c.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: []int32{1, 3}, Replicas: []int32{1, 2, 3}, ZkVersion: 8, MinInsyncReplicas: 1}); err != nil {
				t.Fatal(err)
			}
			if e.c.Proposal() != nil || e.c.Replica().PendingISR != nil {
				t.Fatal("LeaderAndIsr kept the pending proposal")
			}
		}, func(p IsrProposal) IsrResult { return IsrResult{Proposal: p, NewZkVersion: 8} }, false, []int32{1, 3}, false},
		{"superseded failure ignored", nil, func(p IsrProposal) IsrResult {
			p.Seq += 100 // a result for a proposal that is not the pending one
			return IsrResult{Proposal: p, Err: errors.New("session lost")}
		}, false, []int32{1, 2, 3}, false},
		{"restart lost the proposal, write landed", func(e *coreEnv) {
			e.c.proposal, e.c.rep.PendingISR = nil, nil // a new incarnation: same state, nothing pending
		}, func(p IsrProposal) IsrResult { return IsrResult{Proposal: p, NewZkVersion: 8} }, true, []int32{1, 2}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newCoreEnv(t, []int32{1, 2, 3}, 1)
			e.fetch(2, 10)
			e.clk.add(coreLag + time.Second)
			e.fetch(2, 10)
			eff := e.c.IsrTick()
			if eff.Propose == nil {
				t.Fatal("no shrink proposed")
			}
			prop := *eff.Propose
			if tc.before != nil {
				tc.before(e)
			}
			committed, _ := e.c.IsrWritten(tc.result(prop))
			if committed != tc.want || !slices.Equal(e.c.Replica().ISR, tc.isr) {
				t.Fatalf("committed %v ISR %v, want %v %v", committed, e.c.Replica().ISR, tc.want, tc.isr)
			}
			e.clk.add(coreLag + time.Second)
			// The retry of a failed write may start at a fetch (after the
			// backoff) or at the tick; a fresh proposal only at the tick.
			f2, f3 := e.fetch(2, 10), e.fetch(3, 0) // 3 far behind: it stays lagging
			next := e.c.IsrTick().Propose
			for _, eff := range []Effects{f2, f3} {
				if eff.Propose != nil && eff.Propose.Seq == prop.Seq {
					next = eff.Propose
				}
			}
			if (next != nil) != tc.again {
				t.Fatalf("proposal after the result: %+v, want one: %v", next, tc.again)
			}
			if next != nil && tc.want == false && tc.result(prop).Err != nil && (next.Seq != prop.Seq || next.ZkVersion != prop.ZkVersion) {
				t.Fatalf("retry %+v, want the failed proposal %+v again", next, prop)
			}
		})
	}
}

// TestCoreMinInsyncUsesCommittedISR: with a shrink to [1] pending,
// min.insync.replicas 2 still accepts acks=-1 (committed ISR [1 2]);
// once committed, a produce is refused and a waiting one that the high
// watermark then covers fails NOT_ENOUGH_REPLICAS_AFTER_APPEND.
func TestCoreMinInsyncUsesCommittedISR(t *testing.T) {
	e := newCoreEnv(t, []int32{1, 2}, 2)
	e.c.rep.Replicas = []int32{1, 2}
	e.c.rep.resetFollowers(true)
	e.clk.add(coreLag + time.Second)
	eff := e.c.IsrTick()
	if eff.Propose == nil || !slices.Equal(eff.Propose.ISR, []int32{1}) {
		t.Fatalf("shrink proposal %+v, want [1]", eff.Propose)
	}
	prop := *eff.Propose
	p, res, done, _ := e.produce(-1)
	if done {
		t.Fatalf("acks=-1 with committed ISR [1 2] and a pending shrink: answered %+v, want it accepted and waiting", res)
	}
	_, eff = e.c.IsrWritten(IsrResult{Proposal: prop, NewZkVersion: 8})
	if res, ok := replied(eff, p); !ok || res.Err != kerr.NotEnoughReplicasAfterAppend {
		t.Fatalf("waiting acks=-1 after the shrink to [1] committed: replied %v %+v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", ok, res)
	}
	if _, res, done, _ := e.produce(-1); !done || res.Err != kerr.NotEnoughReplicas {
		t.Fatalf("acks=-1 with committed ISR [1], min.insync 2: %+v, want NOT_ENOUGH_REPLICAS", res)
	}
	if _, res, done, _ := e.produce(1); !done || res.Err != nil {
		t.Fatalf("acks=1 with committed ISR [1]: %+v, want success", res)
	}
}

// TestCoreNotLeaderFailsWaiting: becoming a follower fails the waiting
// acks=-1 produces with a retriable error and drops the proposal.
func TestCoreNotLeaderFailsWaiting(t *testing.T) {
	e := newCoreEnv(t, []int32{1, 2}, 1)
	p, _, done, _ := e.produce(-1)
	if done {
		t.Fatal("acks=-1 answered before follower 2 had it")
	}
	err, eff := e.c.Apply(LeaderAndIsr{Leader: 2, LeaderEpoch: 6, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}, ZkVersion: 8})
	if err != nil {
		t.Fatal(err)
	}
	if res, ok := replied(eff, p); !ok || res.Err != kerr.NotLeaderForPartition || e.c.Waiting() != 0 {
		t.Fatalf("waiting produce after losing leadership: %v %+v (%d still waiting)", ok, res, e.c.Waiting())
	}
}

func TestCoreDeleteRecordsBefore(t *testing.T) {
	e := newCoreEnv(t, []int32{1}, 1) // log 0..10, high watermark 10
	cases := []struct {
		offset, before int64
		del            bool
		err            *kerr.Error
	}{
		{-1, 10, true, nil}, // -1: up to the high watermark
		{4, 4, true, nil},
		{0, 0, false, nil}, // already the log start
		{11, -1, false, kerr.OffsetOutOfRange},
		{-2, -1, false, kerr.OffsetOutOfRange},
	}
	for _, tc := range cases {
		before, del, err := e.c.DeleteRecordsBefore(tc.offset)
		if before != tc.before || del != tc.del || err != tc.err {
			t.Errorf("DeleteRecordsBefore(%d) = %d %v %v, want %d %v %v", tc.offset, before, del, err, tc.before, tc.del, tc.err)
		}
	}
	if err, _ := e.c.Apply(LeaderAndIsr{Leader: 2, LeaderEpoch: 6, ISR: []int32{1, 2}, Replicas: []int32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.DeleteRecordsBefore(4); err != kerr.NotLeaderForPartition {
		t.Errorf("DeleteRecordsBefore as follower: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
}

// A retried acks=-1 batch that is already in the log but not yet below the
// high watermark waits, as its first try does, for the maximal ISR (Kafka's
// delayed produce of a duplicate waits for the original's last offset).
func TestCoreDuplicateRetryWaitsForReplication(t *testing.T) {
	e := newCoreEnv(t, []int32{1, 2, 3}, 2)
	e.fetch(2, 10)
	e.fetch(3, 10)
	idem := func() *Produce {
		return &Produce{Acks: -1, Header: record.Header{ProducerID: 42, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 9, RecordCount: 10}}
	}
	first := idem()
	if _, v := e.c.CheckProduce(first); v != ProduceAppend {
		t.Fatalf("first try verdict %v, want an append", v)
	}
	if _, done, _ := e.c.Appended(first, storage.AppendInfo{FirstOffset: 10, LastOffset: 19, LogAppendTime: -1, RecordCount: 10}, 0, 20); done {
		t.Fatal("first try answered before any follower had it")
	}
	retry := idem()
	res, v := e.c.CheckProduce(retry)
	if v != ProduceWaits || res.BaseOffset != 10 {
		t.Fatalf("retry verdict %v base offset %d, want it to wait with base offset 10", v, res.BaseOffset)
	}
	if eff := e.fetch(2, 20); len(eff.Replies) != 0 {
		t.Fatalf("%d produces answered with follower 3 still at 10", len(eff.Replies))
	}
	eff := e.fetch(3, 20)
	for _, p := range []*Produce{first, retry} {
		if r, ok := replied(eff, p); !ok || r.Err != nil || r.BaseOffset != 10 {
			t.Fatalf("after the whole ISR has offsets 10..19: reply %+v sent %v, want base offset 10", r, ok)
		}
	}
	// Once replicated, a further retry is answered at once.
	if res, v := e.c.CheckProduce(idem()); v != ProduceAnswer || res.BaseOffset != 10 || res.Err != nil {
		t.Fatalf("retry after replication: verdict %v result %+v, want an immediate answer at 10", v, res)
	}
}
