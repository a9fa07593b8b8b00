package coordinator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
)

// These tests check that what a request changed is visible to the next
// request as soon as its answer is out: Kafka updates a group's metadata
// under the group lock before it sends the response, so a client never
// lists a group its DeleteGroups removed, nor a state its JoinGroup or
// LeaveGroup left behind. The follow-up ListGroups is sent, and waited
// for, from inside the reply callback — the earliest moment any client
// could send it, and with the group actor held until it is answered —
// which makes the checks deterministic: a coordinator that publishes a
// change only after releasing the answer fails every iteration.

// listNow sends a ListGroups at once and returns a channel for its answer.
func listNow(c *Coordinator) <-chan []kmsg.ListGroupsResponseGroup {
	out := make(chan []kmsg.ListGroupsResponseGroup, 1)
	r := kmsg.NewPtrListGroupsRequest()
	r.Version = 4
	c.ListGroups(context.Background(), r, func(resp *kmsg.ListGroupsResponse) { out <- resp.Groups })
	return out
}

// listInCallback is a ListGroups sent and waited for from a reply callback
// (no t.Fatal off the test goroutine: ok is false on timeout).
func listInCallback(c *Coordinator) (gs []kmsg.ListGroupsResponseGroup, ok bool) {
	select {
	case gs = <-listNow(c):
		return gs, true
	case <-time.After(10 * time.Second):
		return nil, false
	}
}

// listed is a ListGroups answer got by listInCallback.
type listed struct {
	groups []kmsg.ListGroupsResponseGroup
	ok     bool
}

func (l listed) state(t *testing.T, group string) string {
	t.Helper()
	if !l.ok {
		t.Fatal("no ListGroups answer")
	}
	return stateOf(l.groups, group)
}

// stateOf is the group's listed state ("" = not listed).
func stateOf(gs []kmsg.ListGroupsResponseGroup, group string) string {
	for _, g := range gs {
		if g.Group == group {
			return g.GroupState
		}
	}
	return ""
}

// waitListed polls ListGroups until group is listed in state want.
func waitListed(t *testing.T, c *Coordinator, group, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := stateOf(wait(t, listNow(c)), group)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s listed as %q, want %q", group, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func simpleCommit(c *Coordinator, group string, reply func(*kmsg.OffsetCommitResponse)) {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version, r.Group, r.Generation = 8, group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 5
	rt.Partitions = append(rt.Partitions, rp)
	r.Topics = append(r.Topics, rt)
	c.OffsetCommit(context.Background(), r, reply)
}

func deleteNow(c *Coordinator, group string, then func(code int16)) {
	r := kmsg.NewPtrDeleteGroupsRequest()
	r.Version, r.Groups = 2, []string{group}
	c.DeleteGroups(context.Background(), r, func(resp *kmsg.DeleteGroupsResponse) { then(resp.Groups[0].ErrorCode) })
}

const visibilityRounds = 10

// startLoaded is startCoord with every __consumer_offsets partition
// loaded (a ListGroups waits for that), so that no answer below is
// delayed by a load.
func startLoaded(t *testing.T) *Coordinator {
	t.Helper()
	c := startCoord(t, NewMemTopic())
	wait(t, listNow(c))
	return c
}

func TestListGroupsAfterDeleteGroupsAnswered(t *testing.T) {
	c := startLoaded(t)
	for i := 0; i < visibilityRounds; i++ {
		group := fmt.Sprintf("del-%d", i)
		ch, reply := chanOf[*kmsg.OffsetCommitResponse]()
		simpleCommit(c, group, reply)
		if code := wait(t, ch).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("commit %d", code)
		}
		waitListed(t, c, group, "Empty")
		type res struct {
			code int16
			l    listed
		}
		done := make(chan res, 1)
		deleteNow(c, group, func(code int16) {
			gs, ok := listInCallback(c)
			done <- res{code, listed{gs, ok}}
		})
		r := wait(t, done)
		if r.code != 0 {
			t.Fatalf("delete %s: %d", group, r.code)
		}
		if st := r.l.state(t, group); st != "" {
			t.Fatalf("round %d: ListGroups right after DeleteGroups answered lists %s as %s", i, group, st)
		}
	}
}

func TestListGroupsAfterCommitCreatedGroup(t *testing.T) {
	c := startLoaded(t)
	for i := 0; i < visibilityRounds; i++ {
		group := fmt.Sprintf("new-%d", i)
		done := make(chan listed, 1)
		simpleCommit(c, group, func(*kmsg.OffsetCommitResponse) {
			gs, ok := listInCallback(c)
			done <- listed{gs, ok}
		})
		if st := wait(t, done).state(t, group); st != "Empty" {
			t.Fatalf("round %d: ListGroups right after the commit that created %s lists it as %q, want Empty", i, group, st)
		}
	}
}

