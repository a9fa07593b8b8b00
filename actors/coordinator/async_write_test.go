package coordinator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/actors"
)

// These tests hold the group's appends to __consumer_offsets (as slow
// followers hold an acks=-1 produce) and check that the group actor keeps
// serving the group meanwhile, answers the held request when the append
// ends, and applies what the append stands for only once it succeeded.

// commitAsync sends an OffsetCommit of topic/part at off and returns where
// its (first partition's) code arrives.
func commitAsync(c *Coordinator, group, member string, gen int32, topic string, part int32, off int64) <-chan int16 {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.MemberID, r.Generation = 8, group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = part, off, -1
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	out := make(chan int16, 1)
	c.OffsetCommit(context.Background(), r, func(resp *kmsg.OffsetCommitResponse) {
		out <- resp.Topics[0].Partitions[0].ErrorCode
	})
	return out
}

// awaitHeld waits until n appends wait at the topic's hold.
func awaitHeld(t *testing.T, topic *MemTopic, n int) {
	t.Helper()
	eventually(t, "appends held", func() (bool, string) {
		got := topic.AppendsHeld()
		return got == n, fmt.Sprintf("%d held, want %d", got, n)
	})
}

// eventually polls cond (bounded: 10 s) until it holds; for the records a
// group appends after its answer (tombstones of a cleanup), which no
// answer announces.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, last)
		}
		time.Sleep(time.Millisecond)
	}
}

// notYet fails if ch already has an answer.
func notYet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s answered %v while its append is held", what, v)
	default:
	}
}

// fetchStable is an OffsetFetch v7 with require_stable of one partition:
// the partition's error code and offset.
func fetchStable(t *testing.T, c *Coordinator, group, topic string, part int32) (int16, int64) {
	t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group, r.RequireStable = 7, group, true
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{part}
	r.Topics = append(r.Topics, rt)
	ch, reply := chanOf[*kmsg.OffsetFetchResponse]()
	c.OffsetFetch(context.Background(), r, reply)
	f := wait(t, ch)
	if f.ErrorCode != 0 || len(f.Topics) != 1 || len(f.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch %+v", f)
	}
	p := f.Topics[0].Partitions[0]
	return p.ErrorCode, p.Offset
}

func describe(t *testing.T, c *Coordinator, group string) kmsg.DescribeGroupsResponseGroup {
	t.Helper()
	ch, reply := chanOf[*kmsg.DescribeGroupsResponse]()
	dr := kmsg.NewPtrDescribeGroupsRequest()
	dr.Groups = []string{group}
	c.DescribeGroups(context.Background(), dr, reply)
	return wait(t, ch).Groups[0]
}

func TestHeartbeatsAnsweredWhileCommitAppendIsHeld(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	member, gen := joinAndSync(t, c, "g")
	p := c.PartitionFor("g")
	before := topic.Appended(p)

	release := topic.HoldAppends()
	defer release(nil)
	done := commitAsync(c, "g", member, gen, "orders", 0, 42)
	awaitHeld(t, topic, 1)

	// The group actor is free: heartbeats, DescribeGroups and OffsetFetch
	// are answered while the commit waits for its append.
	for i := 0; i < 5; i++ {
		if code := heartbeat(t, c, "g", member, gen); code != 0 {
			t.Fatalf("heartbeat %d during the held commit: %d", i, code)
		}
	}
	if d := describe(t, c, "g"); d.State != "Stable" || len(d.Members) != 1 {
		t.Fatalf("group during the held commit: %s with %d members", d.State, len(d.Members))
	}
	// Not visible before the append succeeds (Kafka's pending commits);
	// a fetch that requires stable offsets is told to retry.
	if off := offsetOf(fetchAll(t, c, "g"), "orders", 0); off != -1 {
		t.Fatalf("offset %d visible before its append completed", off)
	}
	if code, off := fetchStable(t, c, "g", "orders", 0); code != kerr.UnstableOffsetCommit.Code || off != -1 {
		t.Fatalf("require_stable fetch during the held commit: %d offset %d, want UNSTABLE_OFFSET_COMMIT", code, off)
	}
	notYet(t, done, "commit")

	release(nil)
	if code := wait(t, done); code != 0 {
		t.Fatalf("commit after release: %d", code)
	}
	if off := offsetOf(fetchAll(t, c, "g"), "orders", 0); off != 42 {
		t.Fatalf("offset %d after the append, want 42", off)
	}
	if code, off := fetchStable(t, c, "g", "orders", 0); code != 0 || off != 42 {
		t.Fatalf("require_stable fetch after the append: %d offset %d", code, off)
	}
	if n := topic.Appended(p); n != before+1 {
		t.Fatalf("%d batches appended, want 1", n-before)
	}
}

