package fetcher

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"gregor/partition"
)

// TestResizeRehashesAndKeepsReplicating: num.replica.fetchers raised from
// 1 to 3 at run time moves each partition to the fetcher its hash picks
// among three (Kafka's getFetcherId), and every partition keeps
// replicating (acks=all with min.insync.replicas=2 answers only once the
// follower has the batch); lowered back to 1, all return to fetcher 0.
func TestResizeRehashesAndKeepsReplicating(t *testing.T) {
	c := newCluster(t, 1, 2)
	var tps []partition.TopicPartition
	for p := int32(0); p < 6; p++ {
		tp := partition.TopicPartition{Topic: "orders", Partition: p}
		tps = append(tps, tp)
		c.apply(tp, 1, 0, []int32{1, 2}, []int32{1, 2}, 2)
	}
	produceAll := func(round int) {
		t.Helper()
		for _, tp := range tps {
			if _, err := produce(t, c.brokers[1], tp, -1, 10*time.Second, fmt.Sprintf("r%d-%d", round, tp.Partition)); err != nil {
				t.Fatalf("round %d, %v: %v", round, tp, err)
			}
		}
	}
	assignedTo := func(n int) func() bool {
		return func() bool {
			for _, tp := range tps {
				if c.brokers[2].fm.Assigned(tp) != fmt.Sprintf("fetcher-1-%d", fetcherIndex(tp, n)) {
					return false
				}
			}
			return true
		}
	}
	eventually(t, 10*time.Second, "every partition on fetcher 0", assignedTo(1))
	produceAll(0)

	c.brokers[2].fm.Resize(3)
	eventually(t, 10*time.Second, "the partitions re-hashed to three fetchers", assignedTo(3))
	used := map[int]bool{}
	for _, tp := range tps {
		used[fetcherIndex(tp, 3)] = true
	}
	if len(used) < 2 {
		t.Fatalf("the test's partitions hash to %v only: pick others", used)
	}
	for round := 1; round <= 3; round++ {
		produceAll(round)
	}

	c.brokers[2].fm.Resize(1)
	eventually(t, 10*time.Second, "every partition back on fetcher 0", assignedTo(1))
	produceAll(4)
	for _, tp := range tps {
		want := batches(t, c.brokers[1], tp)
		if len(want) != 5 {
			t.Fatalf("%v: leader has %d batches, want 5", tp, len(want))
		}
		eventually(t, 5*time.Second, "follower log matches", func() bool { return slices.Equal(batches(t, c.brokers[2], tp), want) })
	}
}
