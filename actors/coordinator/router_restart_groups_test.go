package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
)

// groupActorPath finds the path of group's actor ("group-coordinator/group-<n>-<group>").
func groupActorPath(t *testing.T, in *actors.Instruments, group string) string {
	t.Helper()
	for _, a := range in.Actors() {
		if a.Kind == "group" && strings.HasPrefix(a.Path, RouterName+"/group-") && strings.HasSuffix(a.Path, "-"+group) {
			return a.Path
		}
	}
	t.Fatalf("no actor for group %s", group)
	return ""
}

// TestRouterRestartKeepsGroupActors: a panic in the group-coordinator (the
// router) must restart that actor only. Requests already queued in a group
// actor's mailbox when the router fails are all answered (here: succeed),
// long before RequestTimeout, by the same group actor, and the group keeps
// its member and generation (no rebalance, no reload). Before, the group
// actors were the router's children: its restart stopped them and dropped
// their queued requests, answered only by the RequestTimeout safety net.
func TestRouterRestartKeepsGroupActors(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic) // RequestTimeout 20 s
	member, gen := joinAndSync(t, c, "g1")
	in := actors.InstrumentsOf(c.sys)
	path := groupActorPath(t, in, "g1")

	// Hold the group actor, queue requests behind the hold, then kill the
	// router: the requests went through it before the kill (its mailbox
	// is FIFO), so they are in the group actor's mailbox when it fails.
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultDelay, Actor: path, Delay: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	const n = 4
	hbs := make(chan int16, n)
	commits := make(chan int16, n)
	for i := 0; i < n; i++ {
		h := kmsg.NewPtrHeartbeatRequest()
		h.Version, h.Group, h.MemberID, h.Generation = 4, "g1", member, gen
		c.Heartbeat(context.Background(), h, func(r *kmsg.HeartbeatResponse) { hbs <- r.ErrorCode })
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.MemberID, oc.Generation = 8, "g1", member, gen
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "orders"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 0, int64(100+i), -1
		rt.Partitions = append(rt.Partitions, rp)
		oc.Topics = append(oc.Topics, rt)
		c.OffsetCommit(context.Background(), oc, func(r *kmsg.OffsetCommitResponse) { commits <- r.Topics[0].Partitions[0].ErrorCode })
	}
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: RouterName}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for i := 0; i < 2*n; i++ {
		select {
		case code := <-hbs:
			if code != 0 {
				t.Fatalf("queued heartbeat answered %d (%v), want success: the group was disturbed", code, kerr.ErrorForCode(code))
			}
		case code := <-commits:
			if code != 0 {
				t.Fatalf("queued commit answered %d (%v), want success", code, kerr.ErrorForCode(code))
			}
		case <-deadline:
			t.Fatalf("%d of %d requests queued in the group actor were not answered after the router restart", 2*n-i, 2*n)
		}
	}
	// The router did restart; the group actor did not, and was not replaced.
	deadlineR := time.Now().Add(5 * time.Second)
	for {
		r, ok := in.Actor(RouterName)
		if ok && r.Restarts == 1 {
			break
		}
		if time.Now().After(deadlineR) {
			t.Fatalf("router %+v (live %v), want 1 restart", r, ok)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if g, ok := in.Actor(path); !ok || g.Restarts != 0 {
		t.Fatalf("group actor %s after the router restart: %+v (live %v), want the same actor, never restarted", path, g, ok)
	}
	// The restarted router still routes to it: same member and generation.
	if code := heartbeat(t, c, "g1", member, gen); code != 0 {
		t.Fatalf("heartbeat after the router restart %d", code)
	}
	if got := groupActorPath(t, in, "g1"); got != path {
		t.Fatalf("group actor %s replaced by %s", path, got)
	}
	dch, dreply := chanOf[*kmsg.DescribeGroupsResponse]()
	dr := kmsg.NewPtrDescribeGroupsRequest()
	dr.Version, dr.Groups = 5, []string{"g1"}
	c.DescribeGroups(context.Background(), dr, dreply)
	if d := wait(t, dch); d.Groups[0].State != "Stable" || len(d.Groups[0].Members) != 1 || d.Groups[0].Members[0].MemberID != member {
		t.Fatalf("group after the router restart: %+v", d.Groups)
	}
	f := fetchAll(t, c, "g1")
	if f.ErrorCode != 0 || len(f.Topics) != 1 || f.Topics[0].Partitions[0].Offset != 100+n-1 {
		t.Fatalf("offsets after the router restart: %+v", f)
	}

	// Stop still stops every group actor (they are not the router's children).
	c.Stop()
	for _, a := range in.Actors() {
		if a.Path == RouterName || strings.HasPrefix(a.Path, RouterName+"/") {
			t.Fatalf("actor %s still live after Stop", a.Path)
		}
	}
}
