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

func startCoord(t *testing.T, topic *MemTopic) *Coordinator {
	t.Helper()
	sys := actors.NewSystem(zap.NewNop())
	cfg := DefaultConfig()
	cfg.InitialRebalanceDelay = 0
	c, err := New(sys, Options{Config: cfg, Partitions: 10, Topic: topic, RequestTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			c.Stop()
		}
		sys.Shutdown()
	})
	return c
}

// wait receives one answer or fails after 10 s.
func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	var zero T
	return zero
}

func chanOf[T any]() (chan T, func(T)) {
	ch := make(chan T, 1)
	return ch, func(v T) { ch <- v }
}

func joinReq(group, member string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = 9
	r.Group, r.MemberID, r.ProtocolType = group, member, "consumer"
	r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 10000, 10000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0}
	r.Protocols = append(r.Protocols, p)
	return r
}

// joinAndSync makes one member join and sync a fresh group; it returns the
// member id and generation.
func joinAndSync(t *testing.T, c *Coordinator, group string) (string, int32) {
	t.Helper()
	ch, reply := chanOf[*kmsg.JoinGroupResponse]()
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq(group, ""), reply)
	first := wait(t, ch)
	if first.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("first join %d", first.ErrorCode)
	}
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq(group, first.MemberID), reply)
	j := wait(t, ch)
	if j.ErrorCode != 0 || j.LeaderID != first.MemberID || j.Version != 9 {
		t.Fatalf("join %+v", j)
	}
	sch, sreply := chanOf[*kmsg.SyncGroupResponse]()
	sr := kmsg.NewPtrSyncGroupRequest()
	sr.Version, sr.Group, sr.MemberID, sr.Generation = 5, group, j.MemberID, j.Generation
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = j.MemberID, []byte("assign")
	sr.GroupAssignment = append(sr.GroupAssignment, a)
	c.SyncGroup(context.Background(), sr, sreply)
	if s := wait(t, sch); s.ErrorCode != 0 || string(s.MemberAssignment) != "assign" {
		t.Fatalf("sync %+v", s)
	}
	return j.MemberID, j.Generation
}

func commit(t *testing.T, c *Coordinator, group, member string, gen int32, topic string, part int32, off int64) int16 {
	t.Helper()
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.MemberID, r.Generation = 8, group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = part, off, 3, strp("meta")
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	ch, reply := chanOf[*kmsg.OffsetCommitResponse]()
	c.OffsetCommit(context.Background(), r, reply)
	return wait(t, ch).Topics[0].Partitions[0].ErrorCode
}

func fetchAll(t *testing.T, c *Coordinator, group string) *kmsg.OffsetFetchResponse {
	t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 7, group
	ch, reply := chanOf[*kmsg.OffsetFetchResponse]()
	c.OffsetFetch(context.Background(), r, reply)
	return wait(t, ch)
}

func heartbeat(t *testing.T, c *Coordinator, group, member string, gen int32) int16 {
	t.Helper()
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version, r.Group, r.MemberID, r.Generation = 4, group, member, gen
	ch, reply := chanOf[*kmsg.HeartbeatResponse]()
	c.Heartbeat(context.Background(), r, reply)
	return wait(t, ch).ErrorCode
}

// leave sends a v0 LeaveGroup (its error on the top level) for member and
// returns the error code.
func leave(t *testing.T, c *Coordinator, group, member string) int16 {
	t.Helper()
	r := kmsg.NewPtrLeaveGroupRequest()
	r.Version, r.Group, r.MemberID = 0, group, member
	ch, reply := chanOf[*kmsg.LeaveGroupResponse]()
	c.LeaveGroup(context.Background(), r, reply)
	return wait(t, ch).ErrorCode
}

