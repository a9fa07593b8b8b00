package txncoordinator

import (
	"context"
	"sync"
	"testing"
	"time"

	"gregor/actors"
)

// TestActorStats: Coordinator.Stats over the partition actors while a
// partition loads, while a commit's marker waits for a partition with no
// leader (UnknownDestination, PendingMarkers, PrepareCommit active), and
// once it is complete; the load and the marker latency reach the
// Instruments' event sink with their durations.
func TestActorStats(t *testing.T) {
	e := startEnv(t, nil)
	var mu sync.Mutex
	var events []actors.Event
	actors.InstrumentsOf(e.c.sys).OnEvent(func(ev actors.Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	stats := func() Stats {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := e.c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := stats(); s.Loaded != 0 || s.Loading != 0 || s.ByState["Ongoing"] != 0 || len(s.ByState) != len(allStates) {
		t.Fatalf("nothing loaded: %+v", s)
	}
	release := e.topic.HoldLoads()
	e.c.LeadershipChanged(e.c.PartitionFor("t1"), true, 5)
	await(t, "the load to start", func() bool { return e.topic.Held() == 1 })
	if s := stats(); s.Loading != 1 || s.Loaded != 0 {
		t.Fatalf("while loading: %+v", s)
	}
	release()
	pid, epoch := e.initLoaded("t1")
	if code := e.code(func(r func(int16)) {
		e.c.AddPartitions("t1", pid, epoch, map[string][]int32{"out": {0, 1}}, r)
	}); code != 0 {
		t.Fatalf("add: %d", code)
	}
	if s := stats(); s.Loaded != 1 || s.ByState["Ongoing"] != 1 || s.Active != 1 || s.PendingMarkers != 0 {
		t.Fatalf("ongoing: %+v", s)
	}
	e.markers.mu.Lock()
	e.markers.leaders[TopicPartition{"out", 1}] = -1
	e.markers.mu.Unlock()
	if code := e.code(func(r func(int16)) { e.c.EndTxn("t1", pid, epoch, true, r) }); code != 0 {
		t.Fatalf("commit: %d", code)
	}
	await(t, "the marker of out-1 waiting for a leader", func() bool {
		s := stats()
		return s.UnknownDestination == 1 && s.PendingMarkers == 1 && s.ByState["PrepareCommit"] == 1 && s.Active == 1
	})
	e.markers.mu.Lock()
	delete(e.markers.leaders, TopicPartition{"out", 1})
	e.markers.mu.Unlock()
	await(t, "the commit complete", func() bool {
		s := stats()
		return s.ByState["CompleteCommit"] == 1 && s.Active == 0 && s.PendingMarkers == 0 && s.UnknownDestination == 0 && s.LogAppendRetry == 0
	})
	mu.Lock()
	defer mu.Unlock()
	var loads, latencies int
	for _, ev := range events {
		switch ev.Name {
		case actors.EventTxnPartitionLoad:
			loads++
			if ev.Value <= 0 {
				t.Errorf("load event without a duration: %+v", ev)
			}
		case actors.EventTxnMarkersLatency:
			latencies++
			// At least one marker retry backoff (5 ms) passed before out-1 had a leader.
			if ev.Kind != "commit" || ev.Value < 0.005 {
				t.Errorf("marker latency event %+v", ev)
			}
		}
	}
	if loads != 1 || latencies != 1 {
		t.Errorf("%d load and %d marker latency events, want 1 and 1: %+v", loads, latencies, events)
	}
}
