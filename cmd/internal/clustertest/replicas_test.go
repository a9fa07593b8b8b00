package clustertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/cmd/internal/clustertest"
)

// followerOf is a replica of topic-p that is not its leader.
func followerOf(t *testing.T, c *clustertest.Cluster, topic string, p int32) int32 {
	t.Helper()
	s, _ := c.PartitionState(topic, p)
	for _, r := range s.ISR {
		if r != s.Leader {
			return r
		}
	}
	t.Fatalf("%s-%d has no follower in ISR %v", topic, p, s.ISR)
	return -1
}

// TestBrokerDeath: the leader of a partition dies (no controlled shutdown,
// its session expires); the controller elects a leader from the rest of
// the ISR with a higher leader epoch, shrinks the ISR to the live
// replicas, and acks=all produces succeed on the new leader.
func TestBrokerDeath(t *testing.T) {
	c := clustertest.MakeCluster(t, 3)
	c.CreateTopic("death", 1, 3)
	c.Produce("death", 0, "a", "b")
	before, _ := c.PartitionState("death", 0)
	dead := before.Leader

	c.Kill(dead)
	c.WaitFor("leadership off the dead broker and a 2-replica ISR", 5*time.Second, func() (bool, string) {
		s, ok := c.PartitionState("death", 0)
		return ok && s.Leader > 0 && s.Leader != dead && len(s.ISR) == 2 && !slices.Contains(s.ISR, dead), fmt.Sprintf("%+v", s)
	})
	after, _ := c.PartitionState("death", 0)
	if after.LeaderEpoch <= before.LeaderEpoch {
		t.Errorf("leader epoch %d → %d, want it to grow", before.LeaderEpoch, after.LeaderEpoch)
	}
	if !slices.Contains(before.ISR, after.Leader) {
		t.Errorf("new leader %d was not in the ISR %v", after.Leader, before.ISR)
	}
	c.WaitServing("death", 0)
	c.Produce("death", 0, "c")
	if end, code, err := c.EndOffset(after.Leader, "death", 0); err != nil || code != 0 || end != 3 {
		t.Fatalf("high watermark on the new leader = %d (code %d, %v), want 3", end, code, err)
	}
}

// TestIsrShrinkAndRejoin: a follower crashes while ZooKeeper still holds
// its session, so only the leader notices: after replica.lag.time.max.ms
// it shrinks the ISR. acks=all then completes with the smaller ISR. The
// follower restarts, catches up from the leader and is added back.
func TestIsrShrinkAndRejoin(t *testing.T) {
	c := clustertest.MakeClusterWith(t, 3, clustertest.Options{Props: map[string]string{"replica.lag.time.max.ms": "250"}})
	c.CreateTopic("isr", 1, 3)
	c.Produce("isr", 0, "a")
	// A follower slow to start fetching may have left and rejoined.
	c.WaitFor("a full ISR", 5*time.Second, func() (bool, string) {
		s, _ := c.PartitionState("isr", 0)
		return len(s.ISR) == 3, fmt.Sprintf("%+v", s)
	})
	leader := c.Leader("isr", 0)
	f := followerOf(t, c, "isr", 0)

	c.Crash(f)
	c.WaitFor(fmt.Sprintf("the leader dropping follower %d from the ISR", f), 5*time.Second, func() (bool, string) {
		s, _ := c.PartitionState("isr", 0)
		return len(s.ISR) == 2 && !slices.Contains(s.ISR, f), fmt.Sprintf("%+v", s)
	})
	if l := c.Leader("isr", 0); l != leader {
		t.Fatalf("leader changed %d → %d on a follower's lag", leader, l)
	}
	c.Produce("isr", 0, "b", "c") // acks=all with the 2-replica ISR

	c.Restart(f)
	c.WaitFor(fmt.Sprintf("follower %d back in the ISR", f), 5*time.Second, func() (bool, string) {
		s, _ := c.PartitionState("isr", 0)
		return len(s.ISR) == 3 && slices.Contains(s.ISR, f), fmt.Sprintf("%+v", s)
	})
	c.Produce("isr", 0, "d")
	if end, code, err := c.EndOffset(leader, "isr", 0); err != nil || code != 0 || end != 4 {
		t.Fatalf("high watermark = %d (code %d, %v), want 4", end, code, err)
	}
}