func TestCommitsSurviveCoordinatorRestart(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	member, gen := joinAndSync(t, c, "g1")
	if code := commit(t, c, "g1", member, gen, "orders", 2, 1234); code != 0 {
		t.Fatalf("commit %d", code)
	}
	if code := commit(t, c, "g1", member, gen+1, "orders", 2, 1); code != kerr.IllegalGeneration.Code {
		t.Fatalf("stale commit %d", code)
	}
	if code := commit(t, c, "simple", "", -1, "orders", 0, 77); code != 0 {
		t.Fatalf("simple commit %d", code)
	}
	recs := topic.Records(c.PartitionFor("g1"))
	if len(recs) < 2 {
		t.Fatalf("%d records written", len(recs))
	}
	c.Stop()

	// A new coordinator over the same log: offsets and the Stable group
	// come back; the member keeps its generation.
	c2 := startCoord(t, topic)
	f := fetchAll(t, c2, "g1")
	if f.ErrorCode != 0 || len(f.Topics) != 1 || f.Topics[0].Partitions[0].Offset != 1234 ||
		*f.Topics[0].Partitions[0].Metadata != "meta" || f.Topics[0].Partitions[0].LeaderEpoch != 3 {
		t.Fatalf("fetch after restart %+v", f)
	}
	if code := heartbeat(t, c2, "g1", member, gen); code != 0 {
		t.Fatalf("heartbeat after restart %d", code)
	}
	lch, lreply := chanOf[*kmsg.ListGroupsResponse]()
	lr := kmsg.NewPtrListGroupsRequest()
	lr.Version = 4
	c2.ListGroups(context.Background(), lr, lreply)
	l := wait(t, lch)
	if len(l.Groups) != 2 || l.Groups[0].Group != "g1" || l.Groups[0].GroupState != "Stable" || l.Groups[1].Group != "simple" || l.Groups[1].GroupState != "Empty" {
		t.Fatalf("list %+v", l.Groups)
	}
	lr.StatesFilter = []string{"empty"}
	c2.ListGroups(context.Background(), lr, lreply)
	if l := wait(t, lch); len(l.Groups) != 1 || l.Groups[0].Group != "simple" {
		t.Fatalf("filtered list %+v", l.Groups)
	}
}

func TestGroupActorPanicRestartsAndReloads(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	member, gen := joinAndSync(t, c, "g")
	if code := commit(t, c, "g", member, gen, "t", 0, 10); code != 0 {
		t.Fatal(code)
	}
	failed := make(chan int16, 1)
	c.send(&GroupRequest{Group: "g", API: "Crash",
		Apply: func(*Group, time.Time) { panic("injected") },
		Fail:  func(code int16) { failed <- code },
	})
	// The request that panicked is answered with a retriable error (the
	// README's promise for a restarting actor), not left to time out.
	if code := wait(t, failed); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("panicked request answered %d, want COORDINATOR_NOT_AVAILABLE", code)
	}
	// The restarted actor rebuilt the group from the log: same member,
	// same generation, same offsets.
	if code := heartbeat(t, c, "g", member, gen); code != 0 {
		t.Fatalf("heartbeat after restart %d", code)
	}
	f := fetchAll(t, c, "g")
	if len(f.Topics) != 1 || f.Topics[0].Partitions[0].Offset != 10 {
		t.Fatalf("offsets after restart %+v", f.Topics)
	}
	in := actors.InstrumentsOf(c.sys)
	var path string
	for _, a := range in.Actors() {
		if a.Kind == "group" {
			path = a.Path
			if a.Restarts != 1 {
				t.Fatalf("group actor %s restarts %d, want 1", a.Path, a.Restarts)
			}
		}
	}
	if path == "" {
		t.Fatal("no group actor")
	}
	// The router counted the panicked request as done: once the group is
	// deleted (Dead, nothing in flight) its actor is stopped. A request
	// still counted in flight would keep the actor alive forever.
	if code := leave(t, c, "g", member); code != 0 {
		t.Fatalf("leave %d", code)
	}
	delch, delreply := chanOf[*kmsg.DeleteGroupsResponse]()
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"g"}
	c.DeleteGroups(context.Background(), del, delreply)
	if r := wait(t, delch); r.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete %+v", r.Groups)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, alive := in.Actor(path); !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group actor %s still alive after its group was deleted: the panicked request is still counted in flight", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNotCoordinatorAndFindCoordinator(t *testing.T) {
	topic := NewMemTopic()
	topic.Host, topic.Port, topic.NodeID = "10.0.0.7", 9093, 3
	c := startCoord(t, topic)
	p := c.PartitionFor("elsewhere")
	topic.SetLocal(p, false)
	if code := heartbeat(t, c, "elsewhere", "m", 1); code != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat to non-local group %d", code)
	}
	ch, reply := chanOf[*kmsg.FindCoordinatorResponse]()
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorKey = 3, "g"
	c.FindCoordinator(context.Background(), r, reply)
	resp := wait(t, ch)
	if resp.ErrorCode != 0 || resp.NodeID != 3 || resp.Host != "10.0.0.7" || resp.Port != 9093 || len(resp.Coordinators) != 0 {
		t.Fatalf("v3 %+v", resp)
	}
	r.Version, r.CoordinatorKeys = 4, []string{"a", "b"}
	c.FindCoordinator(context.Background(), r, reply)
	resp = wait(t, ch)
	if len(resp.Coordinators) != 2 || resp.Coordinators[1].Key != "b" || resp.Coordinators[1].NodeID != 3 {
		t.Fatalf("v4 %+v", resp)
	}
	r.CoordinatorType = 7
	c.FindCoordinator(context.Background(), r, reply)
	if resp = wait(t, ch); resp.Coordinators[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("bad key type %+v", resp.Coordinators[0])
	}
	if topic.Ensured() < 1 {
		t.Fatal("FindCoordinator did not ensure __consumer_offsets")
	}
}

