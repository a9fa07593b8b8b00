package clustertest_test

import (
	"context"
	"fmt"
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
