package partition

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/storage"
)

// The Handle's saved LeaderAndIsr is written by the actor itself, before
// it answers an applyState: a restart right after the answer (here a crash
// queued behind it) starts the new incarnation from the state just
// applied, not the previous one, and nothing written after the answer
// (the manager used to store the state then) can overwrite an ISR change
// the actor committed meanwhile.
func TestActorSavesAppliedStateBeforeAnswering(t *testing.T) {
	m := newStorageManager(t, ManagerConfig{BrokerID: 1, Backoff: actors.BackoffStrategy{Initial: time.Millisecond, Max: 5 * time.Millisecond}}, nil)
	tp := TopicPartition{Topic: "t", Partition: 0}
	s1 := LeaderAndIsr{TopicPartition: tp, Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, Replicas: []int32{1}, Config: storage.DefaultLogConfig()}
	if errs := m.ApplyLeaderAndIsr([]LeaderAndIsr{s1}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := m.Get(tp)
	s2 := s1
	s2.LeaderEpoch, s2.ZkVersion = 1, 1
	done := make(chan *kerr.Error, 1)
	h.root.Send(h.PID(), &applyState{state: s2, done: done})
	h.root.Send(h.PID(), &Crash{Reason: "restart right after the answer"})
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(ReplicationAskTimeout):
		t.Fatal("no answer to applyState")
	}
	if got := h.State(); got.LeaderEpoch != 1 || got.ZkVersion != 1 {
		t.Fatalf("Handle state when the actor answered: epoch %d version %d, want 1 1", got.LeaderEpoch, got.ZkVersion)
	}
	// A probe queued behind the crash is handled by the next incarnation,
	// after its Started.
	if err := h.FollowerFetch(9, 0); err != kerr.NotLeaderForPartition {
		t.Fatalf("probe after the restart: %v, want NOT_LEADER_OR_FOLLOWER (9 is not a replica)", err)
	}
	if v := h.View(); v.Err != nil || v.LeaderEpoch != 1 {
		t.Fatalf("restarted incarnation: err %v leader epoch %d, want serving epoch 1 (the state applied before the crash)", v.Err, v.LeaderEpoch)
	}
}
