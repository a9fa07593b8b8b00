package controller

import (
	"slices"
	"testing"
	"time"

	"gregor/partition"
	"gregor/replication/zkmeta"
)

func (f *fakeRM) appliedFor(tp partition.TopicPartition) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.applied {
		if s.TopicPartition == tp {
			n++
		}
	}
	return n
}

// settled waits (at most 5 s) until the controller actor has finished the
// event it is handling and every message queued before: a no-op call runs
// on the actor after them, under the same lock. Tests that see an effect
// in ZooKeeper use it before checking the effects the controller produces
// later in the same event (requests sent, the published snapshot).
func (e *env) settled(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.c.call(func() {}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("controller barrier: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for the controller to finish its current event")
	}
}

func TestOfflineReplicaMovesLeadershipUntilBrokerReturns(t *testing.T) {
	e, peers := startCluster3(t)
	res := e.c.CreateTopics([]NewTopic{{Name: "t", NumPartitions: -1, ReplicationFactor: -1,
		Assignment: map[int32][]int32{0: {1, 0, 2}, 1: {0, 1, 2}}}}, false)
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	tp1 := partition.TopicPartition{Topic: "t", Partition: 1}
	if st, _ := e.state(t, "t", 0); st.Leader != 1 || st.LeaderEpoch != 0 {
		t.Fatalf("initial state %+v", st)
	}

	// Broker 1 (a peer) reports its replica of t-0 offline.
	leaderAndIsrTo1 := peers.count(1, 4)
	if _, err := e.store.CreateSequential(zkmeta.LogDirEventPrefix, zkmeta.EncodeLogDirEvent(1, []zkmeta.IsrChangePartition{{Topic: "t", Partition: 0}}), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "leadership of t-0 moved off broker 1", func() bool {
		st, _ := e.state(t, "t", 0)
		return st.Leader != 1
	})
	// The controller writes the state znode first and then, still in the
	// same event, sends LeaderAndIsr and publishes the snapshot (Kafka's
	// order: ZooKeeper, then the requests); let it finish that event.
	e.settled(t)
	st, _ := e.state(t, "t", 0)
	if st.Leader != 0 || st.LeaderEpoch != 1 || !slices.Equal(st.ISR, []int32{0, 2}) {
		t.Fatalf("after the report: %+v, want leader 0 epoch 1 ISR [0 2]", st)
	}
	md := e.c.Snapshot().Topics["t"].Partitions[0]
	if md.Leader != 0 || !slices.Equal(md.OfflineReplicas, []int32{1}) || !slices.Equal(md.ISR, []int32{0, 2}) {
		t.Fatalf("metadata after the report: %+v", md)
	}
	if n := peers.count(1, 4); n != leaderAndIsrTo1 {
		t.Fatalf("the offline replica got %d LeaderAndIsr, want none", n-leaderAndIsrTo1)
	}
	if kids, _ := e.store.Children(zkmeta.LogDirEventNotificationPath); len(kids) != 0 {
		t.Fatalf("notifications left: %v", kids)
	}

	// This broker (0) reports its own replica of t-1 (it leads it).
	applied := e.rm.appliedFor(tp1)
	e.c.ReportOfflineReplica(tp1)
	waitUntil(t, "leadership of t-1 moved off broker 0", func() bool {
		st, _ := e.state(t, "t", 1)
		return st.Leader != 0
	})
	e.settled(t) // so the check below sees every LeaderAndIsr it sent
	if st, _ := e.state(t, "t", 1); st.Leader != 1 || !slices.Equal(st.ISR, []int32{1, 2}) {
		t.Fatalf("t-1 after the self-report: %+v, want leader 1 ISR [1 2]", st)
	}
	if n := e.rm.appliedFor(tp1); n != applied {
		t.Fatalf("the local offline replica was sent %d LeaderAndIsr", n-applied)
	}

	// Broker 1 restarts (re-registers): its replica is online again and
	// hears of the partition.
	if err := e.store.Delete(zkmeta.BrokerPath(1), -1); err != nil {
		t.Fatal(err)
	}
	b := zkmeta.BrokerInfo{ID: 1, JmxPort: -1, Timestamp: 2, Endpoints: []zkmeta.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9101}}}
	if err := e.store.Create(zkmeta.BrokerPath(1), b.Encode(), true); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "broker 1's replica of t-0 online again", func() bool {
		md := e.c.Snapshot().Topics["t"].Partitions[0]
		return len(md.OfflineReplicas) == 0 && peers.count(1, 4) > leaderAndIsrTo1
	})
}
