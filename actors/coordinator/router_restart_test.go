package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/actors"
)

// TestRouterRestartAnswersQueuedRequests: a panic in the group-coordinator
// (the router) replaces its state; a request it held, waiting for a
// __consumer_offsets partition to load, must be answered at once with a
// retriable COORDINATOR_NOT_AVAILABLE, not after RequestTimeout. After the
// restart the group is served again, reloaded with its offsets.
func TestRouterRestartAnswersQueuedRequests(t *testing.T) {
	topic := NewMemTopic()
	c := startCoord(t, topic) // RequestTimeout 20 s
	member, gen := joinAndSync(t, c, "g1")
	if code := commit(t, c, "g1", member, gen, "orders", 2, 1234); code != 0 {
		t.Fatalf("commit %d", code)
	}
	// Unload the group's partition, then hold its next load.
	p := c.PartitionFor("g1")
	c.Resign(p)
	release := topic.HoldLoads()
	defer release()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 7, "g1"
	ch, reply := chanOf[*kmsg.OffsetFetchResponse]()
	c.OffsetFetch(context.Background(), r, reply)
	deadline := time.Now().Add(5 * time.Second)
	for topic.Held() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the fetch did not start a load")
		}
		time.Sleep(5 * time.Millisecond)
	}
	in := actors.InstrumentsOf(c.sys)
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: "group-coordinator"}); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-ch:
		if resp.ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("queued OffsetFetch answered %d, want COORDINATOR_NOT_AVAILABLE", resp.ErrorCode)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the OffsetFetch queued in the restarted router was not answered")
	}
	release()
	f := fetchAll(t, c, "g1")
	if f.ErrorCode != 0 || len(f.Topics) != 1 || f.Topics[0].Partitions[0].Offset != 1234 {
		t.Fatalf("offsets after the router restart: %+v", f)
	}
}
