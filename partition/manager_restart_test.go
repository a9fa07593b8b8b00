package partition_test

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
)

// killManager injects a panic into the replica-manager actor (POST /faults
// {"action":"kill","actor":"replica-manager"}) and waits until its restart
// is counted.
func killManager(t *testing.T, e *env) {
	t.Helper()
	in := actors.InstrumentsOf(e.sys)
	before, _ := in.Actor(partition.ManagerName)
	if _, err := in.Inject(actors.ActorFault{Action: actors.FaultKill, Actor: partition.ManagerName}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if i, ok := in.Actor(partition.ManagerName); ok && i.Restarts == before.Restarts+1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("replica-manager restart not counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A restart of the replica manager (a panic in its actor) restarts that
// actor only: every hosted partition keeps serving in the role of its
// latest LeaderAndIsr, produces around the kill all get an answer, and no
// replica is taken offline or reported to the controller. protoactor stops
// a restarting actor's children first; the manager used to read those
// stops as outages.
func TestManagerRestartKeepsPartitions(t *testing.T) {
	e := newEnv(t, actors.BackoffStrategy{})
	ch := reports(e.m)
	leader := e.lead(tp0, 3)
	tpF := partition.TopicPartition{Topic: "orders", Partition: 1}
	if errs := e.m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tpF, Leader: 2, LeaderEpoch: 5,
		ISR: []int32{2, 1}, Replicas: []int32{2, 1}, Config: storage.DefaultLogConfig()}}); len(errs) != 0 {
		t.Fatal(errs)
	}
	follower, _ := e.m.Get(tpF)
	produce(t, leader, batch(t, 2, nil))

	// Produces racing the kill: each must be answered (appended, or a
	// retriable error), none may hang.
	var wg sync.WaitGroup
	results := make(chan partition.ProduceResult, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- produce(t, leader, batch(t, 1, nil))
		}()
	}
	killManager(t, e)
	wg.Wait()
	close(results)
	for r := range results {
		if r.Err != nil && r.Err != kerr.NotLeaderForPartition {
			t.Errorf("produce around the manager restart: %+v", r)
		}
	}
	noReport(t, ch)

	deadline := time.Now().Add(5 * time.Second)
	for !leader.View().IsLeader() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if v := leader.View(); !v.IsLeader() || v.LeaderEpoch != 3 {
		t.Fatalf("leader after the manager restart: err %v role %v epoch %d, want leader at epoch 3", v.Err, v.Role, v.LeaderEpoch)
	}
	if v := follower.View(); v.Err != nil || v.Role != partition.RoleFollower || v.LeaderEpoch != 5 {
		t.Fatalf("follower after the manager restart: err %v role %v epoch %d, want follower at epoch 5", v.Err, v.Role, v.LeaderEpoch)
	}
	if h, ok := e.m.Get(tp0); !ok || h != leader {
		t.Fatal("the manager forgot its partition")
	}
	leo := leader.View().LogEndOffset
	if r := produce(t, leader, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != leo {
		t.Fatalf("produce after the manager restart: %+v, want offset %d", r, leo)
	}

	// The restarted manager still hosts new partitions, hears of real
	// outages, and survives a second kill.
	other := e.lead(partition.TopicPartition{Topic: "orders", Partition: 2}, 0)
	if r := produce(t, other, batch(t, 1, nil)); r.Err != nil || r.BaseOffset != 0 {
		t.Fatalf("new partition after the manager restart: %+v", r)
	}
	killManager(t, e)
	noReport(t, ch)
	if err := e.sys.Root.StopFuture(leader.PID()).Wait(); err != nil {
		t.Fatal(err)
	}
	awaitReport(t, ch, tp0)
	if v := leader.View(); v.Err != kerr.KafkaStorageError {
		t.Fatalf("operator-stopped replica answers %v, want KAFKA_STORAGE_ERROR", v.Err)
	}
	noReport(t, ch)
	if v := other.View(); !v.IsLeader() {
		t.Fatalf("neighbour after two manager restarts: %+v", v)
	}
}
