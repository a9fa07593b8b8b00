package partition

import (
	"slices"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newLeader(t *testing.T, isr []int32) (*Replica, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	r := NewReplica(TopicPartition{Topic: "t"}, 1)
	r.Now = clk.now
	r.SetLogOffsets(0, 10)
	if err := r.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: isr, Replicas: []int32{1, 2, 3}, ZkVersion: 4, MinInsyncReplicas: 2}, 5); err != nil {
		t.Fatal(err)
	}
	return r, clk
}

func TestLeaderHWIsSmallestISRLogEndOffset(t *testing.T) {
	r, _ := newLeader(t, []int32{1, 2, 3})
	if r.HighWatermark != 5 || r.MinInsync != 2 || r.ZkVersion != 4 {
		t.Fatalf("hw %d minIsr %d zkVersion %d, want 5 2 4", r.HighWatermark, r.MinInsync, r.ZkVersion)
	}
	// Follower 3 has not fetched in this epoch: the HW waits for it.
	if adv, _, ok := r.UpdateFollower(2, 8); !ok || adv || r.HighWatermark != 5 {
		t.Fatalf("hw %d advanced=%v ok=%v with follower 3 unknown", r.HighWatermark, adv, ok)
	}
	if adv, _, _ := r.UpdateFollower(3, 7); !adv || r.HighWatermark != 7 {
		t.Fatalf("hw %d, want min(10, 8, 7) = 7", r.HighWatermark)
	}
	if adv, _, _ := r.UpdateFollower(3, 10); !adv || r.HighWatermark != 8 {
		t.Fatalf("hw %d, want min(10, 8, 10) = 8", r.HighWatermark)
	}
	if _, _, ok := r.UpdateFollower(9, 10); ok {
		t.Fatal("a broker outside the assignment was accepted as follower")
	}
}

func TestIsrShrinkAfterLagAndExpandAtHW(t *testing.T) {
	r, clk := newLeader(t, []int32{1, 2, 3})
	lag := 10 * time.Second
	r.UpdateFollower(2, 10)
	r.UpdateFollower(3, 10)
	r.SetLogOffsets(0, 20) // new appends
	clk.add(6 * time.Second)
	r.UpdateFollower(2, 20) // caught up to the current end
	r.UpdateFollower(3, 15) // behind the current end (20)
	clk.add(6 * time.Second)
	// 3 was last caught up at t+0 (its fetch at 10 = the LEO then); its
	// fetch at 15 only proves it reached the LEO of its previous fetch,
	// i.e. caught up as of t+0 again: 12s ago > 10s.
	if got := r.LaggingISR(lag); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("shrunk ISR %v, want [1 2]", got)
	}
	if r.HighWatermark != 15 {
		t.Fatalf("hw %d before the shrink, want 15", r.HighWatermark)
	}
	if !r.SetISR([]int32{1, 2}, 5) || r.HighWatermark != 20 || r.ZkVersion != 5 {
		t.Fatalf("after shrink hw %d zkVersion %d, want 20 and 5", r.HighWatermark, r.ZkVersion)
	}
	if r.InSyncCount() != 2 {
		t.Fatalf("in-sync count %d", r.InSyncCount())
	}
	// 3 fetches below the HW: not back yet; at the HW: proposed back.
	if _, expand, _ := r.UpdateFollower(3, 19); expand != nil {
		t.Fatalf("expansion proposed below the HW: %v", expand)
	}
	if _, expand, _ := r.UpdateFollower(3, 20); !slices.Equal(expand, []int32{1, 2, 3}) {
		t.Fatalf("expansion %v, want [1 2 3]", expand)
	}
	// A rejoining follower is appended, not sorted in (Kafka's expandIsr):
	// ISR [1 3] plus 2 is [1 3 2].
	r.SetISR([]int32{1, 3}, 6)
	if _, expand, _ := r.UpdateFollower(2, 20); !slices.Equal(expand, []int32{1, 3, 2}) {
		t.Fatalf("expansion %v, want [1 3 2]", expand)
	}
}

func TestFollowerHWIsMinOfLeaderHWAndOwnLEO(t *testing.T) {
	r := NewReplica(TopicPartition{Topic: "t"}, 2)
	if err := r.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}, -1); err != nil {
		t.Fatal(err)
	}
	r.SetLogOffsets(0, 6)
	if !r.SetFollowerHW(9) || r.HighWatermark != 6 {
		t.Fatalf("follower hw %d, want own LEO 6", r.HighWatermark)
	}
	if r.SetFollowerHW(4) || r.HighWatermark != 6 {
		t.Fatalf("follower hw moved down to %d", r.HighWatermark)
	}
	r.SetLogOffsets(0, 3) // truncation
	if r.HighWatermark != 3 {
		t.Fatalf("hw %d after truncation to 3", r.HighWatermark)
	}
	if r.Follower(1) != nil || r.LaggingISR(time.Second) != nil {
		t.Fatal("a follower tracks followers")
	}
}
