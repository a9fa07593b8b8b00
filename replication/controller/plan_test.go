package controller

import (
	"reflect"
	"testing"

	"gregor/partition"
)

func liveSet(ids ...int32) func(int32) bool {
	m := map[int32]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return func(id int32) bool { return m[id] }
}

func TestPlanElections(t *testing.T) {
	tp := func(p int32) partition.TopicPartition { return partition.TopicPartition{Topic: "t", Partition: p} }
	steady := PartitionLeadership{Leader: 1, LeaderEpoch: 4, ISR: []int32{1, 2}}
	leaderDead := PartitionLeadership{Leader: 2, LeaderEpoch: 7, ISR: []int32{2, 3}}
	views := []partitionView{
		{tp: tp(0), replicas: []int32{3, 1, 2}, online: liveSet(1, 2)},                                               // new: create
		{tp: tp(1), replicas: []int32{1, 2}, cur: &steady, version: 9, online: liveSet(1, 2)},                        // unchanged: no write
		{tp: tp(2), replicas: []int32{2, 3}, cur: &leaderDead, version: 5, online: liveSet(1, 3)},                    // leader 2 dead: 3 leads
		{tp: tp(3), replicas: []int32{4}, cur: &PartitionLeadership{Leader: 4, ISR: []int32{4}}, online: liveSet(1)}, // no live replica: leaderless
	}
	got := planElections(views)
	want := []stateWrite{
		{tp: tp(0), create: true, next: PartitionLeadership{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}}},
		{tp: tp(2), version: 5, prev: &PartitionLeadership{Leader: 2, LeaderEpoch: 7, ISR: []int32{2, 3}},
			next: PartitionLeadership{Leader: 3, LeaderEpoch: 8, ISR: []int32{3}}},
		{tp: tp(3), version: 0, prev: &PartitionLeadership{Leader: 4, ISR: []int32{4}},
			next: PartitionLeadership{Leader: -1, LeaderEpoch: 1, ISR: []int32{4}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plan:\n got %+v\nwant %+v", got, want)
	}
	// prev is a copy: the plan does not alias the controller's state.
	if got[1].prev == views[2].cur {
		t.Fatal("prev aliases the viewed state")
	}
	if planElections(nil) != nil {
		t.Fatal("empty view planned writes")
	}
}

func TestPlanLeaderAndIsrOneListPerBroker(t *testing.T) {
	st := func(p int32, replicas ...int32) partition.LeaderAndIsr {
		return partition.LeaderAndIsr{TopicPartition: partition.TopicPartition{Topic: "t", Partition: p}, Replicas: replicas}
	}
	states := []partition.LeaderAndIsr{st(0, 1, 2, 3), st(1, 2, 3), st(2, 3, 1)}
	offline := partition.TopicPartition{Topic: "t", Partition: 1}
	// Broker 3 is dead; broker 2's replica of t-1 is offline.
	deliver := func(tp partition.TopicPartition, r int32) bool { return r != 3 && !(tp == offline && r == 2) }
	per := planLeaderAndIsr(states, deliver)
	parts := func(ss []partition.LeaderAndIsr) []int32 {
		var out []int32
		for _, s := range ss {
			out = append(out, s.Partition)
		}
		return out
	}
	if len(per) != 2 || !reflect.DeepEqual(parts(per[1]), []int32{0, 2}) || !reflect.DeepEqual(parts(per[2]), []int32{0}) {
		t.Fatalf("per broker: 1=%v 2=%v 3=%v (%d brokers)", parts(per[1]), parts(per[2]), parts(per[3]), len(per))
	}
	more := planLeaderAndIsr([]partition.LeaderAndIsr{st(5, 2, 4)}, func(_ partition.TopicPartition, r int32) bool { return r == 4 || r == 2 })
	merged := mergeLeaderAndIsr(per, more)
	if !reflect.DeepEqual(parts(merged[2]), []int32{0, 5}) || !reflect.DeepEqual(parts(merged[4]), []int32{5}) || !reflect.DeepEqual(parts(merged[1]), []int32{0, 2}) {
		t.Fatalf("merged: 1=%v 2=%v 4=%v", parts(merged[1]), parts(merged[2]), parts(merged[4]))
	}
}