func TestDescribeDeleteAndSessionExpiry(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic)
	member, _ := joinAndSync(t, c, "g")
	dch, dreply := chanOf[*kmsg.DescribeGroupsResponse]()
	dr := kmsg.NewPtrDescribeGroupsRequest()
	dr.Version, dr.Groups = 5, []string{"g", "nope"}
	c.DescribeGroups(context.Background(), dr, dreply)
	d := wait(t, dch)
	if d.Groups[0].State != "Stable" || len(d.Groups[0].Members) != 1 || d.Groups[0].Members[0].MemberID != member ||
		string(d.Groups[0].Members[0].MemberAssignment) != "assign" || d.Groups[1].State != "Dead" {
		t.Fatalf("describe %+v", d.Groups)
	}
	delch, delreply := chanOf[*kmsg.DeleteGroupsResponse]()
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version, del.Groups = 2, []string{"g", "nope"}
	c.DeleteGroups(context.Background(), del, delreply)
	if r := wait(t, delch); r.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code || r.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete %+v", r.Groups)
	}
	// Leave (v0: error on top level), then delete succeeds.
	if code := leave(t, c, "g", member); code != 0 {
		t.Fatalf("leave %d", code)
	}
	if code := leave(t, c, "g", member); code != kerr.UnknownMemberID.Code {
		t.Fatalf("second leave %d", code)
	}
	c.DeleteGroups(context.Background(), del, delreply)
	if r := wait(t, delch); r.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete empty %+v", r.Groups)
	}
	// The answer does not wait for the tombstones (best-effort, as
	// Kafka's acks=0 append), so they are awaited.
	eventually(t, "group tombstone after delete", func() (bool, string) {
		last := topic.Records(c.PartitionFor("g"))
		k, _ := DecodeKey(last[len(last)-1].Key)
		return k.Kind == KeyGroup && last[len(last)-1].Value == nil, fmt.Sprintf("last record %+v", k)
	})
}

func TestSessionTimeoutEvictsThroughActorTimer(t *testing.T) {
	topic := NewMemTopic()
	sys := actors.NewSystem(zap.NewNop())
	cfg := DefaultConfig()
	cfg.InitialRebalanceDelay, cfg.MinSessionTimeout = 0, 50*time.Millisecond
	c, err := New(sys, Options{Config: cfg, Partitions: 5, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(); sys.Shutdown() })
	jr := joinReq("s", "")
	jr.SessionTimeoutMillis, jr.RebalanceTimeoutMillis = 300, 300
	ch, reply := chanOf[*kmsg.JoinGroupResponse]()
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", jr, reply)
	jr.MemberID = wait(t, ch).MemberID
	c.JoinGroup(context.Background(), "cli", "/127.0.0.1", jr, reply)
	if j := wait(t, ch); j.ErrorCode != 0 || j.Generation != 1 {
		t.Fatalf("join %+v", j)
	}
	// No SyncGroup and no heartbeat: the member is dropped (sync deadline /
	// session timeout) by the actor's own timer and the group empties.
	deadline := time.Now().Add(10 * time.Second)
	for {
		dch, dreply := chanOf[*kmsg.DescribeGroupsResponse]()
		dr := kmsg.NewPtrDescribeGroupsRequest()
		dr.Groups = []string{"s"}
		c.DescribeGroups(context.Background(), dr, dreply)
		d := wait(t, dch).Groups[0]
		if d.State == "Empty" && len(d.Members) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group still %s with %d members", d.State, len(d.Members))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := heartbeat(t, c, "s", jr.MemberID, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("evicted member heartbeat %d", code)
	}
}

func TestTwoMembersJoinConcurrently(t *testing.T) {
	sys := actors.NewSystem(zap.NewNop())
	cfg := DefaultConfig()
	// Long enough that both members are in before the first rebalance ends.
	cfg.InitialRebalanceDelay = 500 * time.Millisecond
	c, err := New(sys, Options{Config: cfg, Partitions: 5, Topic: NewMemTopic()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop(); sys.Shutdown() })
	ids := make([]string, 2)
	ch, reply := chanOf[*kmsg.JoinGroupResponse]()
	for i := range ids {
		c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq("two", ""), reply)
		ids[i] = wait(t, ch).MemberID
	}
	res := make(chan *kmsg.JoinGroupResponse, 2)
	for _, id := range ids {
		c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq("two", id), func(r *kmsg.JoinGroupResponse) { res <- r })
	}
	a, b := wait(t, res), wait(t, res)
	if a.ErrorCode != 0 || b.ErrorCode != 0 || a.Generation != b.Generation || a.LeaderID != b.LeaderID || len(a.Members)+len(b.Members) != 2 {
		t.Fatalf("answers %+v %+v", a, b)
	}
}
