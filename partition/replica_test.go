package partition

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestReplicaLeaderSoleISRMovesHWWithLEO(t *testing.T) {
	r := NewReplica(TopicPartition{Topic: "t", Partition: 0}, 1)
	r.SetLogOffsets(0, 10)
	if err := r.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 3, ISR: []int32{1}}, 4); err != nil {
		t.Fatal(err)
	}
	if r.Role != RoleLeader || r.HighWatermark != 10 {
		t.Fatalf("role %v hw %d, want leader hw 10", r.Role, r.HighWatermark)
	}
	if !r.SetLogOffsets(0, 15) || r.HighWatermark != 15 {
		t.Fatalf("hw %d after append, want 15", r.HighWatermark)
	}
	if r.SetLogOffsets(0, 15) {
		t.Fatal("hw reported advanced without an append")
	}
}

func TestReplicaLargerISRKeepsCheckpointHW(t *testing.T) {
	r := NewReplica(TopicPartition{Topic: "t"}, 1)
	r.SetLogOffsets(2, 10)
	if err := r.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}}, 6); err != nil {
		t.Fatal(err)
	}
	if r.HighWatermark != 6 {
		t.Fatalf("hw %d, want checkpointed 6", r.HighWatermark)
	}
	if r.SetLogOffsets(2, 12) || r.HighWatermark != 6 {
		t.Fatalf("hw %d moved without follower progress", r.HighWatermark)
	}
	r.SetLogOffsets(8, 12) // retention moved the log start above the hw
	if r.HighWatermark != 8 {
		t.Fatalf("hw %d, want clamped up to log start 8", r.HighWatermark)
	}
}

func TestReplicaStaleEpochRefused(t *testing.T) {
	r := NewReplica(TopicPartition{Topic: "t"}, 1)
	if err := r.Apply(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, ISR: []int32{1}}, -1); err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(LeaderAndIsr{Leader: 2, LeaderEpoch: 4, ISR: []int32{2}}, -1); err != kerr.FencedLeaderEpoch {
		t.Fatalf("stale epoch: %v, want FENCED_LEADER_EPOCH", err)
	}
	if r.Role != RoleLeader || r.LeaderEpoch != 5 {
		t.Fatalf("stale state applied: %+v", r)
	}
	if err := r.Apply(LeaderAndIsr{Leader: 2, LeaderEpoch: 6, ISR: []int32{2}}, -1); err != nil || r.Role != RoleFollower {
		t.Fatalf("newer epoch: err %v role %v, want follower", err, r.Role)
	}
}

func TestCheckLeaderEpoch(t *testing.T) {
	for _, tc := range []struct {
		cur, ours int32
		want      *kerr.Error
	}{{-1, 5, nil}, {5, 5, nil}, {4, 5, kerr.FencedLeaderEpoch}, {6, 5, kerr.UnknownLeaderEpoch}} {
		if got := CheckLeaderEpoch(tc.cur, tc.ours); got != tc.want {
			t.Errorf("CheckLeaderEpoch(%d, %d) = %v, want %v", tc.cur, tc.ours, got, tc.want)
		}
	}
}