func TestListGroupsAfterJoinAndLeaveAnswered(t *testing.T) {
	c := startLoaded(t)
	for i := 0; i < visibilityRounds; i++ {
		group := fmt.Sprintf("jl-%d", i)
		ch, reply := chanOf[*kmsg.JoinGroupResponse]()
		c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq(group, ""), reply)
		first := wait(t, ch)
		if first.ErrorCode != kerr.MemberIDRequired.Code {
			t.Fatalf("first join %d", first.ErrorCode)
		}
		type res struct {
			join *kmsg.JoinGroupResponse
			l    listed
		}
		done := make(chan res, 1)
		c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq(group, first.MemberID),
			func(j *kmsg.JoinGroupResponse) {
				gs, ok := listInCallback(c)
				done <- res{j, listed{gs, ok}}
			})
		r := wait(t, done)
		if r.join.ErrorCode != 0 {
			t.Fatalf("join %d", r.join.ErrorCode)
		}
		if st := r.l.state(t, group); st != "CompletingRebalance" {
			t.Fatalf("round %d: ListGroups right after JoinGroup answered lists %s as %q, want CompletingRebalance", i, group, st)
		}

		sch, sreply := chanOf[*kmsg.SyncGroupResponse]()
		sr := kmsg.NewPtrSyncGroupRequest()
		sr.Version, sr.Group, sr.MemberID, sr.Generation = 5, group, r.join.MemberID, r.join.Generation
		c.SyncGroup(context.Background(), sr, sreply)
		if s := wait(t, sch); s.ErrorCode != 0 {
			t.Fatalf("sync %d", s.ErrorCode)
		}
		waitListed(t, c, group, "Stable")

		ldone := make(chan listed, 1)
		lr := kmsg.NewPtrLeaveGroupRequest()
		lr.Version, lr.Group, lr.MemberID = 0, group, r.join.MemberID
		c.LeaveGroup(context.Background(), lr, func(resp *kmsg.LeaveGroupResponse) {
			if resp.ErrorCode != 0 {
				t.Errorf("leave %d", resp.ErrorCode)
			}
			gs, ok := listInCallback(c)
			ldone <- listed{gs, ok}
		})
		if st := wait(t, ldone).state(t, group); st != "Empty" {
			t.Fatalf("round %d: ListGroups right after the last member's LeaveGroup answered lists %s as %q, want Empty", i, group, st)
		}
	}
}

// A deleted group is gone, as in Kafka (which drops a Dead group from its
// cache before answering): a JoinGroup right after DeleteGroups answered
// starts a new group instead of finding the Dead one
// (COORDINATOR_NOT_AVAILABLE), and DescribeGroups describes it as unknown.
// A request queued behind the DeleteGroups keeps the group's actor (which
// the router stops once nothing is in flight) serving the follow-ups.
func TestDeletedGroupIsUnknownAtOnce(t *testing.T) {
	c := startLoaded(t)
	for i := 0; i < visibilityRounds; i++ {
		group := fmt.Sprintf("gone-%d", i)
		member, _ := joinAndSync(t, c, group)
		if code := leave(t, c, group, member); code != 0 {
			t.Fatalf("leave %d", code)
		}
		type res struct {
			code     int16
			join     chan *kmsg.JoinGroupResponse
			describe chan *kmsg.DescribeGroupsResponse
		}
		// Hold the actor until DeleteGroups and a DescribeGroups are both
		// routed to it (the router answers a ListGroups after routing them).
		block := make(chan struct{})
		c.send(&GroupRequest{Group: group, API: "Block", Apply: func(*Group, time.Time) { <-block }, Fail: func(int16) {}})
		done := make(chan res, 1)
		deleteNow(c, group, func(code int16) {
			x := res{code, make(chan *kmsg.JoinGroupResponse, 1), make(chan *kmsg.DescribeGroupsResponse, 1)}
			dr := kmsg.NewPtrDescribeGroupsRequest()
			dr.Version, dr.Groups = 5, []string{group}
			c.DescribeGroups(context.Background(), dr, func(d *kmsg.DescribeGroupsResponse) { x.describe <- d })
			c.JoinGroup(context.Background(), "cli", "/127.0.0.1", joinReq(group, ""), func(j *kmsg.JoinGroupResponse) { x.join <- j })
			done <- x
		})
		queued := make(chan *kmsg.DescribeGroupsResponse, 1)
		dr := kmsg.NewPtrDescribeGroupsRequest()
		dr.Version, dr.Groups = 5, []string{group}
		c.DescribeGroups(context.Background(), dr, func(d *kmsg.DescribeGroupsResponse) { queued <- d })
		wait(t, listNow(c))
		close(block)
		r := wait(t, done)
		if r.code != 0 {
			t.Fatalf("delete %d", r.code)
		}
		for _, ch := range []chan *kmsg.DescribeGroupsResponse{queued, r.describe} {
			if d := wait(t, ch).Groups[0]; d.ErrorCode != 0 || d.State != "Dead" || d.ProtocolType != "" || len(d.Members) != 0 {
				t.Fatalf("round %d: DescribeGroups after DeleteGroups: %+v, want an unknown (Dead, no protocol type) group", i, d)
			}
		}
		if j := wait(t, r.join); j.ErrorCode != kerr.MemberIDRequired.Code {
			t.Fatalf("round %d: JoinGroup right after DeleteGroups answered: %v, want MEMBER_ID_REQUIRED (a new group)", i, kerr.ErrorForCode(j.ErrorCode))
		}
	}
}

// An answer held in the outbox when the request then panics is still
// delivered (before the COORDINATOR_NOT_AVAILABLE of the panicked request,
// which the reply-once guard then drops), as it was when answers were not
// held.
func TestHeldAnswerSurvivesPanic(t *testing.T) {
	c := startLoaded(t)
	got := make(chan int16, 2)
	r := actors.ReplyOnce(20*time.Second, func(code int16) { got <- code }, func() int16 { return -1 })
	c.send(&GroupRequest{Group: "p", API: "AnswerThenCrash",
		Apply: func(g *Group, _ time.Time) {
			viaOutbox(g, r)(kerr.GroupIDNotFound.Code)
			panic("injected")
		},
		Fail: r,
	})
	if code := wait(t, got); code != kerr.GroupIDNotFound.Code {
		t.Fatalf("answered %d, want the answer given before the panic (%d)", code, kerr.GroupIDNotFound.Code)
	}
	if code := heartbeat(t, c, "p", "m", 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat after restart %d", code)
	}
	select {
	case code := <-got:
		t.Fatalf("answered twice (%d)", code)
	default:
	}
}
