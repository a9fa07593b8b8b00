package clustertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clustertest"
)

// metadataController asks broker id which broker it names as controller.
func metadataController(c *clustertest.Cluster, id int32) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(id)))
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return -1, err
	}
	return resp.ControllerID, nil
}

// TestControllerFailover: the controller's session expires while it is cut
// off from ZooKeeper; another broker takes /controller with a higher
// /controller_epoch. When the old controller reconnects it learns of the
// expiry, re-registers as a plain broker and follows the new controller.
func TestControllerFailover(t *testing.T) {
	c := clustertest.MakeCluster(t, 3)
	old := c.Controller()
	epoch := c.ControllerEpoch()
	if old <= 0 || epoch <= 0 {
		t.Fatalf("controller %d epoch %d after start", old, epoch)
	}
	s := c.Session(old)
	s.Disconnect()
	s.Expire()
	c.WaitFor("another controller", 5*time.Second, func() (bool, string) {
		now := c.Controller()
		return now > 0 && now != old && c.ControllerEpoch() > epoch, fmt.Sprintf("controller %d epoch %d", now, c.ControllerEpoch())
	})
	ctrl, newEpoch := c.Controller(), c.ControllerEpoch()
	if newEpoch != epoch+1 {
		t.Errorf("controller epoch %d → %d, want +1", epoch, newEpoch)
	}
	s.Reconnect()
	c.WaitFor(fmt.Sprintf("broker %d back and following controller %d", old, ctrl), 5*time.Second, func() (bool, string) {
		got, err := metadataController(c, old)
		return len(c.Registered()) == 3 && got == ctrl && err == nil, fmt.Sprintf("registered %v, broker %d names %d (%v)", c.Registered(), old, got, err)
	})
	if now, e := c.Controller(), c.ControllerEpoch(); now != ctrl || e != newEpoch {
		t.Fatalf("after the old controller came back: controller %d epoch %d, want %d epoch %d", now, e, ctrl, newEpoch)
	}
}

// TestSessionExpiryOfARunningBroker: a leader cut off from ZooKeeper
// past its session timeout (a long GC pause, a network partition) loses
// its registration while it keeps running; the controller treats it as
// failed (another leader, a higher leader epoch, the ISR without it). When
// it reaches ZooKeeper again it learns of the expiry, re-registers in a
// new session, becomes a follower and rejoins the ISR.
func TestSessionExpiryOfARunningBroker(t *testing.T) {
	c := clustertest.MakeCluster(t, 3)
	// Led by broker 2: broker 1, started first, is the controller.
	c.CreateTopicAssigned("bounce", map[int32][]int32{0: {2, 3, 1}})
	c.Produce("bounce", 0, "a")
	before, _ := c.PartitionState("bounce", 0)
	victim := before.Leader
	if ctrl := c.Controller(); victim != 2 || ctrl == victim {
		t.Fatalf("leader %d, controller %d: want broker 2 leading and another controller", victim, ctrl)
	}
	s := c.Session(victim)
	oldID := s.SessionID()
	s.Disconnect()
	s.Expire()
	c.WaitFor(fmt.Sprintf("broker %d treated as failed", victim), 5*time.Second, func() (bool, string) {
		st, _ := c.PartitionState("bounce", 0)
		return len(c.Registered()) == 2 && st.Leader > 0 && st.Leader != victim && !slices.Contains(st.ISR, victim),
			fmt.Sprintf("registered %v state %+v", c.Registered(), st)
	})
	mid, _ := c.PartitionState("bounce", 0)
	if mid.LeaderEpoch <= before.LeaderEpoch {
		t.Errorf("leader epoch %d → %d, want it to grow", before.LeaderEpoch, mid.LeaderEpoch)
	}
	c.WaitServing("bounce", 0)
	c.Produce("bounce", 0, "b")

	s.Reconnect()
	c.WaitFor(fmt.Sprintf("broker %d re-registered and back in the ISR", victim), 5*time.Second, func() (bool, string) {
		st, _ := c.PartitionState("bounce", 0)
		return len(c.Registered()) == 3 && slices.Contains(st.ISR, victim), fmt.Sprintf("registered %v state %+v", c.Registered(), st)
	})
	if id := s.SessionID(); id == oldID {
		t.Fatalf("broker %d still in session 0x%x", victim, id)
	}
	if l := c.Leader("bounce", 0); l != mid.Leader {
		t.Errorf("leader %d → %d when the expired broker came back, want it kept", mid.Leader, l)
	}
	c.Produce("bounce", 0, "c")
	if end, code, err := c.EndOffset(mid.Leader, "bounce", 0); err != nil || code != 0 || end != 3 {
		t.Fatalf("high watermark on %d = %d (code %d, %v), want 3", mid.Leader, end, code, err)
	}
}
