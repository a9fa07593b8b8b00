package handlers

import (
	"context"
	"testing"
	"time"

	"gregor/storage"
	"gregor/storage/record"
	"gregor/wire"
)

// partitionReceived is the number of messages tpA's partition actor has
// handled since it was spawned (the count GET /actors shows), and its
// mailbox depth.
func (e *dataEnv) partitionReceived() (received uint64, mailbox int) {
	e.t.Helper()
	h, ok := e.m.Get(tpA)
	if !ok || h.PID() == nil {
		e.t.Fatalf("%s: no partition actor", tpA)
	}
	a, ok := e.in.Actor(h.PID().GetId())
	if !ok {
		e.t.Fatalf("%s: actor %s not in the instruments", tpA, h.PID().GetId())
	}
	return a.Received, a.Mailbox
}

// TestFetchBelowHighWatermarkSkipsPartitionActor: consumer fetches of data
// already below the high watermark are served from the partition's View
// and Log on the calling goroutine, with no message to the partition actor
// (01_fetch.go: "no actor round trip"), and neither does a consumer long
// poll at the log end: its waiter is registered on the Handle, not in the
// actor. What ends the long poll, the produce, is the actor's; a follower
// fetch (ReplicaID >= 0) goes through the actor too, which shows the
// counter sees fetch traffic when there is some.
func TestFetchBelowHighWatermarkSkipsPartitionActor(t *testing.T) {
	cfg := storage.DefaultLogConfig()
	cfg.SkipRollFsync = true
	e := newDataEnv(t, cfg, tpA)
	proto := codecBatch(t, record.CodecNone, 16, time.Now().UnixMilli(), 64)
	const batches = 8
	r0, _ := e.partitionReceived()
	e.produceCopies(tpA, proto, batches)
	r1, _ := e.partitionReceived()
	if r1 < r0+batches {
		t.Fatalf("%d produces: the partition actor's received count went %d → %d; is it counting?", batches, r0, r1)
	}
	perProduce := (r1 - r0) / batches
	hw := int64(batches * 16)

	// Many fetches below the high watermark, immediate (MaxWait 0) and
	// with a long-poll budget that data already there makes moot.
	const fetches = 200
	for i := 0; i < fetches; i++ {
		off := int64(i) % hw
		maxWait := int32(0)
		if i%2 == 1 {
			maxWait = 5000
		}
		req := fetchReq(tpA, off, maxWait, 1)
		fr := decodeFetch(t, 11, e.call(1, 11, req))
		p := fr.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.HighWatermark != hw || len(p.RecordBatches) == 0 {
			t.Fatalf("fetch at %d: error %d, high watermark %d (want %d), %d record bytes", off, p.ErrorCode, p.HighWatermark, hw, len(p.RecordBatches))
		}
	}
	if r, mb := e.partitionReceived(); r != r1 || mb != 0 {
		t.Fatalf("%d fetches below the high watermark: the partition actor received %d messages (mailbox %d), want none", fetches, r-r1, mb)
	}

	// A long poll at the log end: it waits, and registering its waiter
	// costs the actor nothing either.
	h, _ := e.m.Get(tpA)
	rc := &wire.RequestContext{Ctx: context.Background(), Key: 1, Version: 11}
	req := fetchReq(tpA, hw, 10_000, 1)
	req.SetVersion(11)
	reply := e.b.Handle(rc, req)
	deadline := time.Now().Add(5 * time.Second)
	for h.Waiters() == 0 {
		if _, done := reply.TryResolve(); done {
			t.Fatal("a fetch at the log end with MinBytes 1 answered before any data came")
		}
		if time.Now().After(deadline) {
			t.Fatal("the long poll never registered a waiter")
		}
		time.Sleep(time.Millisecond)
	}
	if r, _ := e.partitionReceived(); r != r1 {
		t.Fatalf("registering a long-poll waiter sent the partition actor %d messages, want none", r-r1)
	}
	// The produce that ends the wait is the actor's only message.
	if p := e.produce(9, 1, tpA, append([]byte(nil), proto...)); p.ErrorCode != 0 || p.BaseOffset != hw {
		t.Fatalf("produce: error %d, base offset %d (want %d)", p.ErrorCode, p.BaseOffset, hw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, ok := reply.Resolve(ctx)
	if !ok {
		t.Fatal("the long poll did not answer after the produce")
	}
	fr := decodeFetch(t, 11, resp)
	if p := fr.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != hw+16 || len(p.RecordBatches) == 0 {
		t.Fatalf("woken long poll: error %d, high watermark %d (want %d), %d record bytes", p.ErrorCode, p.HighWatermark, hw+16, len(p.RecordBatches))
	}
	r2, _ := e.partitionReceived()
	if r2 != r1+perProduce {
		t.Fatalf("long poll + the produce that woke it: the partition actor received %d messages, want %d (the produce's)", r2-r1, perProduce)
	}

	// A follower's fetch records its position in the actor: one message.
	freq := fetchReq(tpA, hw+16, 0, 0)
	freq.ReplicaID = 1
	e.call(1, 11, freq)
	if r, _ := e.partitionReceived(); r != r2+1 {
		t.Fatalf("a follower fetch sent the partition actor %d messages, want 1", r-r2)
	}
}
