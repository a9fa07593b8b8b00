package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
)

// followerEnv is a data env where broker 0 leads tpA with follower 1 in
// the ISR (so a follower fetch from replica 1 moves the high watermark),
// and a batch of n records of size bytes to produce copies of.
func followerEnv(tb testing.TB, n, size int) (*dataEnv, []byte) {
	tb.Helper()
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(tb, cfg, tpA)
	st := partition.LeaderAndIsr{TopicPartition: tpA, Leader: 0, LeaderEpoch: 3, ISR: []int32{0, 1}, Replicas: []int32{0, 1}, Config: cfg}
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{st}); len(errs) != 0 {
		tb.Fatal(errs)
	}
	return e, codecBatch(tb, record.CodecNone, n, time.Now().UnixMilli(), size)
}

// resolveFetchPart waits (10 s at most) for a v11 Fetch reply and returns
// its first partition.
func resolveFetchPart(t *testing.T, reply wire.Reply, what string) kmsg.FetchResponseTopicPartition {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, ok := reply.Resolve(ctx)
	if !ok {
		t.Fatalf("%s: no answer", what)
	}
	return decodeFetch(t, 11, resp).Topics[0].Partitions[0]
}

// TestFollowerFetchDoesNotWaitOnActor: the reader goroutine (Handle) hands
// a follower's fetch to the partition actor and returns at once with a
// Later reply, even while the actor is busy (a delay fault makes it sleep
// with the follower-fetch message queued behind); the answer, built after
// the actor recorded the position, carries the high watermark that
// position produced. Before, Handle waited up to 15 s for the actor.
func TestFollowerFetchDoesNotWaitOnActor(t *testing.T) {
	e, proto := followerEnv(t, 10, 32)
	e.produceCopies(tpA, proto, 3) // acks=1: the high watermark waits for follower 1
	h, _ := e.m.Get(tpA)
	if v := h.View(); v.LogEndOffset != 30 || v.HighWatermark != 0 {
		t.Fatalf("after 3 produces: log end %d, high watermark %d; want 30, 0", v.LogEndOffset, v.HighWatermark)
	}

	if _, err := e.in.Inject(actors.ActorFault{Action: actors.FaultDelay, Actor: h.PID().GetId(), Delay: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	req := fetchReq(tpA, 30, 0, 0)
	req.ReplicaID = 1
	req.SetVersion(11)
	reply := e.b.Handle(&wire.RequestContext{Ctx: context.Background(), Key: 1, Version: 11}, req)
	// The actor sleeps with the follower fetch queued behind the fault:
	// had Handle waited for the actor, the reply would be resolved by now.
	if _, done := reply.TryResolve(); done {
		t.Fatal("follower fetch answered on the reader goroutine: Handle waited for the partition actor")
	}
	p := resolveFetchPart(t, reply, "follower fetch")
	if p.ErrorCode != 0 || p.HighWatermark != 30 {
		t.Fatalf("follower fetch at the log end: error %d, high watermark %d; want 0, 30 (recorded before the answer)", p.ErrorCode, p.HighWatermark)
	}
	if v := h.View(); v.HighWatermark != 30 {
		t.Fatalf("leader high watermark %d after the follower caught up, want 30", v.HighWatermark)
	}
}

// TestFollowerFetchUnassignedReplica: a fetch from a broker that is not
// an assigned replica is recorded, refused by the actor and answered
// NOT_LEADER_OR_FOLLOWER for that partition, as before.
func TestFollowerFetchUnassignedReplica(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(t, cfg, tpA)
	req := fetchReq(tpA, 0, 0, 0)
	req.ReplicaID = 7
	p := decodeFetch(t, 11, e.call(1, 11, req)).Topics[0].Partitions[0]
	if p.ErrorCode != 6 { // NOT_LEADER_OR_FOLLOWER
		t.Fatalf("fetch from unassigned replica 7: error %d, want 6", p.ErrorCode)
	}
}

// TestFollowerLongPollWakesOnLogEnd: a follower fetch at the log end waits
// (MinBytes 1) and is woken by the next append — on the log end offset,
// since the high watermark cannot move before the follower fetches again.
func TestFollowerLongPollWakesOnLogEnd(t *testing.T) {
	e, proto := followerEnv(t, 10, 32)
	e.produceCopies(tpA, proto, 1)
	h, _ := e.m.Get(tpA)
	req := fetchReq(tpA, 10, 10_000, 1)
	req.ReplicaID = 1
	req.SetVersion(11)
	reply := e.b.Handle(&wire.RequestContext{Ctx: context.Background(), Key: 1, Version: 11}, req)
	deadline := time.Now().Add(5 * time.Second)
	for h.Waiters() == 0 {
		if _, done := reply.TryResolve(); done {
			t.Fatal("a follower fetch at the log end with MinBytes 1 answered before any data came")
		}
		if time.Now().After(deadline) {
			t.Fatal("the follower's long poll never registered a waiter")
		}
		time.Sleep(time.Millisecond) // registration has no event to await
	}
	if v := h.View(); v.HighWatermark != 10 {
		t.Fatalf("high watermark %d after the follower fetched at 10, want 10", v.HighWatermark)
	}
	e.produceCopies(tpA, proto, 1)
	p := resolveFetchPart(t, reply, "the follower's long poll after the append")
	if p.ErrorCode != 0 || p.HighWatermark != 10 || len(p.RecordBatches) == 0 {
		t.Fatalf("woken follower fetch: error %d, high watermark %d (want 10), %d record bytes", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
}