// moveTarget is the plan of a reassignment of topic-p from [a, b] to
// [x, b]: x, the broker without a replica, is added first (the new
// preferred leader) and a, the leader, is removed.
func moveTarget(t *testing.T, c *clustertest.Cluster, topic string, p int32) []int32 {
	t.Helper()
	rs := c.Assignment(topic)[p]
	if len(rs) != 2 {
		t.Fatalf("%s-%d replicas %v, want 2", topic, p, rs)
	}
	for _, id := range c.IDs() {
		if !slices.Contains(rs, id) {
			return []int32{id, rs[1]}
		}
	}
	t.Fatalf("no broker outside %v", rs)
	return nil
}

// waitMoved waits until topic-p is assigned to target with target as its
// ISR, led by target[0] (the old leader left; the new replica, caught up,
// is the first live one in the target order).
func waitMoved(c *clustertest.Cluster, topic string, p int32, target []int32) {
	c.WaitFor(fmt.Sprintf("%s-%d moved to %v", topic, p, target), 5*time.Second, func() (bool, string) {
		rs := c.Assignment(topic)[p]
		s, _ := c.PartitionState(topic, p)
		isr := slices.Sorted(slices.Values(s.ISR))
		return slices.Equal(rs, target) && slices.Equal(isr, slices.Sorted(slices.Values(target))) && s.Leader == target[0],
			fmt.Sprintf("replicas %v state %+v", rs, s)
	})
}

// TestReassignment moves one partition with AlterPartitionReassignments
// and another with the /admin/reassign_partitions znode, each from
// [a, b] to [x, b]: the new replica catches up from the leader, joins the
// ISR and leads; the removed one leaves assignment and ISR; nothing is
// listed as reassigning afterwards and the records are all there.
func TestReassignment(t *testing.T) {
	c := clustertest.MakeCluster(t, 3)
	c.CreateTopic("moving", 2, 2)
	c.Produce("moving", 0, "a", "b", "c")
	c.Produce("moving", 1, "a", "b")
	adm := c.Admin()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t0 := moveTarget(t, c, "moving", 0)
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("moving", 0, t0)
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Error(); err != nil {
		t.Fatalf("AlterPartitionReassignments: %v", err)
	}
	waitMoved(c, "moving", 0, t0)
	c.WaitFor("no reassignment listed", 5*time.Second, func() (bool, string) {
		l, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"moving": {0: {}, 1: {}}})
		return err == nil && len(l) == 0, fmt.Sprintf("%v %v", l, err)
	})

	t1 := moveTarget(t, c, "moving", 1)
	plan := fmt.Sprintf(`{"version":1,"partitions":[{"topic":"moving","partition":1,"replicas":[%d,%d]}]}`, t1[0], t1[1])
	if err := c.Store().Create("/admin/reassign_partitions", []byte(plan), false); err != nil {
		t.Fatal(err)
	}
	waitMoved(c, "moving", 1, t1)
	c.WaitFor("/admin/reassign_partitions deleted", 5*time.Second, func() (bool, string) {
		ok, err := c.Store().Exists("/admin/reassign_partitions")
		return !ok && err == nil, fmt.Sprint(ok, err)
	})

	for p, want := range map[int32]int64{0: 3, 1: 2} {
		leader := c.WaitServing("moving", p)
		if end, code, err := c.EndOffset(leader, "moving", p); err != nil || code != 0 || end != want {
			t.Errorf("moving-%d on its new leader %d: end offset %d (code %d, %v), want %d", p, leader, end, code, err, want)
		}
	}
}

// TestControlledShutdown: a broker stopped cleanly hands its leaderships
// over before it stops, so when Stop returns no partition names it as
// leader, and it leaves the ISRs; produces then succeed without it.
func TestControlledShutdown(t *testing.T) {
	c := clustertest.MakeCluster(t, 3)
	c.CreateTopic("calm", 3, 3)
	leader := c.Leader("calm", 0)
	if leader == c.Controller() { // stop a plain broker: the controller stays put
		leader = c.Leader("calm", 1)
	}
	var led []int32
	for p := int32(0); p < 3; p++ {
		if c.Leader("calm", p) == leader {
			led = append(led, p)
		}
	}
	c.Stop(leader)
	for _, p := range led {
		if s, _ := c.PartitionState("calm", p); s.Leader == leader || s.Leader <= 0 {
			t.Errorf("calm-%d right after the controlled shutdown of %d: %+v", p, leader, s)
		}
	}
	c.WaitFor(fmt.Sprintf("broker %d out of every ISR", leader), 5*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			if s, _ := c.PartitionState("calm", p); slices.Contains(s.ISR, leader) || s.Leader <= 0 {
				return false, fmt.Sprintf("calm-%d %+v", p, s)
			}
		}
		return true, ""
	})
	for p := int32(0); p < 3; p++ {
		c.WaitServing("calm", p)
		c.Produce("calm", p, "after")
	}
}
