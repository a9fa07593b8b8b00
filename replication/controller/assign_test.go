package controller

import (
	"reflect"
	"strings"
	"testing"
)

func TestAssignReplicasKafkaExample(t *testing.T) {
	// Kafka's documented example: 5 brokers, 10 partitions, RF 3, start
	// index 0 (AdminUtils scaladoc table).
	got := AssignReplicas([]int32{4, 3, 2, 1, 0}, 10, 3, 0, 0)
	want := map[int32][]int32{
		0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
		5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestAssignReplicasProperties(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5} {
		brokers := make([]int32, n)
		for i := range brokers {
			brokers[i] = int32(10 + i)
		}
		for rf := 1; rf <= n; rf++ {
			a := AssignReplicas(brokers, int32(4*n), int16(rf), -1, 0)
			leaders := map[int32]int{}
			replicas := map[int32]int{}
			for p := int32(0); p < int32(4*n); p++ {
				rs := a[p]
				if len(rs) != rf {
					t.Fatalf("n=%d rf=%d p=%d: %v", n, rf, p, rs)
				}
				seen := map[int32]bool{}
				for _, r := range rs {
					if seen[r] {
						t.Fatalf("duplicate replica n=%d rf=%d p=%d: %v", n, rf, p, rs)
					}
					seen[r] = true
					replicas[r]++
				}
				leaders[rs[0]]++
			}
			for _, b := range brokers {
				if leaders[b] != 4 || replicas[b] != 4*rf {
					t.Fatalf("n=%d rf=%d unbalanced: leaders %v replicas %v", n, rf, leaders, replicas)
				}
			}
		}
	}
	// Continuing from partition 10 with the same start matches a single run.
	full := AssignReplicas([]int32{0, 1, 2}, 6, 2, 1, 0)
	tail := AssignReplicas([]int32{0, 1, 2}, 3, 2, 1, 3)
	for p := int32(3); p < 6; p++ {
		if !reflect.DeepEqual(full[p], tail[p]) {
			t.Fatalf("p%d: %v vs %v", p, full[p], tail[p])
		}
	}
}

func TestNextLeadership(t *testing.T) {
	liveSet := func(ids ...int32) func(int32) bool {
		return func(id int32) bool {
			for _, x := range ids {
				if x == id {
					return true
				}
			}
			return false
		}
	}
	pl := func(l, e int32, isr ...int32) *PartitionLeadership {
		return &PartitionLeadership{Leader: l, LeaderEpoch: e, ISR: isr}
	}
	cases := []struct {
		name     string
		cur      *PartitionLeadership
		replicas []int32
		live     func(int32) bool
		unclean  bool
		want     PartitionLeadership
		changed  bool
	}{
		{"new", nil, []int32{2, 1, 3}, liveSet(1, 2, 3), false, *pl(2, 0, 2, 1, 3), true},
		{"new, first replica down", nil, []int32{2, 1}, liveSet(1), false, *pl(1, 0, 1), true},
		{"stable", pl(1, 4, 1, 2), []int32{1, 2}, liveSet(1, 2), false, *pl(1, 4, 1, 2), false},
		{"follower died", pl(1, 4, 1, 2), []int32{1, 2}, liveSet(1), false, *pl(1, 5, 1), true},
		{"leader died", pl(1, 4, 1, 2), []int32{1, 2}, liveSet(2), false, *pl(2, 5, 2), true},
		{"no isr live, clean", pl(1, 4, 1), []int32{1, 2}, liveSet(2), false, *pl(-1, 5, 1), true},
		{"still offline", pl(-1, 5, 1), []int32{1, 2}, liveSet(2), false, *pl(-1, 5, 1), false},
		{"no isr live, unclean", pl(1, 4, 1), []int32{1, 2}, liveSet(2), true, *pl(2, 5, 2), true},
		{"isr member returns", pl(-1, 5, 1), []int32{1, 2}, liveSet(1, 2), false, *pl(1, 6, 1), true},
	}
	for _, c := range cases {
		got, changed := NextLeadership(c.cur, c.replicas, c.live, c.unclean)
		if changed != c.changed || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v changed=%v, want %+v changed=%v", c.name, got, changed, c.want, c.changed)
		}
	}
}

func TestValidateTopicName(t *testing.T) {
	for name, wantPrefix := range map[string]string{
		"ok.topic_name-1":        "",
		"":                       "Topic name is illegal, it can't be empty",
		".":                      "Topic name cannot be",
		"..":                     "Topic name cannot be",
		"a/b":                    "Topic name \"a/b\" is illegal",
		"über":                   "Topic name \"über\" is illegal",
		strings.Repeat("a", 249): "",
		strings.Repeat("a", 250): "Topic name is illegal, it can't be longer than 249 characters",
	} {
		got := ValidateTopicName(name)
		if (wantPrefix == "") != (got == "") || !strings.HasPrefix(got, wantPrefix) {
			t.Errorf("%q: got %q, want prefix %q", name, got, wantPrefix)
		}
	}
}
