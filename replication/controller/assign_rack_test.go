package controller

import (
	"errors"
	"reflect"
	"testing"
)

func racks(m map[int32]string) []BrokerRack {
	var out []BrokerRack
	for id, r := range m {
		out = append(out, BrokerRack{ID: id, Rack: r})
	}
	return out
}

// The expected lists are the ones Kafka's AdminUtils produces for these
// inputs (its rack-aware assignment is deterministic given the start).
func TestAssignReplicasWithRacks(t *testing.T) {
	rackOf := map[int32]string{0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
	if got := rackAlternated(rackOf); !reflect.DeepEqual(got, []int32{0, 3, 1, 5, 4, 2}) {
		t.Fatalf("rack-alternated list %v", got)
	}
	delete(rackOf, 5)
	if got := rackAlternated(rackOf); !reflect.DeepEqual(got, []int32{0, 3, 1, 4, 2}) {
		t.Fatalf("rack-alternated list without 5: %v", got)
	}
	rackOf[5] = "rack1"
	got, err := AssignReplicasWithRacks(racks(rackOf), 7, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{0: {0, 3, 1}, 1: {3, 1, 5}, 2: {1, 5, 4}, 3: {5, 4, 2}, 4: {4, 2, 0}, 5: {2, 0, 3}, 6: {0, 4, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("assignment %v\nwant %v", got, want)
	}
	// Every partition spans all three racks.
	for p, rs := range got {
		seen := map[string]bool{}
		for _, b := range rs {
			seen[rackOf[b]] = true
		}
		if len(seen) != 3 {
			t.Errorf("partition %d %v covers racks %v", p, rs, seen)
		}
	}
}

func TestAssignReplicasWithRacksFallbacks(t *testing.T) {
	// No racks: the rack-unaware assignment, unchanged.
	plain := []BrokerRack{{ID: 0}, {ID: 1}, {ID: 2}}
	got, err := AssignReplicasWithRacks(plain, 6, 2, 0, 0)
	if err != nil || !reflect.DeepEqual(got, AssignReplicas([]int32{0, 1, 2}, 6, 2, 0, 0)) {
		t.Fatalf("no racks: %v %v", got, err)
	}
	// Some racks: Kafka's refusal.
	if _, err := AssignReplicasWithRacks([]BrokerRack{{ID: 0, Rack: "a"}, {ID: 1}}, 1, 1, 0, 0); !errors.Is(err, ErrIncompleteRacks) {
		t.Fatalf("mixed racks: %v", err)
	}
	// More replicas than racks: each rack at least one, no broker twice.
	got, err = AssignReplicasWithRacks([]BrokerRack{{0, "a"}, {1, "a"}, {2, "b"}, {3, "b"}}, 8, 3, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range got {
		seen, rk := map[int32]bool{}, map[bool]int{}
		for _, b := range rs {
			if seen[b] {
				t.Fatalf("partition %d %v repeats a broker", p, rs)
			}
			seen[b] = true
			rk[b >= 2]++
		}
		if rk[true] == 0 || rk[false] == 0 {
			t.Fatalf("partition %d %v misses a rack", p, rs)
		}
	}
}