func TestFailedCommitAppendMapsErrorAndHidesOffsets(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int16
	}{
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotEnoughReplicasAfterAppend, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator.Code},
		{kerr.KafkaStorageError, kerr.NotCoordinator.Code},
		{kerr.MessageTooLarge, kerr.InvalidCommitOffsetSize.Code},
		{kerr.RecordListTooLarge, kerr.InvalidCommitOffsetSize.Code},
		{kerr.RequestTimedOut, kerr.RequestTimedOut.Code},
		{context.DeadlineExceeded, kerr.CoordinatorNotAvailable.Code},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			topic := NewMemTopic()
			c := startCoord(t, topic)
			member, gen := joinAndSync(t, c, "g")
			if code := commit(t, c, "g", member, gen, "orders", 1, 7); code != 0 {
				t.Fatal(code)
			}
			release := topic.HoldAppends()
			done := commitAsync(c, "g", member, gen, "orders", 1, 99)
			awaitHeld(t, topic, 1)
			release(tc.err)
			if code := wait(t, done); code != tc.want {
				t.Fatalf("commit whose append failed with %v answered %d, want %d", tc.err, code, tc.want)
			}
			// The failed commit never reached the cache: the last good
			// one is still what OffsetFetch returns, and the member is
			// still in the group.
			if off := offsetOf(fetchAll(t, c, "g"), "orders", 1); off != 7 {
				t.Fatalf("offset %d after a failed commit, want 7", off)
			}
			if code := heartbeat(t, c, "g", member, gen); code != 0 {
				t.Fatalf("heartbeat after the failed commit %d", code)
			}
		})
	}
}

