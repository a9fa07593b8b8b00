package partition

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// failingIsr is an IsrWriter whose every write fails at once; calls
// counts them.
type failingIsr struct{ calls atomic.Int32 }

func (w *failingIsr) AlterIsr(TopicPartition, int32, []int32, int32) (int32, error) {
	w.calls.Add(1)
	return 0, errors.New("bad version")
}

// An isrCheck the actor did not arm itself (one queued by a previous
// incarnation's timer) is ignored: here it would have retried the failed
// expansion at once, a second write beside the actor's own check chain.
func TestStaleIsrCheckIgnored(t *testing.T) {
	w := &failingIsr{}
	m := newStorageManager(t, ManagerConfig{BrokerID: 1, IsrWriter: w, ReplicaLagTimeMax: time.Hour}, nil)
	tp := TopicPartition{Topic: "t", Partition: 0}
	st := LeaderAndIsr{TopicPartition: tp, Leader: 1, ISR: []int32{1}, Replicas: []int32{1, 2}, MinInsyncReplicas: 1}
	if errs := m.ApplyLeaderAndIsr([]LeaderAndIsr{st}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := m.Get(tp)
	if err := h.FollowerFetch(2, 0); err != nil { // caught up: expansion proposed, and it fails
		t.Fatal(err)
	}
	m.isrWrites.Wait() // its result is queued to the actor
	if n := w.calls.Load(); n != 1 {
		t.Fatalf("%d writes after the expansion, want 1", n)
	}
	h.root.Send(h.PID(), &isrCheck{armed: time.Now()})
	if err := h.FollowerFetch(9, 0); err != kerr.NotLeaderForPartition { // a probe behind the check
		t.Fatalf("probe: %v", err)
	}
	m.isrWrites.Wait()
	if n := w.calls.Load(); n != 1 {
		t.Fatalf("%d writes after a stale ISR check, want 1 (it must be ignored)", n)
	}
}
