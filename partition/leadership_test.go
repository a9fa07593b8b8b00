package partition_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/actors"
	"gregor/partition"
	"gregor/partition/partitiontest"
	"gregor/storage"
)

type roleEvent struct {
	tp     partition.TopicPartition
	leader bool
	epoch  int32
	hosted bool // Get answered inside the hook (the manager's lock is free)
}

func TestOnLeadershipChange(t *testing.T) {
	sys := actors.NewSystem(nil)
	store := partitiontest.NewStore(t.TempDir())
	var events []roleEvent
	var m *partition.Manager
	m, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: store, BrokerID: 1,
		OnLeadershipChange: func(tp partition.TopicPartition, leader bool, epoch int32) {
			_, hosted := m.Get(tp) // would deadlock if called under the manager's lock
			events = append(events, roleEvent{tp, leader, epoch, hosted})
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); sys.Shutdown(); store.Close() })
	apply := func(leader, epoch int32) map[partition.TopicPartition]error {
		return m.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp0, Leader: leader, LeaderEpoch: epoch,
			ISR: []int32{1, 2}, Replicas: []int32{1, 2}, Config: storage.DefaultLogConfig()}})
	}
	if errs := apply(1, 4); len(errs) != 0 {
		t.Fatal(errs)
	}
	if errs := apply(2, 5); len(errs) != 0 { // another broker leads: follower
		t.Fatal(errs)
	}
	if errs := apply(1, 3); errs[tp0] != kerr.FencedLeaderEpoch { // stale: no event
		t.Fatalf("stale epoch: %v", errs)
	}
	if err := m.StopReplicas([]partition.TopicPartition{tp0}, false); err != nil {
		t.Fatal(err)
	}
	want := []roleEvent{{tp0, true, 4, true}, {tp0, false, 5, true}, {tp0, false, -1, false}}
	if len(events) != len(want) {
		t.Fatalf("events %+v, want %+v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("event %d: %+v, want %+v", i, events[i], want[i])
		}
	}
}