func TestSessionExpiresWhileCommitAppendIsHeld(t *testing.T) {
	topic := NewMemTopic()
	sys := actors.NewSystem(zap.NewNop())
	cfg := DefaultConfig()
	// The initial delay collects both joins in generation 1: with none,
	// the first join to arrive would complete the join phase alone (as in
	// Kafka, the initial delayed join does not wait for pending members).
	cfg.InitialRebalanceDelay, cfg.MinSessionTimeout = 500*time.Millisecond, 50*time.Millisecond
	c, err := New(sys, Options{Config: cfg, Partitions: 5, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	release := func(error) {}
	t.Cleanup(func() { release(nil); c.Stop(); sys.Shutdown() })

	// a heartbeats; b commits, then falls silent.
	join := func(jr *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
		ch, reply := chanOf[*kmsg.JoinGroupResponse]()
		c.JoinGroup(context.Background(), "cli", "/127.0.0.1", jr, reply)
		return ch
	}
	ja, jb := joinReq("s", ""), joinReq("s", "")
	ja.SessionTimeoutMillis, ja.RebalanceTimeoutMillis = 5000, 5000
	jb.SessionTimeoutMillis, jb.RebalanceTimeoutMillis = 3000, 5000
	ja.MemberID = wait(t, join(ja)).MemberID
	jb.MemberID = wait(t, join(jb)).MemberID
	ca, cb := join(ja), join(jb)
	a, b := wait(t, ca), wait(t, cb)
	if a.ErrorCode != 0 || b.ErrorCode != 0 || a.Generation != 1 {
		t.Fatalf("joins %d %d gen %d", a.ErrorCode, b.ErrorCode, a.Generation)
	}
	syncs := make(chan int16, 2)
	for _, m := range []string{a.MemberID, b.MemberID} {
		sr := kmsg.NewPtrSyncGroupRequest()
		sr.Version, sr.Group, sr.MemberID, sr.Generation = 5, "s", m, 1
		if m == a.LeaderID {
			for _, x := range []string{a.MemberID, b.MemberID} {
				as := kmsg.NewSyncGroupRequestGroupAssignment()
				as.MemberID = x
				sr.GroupAssignment = append(sr.GroupAssignment, as)
			}
		}
		c.SyncGroup(context.Background(), sr, func(r *kmsg.SyncGroupResponse) { syncs <- r.ErrorCode })
	}
	for i := 0; i < 2; i++ {
		if code := wait(t, syncs); code != 0 {
			t.Fatalf("sync %d", code)
		}
	}

	release = topic.HoldAppends()
	done := commitAsync(c, "s", b.MemberID, 1, "orders", 0, 5)
	awaitHeld(t, topic, 1)
	// b's session (3 s: room for its SyncGroup under -race on a loaded
	// machine) runs out while its commit is held: the group's timer still
	// fires and evicts it; a, heartbeating, stays.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code := heartbeat(t, c, "s", a.MemberID, 1)
		if code == kerr.RebalanceInProgress.Code {
			break
		}
		if code != 0 {
			t.Fatalf("a's heartbeat %d", code)
		}
		if time.Now().After(deadline) {
			t.Fatal("b never expired while its commit was held")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := heartbeat(t, c, "s", b.MemberID, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("expired b's heartbeat %d, want UNKNOWN_MEMBER_ID", code)
	}
	if d := describe(t, c, "s"); len(d.Members) != 1 || d.Members[0].MemberID != a.MemberID {
		t.Fatalf("members after b expired: %+v", d.Members)
	}
	notYet(t, done, "commit")
	release(nil)
	// Kafka completes an accepted commit whose member left meanwhile.
	if code := wait(t, done); code != 0 {
		t.Fatalf("held commit after release %d", code)
	}
	if off := offsetOf(fetchAll(t, c, "s"), "orders", 0); off != 5 {
		t.Fatalf("offset %d, want 5", off)
	}
}

func TestSyncAppendHeldThenFailedRebalances(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	ch, reply := chanOf[*kmsg.JoinGroupResponse]()
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq("g", ""), reply)
	id := wait(t, ch).MemberID
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq("g", id), reply)
	j := wait(t, ch)
	if j.ErrorCode != 0 {
		t.Fatal(j.ErrorCode)
	}

	release := topic.HoldAppends()
	defer release(nil)
	sch, sreply := chanOf[*kmsg.SyncGroupResponse]()
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Version, sr.Group, sr.MemberID, sr.Generation = 5, "g", id, j.Generation
	c.SyncGroup(context.Background(), sr, sreply)
	awaitHeld(t, topic, 1)
	// Until the assignment is durable the group is CompletingRebalance,
	// where heartbeats are answered NONE.
	if code := heartbeat(t, c, "g", id, j.Generation); code != 0 {
		t.Fatalf("heartbeat during the held sync %d", code)
	}
	if d := describe(t, c, "g"); d.State != "CompletingRebalance" {
		t.Fatalf("state %s during the held sync", d.State)
	}
	notYet(t, sch, "sync")
	// The append times out: Kafka's storeGroup answers
	// REBALANCE_IN_PROGRESS and the group rebalances.
	release(kerr.RequestTimedOut)
	if s := wait(t, sch); s.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("sync after a timed-out append %d", s.ErrorCode)
	}
	if code := heartbeat(t, c, "g", id, j.Generation); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after the failed sync %d, want REBALANCE_IN_PROGRESS", code)
	}
}

func TestLeaveAnsweredWhileCommitAppendIsHeld(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	member, gen := joinAndSync(t, c, "g")
	release := topic.HoldAppends()
	defer release(nil)
	done := commitAsync(c, "g", member, gen, "orders", 0, 3)
	awaitHeld(t, topic, 1)
	if code := leave(t, c, "g", member); code != 0 {
		t.Fatalf("leave during the held commit %d", code)
	}
	if d := describe(t, c, "g"); d.State != "Empty" || len(d.Members) != 0 {
		t.Fatalf("after leave: %s with %d members", d.State, len(d.Members))
	}
	notYet(t, done, "commit")
	release(nil)
	if code := wait(t, done); code != 0 {
		t.Fatalf("commit %d", code)
	}
}

func TestStopAnswersCommitWhoseAppendIsHeld(t *testing.T) {
	topic := NewMemTopic()
	sys := actors.NewSystem(zap.NewNop())
	cfg := DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	c, err := New(sys, Options{Config: cfg, Partitions: 5, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Shutdown()
	member, gen := joinAndSync(t, c, "g")
	release := topic.HoldAppends()
	defer release(nil)
	done := commitAsync(c, "g", member, gen, "orders", 0, 3)
	awaitHeld(t, topic, 1)
	// Stop cancels the append (its context) and answers the commit
	// NOT_COORDINATOR, never success.
	c.Stop()
	if code := wait(t, done); code != kerr.NotCoordinator.Code {
		t.Fatalf("commit of a stopped coordinator %d, want NOT_COORDINATOR", code)
	}
}
