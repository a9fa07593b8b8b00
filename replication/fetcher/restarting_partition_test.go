package fetcher

import (
	"testing"
	"time"

	"gregor/actors"
	"gregor/partition"
	"gregor/storage"
	"gregor/storage/record"
)

type deadLeader struct{}

// BrokerEndpoint names a port nothing listens on (connection refused).
func (deadLeader) BrokerEndpoint(int32) (string, int32, bool) { return "127.0.0.1", 1, true }

// TestNoHighWatermarkTruncationWhileFollowerRestarts: a fetcher that
// (re)starts following a partition whose actor is restarting must not take
// the missing log for a log without leader epochs and truncate it to the
// high watermark: the records above it may be acknowledged by the leader
// (chaos: a follower truncated 7591 → 7589 this way, became leader when the
// old one was SIGKILLed, and two acknowledged records were lost).
func TestNoHighWatermarkTruncationWhileFollowerRestarts(t *testing.T) {
	sys := actors.NewSystem(nil)
	dir := t.TempDir()
	logs, err := storage.NewLogManager(storage.LogManagerConfig{Dirs: []string{dir}, Defaults: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	rm, err := partition.NewManager(partition.ManagerConfig{System: sys, Store: partition.StorageStore{M: logs}, BrokerID: 2,
		Backoff: actors.BackoffStrategy{Initial: 800 * time.Millisecond, Max: 800 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	fm, err := Start(Config{System: sys, BrokerID: 2, Replicas: rm, Endpoints: deadLeader{}, Backoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fm.Close(); rm.Close(); sys.Shutdown(); logs.Close() })

	tp := partition.TopicPartition{Topic: "chaos", Partition: 1}
	if errs := rm.ApplyLeaderAndIsr([]partition.LeaderAndIsr{{TopicPartition: tp, Leader: 3, LeaderEpoch: 0,
		ISR: []int32{2, 3}, Replicas: []int32{2, 3}, MinInsyncReplicas: 2, Config: storage.DefaultLogConfig()}}); len(errs) != 0 {
		t.Fatal(errs)
	}
	h, _ := rm.Get(tp)
	var batches []byte
	for base := int64(0); base < 5; base++ {
		b, err := record.BuildBatch(record.BatchOptions{BaseOffset: base, PartitionLeaderEpoch: 0}, []record.BatchRecord{{Value: []byte("v")}})
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b...)
	}
	// The leader has acknowledged all 5; this follower has heard of HW 3.
	done := make(chan partition.FollowerResult, 1)
	h.AppendAsFollower(0, batches, 3, 0, func(r partition.FollowerResult) { done <- r })
	if r := <-done; r.Err != nil || r.LogEndOffset != 5 {
		t.Fatalf("append as follower: leo %d, %v", r.LogEndOffset, r.Err)
	}
	if v := h.View(); v.HighWatermark != 3 {
		t.Fatalf("follower HW %d, want 3", v.HighWatermark)
	}

	h.Crash("test: restart while the fetcher starts")
	// A generous bound: under a loaded -race run the crash and the
	// backoff (400–800 ms) have taken over 5 s; a passing run is quick.
	deadline := time.Now().Add(20 * time.Second)
	for h.View().Log != nil { // polling: the restart gives no event
		if time.Now().After(deadline) {
			t.Fatal("partition actor did not restart")
		}
		time.Sleep(time.Millisecond)
	}
	fm.Follow(tp, 3, 0) // the fetcher's epoch request runs while the log is away
	for h.View().Log == nil {
		if time.Now().After(deadline) {
			t.Fatal("partition actor did not come back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Give the fetcher a few more rounds against the dead leader.
	time.Sleep(200 * time.Millisecond)
	if v := h.View(); v.LogEndOffset != 5 {
		t.Fatalf("follower log end offset %d after its restart, want 5 (truncated to the high watermark?)", v.LogEndOffset)
	}
}
