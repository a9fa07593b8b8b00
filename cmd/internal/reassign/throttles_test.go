package reassign

import (
	"reflect"
	"testing"

	"gregor/partition"
	"gregor/replication/controller"
)

func tp(t string, p int32) partition.TopicPartition {
	return partition.TopicPartition{Topic: t, Partition: p}
}

func TestThrottleLists(t *testing.T) {
	current := map[partition.TopicPartition][]int32{tp("a", 0): {1, 2}, tp("a", 1): {2, 3}, tp("a", 10): {1}, tp("b", 0): {1}}
	proposed := map[partition.TopicPartition][]int32{tp("a", 0): {2, 4}, tp("a", 1): {2, 3}, tp("a", 10): {1, 3}}
	// b-0 is being reassigned 1 → 1,5 (adding 5): its move stays throttled.
	under := []controller.PartitionReassignment{{TopicPartition: tp("b", 0), Replicas: []int32{1, 5}, Adding: []int32{5}}}
	mm, err := proposedMoves(under, proposed, current)
	if err != nil {
		t.Fatal(err)
	}
	wantLeader := map[string]string{"a": "0:1,0:2,10:1,1:2,1:3", "b": "0:1"} // sorted as strings, as Kafka's TreeSet
	wantFollower := map[string]string{"a": "0:4,10:3", "b": "0:5"}
	if got := throttleLists(mm, true); !reflect.DeepEqual(got, wantLeader) {
		t.Errorf("leader throttles %v, want %v", got, wantLeader)
	}
	if got := throttleLists(mm, false); !reflect.DeepEqual(got, wantFollower) {
		t.Errorf("follower throttles %v, want %v", got, wantFollower)
	}
	if got := reassigningBrokers(mm); !reflect.DeepEqual(got, []int32{1, 2, 3, 4, 5}) {
		t.Errorf("brokers %v", got)
	}
	if _, err := proposedMoves(nil, map[partition.TopicPartition][]int32{tp("c", 0): {1}}, current); err == nil {
		t.Error("a partition without replicas was accepted")
	}
}

func TestLogDirBrokers(t *testing.T) {
	doc := controller.Reassignment{Partitions: []controller.PartitionReplicas{
		{Topic: "a", Partition: 0, Replicas: []int32{1, 2, 3}, LogDirs: []string{"any", "/d2", "any"}},
		{Topic: "a", Partition: 1, Replicas: []int32{4}},
	}}
	if got := logDirBrokers(doc); !reflect.DeepEqual(got, []int32{2}) {
		t.Fatalf("log dir brokers %v, want [2]", got)
	}
}
